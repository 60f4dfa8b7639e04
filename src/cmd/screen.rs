//! `pagewatch` with no subcommand (the screen over live /proc, a captured tree or other roots)
//! and `pagewatch replay FILE` (the same screen over a recording).
//!
//! Owns: turning the flags and the config file into the app and the runtime's options, the
//! source the screen and batch mode read, the playbook picker's flags, and the helpers every
//! command uses (`usage`, `read_recording`; `cmd` re-exports them). Must not touch: the
//! terminal, threads (`shell::tui` runs them).

use anyhow::{Context, Result};

// The crate under the name the lines moved from main.rs use (so merges carry edits to them
// across); a rename away once the branches that edit main.rs are merged.
use crate as pagewatch;
use pagewatch::app::{App, Caps, Look};
use pagewatch::cli::Args;
use pagewatch::jobs::supervisor::FioSettings;
use pagewatch::shell::tui::Feed;
use pagewatch::source::{FsSource, HostInfo, Source, SystemClock, TreeSource};

/// The screen over live /proc, a captured tree or other roots.
pub fn run(args: &Args) -> Result<()> {
    if let Some(p) = &args.play {
        return Err(usage(&format!(
            "the screen starts playbooks from its picker (press P; --playbook FILE adds a \
             file to it), so it refuses --play {p}; run it headless with `pagewatch play {p}`"
        )));
    }
    let (source, host) = source(args)?;
    let (config, file) = saved_settings(args);
    let settings = pagewatch::config::with_flags(file.settings, args);
    let mut app = App::new(
        host,
        look(args.ascii, &settings),
        settings.interval.unwrap_or(1.0),
    );
    app.use_settings(&settings);
    app.notice = file.notice;
    let live = args.tree.is_none() && args.proc_root.is_none();
    app.caps = Caps {
        drop_caches: pagewatch::jobs::dropcache::availability().err(),
        tune: (!rustix::process::geteuid().is_root())
            .then(|| "tuning kernel settings needs root".to_owned()),
        scan_fio: live,
        experiments: live,
        captured: args.tree.is_some(),
        latency: args.latency.clone(),
        queue_time: args.queue_time,
        remote: None,
    };
    // A --latency name that is no block device: said on the screen's notice line too (the
    // others are timed).
    if live
        && let Some(n) =
            pagewatch::source::blk::unresolved_note(std::path::Path::new("/sys"), &args.latency)
    {
        eprintln!("pagewatch: {n}");
        app.notice = Some(match app.notice.take() {
            Some(earlier) => format!("{n}; {earlier}"),
            None => n,
        });
    }
    let initial = app.launch(&args.eat, &args.fio);
    if !live && !initial.is_empty() {
        return Err(usage(
            "--eat and --fio need live /proc, not --tree or --proc-root",
        ));
    }
    app.fio_presets = pagewatch::app::prompt::preset_views();
    playbooks(&mut app, args)?;
    let mut fio_dir = settings.fio_dir.clone();
    if let Some(dir) = &fio_dir {
        // Refuse a device, a missing path or a file now, not at the first fio job: the
        // flag's with an error, the config file's with a notice (and the default).
        let checked = pagewatch::jobs::fio::FioDir::check(Some(dir));
        if args.fio_dir.is_some() {
            checked.with_context(|| format!("--fio-dir {}", dir.display()))?;
        } else if let Err(e) = checked {
            let n = format!(
                "config fio_dir {}: {e:#}; the default is used",
                dir.display()
            );
            eprintln!("pagewatch: {n}");
            app.notice = Some(n);
            fio_dir = None;
        }
    }
    for spec in &args.fio {
        pagewatch::jobs::fio::FioSpec::parse(spec)
            .map_err(|e| usage(&format!("--fio {spec}: {e:#}")))?;
    }
    let feed = Feed::Source {
        source,
        paced: args.tree.is_none(),
    };
    let opts = pagewatch::shell::tui::Options {
        initial,
        fio: FioSettings {
            dir: fio_dir,
            keep: args.keep_fio_files,
        },
        record: args.record.clone(),
        listen: args.listen,
        config,
        mouse: settings.mouse.unwrap_or(true),
        requests: None,
    };
    if let Some(p) = &opts.record
        && p.exists()
    {
        anyhow::bail!(
            "--record {}: the file exists; pagewatch never overwrites a file",
            p.display()
        );
    }
    pagewatch::shell::tui::run(app, feed, opts)
}

/// The scope asked for: `--host`, `--cgroup PATH`, else found (`parse::scope`).
fn scope_choice(args: &Args) -> pagewatch::parse::scope::Choice {
    use pagewatch::parse::scope::Choice;
    match (&args.cgroup, args.host) {
        (_, true) => Choice::Host,
        (Some(p), false) => Choice::Cgroup(p.clone()),
        (None, false) => Choice::Auto,
    }
}

/// The source the screen or batch reads (a captured tree, other roots, or live /proc with the
/// throttle tracepoint) and the host it describes.
pub(super) fn source(args: &Args) -> Result<(Box<dyn Source + Send>, HostInfo)> {
    if let Some(dir) = &args.tree {
        let src = TreeSource::open(dir)
            .with_context(|| format!("opening tree {}", dir.display()))?
            .with_scope(scope_choice(args));
        return Ok((Box::new(src), HostInfo::captured(dir)));
    }
    let proc_root = args.proc_root.clone().unwrap_or_else(|| "/proc".into());
    let sys_root = args.sys_root.clone().unwrap_or_else(|| "/sys".into());
    let host = match &args.proc_root {
        Some(p) => HostInfo::captured(p.parent().unwrap_or(p)),
        None => HostInfo::live(),
    };
    let mut src =
        FsSource::new(proc_root, sys_root, Box::new(SystemClock)).with_scope(scope_choice(args));
    // The throttle tracepoint, for the live system only; its guard is this binary.
    if args.proc_root.is_none()
        && args.sys_root.is_none()
        && let Ok(exe) = std::env::current_exe()
    {
        let off = pagewatch::source::NoTrace::from_names(&args.no_trace);
        src = src.with_tracing(exe).without_tracers(off).with_baselines(
            pagewatch::source::baselines::Store::open_or_warn(&mut std::io::stderr()),
        );
    }
    Ok((Box::new(src), host))
}

/// The config file's settings, as read at start.
pub(super) struct FileSettings {
    pub(super) settings: pagewatch::config::Settings,
    /// What was wrong with the file, for the screen (it is printed to stderr too).
    pub(super) notice: Option<String>,
}

/// The config file to use (`--config FILE`, else the XDG default; none with `--no-config`)
/// and its settings.
pub(super) fn saved_settings(args: &Args) -> (Option<pagewatch::config::ConfigPath>, FileSettings) {
    use pagewatch::config::ConfigPath;
    let loc = if args.no_config {
        None
    } else {
        args.config.clone().map(ConfigPath::explicit).or_else(|| {
            ConfigPath::default_for(
                std::env::var_os("XDG_CONFIG_HOME"),
                std::env::var_os("HOME"),
            )
        })
    };
    let Some(loc) = loc else {
        let none = FileSettings {
            settings: pagewatch::config::Settings::default(),
            notice: None,
        };
        return (None, none);
    };
    let path = &loc.file;
    let (settings, problems) = pagewatch::shell::config_io::load(path);
    let all: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let all = all.join("; ");
    if !problems.is_empty() {
        eprintln!("pagewatch: config {}: {all}", path.display());
    }
    // On screen the problem first: the jobs pane cuts a notice at its width.
    let notice = (!problems.is_empty()).then(|| format!("config {all} (in {})", path.display()));
    (Some(loc), FileSettings { settings, notice })
}

/// How the screen is drawn: `--ascii`, and colours unless NO_COLOR is set or the settings
/// say never.
pub(super) fn look(ascii: bool, s: &pagewatch::config::Settings) -> Look {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    Look {
        ascii,
        mono: no_color || s.color == Some(pagewatch::config::ColorMode::Never),
    }
}

/// A usage error (exit code 2).
pub(crate) fn usage(msg: &str) -> anyhow::Error {
    anyhow::Error::new(pagewatch::exit::Usage(msg.to_owned()))
}

/// Reads a recording, printing what was skipped (each warning names the file once).
pub(crate) fn read_recording(path: &std::path::Path) -> Result<pagewatch::record::Recording> {
    let rec = pagewatch::record::read(path)
        .with_context(|| format!("reading recording {}", path.display()))?;
    for w in &rec.warnings {
        eprintln!("pagewatch: warning: {w}");
    }
    Ok(rec)
}

/// The end of a command over `rec` read from `path`, once it has shown what it could: a
/// damaged recording exits 1 (`exit::Damaged`), a torn tail or an unclosed end does not.
pub(crate) fn damage(
    path: &std::path::Path,
    rec: &pagewatch::record::Recording,
) -> pagewatch::exit::Damaged {
    pagewatch::exit::Damaged {
        path: path.display().to_string(),
        kept: rec.samples.len(),
    }
}

/// `Err(damage)` when the recording was damaged.
pub(crate) fn end_of(damaged: Option<pagewatch::exit::Damaged>) -> Result<()> {
    damaged.map_or(Ok(()), |d| Err(anyhow::Error::new(d)))
}

/// `pagewatch replay FILE`: the same screen over the recorded samples.
pub fn replay(args: &Args, a: &pagewatch::cli::ReplayArgs) -> Result<()> {
    let rec = read_recording(&a.file)?;
    let damaged = rec.damaged.then(|| damage(&a.file, &rec));
    if let Some(p) = &args.play {
        return Err(usage(&format!(
            "the screen starts playbooks from its picker (press P; --playbook FILE adds a \
             file to it), so it refuses --play {p}; run it headless with `pagewatch play {p}`"
        )));
    }
    let (config, file) = saved_settings(args);
    let settings = pagewatch::config::with_flags(file.settings, args);
    let mut app = App::new(
        rec.header.host.clone(),
        look(a.ascii, &settings),
        rec.header.interval_s,
    );
    app.use_settings(&settings);
    app.notice = file.notice;
    app.ui.partitions |= a.partitions;
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
    let opts = pagewatch::shell::tui::Options {
        config,
        mouse: settings.mouse.unwrap_or(true),
        ..pagewatch::shell::tui::Options::default()
    };
    pagewatch::shell::tui::run(app, Feed::Replay, opts)?;
    end_of(damaged)
}

/// `--play-scale` and `--playbook`: the screen's playbook picker.
fn playbooks(app: &mut App, args: &Args) -> Result<()> {
    if !(0.01..=10.0).contains(&args.play_scale) {
        anyhow::bail!("--play-scale must be between 0.01 and 10");
    }
    app.play_scale = args.play_scale;
    for f in &args.playbooks {
        let book = pagewatch::play::file::load(f)?;
        app.playbooks.push(book);
    }
    Ok(())
}

/// Says once on stderr which `--latency` names are no block device under `sys` (the others
/// are timed; the tracer's status names them too: `latency_tracer.unresolved`).
pub(crate) fn note_unresolved(sys: &std::path::Path, names: &[String]) {
    if let Some(note) = crate::source::blk::unresolved_note(sys, names) {
        eprintln!("pagewatch: {note}");
    }
}
