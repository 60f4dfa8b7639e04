//! Error type for the library: every variant names the file (and line) it came from.
//!
//! Owns: the `Error` enum and `Result` alias. Must not touch: anything else; it performs no I/O.

use std::path::PathBuf;

/// Library result type.
pub type Result<T> = std::result::Result<T, Error>;

/// Errors raised while reading or parsing kernel files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A required file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file had a line we could not understand.
    #[error("{file}:{line}: {msg}")]
    Parse {
        /// Sample-relative file name, such as `proc/meminfo`.
        file: String,
        /// 1-based line number (0 when the problem is the file as a whole).
        line: usize,
        /// What was wrong.
        msg: String,
    },
    /// A file every kernel we support provides was not in the sample.
    #[error("{file}: missing from the sample")]
    Missing {
        /// Sample-relative file name.
        file: String,
    },
}

impl Error {
    /// Builds a parse error.
    pub fn parse(file: &str, line: usize, msg: impl Into<String>) -> Self {
        Error::Parse {
            file: file.to_owned(),
            line,
            msg: msg.into(),
        }
    }
}
