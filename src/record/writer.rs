//! Writing a recording: `Recorder` appends framed records to one zstd stream in a file it
//! creates, flushing after every record (a kill -9 loses nothing written) and syncing to
//! disk every `SYNC_PERIOD` and after every event (a power cut loses at most the last ten
//! seconds of samples, never a job's start or end or a setting changed).
//!
//! Owns: the recording file while it is written, and one helper thread that calls
//! `fdatasync` on it so a slow disk never stalls the caller's sampling loop. Must not touch:
//! any file it did not create (it opens with `create_new`), sampling, the clock.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::delta::SampleDelta;
use super::format::{Kind, magic_line, put_record};
use super::{FORMAT_VERSION, Header, RecordError};
use crate::event::Event;
use crate::sample::RawSample;

/// zstd level. On 240 live samples taken 1 s apart (10 devices), line patches compressed to
/// 464, 459, 413 and 390 bytes a sample at levels 1, 3, 6 and 9. Issue 27 (≤ 0.8 MB an
/// hour idle): on a 601-sample, 10-minute recording of this VM (1 Hz, builds running),
/// level 3 gave 626 bytes a sample, 7 → 553, 8 → 531, 9 → 531, 10 → 532, 16 → 494, 19 → 478;
/// 8 took 0.08 ms a sample against 3's 0.02 (16 took 0.8, 19 took 1: more than the screen's
/// whole CPU budget). With the window and tables below.
pub const ZSTD_LEVEL: i32 = 8;

/// log2 of the zstd window: 128 KiB, the last ~40 busy samples or minutes of idle ones.
/// Level 8's own default (4 MiB, with 1 MiB tables) would cost the 8 MB RSS budget; a
/// larger window measured 529 against 531 bytes a sample. Issue 52: a 64 KiB window gave
/// 3 % more bytes a sample at 1 Hz and 9 % more at 0.1 s, for 64 KiB less resident.
pub const ZSTD_WINDOW_LOG: u32 = 17;

/// log2 of the match finder's table. At level 8 zstd finds matches by rows (lazy2, the row
/// match finder: a 4-byte position and a 1-byte tag an entry, no chain table): 160 KiB.
/// Issue 52, replaying a 2-minute recording at 0.1 s (1,195 records, 2.5 KB each before
/// compression) and a 1-minute one at 1 s (61, 8.4 KB) through the compressor: 16 (320 KiB)
/// gave 371 and 1,450 bytes a record, 15 gave 374 and 1,472 (+1 %, +1.5 %), 14 gave 391 and
/// 1,531 (+5 %, +6 %).
pub const ZSTD_HASH_LOG: u32 = 15;

/// The largest block, bytes. zstd sizes its input buffer (the window plus a block), its output
/// buffer, sequences and literals by the block: 128 KiB at this window, about 900 KiB of the
/// context, and a burst's large sample touches all of it for good (issue 52: the context read
/// 692-708 KB resident of 1,208 at ten minutes of `record --interval 0.1`). A flush after
/// every record ends a block anyway, and a sample is 2-10 KB: 16 KiB blocks cost nothing
/// measurable (371 → 370 and 1,450 → 1,456 bytes a record above); 8 KiB gave 1,501 at 1 s.
pub const ZSTD_MAX_BLOCK: u32 = 16 << 10;

/// How often the samples are synced to disk. Issue 27: an `fdatasync` every second was a
/// quarter of `pagewatch record`'s CPU (a journal commit each time, on the disk being
/// watched), and made recording cost 1.5 times the screen.
pub const SYNC_PERIOD: Duration = Duration::from_secs(10);

/// Writes one recording file.
pub struct Recorder {
    path: PathBuf,
    enc: zstd::stream::write::Encoder<'static, Counted>,
    prev: Option<RawSample>,
    buf: Vec<u8>,
    samples: u64,
    events: u64,
    syncer: Syncer,
}

/// What a finished recording holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file.
    pub path: PathBuf,
    /// Samples written.
    pub samples: u64,
    /// Events written.
    pub events: u64,
    /// Size of the file, bytes.
    pub bytes: u64,
}

impl Recorder {
    /// Creates `path` (never an existing file) and writes the magic line and the header.
    pub fn create(path: &Path, header: &Header) -> Result<Recorder, RecordError> {
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => RecordError::Exists {
                    path: path.to_owned(),
                },
                _ => RecordError::io(path, e),
            })?;
        let syncer = Syncer::start(file.try_clone().map_err(|e| RecordError::io(path, e))?);
        let mut out = Counted { file, bytes: 0 };
        out.write_all(magic_line(FORMAT_VERSION).as_bytes())
            .map_err(|e| RecordError::io(path, e))?;
        let enc = encoder(out).map_err(|e| RecordError::io(path, e))?;
        let mut rec = Recorder {
            path: path.to_owned(),
            enc,
            prev: None,
            buf: Vec::new(),
            samples: 0,
            events: 0,
            syncer,
        };
        let json = serde_json::to_vec(header).map_err(|e| RecordError::io(path, e.into()))?;
        rec.put(Kind::Header, &json)?;
        Ok(rec)
    }

    /// Appends a sample (stored as its difference from the previous one) and flushes.
    /// After an error, drop the recorder: the file keeps every record written before.
    pub fn write_sample(&mut self, sample: &RawSample) -> Result<(), RecordError> {
        let delta = SampleDelta::encode(self.prev.as_ref(), sample);
        let json = serde_json::to_vec(&delta).map_err(|e| RecordError::io(&self.path, e.into()))?;
        self.put(Kind::Sample, &json)?;
        self.prev = Some(sample.clone());
        self.samples += 1;
        Ok(())
    }

    /// Appends an event and flushes.
    pub fn write_event(&mut self, event: &Event) -> Result<(), RecordError> {
        let json = serde_json::to_vec(event).map_err(|e| RecordError::io(&self.path, e.into()))?;
        self.put(Kind::Event, &json)?;
        self.events += 1;
        self.syncer.force();
        Ok(())
    }

    /// Bytes in the file so far.
    #[must_use]
    pub fn bytes_written(&self) -> u64 {
        self.enc.get_ref().bytes
    }

    /// Samples written so far.
    #[must_use]
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The file being written.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Finishes the zstd stream, syncs the file to disk and closes it.
    pub fn finish(self) -> Result<Written, RecordError> {
        let path = self.path;
        let err = |e| RecordError::io(&path, e);
        let out = self.enc.finish().map_err(err)?;
        self.syncer.stop().map_err(err)?;
        out.file.sync_data().map_err(err)?;
        Ok(Written {
            samples: self.samples,
            events: self.events,
            bytes: out.bytes,
            path: path.clone(),
        })
    }

    fn put(&mut self, kind: Kind, payload: &[u8]) -> Result<(), RecordError> {
        self.buf.clear();
        put_record(kind, payload, &mut self.buf);
        // A sample of a burst's walk (1,100 processes: about 1 MB) does not keep its room for
        // every sample after it (issue 52: RSS).
        crate::malloc::fit(&mut self.buf);
        let res = self
            .enc
            .write_all(&self.buf)
            .and_then(|()| self.enc.flush());
        res.and_then(|()| self.syncer.poke())
            .map_err(|e| RecordError::io(&self.path, e))
    }
}

/// The compressor's settings: `ZSTD_LEVEL` with the window, table and block sized above, the
/// row match finder asked for by name (zstd picks it at this level and window on its own, but
/// the table's size above assumes it). None changes the format: any zstd decoder reads the
/// stream, and the frame header carries the window size.
pub(super) fn compressor_params() -> [zstd::stream::raw::CParameter; 5] {
    use zstd::stream::raw::CParameter;
    use zstd::zstd_safe::ParamSwitch;
    [
        CParameter::CompressionLevel(ZSTD_LEVEL),
        CParameter::WindowLog(ZSTD_WINDOW_LOG),
        CParameter::UseRowMatchFinder(ParamSwitch::Enable),
        CParameter::HashLog(ZSTD_HASH_LOG),
        CParameter::MaxBlockSize(ZSTD_MAX_BLOCK),
    ]
}

/// The zstd stream with `compressor_params`.
pub(super) fn encoder<W: Write>(out: W) -> io::Result<zstd::stream::write::Encoder<'static, W>> {
    let mut enc = zstd::stream::write::Encoder::new(out, ZSTD_LEVEL)?;
    for p in compressor_params() {
        enc.set_parameter(p)?;
    }
    Ok(enc)
}

/// The file, counting the bytes written to it.
struct Counted {
    file: File,
    bytes: u64,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A thread that runs `fdatasync` on the file when poked, at most once a `SYNC_PERIOD` (or at
/// once when forced); at most one sync is pending, so a disk that syncs slowly only makes
/// syncs rarer.
struct Syncer {
    tx: Option<SyncSender<()>>,
    last: Option<Instant>,
    thread: Option<JoinHandle<()>>,
    failed: Arc<Mutex<Option<io::Error>>>,
}

impl Syncer {
    fn start(file: File) -> Syncer {
        let (tx, rx) = mpsc::sync_channel::<()>(1);
        let failed = Arc::new(Mutex::new(None));
        let report = Arc::clone(&failed);
        let thread = std::thread::Builder::new()
            .name("pagewatch-record-sync".into())
            .spawn(move || {
                while rx.recv().is_ok() {
                    if let Err(e) = file.sync_data() {
                        let mut slot = report
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        slot.get_or_insert(e);
                    }
                }
            })
            .ok();
        Syncer {
            tx: Some(tx),
            last: None,
            thread,
            failed,
        }
    }

    /// Asks for a sync unless one was asked for in the last `SYNC_PERIOD` (less 0.1 s, so
    /// that timer jitter does not skip a period); reports a sync that failed since the last
    /// poke.
    fn poke(&mut self) -> io::Result<()> {
        let due = self
            .last
            .is_none_or(|t| t.elapsed() >= SYNC_PERIOD.saturating_sub(Duration::from_millis(100)));
        if due {
            self.force();
        }
        let mut slot = self
            .failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.take().map_or(Ok(()), Err)
    }

    /// Asks for a sync now.
    fn force(&mut self) {
        if let Some(tx) = &self.tx {
            let _ = tx.try_send(());
            self.last = Some(Instant::now());
        }
    }

    /// Waits for the pending sync and ends the thread.
    fn stop(mut self) -> io::Result<()> {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut slot = self
            .failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.take().map_or(Ok(()), Err)
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        // Closing the channel ends the thread after its pending sync; never wait for it here.
        self.tx = None;
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
