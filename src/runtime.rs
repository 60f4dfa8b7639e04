//! The imperative shell around the app: a sampler thread, an input thread and a signal thread
//! feed one channel of messages; the main thread owns `App` and the terminal, applies each
//! message, performs the effects and redraws.
//!
//! Sampling runs on its own thread, so a read of /proc stuck on a stalled system never freezes
//! the keys; the clock on screen keeps running from the main thread's ticks, which fire only
//! while samples do not drive the screen (`TickTimer`), so an idle screen wakes once a second.
//! Owns: threads, the terminal loop, pagewatch's own CPU accounting.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ratatui::crossterm::event::{self, Event};

use crate::app::{App, Effect, Msg};
use crate::sample::RawSample;
use crate::source::{Clock, Source, SystemClock};
use crate::supervise::{FioSettings, Supervisor};
use crate::tee::Tee;

/// Control messages to the sampler.
enum Control {
    Interval(f64),
    /// Re-read the source's slow files with the next sample (`Source::refresh_soon`).
    Refresh,
}

/// What the screen runs on.
pub enum Feed {
    /// A source read once per interval (`paced`, live) or back to back (captured trees).
    Source {
        /// The source.
        source: Box<dyn Source + Send>,
        /// Read once per interval.
        paced: bool,
    },
    /// A recording already loaded into the app (`App::start_replay`); ticks drive playback.
    Replay,
}

/// What the runtime does besides showing the feed.
#[derive(Debug, Default)]
pub struct Options {
    /// Effects to perform once the screen is up (jobs from the command line).
    pub initial: Vec<Effect>,
    /// Where fio's test files go.
    pub fio: FioSettings,
    /// Record the session to this file (`--record`).
    pub record: Option<std::path::PathBuf>,
}

/// Runs the TUI until the user quits or a signal arrives.
pub fn run(mut app: App, feed: Feed, opts: Options) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let (ctl_tx, ctl_rx) = mpsc::channel::<Control>();
    let (used_tx, used_rx) = mpsc::channel::<RawSample>();
    // The sampler's read time rides beside each sample rather than in a message of its own:
    // a second send per sample could wake this thread twice.
    let took = Arc::new(AtomicU64::new(0));
    let tick = if let Feed::Source { source, paced } = feed {
        let back = Back {
            ctl: ctl_rx,
            used: used_rx,
        };
        spawn_sampler(
            source,
            app.interval_s,
            paced,
            tx.clone(),
            back,
            took.clone(),
        )?;
        Duration::from_secs(1)
    } else {
        Duration::from_millis(100)
    };
    spawn_input(tx.clone())?;
    let mut edges = Edges {
        ctl: ctl_tx,
        used: used_tx,
        jobs: Supervisor::new(
            std::env::current_exe().context("finding pagewatch's own binary")?,
            tx.clone(),
            opts.fio,
        ),
        tee: opts
            .record
            .map(|p| Tee::start(p, app.host.clone(), app.interval_s, tx.clone())),
    };
    spawn_signals(tx)?;
    let (mut terminal, _guard) = crate::term::init().context("starting the terminal")?;
    let clock = SystemClock;
    app.update(Msg::Tick {
        now_ms: clock.wall_ms(),
    });
    terminal.draw(&app)?;
    let mut cpu = CpuMeter::new();
    for e in &opts.initial {
        edges.jobs.perform(e);
    }
    let mut timer = TickTimer::new(Instant::now(), tick);
    loop {
        let first = match rx.recv_timeout(timer.wait(Instant::now())) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                timer.fired(Instant::now());
                if let Some(ms) = cpu.sample() {
                    app.update(Msg::CpuUse(ms));
                }
                Msg::Tick {
                    now_ms: clock.wall_ms(),
                }
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        // Apply it and coalesce whatever else is waiting into one frame.
        let mut next = Some(first);
        while let Some(m) = next.take().or_else(|| rx.try_recv().ok()) {
            let sample = matches!(m, Msg::Sample(_));
            if matches!(m, Msg::Sample(_) | Msg::SampleError(_)) {
                app.update(Msg::SampleTook(took.load(Ordering::Relaxed)));
            }
            if sample && let Some(ms) = cpu.sample() {
                app.update(Msg::CpuUse(ms));
            }
            if apply(&mut app, m, &mut edges) {
                return Ok(());
            }
            if sample && !app.needs_ticks() {
                timer.sample_arrived(Instant::now(), Duration::from_secs_f64(app.interval_s));
            }
        }
        if app.take_dirty() {
            terminal.draw(&app)?;
        }
    }
}

/// Where effects go.
struct Edges {
    ctl: Sender<Control>,
    /// Samples the app is done with, back to the sampler for reuse (`Source::recycle`).
    used: Sender<RawSample>,
    jobs: Supervisor,
    tee: Option<Tee>,
}

/// Applies a message and its effects; true when pagewatch should quit.
fn apply(app: &mut App, msg: Msg, edges: &mut Edges) -> bool {
    let effects = if let Msg::Sample(s) = msg {
        if let Some(t) = &edges.tee {
            // Recorded even while the display is paused: the recording is of the session.
            t.sample(&s);
        }
        let effects = app.sample(&s);
        // The sampler takes it back without being woken (it looks before its next read).
        let _ = edges.used.send(s);
        effects
    } else {
        app.update(msg)
    };
    for e in effects {
        match e {
            Effect::Quit => {
                edges.jobs.shutdown();
                return true;
            }
            Effect::SetInterval(s) => {
                let _ = edges.ctl.send(Control::Interval(s));
            }
            Effect::RefreshSlow => {
                let _ = edges.ctl.send(Control::Refresh);
            }
            Effect::Log(ev) => {
                if let Some(t) = &edges.tee {
                    t.event(&ev);
                }
            }
            other => edges.jobs.perform(&other),
        }
    }
    false
}

/// What comes back to the sampler from the main thread.
struct Back {
    /// Interval changes; the sampler waits on these between reads.
    ctl: Receiver<Control>,
    /// Samples done with, for the source to reuse; only looked at, never waited on.
    used: Receiver<RawSample>,
}

fn spawn_sampler(
    mut source: Box<dyn Source + Send>,
    interval_s: f64,
    paced: bool,
    tx: Sender<Msg>,
    back: Back,
    took: Arc<AtomicU64>,
) -> Result<()> {
    let Back { ctl, used } = back;
    named("sampler").spawn(move || {
        let clock = SystemClock;
        let mut interval = Duration::from_secs_f64(interval_s);
        let mut next = Instant::now();
        loop {
            // Wait for the next tick, taking interval changes as they come.
            loop {
                let now = Instant::now();
                if !paced || now >= next {
                    break;
                }
                match ctl.recv_timeout(next.saturating_duration_since(now)) {
                    Ok(Control::Interval(s)) => {
                        let new = Duration::from_secs_f64(s);
                        next = next.checked_sub(interval).unwrap_or(now) + new;
                        interval = new;
                    }
                    Ok(Control::Refresh) => source.refresh_soon(),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            while let Ok(s) = used.try_recv() {
                source.recycle(s);
            }
            let t0 = clock.mono_ns();
            let res = source.next_sample();
            let took_us = clock.mono_ns().saturating_sub(t0) / 1000;
            let msg = match res {
                Ok(Some(s)) => Msg::Sample(s),
                Ok(None) => return,
                Err(e) => Msg::SampleError(e.to_string()),
            };
            took.store(took_us, Ordering::Relaxed);
            if tx.send(msg).is_err() {
                return;
            }
            next = (next + interval).max(Instant::now());
        }
    })?;
    Ok(())
}

/// A thread named for `top -H` and the per-thread figures of `benches/tui_pty.rs`.
fn named(name: &str) -> std::thread::Builder {
    std::thread::Builder::new().name(name.to_owned())
}

fn spawn_input(tx: Sender<Msg>) -> Result<()> {
    named("input").spawn(move || {
        loop {
            let msg = match event::read() {
                Ok(Event::Key(k)) => crate::app::keymap::key_of(&k).map(Msg::Key),
                Ok(Event::Resize(..)) => Some(Msg::Resize),
                Ok(_) => None,
                Err(_) => Some(Msg::Quit),
            };
            if let Some(m) = msg
                && tx.send(m).is_err()
            {
                return;
            }
        }
    })?;
    Ok(())
}

fn spawn_signals(tx: Sender<Msg>) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT])
        .context("installing signal handlers")?;
    named("signals").spawn(move || {
        if signals.forever().next().is_some() {
            let _ = tx.send(Msg::Quit);
        }
    })?;
    Ok(())
}

/// When the main loop's own tick is due. The tick only matters when samples do not drive the
/// screen (`App::needs_ticks`) or stop coming: a sample that arrives while samples drive the
/// screen pushes the tick to one interval plus one tick later, so an idle screen wakes once
/// per sample instead of twice. If sampling stalls (a stuck /proc read), the tick fires then
/// and every tick after, and `App` runs the clock from it once the stall is long enough.
#[derive(Debug)]
struct TickTimer {
    next: Instant,
    tick: Duration,
}

impl TickTimer {
    fn new(now: Instant, tick: Duration) -> Self {
        Self {
            next: now + tick,
            tick,
        }
    }

    /// How long to wait for a message before the tick is due.
    fn wait(&self, now: Instant) -> Duration {
        self.next.saturating_duration_since(now)
    }

    /// The tick fired: the next one is a tick later (from now if the loop fell behind).
    fn fired(&mut self, now: Instant) {
        self.next += self.tick;
        if self.next <= now {
            self.next = now + self.tick;
        }
    }

    /// A sample arrived on time at `now`; the next one is due `interval` later.
    fn sample_arrived(&mut self, now: Instant, interval: Duration) {
        self.next = now + interval + self.tick;
    }
}

/// pagewatch's own CPU time per second of wall time.
struct CpuMeter {
    last: Option<(Instant, Duration)>,
}

/// Readings closer together than this are skipped (a tick and a sample a few ms apart would
/// give a noisy figure); the window then grows until the next call.
const CPU_WINDOW: Duration = Duration::from_millis(900);

impl CpuMeter {
    fn new() -> Self {
        Self { last: None }
    }

    fn cpu_time() -> Duration {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    /// ms of CPU per second since the previous reading, when at least `CPU_WINDOW` ago.
    fn sample(&mut self) -> Option<f64> {
        self.reading(Instant::now(), Self::cpu_time())
    }

    /// `sample` with the wall and CPU clocks given.
    fn reading(&mut self, wall: Instant, cpu: Duration) -> Option<f64> {
        let Some((t, c)) = self.last else {
            self.last = Some((wall, cpu));
            return None;
        };
        let window = wall.saturating_duration_since(t);
        if window < CPU_WINDOW {
            return None;
        }
        self.last = Some((wall, cpu));
        Some(cpu.saturating_sub(c).as_secs_f64() * 1000.0 / window.as_secs_f64())
    }
}

#[cfg(test)]
#[path = "runtime_tests.rs"]
mod tests;
