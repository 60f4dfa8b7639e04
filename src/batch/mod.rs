//! Headless batch mode: sample, derive and print one record per interval.
//!
//! Each sample goes through the one `Pipeline`, as on the screen.
//! Owns: the batch loop and its two formats. Must not touch: the clock or files directly;
//! samples come from a `Source` and pacing from the caller's `wait` closure.

mod text;

use std::io::Write;

use crate::cli::Format;
use crate::model::Options;
use crate::model::who::View;
use crate::pipeline::Pipeline;
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

/// After this many failed samples in a row, a run without `--count` stops: a file that never
/// parses would otherwise print the same error every interval forever.
pub const MAX_FAILURES_IN_A_ROW: u64 = 60;

/// Runs batch mode: reads `count + 1` samples (forever when `count` is `None`), printing one
/// record per interval to `out`. A sample that fails to read or parse is reported on `err`
/// with its file and line, counts as one of the reads, and the last good snapshot is kept for
/// the next rate. Stops after `MAX_FAILURES_IN_A_ROW` failures in a row.
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
    run_viewing(
        source,
        count,
        format,
        opts,
        &View::default(),
        out,
        err,
        wait,
    )
}

/// `run` as if the screen showed `view`: with the processes view (`--batch --view
/// processes`), the process walk runs whatever the load, at the pane's pace (`sample::Pace`:
/// every 2 s, every 10 s while the machine is quiet), as it does while the screen shows the
/// pane, instead of every 5 s when there is something to attribute.
#[allow(clippy::too_many_arguments)]
pub fn run_viewing(
    source: &mut dyn Source,
    count: Option<u64>,
    format: Format,
    opts: Options,
    view: &View,
    out: &mut dyn Write,
    err: &mut dyn Write,
    wait: &mut dyn FnMut(),
) -> std::io::Result<Summary> {
    let mut pipeline = Pipeline::new(opts, 2);
    let mut summary = Summary::default();
    let mut table = TextTable::default();
    let mut warned: Option<String> = None;
    let mut reads = 0u64;
    let mut in_a_row = 0u64;
    while count.is_none_or(|c| reads <= c) {
        if reads > 0 {
            wait();
        }
        reads += 1;
        let step = match source.next_sample() {
            Ok(None) => break,
            Ok(Some(raw)) => pipeline.push(&raw, view),
            Err(e) => Err(e),
        };
        let step = match step {
            Ok(s) => s,
            Err(e) => {
                summary.errors += 1;
                in_a_row += 1;
                writeln!(err, "pagewatch: {e}")?;
                if in_a_row >= MAX_FAILURES_IN_A_ROW {
                    writeln!(
                        err,
                        "pagewatch: stopping: the last {in_a_row} samples all failed"
                    )?;
                    break;
                }
                continue;
            }
        };
        in_a_row = 0;
        if let Some(e) = &step.model.zoneinfo_error
            && warned.as_ref() != Some(e)
        {
            writeln!(
                err,
                "pagewatch: warning: {e}; watermarks, reserves and the derived thresholds and \
                 MemAvailable are left out"
            )?;
            warned = Some(e.clone());
        }
        // As the screen does: a sysctl write or a new disk is seen on the next record.
        if step.refresh {
            source.refresh_soon();
        }
        if let Some(w) = &step.wants {
            source.want(w);
        }
        if let Some(l) = &step.learned {
            source.keep_baselines(l);
        }
        if step.first {
            continue;
        }
        let model = &step.model;
        match format {
            Format::Json => {
                serde_json::to_writer(&mut *out, model)?;
                writeln!(out)?;
            }
            Format::Text => out.write_all(table.render(model).as_bytes())?,
        }
        out.flush()?;
        summary.printed += 1;
    }
    source.keep_baselines(&pipeline.learned());
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

/// Prints `text` on stdout; a closed pipe (`pagewatch … | head`) is not an error: the
/// reader has what it wanted.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::RawSample;

    /// A source whose every sample fails, as a tree with a sysctl that never parses does.
    struct Broken(u64);

    impl Source for Broken {
        fn next_sample(&mut self) -> crate::error::Result<Option<RawSample>> {
            self.0 += 1;
            Err(crate::error::Error::parse(
                "proc/sys/vm/dirty_ratio",
                1,
                "not a number",
            ))
        }
    }

    fn run_on(src: &mut Broken, count: Option<u64>) -> (Summary, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let s = run(
            src,
            count,
            Format::Json,
            Options::default(),
            &mut out,
            &mut err,
            &mut || {},
        )
        .unwrap();
        (s, String::from_utf8(err).unwrap())
    }

    #[test]
    fn failed_samples_count_toward_the_reads() {
        let mut src = Broken(0);
        let (s, err) = run_on(&mut src, Some(1));
        assert_eq!(src.0, 2, "--count 1 takes two reads, failed or not");
        assert_eq!((s.printed, s.errors), (0, 2));
        assert!(err.contains("proc/sys/vm/dirty_ratio:1"), "{err}");
        assert!(failed(Ok(s)).unwrap(), "exit status 1");
    }

    #[test]
    fn an_endless_run_stops_after_failures_in_a_row() {
        let mut src = Broken(0);
        let (s, err) = run_on(&mut src, None);
        assert_eq!(src.0, MAX_FAILURES_IN_A_ROW);
        assert_eq!(s.errors, MAX_FAILURES_IN_A_ROW);
        assert!(
            err.ends_with("stopping: the last 60 samples all failed\n"),
            "{err}"
        );
    }
}
