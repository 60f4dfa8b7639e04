//! The binary: parse arguments, build the source, run batch mode or the TUI. Owns nothing else.

use std::io::Write;

use anyhow::{Context, Result};
use clap::Parser;
use pagewatch::app::{App, Caps, Look};
use pagewatch::cli::{Args, Cmd};
use pagewatch::model::Options;
use pagewatch::runtime::Feed;
use pagewatch::source::{FsSource, HostInfo, Source, SystemClock, Ticker, TreeSource};
use pagewatch::supervise::FioSettings;

fn main() -> Result<()> {
    let args = Args::parse();
    match &args.cmd {
        None => {}
        Some(Cmd::Eat(a)) => return pagewatch::jobs::eat::run(a),
        Some(Cmd::Guard(a)) => return pagewatch::jobs::guard::run(a),
        Some(Cmd::Record(a)) => return pagewatch::record::cli::record(a),
        Some(Cmd::Replay(a)) if a.batch => return pagewatch::record::cli::replay_batch(a),
        Some(Cmd::Replay(a)) => return replay(a),
        Some(Cmd::Report(a)) => return report(a),
        Some(Cmd::Export(a)) => return export(a),
        Some(Cmd::Play(a)) => return pagewatch::play::run::main(a),
    }
    if args.batch {
        refuse_batch_jobs(&args)?;
    }
    let (source, host): (Box<dyn Source + Send>, HostInfo) = if let Some(dir) = &args.tree {
        let src =
            TreeSource::open(dir).with_context(|| format!("opening tree {}", dir.display()))?;
        (Box::new(src), HostInfo::captured(dir))
    } else {
        let proc_root = args.proc_root.clone().unwrap_or_else(|| "/proc".into());
        let sys_root = args.sys_root.clone().unwrap_or_else(|| "/sys".into());
        let host = match &args.proc_root {
            Some(p) => HostInfo::captured(p.parent().unwrap_or(p)),
            None => HostInfo::live(),
        };
        let mut src = FsSource::new(proc_root, sys_root, Box::new(SystemClock));
        // The throttle tracepoint, for the live system only; its guard is this binary.
        if args.proc_root.is_none()
            && args.sys_root.is_none()
            && let Ok(exe) = std::env::current_exe()
        {
            src = src.with_tracing(exe);
        }
        (Box::new(src), host)
    };
    if args.batch {
        return batch(&args, source);
    }
    let look = Look {
        ascii: args.ascii,
        mono: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
    };
    let mut app = App::new(host, look, args.interval);
    app.ui.partitions = args.partitions;
    app.ui.who = args.view.map(|v| match v {
        pagewatch::cli::View::Processes => pagewatch::app::WhoView::Processes,
        pagewatch::cli::View::Cgroups => pagewatch::app::WhoView::Cgroups,
    });
    let live = args.tree.is_none() && args.proc_root.is_none();
    app.caps = Caps {
        drop_caches: pagewatch::jobs::dropcache::availability().err(),
        tune: (!rustix::process::geteuid().is_root())
            .then(|| "tuning kernel settings needs root".to_owned()),
        scan_fio: live,
        experiments: live,
        captured: args.tree.is_some(),
    };
    let initial = app.launch(&args.eat, &args.fio);
    if !live && !initial.is_empty() {
        anyhow::bail!("--eat and --fio need live /proc, not --tree or --proc-root");
    }
    app.fio_presets = pagewatch::supervise::preset_views();
    playbooks(&mut app, &args)?;
    if let Some(dir) = &args.fio_dir {
        // Refuse a device, a missing path or a file now, not at the first fio job.
        pagewatch::jobs::fio::FioDir::check(Some(dir))
            .with_context(|| format!("--fio-dir {}", dir.display()))?;
    }
    for spec in &args.fio {
        pagewatch::jobs::fio::FioSpec::parse(spec).with_context(|| format!("--fio {spec}"))?;
    }
    let feed = Feed::Source {
        source,
        paced: args.tree.is_none(),
    };
    let opts = pagewatch::runtime::Options {
        initial,
        fio: FioSettings {
            dir: args.fio_dir.clone(),
            keep: args.keep_fio_files,
        },
        record: args.record.clone(),
    };
    if let Some(p) = &opts.record
        && p.exists()
    {
        anyhow::bail!(
            "--record {}: the file exists; pagewatch never overwrites a file",
            p.display()
        );
    }
    pagewatch::runtime::run(app, feed, opts)
}

fn batch(args: &Args, mut source: Box<dyn Source + Send>) -> Result<()> {
    // Captured sequences carry their own time: no waiting between them.
    let mut ticker = Ticker::new(args.interval);
    let paced = args.tree.is_none();
    let mut wait = || {
        if paced {
            ticker.wait();
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr();
    let opts = Options {
        partitions: args.partitions,
    };
    let summary = pagewatch::batch::run(
        source.as_mut(),
        args.count,
        args.format,
        opts,
        &mut out,
        &mut err,
        &mut wait,
    );
    if pagewatch::batch::failed(summary)? {
        let _ = err.flush();
        std::process::exit(1);
    }
    Ok(())
}

/// Batch mode only prints figures: it refuses jobs rather than ignoring them, before any
/// sample is read or any process started.
fn refuse_batch_jobs(args: &Args) -> Result<()> {
    let mut asked: Vec<String> = Vec::new();
    asked.extend(args.eat.iter().map(|e| format!("--eat {e}")));
    asked.extend(args.fio.iter().map(|f| format!("--fio {f}")));
    if let Some(d) = &args.fio_dir {
        asked.push(format!("--fio-dir {}", d.display()));
    }
    if asked.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "--batch only prints figures and starts no jobs, so it refuses {}; run an experiment \
         headless with `pagewatch play NAME|FILE [--record FILE]` (`pagewatch play --list`), \
         or drop --batch to start jobs in the screen",
        asked.join(" ")
    )
}

/// Reads a recording, printing what was skipped.
fn read_recording(path: &std::path::Path) -> Result<pagewatch::record::Recording> {
    let rec = pagewatch::record::read(path)
        .with_context(|| format!("reading recording {}", path.display()))?;
    for w in &rec.warnings {
        eprintln!("pagewatch: {}: {w}", path.display());
    }
    Ok(rec)
}

/// `pagewatch replay FILE`: the same screen over the recorded samples.
fn replay(a: &pagewatch::cli::ReplayArgs) -> Result<()> {
    let rec = read_recording(&a.file)?;
    let look = Look {
        ascii: a.ascii,
        mono: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
    };
    let mut app = App::new(rec.header.host.clone(), look, rec.header.interval_s);
    app.ui.partitions = a.partitions;
    let mut samples = Vec::with_capacity(rec.samples.len());
    let mut bad = 0;
    for raw in &rec.samples {
        match pagewatch::parse::Snapshot::parse(raw) {
            Ok(s) => samples.push((s, pagewatch::app::uptime_of(raw))),
            Err(_) => bad += 1,
        }
    }
    if samples.is_empty() {
        anyhow::bail!("{}: no readable samples", a.file.display());
    }
    if bad > 0 || !rec.warnings.is_empty() {
        app.notice = Some(format!(
            "{bad} unreadable samples skipped; {} warnings (see stderr)",
            rec.warnings.len()
        ));
    }
    app.events = rec.events;
    app.start_replay(samples, a.speed);
    pagewatch::runtime::run(app, Feed::Replay, pagewatch::runtime::Options::default())
}

/// `pagewatch report FILE`.
fn report(a: &pagewatch::cli::ReportArgs) -> Result<()> {
    use std::fmt::Write as _;
    let rec = read_recording(&a.file)?;
    let range =
        pagewatch::report::Range::parse(a.from.as_deref(), a.to.as_deref(), rec.header.started_ms)?;
    let s = pagewatch::report::write(&rec, range, Options::default(), &a.out)?;
    let mut text = format!("wrote {}\n", a.out.join("report.md").display());
    for f in &s.files {
        let _ = writeln!(text, "  {}", f.display());
    }
    // `pagewatch report … | head`: a closed pipe is a normal way to stop reading.
    pagewatch::batch::print_stdout(&text).context("writing output")
}

/// `pagewatch export FILE`.
fn export(a: &pagewatch::cli::ExportArgs) -> Result<()> {
    let rec = read_recording(&a.file)?;
    let opts = Options {
        partitions: a.partitions,
    };
    if let Some(p) = &a.out {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .map_err(|e| {
                let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                    " (it exists, and pagewatch never overwrites a file)"
                } else {
                    ""
                };
                anyhow::Error::new(e).context(format!("creating {}{why}", p.display()))
            })?;
        let mut w = std::io::BufWriter::new(f);
        pagewatch::export::write(&rec, a.format, opts, &mut w)?;
        w.flush()?;
        return Ok(());
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let res = pagewatch::export::write(&rec, a.format, opts, &mut w).and_then(|()| Ok(w.flush()?));
    match res {
        // A closed pipe (`pagewatch export … | head`) is a normal way to stop.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) => {}
        other => other?,
    }
    Ok(())
}

/// `--play-scale` and `--playbook`: the screen's playbook picker.
fn playbooks(app: &mut App, args: &Args) -> Result<()> {
    if !(0.01..=10.0).contains(&args.play_scale) {
        anyhow::bail!("--play-scale must be between 0.01 and 10");
    }
    app.play_scale = args.play_scale;
    for f in &args.playbooks {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("--playbook {}", f.display()))?;
        let book = pagewatch::play::Playbook::parse(&text)
            .map_err(|e| anyhow::anyhow!("--playbook {}: {e}", f.display()))?;
        app.playbooks.push(book);
    }
    Ok(())
}
