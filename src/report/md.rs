//! Markdown helpers the report's parts share: a safe table cell, a moment as offset and UTC
//! clock, seconds.
//!
//! Owns: those three formats. Must not touch: the report's layout (`markdown`), I/O.

use super::range::offset;

/// Table cells must not break the table: pipes escaped, newlines flattened.
pub(crate) fn cell(s: &str) -> String {
    // Line breaks become spaces; every other control character a visible escape.
    crate::fmt::escape_controls(&s.replace(['\n', '\r'], " ")).replace('|', "\\|")
}

pub(crate) fn at(ms: i64, started: i64) -> String {
    format!(
        "{} ({} UTC)",
        offset(ms - started),
        crate::fmt::clock_utc(ms)
    )
}

pub(crate) fn secs(s: f64) -> String {
    format!("{s:.1} s")
}
