//! A recording's samples as a `Source`, so replay runs the same parse → derive → output code
//! as live.
//!
//! Owns: `RecordingSource`. Must not touch: pacing (the caller's ticker decides the speed),
//! the file (read by `read`).

use crate::Result;
use crate::sample::RawSample;
use crate::source::Source;

/// Yields a recording's samples in order, as fast as asked; never sleeps.
#[derive(Debug)]
pub struct RecordingSource {
    samples: std::vec::IntoIter<RawSample>,
}

impl RecordingSource {
    /// A source over these samples.
    #[must_use]
    pub fn new(samples: Vec<RawSample>) -> Self {
        Self {
            samples: samples.into_iter(),
        }
    }
}

impl Source for RecordingSource {
    fn next_sample(&mut self) -> Result<Option<RawSample>> {
        Ok(self.samples.next())
    }
}
