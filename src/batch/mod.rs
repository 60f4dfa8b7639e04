//! Headless batch mode: sample, derive and print one record per interval.
//!
//! Owns: the batch loop and its two formats. Must not touch: the clock or files directly;
//! samples come from a `Source` and pacing from the caller's `wait` closure.

mod text;

use std::io::Write;

use crate::cli::Format;
use crate::model::{Model, Options};
use crate::parse::{Parser, Snapshot};
use crate::source::Source;

pub use text::{TextTable, render_text};

/// What a batch run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Records printed.
    pub printed: u64,
    /// Samples that failed to read or parse (reported on `err`).
    pub errors: u64,
}

/// Runs batch mode: reads `count + 1` samples (forever when `count` is `None`), printing one
/// record per interval to `out`. A sample that fails to read or parse is reported on `err`
/// with its file and line, and the last good snapshot is kept for the next rate.
/// `wait` is called before every read but the first; it paces live sources.
pub fn run(
    source: &mut dyn Source,
    count: Option<u64>,
    format: Format,
    opts: Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
    wait: &mut dyn FnMut(),
) -> std::io::Result<Summary> {
    let mut prev: Option<Snapshot> = None;
    let mut parser = Parser::new();
    let mut summary = Summary::default();
    let mut table = TextTable::default();
    let mut first = true;
    while count.is_none_or(|c| summary.printed < c) {
        if !first {
            wait();
        }
        first = false;
        let snap = match source.next_sample() {
            Ok(None) => break,
            Ok(Some(raw)) => parser.parse(&raw),
            Err(e) => Err(e),
        };
        let snap = match snap {
            Ok(s) => s,
            Err(e) => {
                summary.errors += 1;
                writeln!(err, "pagewatch: {e}")?;
                continue;
            }
        };
        if let Some(p) = &prev {
            let model = Model::derive(Some(p), &snap, opts);
            match format {
                Format::Json => {
                    serde_json::to_writer(&mut *out, &model)?;
                    writeln!(out)?;
                }
                Format::Text => out.write_all(table.render(&model).as_bytes())?,
            }
            out.flush()?;
            summary.printed += 1;
        }
        prev = Some(snap);
    }
    Ok(summary)
}

/// What a finished batch run means for the process: `Ok(true)` when some samples failed to
/// read or parse (exit status 1), `Ok(false)` when all was well or the reader closed the pipe
/// (`pagewatch --batch | head` is a normal way to stop), `Err` when output failed otherwise.
pub fn failed(summary: std::io::Result<Summary>) -> anyhow::Result<bool> {
    use anyhow::Context;
    match summary {
        Ok(s) => Ok(s.errors > 0),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e).context("writing output"),
    }
}
