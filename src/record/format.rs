//! The recording file format: the magic line and the framed records inside the zstd stream.
//!
//! Owns: the byte layout, shared by the writer and the reader. Must not touch: files,
//! compression settings, sample deltas (`delta.rs`).
//!
//! ```text
//! PAGEWATCH-REC 1\n                    magic line, uncompressed: name, format version
//! <one zstd stream>                    flushed after every record, finished on a clean stop
//!   record: [u32 LE len][u8 kind][payload: len bytes][u32 LE crc32 of kind and payload]
//!     kind 0  header  JSON of `Header`, always the first record, exactly once
//!     kind 1  sample  JSON of `SampleDelta` against the previous sample (the first: whole)
//!     kind 2  event   JSON of `Event`
//! ```
//!
//! The version sits in the magic line so that a newer file is refused before anything is
//! decompressed. Flushing the zstd stream after every record makes the compressed bytes on
//! disk decode to whole records at every moment, so a kill -9 or a power cut loses at most
//! the record being written; the reader skips such a torn tail with a warning. The CRC tells
//! a damaged record from a good one; because the records form one compressed stream, nothing
//! after a damaged stretch can be read, and the reader keeps everything before it.

use std::io::{self, Read};

/// The magic line's first word.
pub const MAGIC: &str = "PAGEWATCH-REC";

/// Records larger than this are taken as damage (a sample is ~15 KB; 1000 disks ~200 KB).
pub const MAX_RECORD: u32 = 64 << 20;

/// Record kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The `Header`.
    Header = 0,
    /// A `SampleDelta`.
    Sample = 1,
    /// An `Event`.
    Event = 2,
}

/// The magic line for a format version.
#[must_use]
pub fn magic_line(version: u32) -> String {
    format!("{MAGIC} {version}\n")
}

/// The format version in a magic line (without its newline); `None` when it is not one. A
/// version is written as `magic_line` writes it: decimal, from 1, no leading zero. One too
/// large for a u64 is still a (very new) version: `u64::MAX`.
#[must_use]
pub fn parse_magic(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(MAGIC.as_bytes())?.strip_prefix(b" ")?;
    let canonical = rest.first().is_some_and(|b| (b'1'..=b'9').contains(b))
        && rest.iter().all(u8::is_ascii_digit);
    canonical.then(|| {
        std::str::from_utf8(rest)
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(u64::MAX)
    })
}

/// Appends one framed record to `out`.
pub fn put_record(kind: Kind, payload: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.push(kind as u8);
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc(kind as u8, payload).to_le_bytes());
}

fn crc(kind: u8, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&[kind]);
    h.update(payload);
    h.finalize()
}

/// What reading the next record found.
#[derive(Debug)]
pub enum Next {
    /// A whole record with a good CRC: its kind byte and payload.
    Record(u8, Vec<u8>),
    /// The stream was finished cleanly after the last record.
    End,
    /// The data stops between two records, but the stream was never finished: the writer
    /// was killed or the machine stopped. Nothing is lost.
    Unfinished,
    /// The data stops inside a record (a torn tail): this many bytes of it were present.
    Torn(usize),
    /// The bytes are damaged: what was wrong.
    Damaged(String),
}

/// Reads the next record from the decompressed stream.
pub fn next_record(r: &mut impl Read) -> Next {
    let mut head = [0u8; 5];
    match fill(r, &mut head) {
        (0, None) => return Next::End,
        (0, Some(e)) if e.kind() == io::ErrorKind::UnexpectedEof => return Next::Unfinished,
        (n, Some(e)) if e.kind() == io::ErrorKind::UnexpectedEof => return Next::Torn(n),
        (_, Some(e)) => return Next::Damaged(format!("cannot decompress: {e}")),
        (n, None) if n < head.len() => return Next::Damaged("data ends mid-record".into()),
        _ => {}
    }
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    if len > MAX_RECORD {
        return Next::Damaged(format!("record length {len} is impossible"));
    }
    let mut body = vec![0u8; len as usize + 4];
    match fill(r, &mut body) {
        (n, Some(e)) if e.kind() == io::ErrorKind::UnexpectedEof => return Next::Torn(5 + n),
        (_, Some(e)) => return Next::Damaged(format!("cannot decompress: {e}")),
        (n, None) if n < body.len() => return Next::Damaged("data ends mid-record".into()),
        _ => {}
    }
    let split = len as usize;
    let want = u32::from_le_bytes([
        body[split],
        body[split + 1],
        body[split + 2],
        body[split + 3],
    ]);
    body.truncate(split);
    if crc(head[4], &body) != want {
        return Next::Damaged("checksum mismatch".into());
    }
    Next::Record(head[4], body)
}

/// Reads until `buf` is full, the stream ends (`Ok(0)`) or fails; returns the bytes read
/// and the error, if any.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_and_damage_is_told_apart_from_a_cut() {
        let mut buf = Vec::new();
        put_record(Kind::Sample, b"hello", &mut buf);
        assert!(matches!(next_record(&mut &buf[..]), Next::Record(1, p) if p == b"hello"));
        assert!(matches!(next_record(&mut &[][..]), Next::End));
        let mut bad = buf.clone();
        bad[6] ^= 1;
        assert!(matches!(next_record(&mut &bad[..]), Next::Damaged(m) if m.contains("checksum")));
        let huge = [0xff, 0xff, 0xff, 0xff, 1];
        assert!(matches!(next_record(&mut &huge[..]), Next::Damaged(_)));
    }

    #[test]
    fn magic_line_carries_the_version() {
        assert_eq!(parse_magic(magic_line(7).trim_end().as_bytes()), Some(7));
        assert_eq!(parse_magic(b"PAGEWATCH-REC x"), None);
        assert_eq!(parse_magic(b"{\"format\":1}"), None);
        for odd in ["0", "00001", "+1", " 1", "1 ", ""] {
            let line = format!("PAGEWATCH-REC {odd}");
            assert_eq!(parse_magic(line.as_bytes()), None, "{line:?}");
        }
        assert_eq!(parse_magic(b"PAGEWATCH-REC 4294967296"), Some(1 << 32));
        assert_eq!(
            parse_magic(b"PAGEWATCH-REC 99999999999999999999999"),
            Some(u64::MAX),
            "a huge version is a newer recording, not 'not a recording'"
        );
    }
}
