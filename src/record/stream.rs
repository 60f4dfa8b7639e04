//! A recording as a stream: the same bytes as a recording file (the magic line, then one zstd
//! stream of framed records, flushed after every record), written to a pipe by `pagewatch
//! stream` and followed by `pagewatch connect` at the other end of an ssh channel.
//!
//! The follower reads a pipe: a read that returns part of a frame is not damage, as it would be
//! at the end of a file, but the rest still on its way, so it waits for it (`format::fill` reads
//! until the frame is whole or the pipe ends). Only the pipe's end tells a lost connection.
//! The magic line is the version handshake: a newer remote is refused before anything is
//! decompressed, naming both versions.
//!
//! Owns: `StreamWriter`, `Follower`, `StreamError`. Must not touch: processes, ssh, the
//! terminal (the caller hands in the pipe's ends).

use std::io::{self, BufRead, BufReader, Read, Write};

use super::delta::SampleDelta;
use super::format::{Kind, Next, magic_line, next_record, parse_magic, put_record};
use super::writer::encoder;
use super::{FORMAT_VERSION, Header};
use crate::event::Event;
use crate::sample::RawSample;

/// Writes a recording to a pipe, each record flushed to the pipe as it is written.
pub struct StreamWriter<W: Write> {
    enc: zstd::stream::write::Encoder<'static, W>,
    prev: Option<RawSample>,
    buf: Vec<u8>,
    samples: u64,
}

impl<W: Write> StreamWriter<W> {
    /// Writes the magic line and `header` to `out`, and flushes them.
    pub fn start(mut out: W, header: &Header) -> io::Result<Self> {
        out.write_all(magic_line(FORMAT_VERSION).as_bytes())?;
        let mut w = StreamWriter {
            enc: encoder(out)?,
            prev: None,
            buf: Vec::new(),
            samples: 0,
        };
        let json = serde_json::to_vec(header)?;
        w.put(Kind::Header, &json)?;
        Ok(w)
    }

    /// Appends a sample (its difference from the previous one) and flushes it to the pipe.
    pub fn write_sample(&mut self, sample: &RawSample) -> io::Result<()> {
        let delta = SampleDelta::encode(self.prev.as_ref(), sample);
        let json = serde_json::to_vec(&delta)?;
        self.put(Kind::Sample, &json)?;
        self.prev = Some(sample.clone());
        self.samples += 1;
        Ok(())
    }

    /// Samples written so far.
    #[must_use]
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Ends the zstd stream cleanly (the follower then sees `Followed::End`).
    pub fn finish(self) -> io::Result<W> {
        let mut out = self.enc.finish()?;
        out.flush()?;
        Ok(out)
    }

    fn put(&mut self, kind: Kind, payload: &[u8]) -> io::Result<()> {
        self.buf.clear();
        put_record(kind, payload, &mut self.buf);
        self.enc.write_all(&self.buf)?;
        self.enc.flush()
    }
}

/// Why a stream could not be followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// The pipe ended before the magic line: the remote side never started streaming.
    #[error("the stream ended before it began")]
    NeverStarted,
    /// The first line is not a recording's magic line.
    #[error("the remote side did not send a pagewatch stream (it began {begin:?})")]
    NotStream {
        /// The first bytes received, as text.
        begin: String,
    },
    /// The remote pagewatch writes a newer format than this one reads.
    #[error(
        "the remote pagewatch streams recording format {found}, newer than this pagewatch \
         reads (format {supported}); upgrade pagewatch on this machine"
    )]
    TooNew {
        /// The remote's format version.
        found: u64,
        /// The newest this build reads.
        supported: u32,
    },
    /// The header record is missing or does not decode.
    #[error("the stream's header is unreadable: {0}")]
    BadHeader(String),
    /// The stream stopped: the pipe ended, cleanly or inside a record, or the bytes were
    /// damaged.
    #[error("{0}")]
    Lost(String),
}

/// What the next record of a followed stream was.
#[derive(Debug)]
pub enum Followed {
    /// A sample, whole.
    Sample(RawSample),
    /// An event.
    Event(Event),
    /// The remote side finished the stream cleanly.
    End,
}

/// Follows a stream read from a pipe: the header at once, then each record as it arrives.
pub struct Follower<R: Read> {
    z: zstd::stream::read::Decoder<'static, BufReader<R>>,
    prev: Option<RawSample>,
    /// The remote's header.
    pub header: Header,
}

impl<R: Read> Follower<R> {
    /// Reads the magic line and the header, waiting for them as long as the pipe is open.
    pub fn open(pipe: R) -> Result<Self, StreamError> {
        let mut input = BufReader::new(pipe);
        let mut line = Vec::new();
        let lost = |e: io::Error| StreamError::Lost(format!("reading the stream: {e}"));
        input
            .by_ref()
            .take(64)
            .read_until(b'\n', &mut line)
            .map_err(lost)?;
        if line.is_empty() {
            return Err(StreamError::NeverStarted);
        }
        let Some(found) = line.strip_suffix(b"\n").and_then(parse_magic) else {
            return Err(StreamError::NotStream {
                begin: String::from_utf8_lossy(&line).trim_end().to_owned(),
            });
        };
        if found > u64::from(FORMAT_VERSION) {
            return Err(StreamError::TooNew {
                found,
                supported: FORMAT_VERSION,
            });
        }
        let mut z = zstd::stream::read::Decoder::with_buffer(input).map_err(lost)?;
        let header = match next_record(&mut z) {
            Next::Record(k, p) if k == Kind::Header as u8 => {
                serde_json::from_slice(&p).map_err(|e| StreamError::BadHeader(e.to_string()))?
            }
            Next::Record(k, _) => {
                return Err(StreamError::BadHeader(format!(
                    "the first record is of kind {k}"
                )));
            }
            other => return Err(StreamError::BadHeader(ended(&other))),
        };
        Ok(Follower {
            z,
            prev: None,
            header,
        })
    }

    /// The next record, waiting for it (and for the rest of it) while the pipe is open.
    pub fn follow(&mut self) -> Result<Followed, StreamError> {
        match next_record(&mut self.z) {
            Next::Record(k, payload) if k == Kind::Sample as u8 => {
                let delta: SampleDelta = serde_json::from_slice(&payload)
                    .map_err(|e| StreamError::Lost(format!("a sample record: {e}")))?;
                let sample = delta.apply(self.prev.as_ref()).ok_or_else(|| {
                    StreamError::Lost("a sample does not fit the one before it".to_owned())
                })?;
                self.prev = Some(sample.clone());
                Ok(Followed::Sample(sample))
            }
            Next::Record(k, payload) if k == Kind::Event as u8 => serde_json::from_slice(&payload)
                .map(Followed::Event)
                .map_err(|e| StreamError::Lost(format!("an event record: {e}"))),
            Next::Record(k, _) => Err(StreamError::Lost(format!("a record of kind {k}"))),
            Next::End => Ok(Followed::End),
            other => Err(StreamError::Lost(ended(&other))),
        }
    }
}

/// Plain words for a stream that stopped.
fn ended(next: &Next) -> String {
    match next {
        Next::End => "the remote side ended the stream".to_owned(),
        Next::Unfinished => {
            "the stream stopped (the remote side or the connection went away)".to_owned()
        }
        Next::Torn(n) => format!("the stream stopped inside a record ({n} bytes of it came)"),
        Next::Damaged(why) => format!("the stream is damaged: {why}"),
        Next::Record(k, _) => format!("a record of kind {k}"),
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
