//! `pagewatch record FILE` (headless recording of live /proc) and `pagewatch replay FILE
//! --batch` (a recording's figures, printed as live batch mode would have).
//!
//! Owns: those two commands' loops, their signal handling and messages (the duration
//! syntax is `fmt::parse_duration`). Must not touch: the file format (`Recorder`, `read` own
//! it), parsing, deriving.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::cli::{RecordArgs, ReplayArgs};
use crate::fmt::parse_duration;
use crate::model::Options;
use crate::record::{Header, Recorder, RecordingSource};
use crate::source::{FsSource, HostInfo, Source, SystemClock, Ticker};

/// The live source `record` reads: the tracers armed (their guard is this binary), the
/// disks' stored baselines carried and kept.
fn live_source(off: crate::source::NoTrace) -> FsSource {
    let store = crate::source::baselines::Store::open_or_warn(&mut std::io::stderr());
    let source = FsSource::new("/proc", "/sys", Box::new(SystemClock)).with_baselines(store);
    match std::env::current_exe() {
        Ok(exe) => source.with_tracing(exe).without_tracers(off),
        Err(_) => source,
    }
}

/// Records live /proc and /sys into `args.file` until the duration ends or SIGINT, SIGTERM or
/// SIGHUP (a dropped SSH session) arrives, then closes the file and prints where it wrote and
/// how much.
pub fn record(args: &RecordArgs) -> Result<()> {
    refuse_jobs(args)?;
    if let Some(book) = &args.play {
        return record_play(args, book);
    }
    let limit = args.duration.as_deref().map(parse_duration).transpose()?;
    let off = crate::source::NoTrace::from_names(&args.no_trace);
    let mut live = Live::start(args.interval, &args.latency, args.queue_time, off)?;
    // The port first: a port in use must fail before the file exists (issue 22).
    let metrics = args
        .listen
        .map(|addr| {
            crate::serve::Feeder::start(addr, &live.header.host.hostname, Options::default())
        })
        .transpose()?;
    let rec = Recorder::create(&args.file, &live.header)?;
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "pagewatch: recording to {} every {} s{} (Ctrl-C to stop)",
        args.file.display(),
        args.interval,
        limit.map_or(String::new(), |d| format!(" for {}", human(d)))
    );
    let start = Instant::now();
    let sink = live.run(rec, metrics, limit)?;
    let (rec, failures, mut err) = (sink.out, sink.failures, sink.err);
    let took = start.elapsed();
    let done = rec.finish()?;
    let per = done.bytes.checked_div(done.samples).unwrap_or(0);
    let _ = writeln!(
        err,
        "pagewatch: wrote {} samples over {} to {} ({} bytes, {per} bytes per sample){}",
        done.samples,
        human(took),
        done.path.display(),
        done.bytes,
        if failures > 0 {
            format!("; {failures} samples could not be read")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// `pagewatch stream`: what `record` writes to a file, written to stdout and flushed after
/// every sample, until stdout closes (the ssh channel went away) or a signal arrives. The
/// remote side of `pagewatch connect`.
pub fn stream(args: &crate::cli::StreamArgs) -> Result<()> {
    let mut live = Live::start(args.interval, &[], false, crate::source::NoTrace::default())?;
    if args.actions {
        serve_requests()?;
    }
    // Stdout's own writer is line-buffered: the compressed bytes' newlines split every
    // record into many writes, each its own ssh packet (1584 B/s idle through ssh, 60 s).
    // One buffered write of the file descriptor a record.
    let fd = std::os::fd::AsFd::as_fd(&std::io::stdout())
        .try_clone_to_owned()
        .context("duplicating stdout")?;
    let stdout = std::io::BufWriter::with_capacity(64 << 10, std::fs::File::from(fd));
    let out = match crate::record::StreamWriter::start(stdout, &live.header) {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
        Err(e) => return Err(e).context("writing the stream's header to stdout"),
    };
    match live.run(out, None, None) {
        // Stopped by a signal: end the stream cleanly, so the other side knows it was asked.
        Ok(sink) => {
            let _ = sink.out.finish();
            Ok(())
        }
        // The other side went away (ssh closed the channel): the usual end.
        Err(e) if broken_pipe(&e) => Ok(()),
        Err(e) => Err(e),
    }
}

/// `stream --actions`: a thread carrying out the client's requests from stdin
/// (`jobs::requests`) with a supervisor of its own; when stdin closes (the client quit or was
/// killed, and ssh closed the channel) it stops every job, puts back what they changed, and
/// ends the stream as a signal would. What the jobs report goes to stderr, which ssh carries
/// to the client.
fn serve_requests() -> Result<()> {
    use std::io::BufRead;
    let exe = std::env::current_exe().context("finding pagewatch's own binary")?;
    let (tx, rx) = std::sync::mpsc::channel::<crate::jobs::protocol::JobReport>();
    std::thread::Builder::new()
        .name("reports".into())
        .spawn(move || {
            for r in rx {
                if let crate::jobs::protocol::JobReport::Notice(n) = r {
                    eprintln!("pagewatch stream: {n}");
                }
            }
        })
        .context("starting the report thread")?;
    std::thread::Builder::new()
        .name("requests".into())
        .spawn(move || {
            let mut jobs = crate::jobs::supervisor::Supervisor::new(
                exe,
                tx,
                crate::jobs::supervisor::FioSettings::default(),
            );
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                match crate::jobs::requests::parse(&line) {
                    Ok(cmd) => jobs.perform(&cmd),
                    Err(e) => eprintln!("pagewatch stream: {e}"),
                }
            }
            jobs.shutdown();
            // SAFETY: raise(3) sends this process SIGTERM, which the signal thread turns into
            // the stream's orderly end.
            #[allow(unsafe_code)]
            unsafe {
                libc::raise(libc::SIGTERM);
            }
        })
        .context("starting the request thread")?;
    Ok(())
}

/// The live side of `record` and `stream`: the signals that stop it, the source, its first
/// sample and the header made from it.
struct Live {
    stop: std::sync::mpsc::Receiver<()>,
    source: FsSource,
    first: Option<crate::sample::RawSample>,
    header: Header,
    interval: f64,
    latency: Vec<String>,
    /// `--queue-time`: the block tracer times the queue too.
    queue_time: bool,
}

impl Live {
    /// Installs the signal handlers and takes the first sample.
    fn start(
        interval: f64,
        latency: &[String],
        queue_time: bool,
        off: crate::source::NoTrace,
    ) -> Result<Self> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        // Signals arrive on a channel the ticker blocks on until the next tick (as `serve`
        // does): one wake-up a tick, not one every 50 ms (issue 27).
        let (stop_tx, stop) = std::sync::mpsc::channel::<()>();
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .context("installing signal handlers")?;
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                if signals.forever().next().is_some() {
                    let _ = stop_tx.send(());
                }
            })
            .context("starting the signal thread")?;
        let mut source = live_source(off);
        super::note_unresolved(std::path::Path::new("/sys"), latency);
        let first = source.read().context("reading /proc")?;
        let provenance = std::env::args().collect::<Vec<_>>().join(" ");
        let mut header = Header::from_sample(
            &first,
            HostInfo::live(),
            interval,
            provenance,
            first.wall_ms,
        );
        let root = rustix::process::geteuid().is_root();
        header.privilege = Some(if root { "tracepoint" } else { "wchan" }.to_owned());
        Ok(Live {
            stop,
            source,
            first: Some(first),
            header,
            interval,
            latency: latency.to_vec(),
            queue_time,
        })
    }

    /// Runs the one sampler loop, each sample written to `out`, until the limit, a signal or
    /// a write that failed.
    fn run<O: Out>(
        &mut self,
        out: O,
        metrics: Option<crate::serve::Feeder>,
        limit: Option<Duration>,
    ) -> Result<Recording<O>> {
        let mut ticker = Ticker::on_the_clock(self.interval);
        // The one pipeline decides the "who" data a recording carries and when the slow files
        // are re-read, as it does for the screen and batch mode. While writers are throttled
        // the sync calls are timed, as on the screen: the report's sync waits name the
        // victims.
        let view = crate::model::who::View {
            latency: self.latency.clone(),
            queue_time: self.queue_time,
            ..crate::model::who::View::default()
        };
        let (_, stop) = std::sync::mpsc::channel();
        let mut sink = Recording {
            stepper: crate::sampler::Stepper::new(
                crate::pipeline::Pipeline::new(crate::model::Options::default(), 2),
                view,
            ),
            out,
            metrics,
            stop: std::mem::replace(&mut self.stop, stop),
            limit,
            failures: 0,
            lost: None,
            err: std::io::stderr(),
        };
        // The first sample is the first step too: a recording started mid-incident asks at
        // once.
        let first = self.first.take();
        crate::sampler::run(&mut self.source, first, &mut ticker, &mut sink);
        if let Some(e) = sink.lost.take() {
            return Err(e);
        }
        self.source.keep_baselines(&sink.stepper.pipeline.learned());
        Ok(sink)
    }
}

/// Whether `e` is a write to a pipe nobody reads any more.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Where `record`'s and `stream`'s samples go.
trait Out {
    /// Writes one sample; the error says what was lost.
    fn sample(&mut self, s: &crate::sample::RawSample) -> Result<()>;
}

impl Out for Recorder {
    fn sample(&mut self, s: &crate::sample::RawSample) -> Result<()> {
        self.write_sample(s)
            .map_err(|e| anyhow::Error::new(e).context(lost(self)))
    }
}

impl<W: Write> Out for crate::record::StreamWriter<W> {
    fn sample(&mut self, s: &crate::sample::RawSample) -> Result<()> {
        self.write_sample(s).with_context(|| {
            format!(
                "writing the stream to stdout (the {} samples before went out)",
                self.samples()
            )
        })
    }
}

/// `record`'s sink: every sample written (and published under `--listen`), then stepped.
struct Recording<O: Out> {
    stepper: crate::sampler::Stepper,
    out: O,
    metrics: Option<crate::serve::Feeder>,
    stop: std::sync::mpsc::Receiver<()>,
    limit: Option<Duration>,
    failures: u64,
    /// A write that failed: the recording ends with it.
    lost: Option<anyhow::Error>,
    err: std::io::Stderr,
}

impl<O: Out> crate::sampler::Sink for Recording<O> {
    fn wait(&mut self, ticker: &mut Ticker, _: &mut dyn Source) -> bool {
        ticker.wait_unless(&self.stop, self.limit)
    }

    fn take(
        &mut self,
        read: crate::Result<&crate::sample::RawSample>,
        read_s: f64,
    ) -> crate::sampler::Flow {
        use crate::sampler::Flow;
        let s = match read {
            Ok(s) => s,
            Err(e) => {
                if let Some(f) = &mut self.metrics {
                    f.error();
                }
                self.failures += 1;
                let _ = writeln!(self.err, "pagewatch: skipped a sample: {e}");
                return Flow::go_on();
            }
        };
        if let Err(e) = self.out.sample(s) {
            self.lost = Some(e);
            return Flow::stop();
        }
        // `/metrics` (`--listen`) serves this pipeline's steps: one judge, one baseline.
        let Ok(step) = self.stepper.step(s) else {
            if let Some(f) = &mut self.metrics {
                f.error();
            }
            return Flow::go_on();
        };
        let flow = Flow::of(&step);
        if let Some(f) = &mut self.metrics {
            f.step(step.model, step.first, read_s);
        }
        flow
    }
}

fn usage(msg: String) -> anyhow::Error {
    anyhow::Error::new(crate::exit::Usage(msg))
}

/// `record` starts no jobs of its own: `--fio` and `--eat` are refused (a playbook runs
/// them, `--play`), before anything is read or started.
fn refuse_jobs(args: &RecordArgs) -> Result<()> {
    let asked: Vec<String> = (args.fio.iter().map(|f| format!("--fio {f}")))
        .chain(args.eat.iter().map(|e| format!("--eat {e}")))
        .collect();
    if asked.is_empty() {
        return Ok(());
    }
    Err(usage(format!(
        "record starts no jobs, so it refuses {}; write them as steps of a playbook and run \
         `pagewatch record --play FILE {}` (`pagewatch play cache-reread --show` prints one to \
         start from)",
        asked.join(" "),
        args.file.display()
    )))
}

/// `record --play`: the same run as `pagewatch play NAME --record FILE` (`cmd::play::run`).
/// The recording ends with the playbook, so `--duration` is refused; so is `--listen`
/// (the headless playbook runner serves nothing).
fn record_play(args: &RecordArgs, book: &str) -> Result<()> {
    if let Some(d) = &args.duration {
        return Err(usage(format!(
            "--duration {d} with --play: the recording ends with the playbook; drop \
             --duration (--scale shortens the playbook)"
        )));
    }
    if let Some(addr) = args.listen {
        return Err(usage(format!(
            "--listen {addr} with --play: a playbook run serves no figures; run `pagewatch \
             serve` beside it"
        )));
    }
    super::play::run(&crate::cli::PlayArgs {
        playbook: Some(book.to_owned()),
        list: false,
        show: false,
        record: Some(args.file.clone()),
        format: crate::cli::Format::Text,
        fio_dir: args.fio_dir.clone(),
        scale: args.scale.unwrap_or(1.0),
        interval: args.interval,
        accept_wbt_manual: args.accept_wbt_manual,
    })
}

fn lost(rec: &Recorder) -> String {
    format!(
        "writing {} (the {} samples written before are kept)",
        rec.path().display(),
        rec.samples()
    )
}

/// Prints a recording's derived figures as `pagewatch --batch` would have printed them live.
/// Warnings about the file (a torn tail, damage) go to stderr; a damaged one exits 1 after.
pub fn replay_batch(args: &ReplayArgs) -> Result<()> {
    let rec = super::read_recording(&args.file)?;
    let damaged = rec.damaged.then(|| super::damage(&args.file, &rec));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr();
    let mut source = RecordingSource::new(rec.samples);
    let opts = Options {
        partitions: args.partitions,
    };
    let summary = crate::batch::run(
        &mut source as &mut dyn Source,
        None,
        args.format,
        opts,
        &mut out,
        &mut err,
        &mut || {},
    );
    if crate::batch::failed(summary)? {
        let _ = err.flush();
        std::process::exit(1);
    }
    super::end_of(damaged)
}

/// `2m 5s`-style text for messages.
fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let s = d.as_secs();
        match (s / 3600, s / 60 % 60, s % 60) {
            (0, m, s) => format!("{m}m {s}s"),
            (h, m, s) => format!("{h}h {m}m {s}s"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_read_naturally() {
        assert_eq!(human(Duration::from_millis(2500)), "2.5 s");
        assert_eq!(human(Duration::from_secs(125)), "2m 5s");
        assert_eq!(human(Duration::from_secs(3725)), "1h 2m 5s");
    }
}
