//! Reading a recording back: the magic line, then the records of the zstd stream, keeping
//! everything readable and saying in plain words what was not.
//!
//! Owns: `read`. Must not touch: the file (read only), parsing of the samples' kernel text.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::delta::SampleDelta;
use super::format::{Kind, Next, next_record, parse_magic};
use super::{FORMAT_VERSION, Header, RecordError, Recording};
use crate::event::Event;
use crate::sample::RawSample;

/// Reads a whole recording.
///
/// `Err` only when nothing is usable: the file cannot be opened, is empty, is not a
/// recording, comes from a newer pagewatch, or its header is unreadable. Otherwise the
/// samples and events up to the first damage are returned, and `Recording::warnings` says
/// what was skipped: a torn tail (the writer was killed mid-record) or a damaged stretch,
/// named by sample number.
pub fn read(path: &Path) -> Result<Recording, RecordError> {
    let file = File::open(path).map_err(|e| RecordError::io(path, e))?;
    let mut input = BufReader::new(file);
    check_magic(path, &mut input)?;
    let mut z =
        zstd::stream::read::Decoder::with_buffer(input).map_err(|e| RecordError::io(path, e))?;
    let header = read_header(path, &mut z)?;
    let mut rec = Recording {
        header,
        samples: Vec::new(),
        events: Vec::new(),
        warnings: Vec::new(),
        damaged: false,
    };
    let name = path.display();
    loop {
        let kept = rec.samples.len();
        let damaged = |why: &str| {
            format!(
                "{name}: the recording is damaged at sample {} ({why}); the {kept} sample(s) before it are kept, nothing after it can be read",
                kept + 1
            )
        };
        let warning = match next_record(&mut z) {
            Next::End => None,
            Next::Unfinished => Some(format!(
                "{name}: the recording was not closed (pagewatch was killed or the machine stopped); all {kept} samples written are kept"
            )),
            Next::Torn(n) => Some(format!(
                "{name}: skipped a torn last record ({n} bytes; the writer was stopped while writing it); {kept} whole samples kept"
            )),
            Next::Damaged(why) => {
                rec.damaged = true;
                Some(damaged(&why))
            }
            Next::Record(kind, payload) => match take(&mut rec, kind, &payload) {
                Ok(()) => continue,
                Err(why) => {
                    rec.damaged = true;
                    Some(damaged(&why))
                }
            },
        };
        rec.warnings.extend(warning);
        return Ok(rec);
    }
}

/// Checks the magic line and the version in it.
fn check_magic(path: &Path, input: &mut BufReader<File>) -> Result<(), RecordError> {
    let mut line = Vec::new();
    input
        .by_ref()
        .take(64)
        .read_until(b'\n', &mut line)
        .map_err(|e| RecordError::io(path, e))?;
    if line.is_empty() {
        return Err(RecordError::Empty {
            path: path.to_owned(),
        });
    }
    let version = line
        .strip_suffix(b"\n")
        .and_then(parse_magic)
        .ok_or_else(|| RecordError::NotRecording {
            path: path.to_owned(),
        })?;
    if version > u64::from(FORMAT_VERSION) {
        return Err(RecordError::TooNew {
            path: path.to_owned(),
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    Ok(())
}

fn read_header(path: &Path, z: &mut impl Read) -> Result<Header, RecordError> {
    let bad = |why: String| RecordError::BadHeader {
        path: path.to_owned(),
        why,
    };
    match next_record(z) {
        Next::Record(k, payload) if k == Kind::Header as u8 => {
            serde_json::from_slice(&payload).map_err(|e| bad(format!("header: {e}")))
        }
        Next::Record(k, _) => Err(bad(format!("the first record is of kind {k}"))),
        Next::End | Next::Unfinished | Next::Torn(_) => Err(bad(
            "the file ends before its header (the recorder stopped right after creating it)".into(),
        )),
        Next::Damaged(why) => Err(bad(why)),
    }
}

/// Adds one record to the recording.
fn take(rec: &mut Recording, kind: u8, payload: &[u8]) -> Result<(), String> {
    match kind {
        k if k == Kind::Sample as u8 => {
            let delta: SampleDelta =
                serde_json::from_slice(payload).map_err(|e| format!("sample record: {e}"))?;
            let sample: RawSample = delta
                .apply(rec.samples.last())
                .ok_or("a sample does not fit the one before it")?;
            rec.samples.push(sample);
        }
        k if k == Kind::Event as u8 => {
            let event: Event =
                serde_json::from_slice(payload).map_err(|e| format!("event record: {e}"))?;
            rec.events.push(event);
        }
        k if k == Kind::Header as u8 => return Err("a second header".into()),
        k => return Err(format!("unknown record kind {k}")),
    }
    Ok(())
}
