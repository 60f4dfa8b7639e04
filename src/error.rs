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
    /// The stream of another machine (`pagewatch connect`) broke or could not be opened: the
    /// message names the host and says when and why.
    #[error("{0}")]
    Remote(String),
    /// A file every kernel we support provides was not in the sample.
    #[error("{file}: missing from the sample")]
    Missing {
        /// Sample-relative file name.
        file: String,
    },
}

impl Error {
    /// Builds a parse error.
    /// The message is cut to `MAX_MSG` characters: it often quotes the bad line, which may be
    /// megabytes long.
    pub fn parse(file: &str, line: usize, msg: impl Into<String>) -> Self {
        Error::Parse {
            file: file.to_owned(),
            line,
            msg: cut(msg.into()),
        }
    }
}

/// The longest message a parse error carries, in characters.
pub const MAX_MSG: usize = 160;

/// `msg` cut to `MAX_MSG` characters, with "…" and the original length when cut.
fn cut(mut msg: String) -> String {
    use std::fmt::Write;
    if let Some((at, _)) = msg.char_indices().nth(MAX_MSG) {
        let len = msg.len();
        msg.truncate(at);
        let _ = write!(msg, "… ({len} bytes)");
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut() {
        let line = "x".repeat(2 << 20);
        let e = Error::parse("proc/meminfo", 3, format!("bad line {line:?}")).to_string();
        assert!(e.len() < 200, "{}", e.len());
        assert!(e.starts_with("proc/meminfo:3: bad line \"xxx"), "{e}");
        assert!(e.ends_with("… (2097163 bytes)"), "{e}");
        let short = Error::parse("proc/stat", 1, "é".repeat(MAX_MSG)).to_string();
        assert!(!short.contains('…'), "{short}");
        let multi = Error::parse("proc/stat", 1, "é".repeat(MAX_MSG + 1)).to_string();
        assert!(multi.ends_with("é… (322 bytes)"), "{multi}");
    }
}
