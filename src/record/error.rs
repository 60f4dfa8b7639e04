//! Errors of writing and reading recordings, each naming the file.
//!
//! Owns: `RecordError`. Must not touch: anything else; it performs no I/O.

use std::path::PathBuf;

/// Why a recording could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be opened, written or read.
    #[error("{path}: {source}")]
    Io {
        /// The recording.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The recorder never writes over an existing file.
    #[error("{path} already exists; pagewatch only records into a new file")]
    Exists {
        /// The path given.
        path: PathBuf,
    },
    /// The file is empty.
    #[error("{path} is empty, not a pagewatch recording")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The file does not start with the recording magic line.
    #[error("{path} is not a pagewatch recording (it does not start with `PAGEWATCH-REC`)")]
    NotRecording {
        /// The file.
        path: PathBuf,
    },
    /// The file was written by a newer pagewatch.
    #[error(
        "{path}: recording format {found} is newer than this pagewatch (reads up to {supported}); upgrade pagewatch"
    )]
    TooNew {
        /// The file.
        path: PathBuf,
        /// The file's format version.
        found: u64,
        /// The newest version this build reads.
        supported: u32,
    },
    /// Nothing usable: the header record is missing or damaged.
    #[error("{path}: no readable header: {why}")]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        why: String,
    },
}

impl RecordError {
    /// Wraps an I/O error with the file's path.
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        RecordError::Io {
            path: path.to_owned(),
            source,
        }
    }
}
