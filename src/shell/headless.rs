//! `pagewatch play NAME|FILE`: runs a playbook without the screen, sampling /proc and /sys
//! once per interval (into a recording with `--record`), then prints the phase table.
//!
//! Owns: the headless run: the checks before anything starts (root, the fio directory's
//! rules, free space, MemAvailable, one playbook at a time through a lock file, and the
//! `Tuner`'s lock for a playbook that tunes), the sampler thread, carrying out the steps
//! through the `Supervisor` (eaters, fio, cache drops) and the `Tuner`, turning job reports
//! into events, and the end (jobs stopped, settings restored, on success, failure, Ctrl-C or
//! SIGTERM; the restore guard covers SIGKILL). It is an edge like `jobs/supervisor.rs`. Must not
//! touch: the terminal beyond stderr progress lines and the table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::preflight::disk_of;
use crate::event::{Event, EventKind};
use crate::jobs::eat::mem;
use crate::jobs::protocol::{JobCmd, JobKind, JobMsg, JobReport};
use crate::jobs::supervisor::{FioSettings, Supervisor};
use crate::jobs::tune::{Change, Setting, Tuner};
use crate::jobs::tuner::tune_event;
use crate::model::Model;
use crate::play::book::Playbook;
use crate::play::seq::{Env, Poll, Sequencer};
use crate::play::table::{PhaseRow, phases, render_text};
use crate::record::{Header, Recorder};
use crate::source::{FsSource, HostInfo, SystemClock};

/// How a playbook is run.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Record the run to this file.
    pub record: Option<PathBuf>,
    /// Print the table as JSON.
    pub json: bool,
    /// `--fio-dir`.
    pub fio_dir: Option<PathBuf>,
    /// Seconds between samples.
    pub interval: f64,
    /// `--accept-wbt-manual`: tune wbt although that leaves it set by hand (`jobs::wbt`).
    pub accept_wbt_manual: bool,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The phase table.
    pub phases: Vec<PhaseRow>,
    /// Why it stopped early, if it did.
    pub error: Option<String>,
}

/// Shared between the sampler and the steps: the recording, the models and the events.
#[derive(Default)]
struct Log {
    rec: Option<Recorder>,
    models: Vec<Model>,
    events: Vec<Event>,
    /// A setting was changed or put back since the last sample: the sampler re-reads the
    /// slow files (the sysctls, the queue settings) with the next one, as the screen does.
    retuned: bool,
}

fn wall_ms() -> i64 {
    crate::source::Clock::wall_ms(&SystemClock)
}

impl Log {
    fn event(&mut self, kind: EventKind) {
        let e = Event {
            wall_ms: wall_ms(),
            kind,
        };
        eprintln!("pagewatch play: {}", e.label());
        self.retuned |= matches!(e.kind, EventKind::Tune { .. });
        if let Some(r) = &mut self.rec {
            let _ = r.write_event(&e);
        }
        self.events.push(e);
    }
}

/// Takes the one-playbook-at-a-time lock, `pagewatch-play.lock` in this user's state
/// directory (`/run` for root; `jobs::lockfile`); held until the returned file is dropped.
fn lock(base: &Path) -> Result<std::fs::File> {
    let dir = crate::jobs::lockfile::state_dir(|| Ok(base.to_path_buf()))?;
    let path = dir.join("pagewatch-play.lock");
    crate::jobs::lockfile::take(&path, |who| {
        format!(
            "another playbook is running ({who} holds {}): one at a time",
            path.display()
        )
    })
}

/// The checks before a playbook runs (the fio directory's rules, root, free space,
/// MemAvailable) and the one-playbook lock, held until the file is dropped; and the fio base.
pub fn check(book: &Playbook, fio_dir: Option<&Path>) -> Result<(PathBuf, std::fs::File)> {
    let base = crate::jobs::fio::FioDir::check(fio_dir)?;
    super::preflight::preflight(book, &base)?;
    let lock = lock(&base)?;
    Ok((base, lock))
}

/// What running `book` on `device` (the fio directory's disk) would change for good: for
/// each device whose wbt it tunes while the kernel holds wbt in its default state (or in a
/// state that cannot be read, taken as default), the words of `wbt::lasting`.
#[must_use]
pub fn wbt_lasting(book: &Playbook, device: Option<&str>) -> Vec<String> {
    let mut devs = std::collections::BTreeSet::new();
    for s in &book.steps {
        if let crate::play::book::Action::Tune {
            setting,
            value: Some(_),
        } = &s.action
            && let Ok(knob) = setting.resolve(device)
            && let Some(dev) = crate::jobs::wbt::device_of(&knob.path)
        {
            devs.insert(dev.to_owned());
        }
    }
    devs.iter()
        .filter_map(|d| crate::jobs::wbt::lasting(d, &crate::jobs::wbt::state(d)))
        .collect()
}

/// The refusal of a playbook that would change wbt for good (not about its sizes: `--scale`
/// is not blamed).
#[derive(Debug)]
pub struct LastingRefused(pub String);

impl std::fmt::Display for LastingRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LastingRefused {}

/// Refuses `book` when it would change wbt for good (`wbt_lasting`) and `accept` (the flag
/// `--accept-wbt-manual`) is not given, before anything is changed; names the change either
/// way.
fn refuse_lasting(book: &Playbook, device: Option<&str>, accept: bool) -> Result<()> {
    let lasting = wbt_lasting(book, device);
    if !lasting.is_empty() && !accept {
        return Err(anyhow::Error::new(LastingRefused(format!(
            "{} changes nothing until you confirm a lasting change: {}. Add \
             --accept-wbt-manual to go ahead, or give it a disk of its own (--fio-dir on a \
             loop device's filesystem)",
            book.name,
            lasting.join("; ")
        ))));
    }
    for l in &lasting {
        eprintln!("pagewatch play: going ahead (--accept-wbt-manual): {l}");
    }
    Ok(())
}

/// A flag raised by SIGINT, SIGTERM or SIGHUP: the run stops and puts everything back.
fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    Ok(stop)
}

/// Runs `book` headless; prints progress on stderr and the table on stdout.
pub fn play(book: &Playbook, opts: &PlayOptions) -> Result<Outcome> {
    let (base, _lock) = check(book, opts.fio_dir.as_deref())?;
    let device = disk_of(&base);
    refuse_lasting(book, device.as_deref(), opts.accept_wbt_manual)?;
    let exe = std::env::current_exe().context("finding pagewatch's own binary")?;
    let mut tuner = Tuner::new(Some(exe.clone()));
    if book.tunes() {
        tuner.claim()?;
    }
    let stop = stop_on_signals()?;
    // The tracers (balance_dirty_pages, the -below one), as `record` and the screen arm them;
    // their guard is this binary.
    let mut source =
        FsSource::new("/proc", "/sys", Box::new(SystemClock)).with_tracing(exe.clone());
    let first = source.read().context("reading /proc")?;
    let log = Arc::new(Mutex::new(Log::default()));
    if let Some(p) = &opts.record {
        let header = Header::from_sample(
            &first,
            HostInfo::live(),
            opts.interval,
            std::env::args().collect::<Vec<_>>().join(" "),
            first.wall_ms,
        );
        let mut rec = Recorder::create(p, &header)?;
        rec.write_sample(&first)?;
        lock_log(&log).rec = Some(rec);
    }
    let done = Arc::new(AtomicBool::new(false));
    let sampler = spawn_sampler(
        source,
        first,
        opts.interval,
        Arc::clone(&log),
        Arc::clone(&done),
    );
    let (tx, rx) = channel();
    let mut run = Headless {
        sup: Supervisor::new(
            exe.clone(),
            tx.clone(),
            FioSettings {
                dir: opts.fio_dir.clone(),
                keep: false,
            },
        ),
        tuner,
        device: device.clone(),
        tx,
        rx,
        log: Arc::clone(&log),
        next_id: 1,
        running: BTreeMap::new(),
    };
    lock_log(&log).event(EventKind::Marker {
        text: format!("playbook {} starts", book.name),
    });
    let mut seq = Sequencer::new(book.clone(), device.clone());
    let error = run.run(&mut seq, &stop).err().map(|e| format!("{e:#}"));
    run.finish(&mut seq);
    lock_log(&log).event(EventKind::Marker {
        text: format!(
            "playbook {} {}",
            book.name,
            if error.is_some() { "stopped" } else { "ends" }
        ),
    });
    drop(run);
    done.store(true, Ordering::Release);
    let _ = sampler.join();
    let mut l = lock_log(&log);
    if let Some(rec) = l.rec.take() {
        let w = rec.finish()?;
        eprintln!(
            "pagewatch play: wrote {} samples and {} events to {}",
            w.samples,
            w.events,
            w.path.display()
        );
    }
    let rows = phases(&l.models, &l.events, device.as_deref(), wall_ms());
    if opts.json {
        let doc = serde_json::json!({
            "playbook": book.name,
            "device": device,
            "error": error,
            "phases": rows,
        });
        crate::batch::print_stdout(&format!("{doc}\n"))?;
    } else {
        crate::batch::print_stdout(&render_text(&rows))?;
    }
    Ok(Outcome {
        phases: rows,
        error,
    })
}

fn lock_log(log: &Mutex<Log>) -> std::sync::MutexGuard<'_, Log> {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn spawn_sampler(
    mut source: FsSource,
    first: crate::sample::RawSample,
    interval: f64,
    log: Arc<Mutex<Log>>,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        // The one pipeline, as `record` and the screen step: a playbook's recording carries
        // the same process walk, tracepoint and cgroup data, and the same verdicts.
        let pipeline = crate::pipeline::Pipeline::new(crate::model::Options::default(), 2);
        // A playbook is an experiment: the -below tracer (wbt, reclaim throttling; events
        // only when something holds IO back) runs throughout, as in a device's detail view;
        // the sync calls are timed while writers are throttled, as on the screen (the
        // report's sync waits: flood-vs-fsync's victim).
        let view = crate::model::who::View {
            detail: true,
            ..crate::model::who::View::default()
        };
        let mut ticker = crate::source::Ticker::on_the_clock(interval);
        let mut sink = Logging {
            stepper: crate::sampler::Stepper::new(pipeline, view),
            log,
            done,
            last: false,
            first: true,
        };
        crate::sampler::run(&mut source, Some(first), &mut ticker, &mut sink);
    })
}

/// The headless runner's sink: each sample recorded and its model kept for the phase table
/// (the first sample only stepped: it was written with the header), until `done`, and one
/// sample after it.
struct Logging {
    stepper: crate::sampler::Stepper,
    log: Arc<Mutex<Log>>,
    done: Arc<AtomicBool>,
    /// `done` was set before the last read: it was the last.
    last: bool,
    first: bool,
}

impl crate::sampler::Sink for Logging {
    fn wait(
        &mut self,
        ticker: &mut crate::source::Ticker,
        source: &mut dyn crate::source::Source,
    ) -> bool {
        self.last = self.done.load(Ordering::Acquire);
        if !self.last {
            ticker.wait();
        }
        if std::mem::take(&mut lock_log(&self.log).retuned) {
            source.refresh_soon();
        }
        true
    }

    fn take(
        &mut self,
        read: crate::Result<&crate::sample::RawSample>,
        _: f64,
    ) -> crate::sampler::Flow {
        let first = std::mem::take(&mut self.first);
        let step = read.and_then(|raw| Ok((raw, self.stepper.step(raw)?)));
        let mut flow = match step {
            Ok((raw, step)) if !first => {
                let flow = crate::sampler::Flow::of(&step);
                let mut l = lock_log(&self.log);
                if let Some(r) = &mut l.rec {
                    let _ = r.write_sample(raw);
                }
                l.models.push(step.model);
                flow
            }
            Ok((_, step)) => crate::sampler::Flow::of(&step),
            Err(_) => crate::sampler::Flow::go_on(),
        };
        flow.stop = self.last;
        flow
    }
}

/// The headless `Env` of a `Sequencer`: job effects go to the `Supervisor`, settings to the
/// `Tuner` (its report comes back on the same channel as the jobs'), events to the log.
struct Headless {
    sup: Supervisor<JobReport>,
    tuner: Tuner,
    device: Option<String>,
    tx: Sender<JobReport>,
    rx: Receiver<JobReport>,
    log: Arc<Mutex<Log>>,
    next_id: u32,
    /// Jobs running: id → label.
    running: BTreeMap<u32, String>,
}

impl Env for Headless {
    fn now_ms(&self) -> i64 {
        wall_ms()
    }

    fn mem(&self) -> Option<(u64, u64)> {
        mem().ok()
    }

    fn job(&mut self, _kind: JobKind, label: String) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        self.running.insert(id, label);
        id
    }

    fn effect(&mut self, e: JobCmd) {
        match e {
            JobCmd::Tune { setting, value } => {
                let r = tune(
                    &mut self.tuner,
                    &setting,
                    value.as_deref(),
                    self.device.as_deref(),
                );
                let _ = self.tx.send(JobReport::Tuned(r));
            }
            other => self.sup.perform(&other),
        }
    }

    fn event(&mut self, kind: EventKind) {
        lock_log(&self.log).event(kind);
    }
}

/// Writes (or, with `value` `None`, puts back) a setting; the change or why not.
pub fn tune(
    tuner: &mut Tuner,
    setting: &Setting,
    value: Option<&str>,
    device: Option<&str>,
) -> Result<Change, String> {
    let knob = setting.resolve(device)?;
    if let Some(v) = value {
        return tuner.set(&knob, v).map_err(|e| format!("{e:#}"));
    }
    if let Some(c) = tuner.restore(&knob) {
        return c.map_err(|e| format!("{e:#}"));
    }
    // Never changed: nothing to put back.
    let now = Tuner::current(&knob).map_err(|e| format!("{e:#}"))?;
    Ok(Change {
        setting: knob.name,
        old: now.clone(),
        new: now,
        restore: true,
        note: None,
    })
}

impl Headless {
    /// Drives `seq` to its end (or the first failure, or a signal).
    fn run(&mut self, seq: &mut Sequencer, stop: &AtomicBool) -> Result<()> {
        loop {
            if stop.load(Ordering::Acquire) {
                bail!("interrupted");
            }
            match seq.poll(self) {
                Poll::Done => return Ok(()),
                Poll::Failed(e) => bail!("{e}"),
                Poll::Running => {}
            }
            if let Ok(m) = self.rx.recv_timeout(Duration::from_millis(200)) {
                self.handle(&m);
                seq.on_msg(&m);
            }
        }
    }

    /// Job reports and setting changes become events and progress lines.
    fn handle(&mut self, m: &JobReport) {
        match m {
            JobReport::Job(JobMsg::Started { id, pid, argv }) => self.event(EventKind::JobStart {
                job: *id,
                what: self.running.get(id).cloned().unwrap_or_default(),
                argv: argv.clone(),
                pid: Some(*pid),
            }),
            JobReport::Job(JobMsg::Ended {
                id, how, result, ..
            }) => {
                self.running.remove(id);
                if let Some(r) = result {
                    self.event(EventKind::FioResult {
                        job: *id,
                        result: r.clone(),
                    });
                }
                self.event(EventKind::JobStop {
                    job: *id,
                    how: how.clone(),
                });
            }
            JobReport::Job(JobMsg::Note { id, text }) => eprintln!("pagewatch play: #{id} {text}"),
            JobReport::Dropped { level, took_ms } => self.event(EventKind::DropCaches {
                level: *level,
                took_ms: *took_ms,
            }),
            JobReport::Tuned(Ok(c)) => self.event(tune_event(c)),
            JobReport::Tuned(Err(e)) | JobReport::Notice(e) => eprintln!("pagewatch play: {e}"),
            _ => {}
        }
    }

    /// Stops every job and restores every setting, logging both.
    fn finish(&mut self, seq: &mut Sequencer) {
        seq.finish(self);
        for id in self.running.keys().copied().collect::<Vec<_>>() {
            self.sup.perform(&JobCmd::StopJob(id));
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        while !self.running.is_empty() && Instant::now() < deadline {
            if let Ok(m) = self.rx.recv_timeout(Duration::from_millis(200)) {
                self.handle(&m);
            }
        }
        while let Ok(m) = self.rx.try_recv() {
            self.handle(&m);
        }
        self.sup.shutdown();
        for c in self.tuner.restore_all() {
            match c {
                Ok(c) => self.event(tune_event(&c)),
                Err(e) => eprintln!("pagewatch play: restoring failed: {e:#}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// wbt-vs-flood tunes the fio disk's wbt: a device whose state cannot be read (here one
    /// that does not exist) is taken as in its default state, so running it needs the
    /// confirmation; a playbook that tunes no wbt needs none.
    #[test]
    fn a_playbook_that_tunes_wbt_names_the_lasting_change() {
        let wbt = Playbook::parse(crate::play::builtin::text("wbt-vs-flood").unwrap()).unwrap();
        let l = wbt_lasting(&wbt, Some("pw-no-such-disk"));
        assert_eq!(l.len(), 1, "one device, named once: {l:?}");
        assert!(
            l[0].contains("pw-no-such-disk") && l[0].contains("could not read"),
            "{l:?}"
        );
        let e = refuse_lasting(&wbt, Some("pw-no-such-disk"), false).unwrap_err();
        let refused = e
            .downcast_ref::<LastingRefused>()
            .expect("the typed refusal");
        assert!(refused.0.contains("--accept-wbt-manual"), "{e}");
        refuse_lasting(&wbt, Some("pw-no-such-disk"), true).unwrap();
        let other = crate::play::builtin::text("shrinking-thresholds").unwrap();
        assert!(wbt_lasting(&Playbook::parse(other).unwrap(), Some("vda")).is_empty());
    }

    #[test]
    fn a_tune_or_its_restore_asks_the_sampler_for_the_slow_files_once() {
        let mut log = Log::default();
        log.event(EventKind::Marker {
            text: "playbook x starts".into(),
        });
        assert!(!log.retuned, "a marker changes no setting");
        for restore in [false, true] {
            log.event(EventKind::Tune {
                setting: "vm.dirty_bytes".into(),
                old: "0".into(),
                new: "15728640".into(),
                restore,
                note: None,
            });
            assert!(std::mem::take(&mut log.retuned), "restore {restore}");
            assert!(!log.retuned, "taken once");
        }
    }
}
