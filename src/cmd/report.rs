//! `pagewatch report FILE`: a Markdown report with charts from a recording.
//!
//! Owns: the command's messages. Must not touch: what the report says (`report`).

use anyhow::{Context, Result};

use super::{damage, end_of, read_recording};
use crate::model::Options;

/// `pagewatch report FILE`.
pub fn run(a: &crate::cli::ReportArgs) -> Result<()> {
    use std::fmt::Write as _;
    let rec = read_recording(&a.file)?;
    let damaged = rec.damaged.then(|| damage(&a.file, &rec));
    let range =
        crate::report::Range::parse(a.from.as_deref(), a.to.as_deref(), rec.header.started_ms)?;
    let s = crate::report::write(&rec, range, Options::default(), &a.out)?;
    let mut text = format!("wrote {}\n", a.out.join("report.md").display());
    for f in &s.files {
        let _ = writeln!(text, "  {}", f.display());
    }
    // The report's first line, so the answer is on the terminal too.
    let _ = writeln!(text, "{}", crate::fmt::escape_controls(&s.verdict));
    // And who did it, to whom, as the report's first paragraph says (issue 50).
    if let Some(who) = s.story.text(rec.header.started_ms) {
        let _ = writeln!(text, "{who}");
    }
    // `pagewatch report … | head`: a closed pipe is a normal way to stop reading.
    crate::batch::print_stdout(&text).context("writing output")?;
    end_of(damaged)
}
