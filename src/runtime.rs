//! The imperative shell around the app: a sampler thread, an input thread and a signal thread
//! feed one channel of messages; the main thread owns `App` and the terminal, applies each
//! message, performs the effects and redraws.
//!
//! Sampling runs on its own thread, so a read of /proc stuck on a stalled system never freezes
//! the keys; the clock on screen keeps running from the main thread's ticks.
//! Owns: threads, the terminal loop, pagewatch's own CPU accounting.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ratatui::crossterm::event::{self, Event};

use crate::app::{App, Effect, Msg};
use crate::source::{Clock, Source, SystemClock};

/// Control messages to the sampler.
enum Control {
    Interval(f64),
}

/// Runs the TUI until the user quits or a signal arrives. `paced` sources are read once per
/// interval; unpaced ones (captured sequences) are read back to back until exhausted.
pub fn run(mut app: App, source: Box<dyn Source + Send>, paced: bool) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let (ctl_tx, ctl_rx) = mpsc::channel::<Control>();
    spawn_sampler(source, app.interval_s, paced, tx.clone(), ctl_rx)?;
    spawn_input(tx.clone())?;
    spawn_signals(tx)?;
    let (mut terminal, _guard) = crate::term::init().context("starting the terminal")?;
    let clock = SystemClock;
    app.update(Msg::Tick {
        now_ms: clock.wall_ms(),
    });
    terminal.draw(|f| crate::ui::draw(f, &app))?;
    let mut cpu = CpuMeter::new();
    let mut next_tick = Instant::now() + Duration::from_secs(1);
    loop {
        let msg = match rx.recv_timeout(next_tick.saturating_duration_since(Instant::now())) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                next_tick += Duration::from_secs(1);
                if let Some(ms) = cpu.sample() {
                    app.update(Msg::CpuUse(ms));
                }
                Msg::Tick {
                    now_ms: clock.wall_ms(),
                }
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        if apply(&mut app, msg, &ctl_tx) {
            return Ok(());
        }
        // Coalesce whatever else is waiting into one frame.
        while let Ok(m) = rx.try_recv() {
            if apply(&mut app, m, &ctl_tx) {
                return Ok(());
            }
        }
        if app.take_dirty() {
            terminal.draw(|f| crate::ui::draw(f, &app))?;
        }
    }
}

/// Applies a message and its effects; true when pagewatch should quit.
fn apply(app: &mut App, msg: Msg, ctl: &Sender<Control>) -> bool {
    for e in app.update(msg) {
        match e {
            Effect::Quit => return true,
            Effect::SetInterval(s) => {
                let _ = ctl.send(Control::Interval(s));
            }
        }
    }
    false
}

fn spawn_sampler(
    mut source: Box<dyn Source + Send>,
    interval_s: f64,
    paced: bool,
    tx: Sender<Msg>,
    ctl: Receiver<Control>,
) -> Result<()> {
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
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            let t0 = clock.mono_ns();
            let res = source.next_sample();
            let took_us = clock.mono_ns().saturating_sub(t0) / 1000;
            let msg = match res {
                Ok(Some(s)) => Msg::Sample(s),
                Ok(None) => return,
                Err(e) => Msg::SampleError(e.to_string()),
            };
            if tx.send(Msg::SampleTook(took_us)).is_err() || tx.send(msg).is_err() {
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
                Ok(Event::Key(k)) => crate::app::keymap::lookup(&k).map(Msg::Action),
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

/// pagewatch's own CPU time per second of wall time.
struct CpuMeter {
    last: Option<(Instant, Duration)>,
}

impl CpuMeter {
    fn new() -> Self {
        Self { last: None }
    }

    fn cpu_time() -> Duration {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    /// ms of CPU per second since the previous call.
    fn sample(&mut self) -> Option<f64> {
        let now = (Instant::now(), Self::cpu_time());
        let out = self.last.map(|(t, c)| {
            let wall = now.0.duration_since(t).as_secs_f64();
            (now.1.saturating_sub(c)).as_secs_f64() * 1000.0 / wall.max(1e-3)
        });
        self.last = Some(now);
        out
    }
}
