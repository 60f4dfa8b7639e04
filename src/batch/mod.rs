//! Headless batch mode: sample, derive and print one record per interval.
//!
//! Each sample goes through the one `Pipeline` in the one sampler loop (`sampler::run`), as
//! on the screen. Owns: batch mode's sink and its two formats. Must not touch: the clock or files directly;
//! samples come from a `Source` and pacing from the caller's `wait` closure.

mod text;

use std::io::Write;

use crate::cli::Format;
use crate::model::Options;
use crate::model::who::View;
use crate::pipeline::Pipeline;
use crate::sample::RawSample;
use crate::sampler::{Flow, Sink, Stepper};
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

/// `run` with `view`'s devices to time (`--latency`) and its `-below` tracer (`--below`).
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
    let to = Output { out, err, wait };
    run_printer(
        source,
        count,
        format,
        Stepper::new(Pipeline::new(opts, 2), view.clone()),
        None,
        to,
    )
}

/// Where a batch run prints, and what paces it.
pub struct Output<'o> {
    /// The records.
    pub out: &'o mut dyn Write,
    /// The failures.
    pub err: &'o mut dyn Write,
    /// Called before every read but the first.
    pub wait: &'o mut dyn FnMut(),
}

/// `run` over another machine's stream (`pagewatch connect --batch`): each JSON record has
/// `host` set to `host`; the remote side paces the samples.
pub fn run_host(
    source: &mut dyn Source,
    host: &str,
    count: Option<u64>,
    format: Format,
    opts: Options,
    to: Output<'_>,
) -> std::io::Result<Summary> {
    let stepper = Stepper::new(Pipeline::new(opts, 2), View::default());
    run_printer(source, count, format, stepper, Some(host.to_owned()), to)
}

fn run_printer(
    source: &mut dyn Source,
    count: Option<u64>,
    format: Format,
    stepper: Stepper,
    host: Option<String>,
    Output { out, err, wait }: Output<'_>,
) -> std::io::Result<Summary> {
    let mut printer = Printer {
        stepper,
        host,
        count,
        format,
        out,
        err,
        wait,
        summary: Summary::default(),
        table: TextTable::default(),
        warned: None,
        reads: 0,
        in_a_row: 0,
        failed: None,
    };
    // Batch paces itself (`wait`); the loop's own ticker is never waited on.
    let mut unused = crate::source::Ticker::new(1.0);
    crate::sampler::run(source, None, &mut unused, &mut printer);
    source.keep_baselines(&printer.stepper.pipeline.learned());
    match printer.failed {
        Some(e) => Err(e),
        None => Ok(printer.summary),
    }
}

/// Batch mode's sink: one record per step after the first, and the failures on `err`.
struct Printer<'o> {
    stepper: Stepper,
    /// Set in every JSON record (`connect`).
    host: Option<String>,
    count: Option<u64>,
    format: Format,
    out: &'o mut dyn Write,
    err: &'o mut dyn Write,
    wait: &'o mut dyn FnMut(),
    summary: Summary,
    table: TextTable,
    warned: Option<String>,
    reads: u64,
    in_a_row: u64,
    /// Output that failed: the run ends with it.
    failed: Option<std::io::Error>,
}

impl Sink for Printer<'_> {
    fn wait(&mut self, _: &mut crate::source::Ticker, _: &mut dyn Source) -> bool {
        if self.count.is_some_and(|c| self.reads > c) {
            return false;
        }
        (self.wait)();
        true
    }

    fn take(&mut self, read: crate::Result<&RawSample>, _: f64) -> Flow {
        self.reads += 1;
        let step = read.and_then(|raw| self.stepper.step(raw));
        let (flow, res) = match step {
            Ok(step) => (Flow::of(&step), self.print(&step)),
            Err(e) => self.failure(&e),
        };
        match res {
            Ok(()) => flow,
            Err(e) => {
                self.failed = Some(e);
                Flow::stop()
            }
        }
    }
}

impl Printer<'_> {
    /// A sample that failed to read or parse; stops after `MAX_FAILURES_IN_A_ROW`.
    fn failure(&mut self, e: &crate::Error) -> (Flow, std::io::Result<()>) {
        self.summary.errors += 1;
        self.in_a_row += 1;
        let mut res = writeln!(self.err, "pagewatch: {e}");
        if self.in_a_row >= MAX_FAILURES_IN_A_ROW {
            res = res.and_then(|()| {
                writeln!(
                    self.err,
                    "pagewatch: stopping: the last {} samples all failed",
                    self.in_a_row
                )
            });
            return (Flow::stop(), res);
        }
        (Flow::go_on(), res)
    }

    /// Prints one step's record (none for the first), after a zoneinfo warning that changed.
    fn print(&mut self, step: &crate::pipeline::Step) -> std::io::Result<()> {
        self.in_a_row = 0;
        if let Some(e) = &step.model.zoneinfo_error
            && self.warned.as_ref() != Some(e)
        {
            writeln!(
                self.err,
                "pagewatch: warning: {e}; watermarks, reserves and the derived thresholds and \
                 MemAvailable are left out"
            )?;
            self.warned = Some(e.clone());
        }
        if step.first {
            return Ok(());
        }
        let model = &step.model;
        match self.format {
            Format::Json if self.host.is_some() => {
                let mut v = serde_json::to_value(model)?;
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("host".to_owned(), self.host.clone().into());
                }
                serde_json::to_writer(&mut *self.out, &v)?;
                writeln!(self.out)?;
            }
            Format::Json => {
                serde_json::to_writer(&mut *self.out, model)?;
                writeln!(self.out)?;
            }
            Format::Text => self.out.write_all(self.table.render(model).as_bytes())?,
        }
        self.out.flush()?;
        self.summary.printed += 1;
        Ok(())
    }
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
