//! `pagewatch report`: a Markdown bug report with SVG charts from a recording.
//!
//! Owns: summarising derived figures over a recording and writing the report directory.
//! Must not touch: the recording format (it reads `Recording`s), the terminal.

/// Placeholder until built.
pub fn run(_args: &crate::cli::ReportArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}
