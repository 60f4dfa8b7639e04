//! `pagewatch export`: a recording's derived figures as CSV, JSON lines or OpenMetrics.
//!
//! Owns: the three output formats. Must not touch: the recording format, the terminal.
