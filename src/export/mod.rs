//! `pagewatch export`: a recording's derived figures as CSV, JSON lines or OpenMetrics.
//!
//! Owns: the three output formats. Must not touch: the recording format, the terminal.

/// Placeholder until built.
pub fn run(_args: &crate::cli::ExportArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}
