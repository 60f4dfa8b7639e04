//! The imperative shell around the app: a sampler thread, an input thread and a signal thread
//! around one `Core` (the app, the terminal, where effects go), which the main thread and the
//! sampler take turns on.
//!
//! The sampler reads its source with the core unlocked, then locks it, applies the sample and
//! redraws itself: an idle screen costs one wake-up per sample. (Handing each sample to the
//! main thread through a channel cost a second wake-up and a cross-CPU wake per sample, about
//! 0.05 ms/s on the 2-core VM the budgets are measured on.) Keys, signals and job reports come
//! to the main thread as messages; it applies them under the same lock.
//!
//! A read of /proc stuck on a stalled system holds no lock, so it never freezes the keys; the
//! clock on screen keeps running from the main thread's ticks, which fire only while samples
//! do not drive the screen (`TickTimer`). While samples do, a stall is caught by an alarm the
//! sampler re-arms before each read (SIGALRM, no wake-up while all is well), and the main
//! thread sleeps.
//! Owns: threads, the terminal loop, pagewatch's own CPU accounting.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ratatui::crossterm::event::{self, Event};

use crate::app::{App, Effect, JobCmd, Msg};
use crate::jobs::supervisor::{FioSettings, Supervisor};
use crate::sample::RawSample;
use crate::shell::config_io::Saver;
use crate::shell::tee::Tee;
use crate::shell::term::Term;
use crate::source::{Clock, Source, SystemClock, Ticker, Wake};

/// Control messages to the sampler.
enum Control {
    Interval(f64),
    /// Re-read the source's slow files with the next sample (`Source::refresh_soon`).
    Refresh,
    /// Collect this "who" data from the next sample on (`Source::want`).
    Want(crate::sample::Wants),
    /// Keep these learned disk baselines (`Source::keep_baselines`).
    KeepBaselines(crate::parse::baselines::Stored),
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
    /// Serve the figures at this address's `/metrics` (`--listen`).
    pub listen: Option<std::net::SocketAddr>,
    /// Save the settings changed in the screen to this config file (`config_io`).
    pub config: Option<crate::config::ConfigPath>,
    /// Clicks and the wheel (off with `--no-mouse`).
    pub mouse: bool,
    /// `connect --allow-actions`: the jobs go to the remote pagewatch, not this machine.
    pub requests: Option<crate::shell::remote::Requests>,
}

/// Runs the TUI until the user quits or a signal arrives.
pub fn run(mut app: App, feed: Feed, opts: Options) -> Result<()> {
    // The endpoint first: a port in use is an error before the terminal is taken.
    let metrics = match opts.listen {
        Some(addr) => {
            let opts = crate::model::Options {
                partitions: app.ui.partitions,
            };
            let f = crate::serve::Feeder::start(addr, &app.host.hostname, opts)?;
            app.notice = Some(f.notice(app.notice.take()));
            app.publish_steps();
            Some(f)
        }
        None => None,
    };
    let (tx, rx) = mpsc::channel::<Msg>();
    let (ctl_tx, ctl_rx) = mpsc::channel::<Control>();
    let tick = if matches!(feed, Feed::Source { .. }) {
        Duration::from_secs(1)
    } else {
        Duration::from_millis(100)
    };
    spawn_input(tx.clone())?;
    let exe = std::env::current_exe().context("finding pagewatch's own binary")?;
    let edges = Edges {
        ctl: ctl_tx,
        play: crate::shell::play_edge::PlayEdge::new(exe.clone(), tx.clone(), opts.fio.dir.clone()),
        jobs: Supervisor::new(exe, tx.clone(), opts.fio),
        tee: opts
            .record
            .map(|p| Tee::start(p, app.host.clone(), app.interval_s, tx.clone())),
        remote: opts.requests.map(|r| (r, tx.clone())),
        saver: match opts.config {
            Some(p) => Some(Saver::start(p, tx.clone()).context("starting the config saver")?),
            None => None,
        },
    };
    spawn_signals(tx.clone())?;
    let (term, _guard) = crate::shell::term::init(opts.mouse).context("starting the terminal")?;
    let core = Arc::new(Mutex::new(Core {
        app: Box::new(app),
        edges,
        term: Some(term),
        cpu: CpuMeter::new(),
        timer: TickTimer::new(Instant::now(), tick),
        failed: None,
    }));
    let res = main_loop(&core, feed, &opts.initial, ctl_rx, tx, &rx, metrics);
    leave(&core);
    res
}

/// The end of every orderly exit. The sampler may still hold a reference to the core (it can
/// be mid-read), so what must end now is taken out of it rather than left to its drop:
/// the terminal (nothing is drawn after this, and the cursor comes back before `_guard`
/// restores the terminal), the jobs (stopped, their files removed), the recording, whose
/// thread writes what is queued and closes the file before this returns, and the settings
/// still being saved.
fn leave(core: &Mutex<Core>) {
    let (term, tee, saver) = {
        let mut c = lock(core);
        c.edges.shutdown();
        (c.term.take(), c.edges.tee.take(), c.edges.saver.take())
    };
    drop(term);
    drop(tee);
    if let Some(s) = saver {
        s.finish();
    }
}

/// The main thread's part: the first frame, the initial effects, then messages and ticks.
fn main_loop(
    core: &Arc<Mutex<Core>>,
    feed: Feed,
    initial: &[Effect],
    ctl: Receiver<Control>,
    tx: Sender<Msg>,
    rx: &Receiver<Msg>,
    metrics: Option<crate::serve::Feeder>,
) -> Result<()> {
    let clock = SystemClock;
    {
        let mut c = lock(core);
        c.app.update(Msg::Tick {
            now_ms: clock.wall_ms(),
        });
        c.draw()?;
        c.cpu.sample();
        for e in initial {
            if let Effect::Job(cmd) = e {
                c.edges.jobs.perform(cmd);
            }
        }
    }
    if let Feed::Source { source, paced } = feed {
        spawn_sampler(source, paced, Arc::clone(core), ctl, tx, metrics)?;
    }
    loop {
        let wait = lock(core).timer.wait(Instant::now());
        let first = match rx.recv_timeout(wait) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        let mut c = lock(core);
        if let Some(e) = c.failed.take() {
            return Err(e).context("drawing");
        }
        let mut next = match first {
            Some(m @ Msg::Tick { .. }) => {
                c.timer.restart(Instant::now());
                Some(m)
            }
            Some(m) => Some(m),
            // A sample pushed the tick away while this thread waited: wait again.
            None if !c.timer.wait(Instant::now()).is_zero() => continue,
            None => {
                c.timer.fired(Instant::now());
                if let Some(ms) = c.cpu.sample() {
                    c.app.update(Msg::CpuUse(ms));
                }
                Some(Msg::Tick {
                    now_ms: clock.wall_ms(),
                })
            }
        };
        // Apply it and coalesce whatever else is waiting into one frame.
        while let Some(m) = next.take().or_else(|| rx.try_recv().ok()) {
            if c.apply(m) {
                return Ok(());
            }
        }
        c.draw()?;
    }
}

/// What the main thread and the sampler take turns on. Whoever holds it applies a message or
/// a sample, performs the effects and redraws.
struct Core {
    /// Boxed: at 17 KB, each move of an `App` held inline (into `Core`, the `Mutex`, the
    /// `Arc`) took a copy in `run`'s stack frame, 69 KB in all, resident for the whole run.
    app: Box<App>,
    edges: Edges,
    /// `None` once pagewatch is leaving: nothing is drawn after.
    term: Option<Term>,
    cpu: CpuMeter,
    timer: TickTimer,
    /// A frame the sampler could not write; the main thread returns it as its error.
    failed: Option<std::io::Error>,
}

impl Core {
    /// Applies a message and its effects; true when pagewatch should quit.
    fn apply(&mut self, msg: Msg) -> bool {
        if let (Msg::Resize, Some(t)) = (&msg, &mut self.term) {
            t.resized();
        }
        // A mouse event is placed on the screen as last drawn (`ui::hit`).
        let msg = match msg {
            Msg::Mouse(m) => {
                let area = self.term.as_ref().and_then(Term::area);
                let Some(target) =
                    area.and_then(|a| crate::ui::hit::target(&self.app, a, m.column, m.row))
                else {
                    return false;
                };
                Msg::Pointer(crate::app::Pointer {
                    kind: m.kind,
                    target,
                })
            }
            m => m,
        };
        let effects = self.app.update(msg);
        if self.app.needs_ticks() {
            self.timer.needed(Instant::now());
        }
        perform(effects, &mut self.edges)
    }

    /// Applies a fresh sample (recorded even while the display is paused: the recording is of
    /// the session) that took `took_us` to read; true when pagewatch should quit.
    fn sample(&mut self, s: &RawSample, took_us: u64) -> bool {
        self.app.update(Msg::SampleTook(took_us));
        if let Some(ms) = self.cpu.sample() {
            self.app.update(Msg::CpuUse(ms));
        }
        if let Some(t) = &self.edges.tee {
            t.sample(s);
        }
        let effects = self.app.sample(s);
        if self.app.needs_ticks() {
            self.timer.needed(Instant::now());
        } else {
            let interval = Duration::from_secs_f64(self.app.interval_s);
            self.timer.sample_arrived(Instant::now(), interval);
        }
        perform(effects, &mut self.edges)
    }

    /// Redraws if anything visible changed.
    fn draw(&mut self) -> std::io::Result<()> {
        match &mut self.term {
            Some(t) if self.app.take_dirty() => t.draw(&self.app),
            _ => Ok(()),
        }
    }
}

/// The core, or a panic if a thread panicked while holding it (the panic hook has restored the
/// terminal; carrying on with half-applied state would show wrong figures).
fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    core.lock().expect("a pagewatch thread panicked")
}

/// Where effects go.
struct Edges {
    ctl: Sender<Control>,
    jobs: Supervisor<Msg>,
    play: crate::shell::play_edge::PlayEdge,
    tee: Option<Tee>,
    saver: Option<Saver>,
    /// A connected screen's requests to the remote (`--allow-actions`), and where a refusal
    /// goes.
    remote: Option<(crate::shell::remote::Requests, Sender<Msg>)>,
}

impl Edges {
    /// Leaving: jobs stopped, settings put back (recorded while the recording is open).
    fn shutdown(&mut self) {
        self.jobs.shutdown();
        for kind in self.play.restore_all() {
            if let Some(t) = &self.tee {
                t.event(&crate::event::Event {
                    wall_ms: SystemClock.wall_ms(),
                    kind,
                });
            }
        }
    }
}

/// Performs effects; true when pagewatch should quit.
fn perform(effects: Vec<Effect>, edges: &mut Edges) -> bool {
    for e in effects {
        match e {
            Effect::Quit => {
                edges.shutdown();
                return true;
            }
            Effect::SetInterval(s) => {
                let _ = edges.ctl.send(Control::Interval(s));
            }
            Effect::RefreshSlow => {
                let _ = edges.ctl.send(Control::Refresh);
            }
            Effect::Want(w) => {
                let _ = edges.ctl.send(Control::Want(w));
            }
            Effect::KeepBaselines(l) => {
                let _ = edges.ctl.send(Control::KeepBaselines(l));
            }
            Effect::Save(changes) => {
                if let Some(s) = &edges.saver {
                    s.save(changes);
                }
            }
            Effect::Log(ev) => {
                if let Some(t) = &edges.tee {
                    t.event(&ev);
                }
            }
            other @ (Effect::Job(JobCmd::Tune { .. })
            | Effect::CheckPlay(_)
            | Effect::CheckTune { .. }
            | Effect::PlayEnded) => {
                edges.play.perform(&other);
            }
            Effect::Job(cmd) => match &edges.remote {
                Some((r, tx)) if crate::jobs::requests::line(&cmd).is_some() => {
                    if let Err(why) = r.send(&cmd) {
                        let _ = tx.send(Msg::Notice(why));
                    }
                }
                _ => edges.jobs.perform(&cmd),
            },
        }
    }
    false
}

/// Reads the source once per interval (or back to back when not `paced`) in the one sampler
/// loop (`sampler::run`) and applies each sample to the core itself. Interval changes,
/// refresh requests and the wants come on `ctl` (the app's effects). With `metrics`
/// (`--listen`), each sample's step (the app's) also goes to the endpoint.
fn spawn_sampler(
    mut source: Box<dyn Source + Send>,
    paced: bool,
    core: Arc<Mutex<Core>>,
    ctl: Receiver<Control>,
    tx: Sender<Msg>,
    metrics: Option<crate::serve::Feeder>,
) -> Result<()> {
    let interval_s = lock(&core).app.interval_s;
    named("sampler").spawn(move || {
        // The first sample at once, then one a tick (the same `Ticker` as every paced mode).
        let mut ticker = Ticker::on_the_clock(interval_s);
        if paced {
            arm_stall_alarm(ticker.interval()); // in case the very first read is stuck
        }
        let mut sink = Screen {
            core,
            ctl,
            tx,
            metrics,
            paced,
            interval: ticker.interval(),
        };
        crate::sampler::run(source.as_mut(), None, &mut ticker, &mut sink);
    })?;
    Ok(())
}

/// The screen's sink: each sample applied to the core and drawn; between samples, the
/// control messages.
struct Screen {
    core: Arc<Mutex<Core>>,
    ctl: Receiver<Control>,
    tx: Sender<Msg>,
    metrics: Option<crate::serve::Feeder>,
    paced: bool,
    /// The ticker's interval, for the stall alarm.
    interval: Duration,
}

impl crate::sampler::Sink for Screen {
    /// Waits for the next tick, taking interval changes, refresh requests and wants as they
    /// come.
    fn wait(&mut self, ticker: &mut Ticker, source: &mut dyn Source) -> bool {
        if !self.paced {
            return true;
        }
        loop {
            match ticker.wait_for(&self.ctl) {
                Wake::Tick => return true,
                Wake::Message(Control::Interval(s)) => {
                    ticker.set_interval(s);
                    self.interval = ticker.interval();
                    arm_stall_alarm(self.interval);
                }
                Wake::Message(Control::Refresh) => source.refresh_soon(),
                Wake::Message(Control::Want(w)) => source.want(&w),
                Wake::Message(Control::KeepBaselines(l)) => source.keep_baselines(&l),
                Wake::Closed => return false,
            }
        }
    }

    fn take(&mut self, read: crate::Result<&RawSample>, read_s: f64) -> crate::sampler::Flow {
        use crate::sampler::Flow;
        let took_us = (read_s * 1e6) as u64;
        if self.paced {
            arm_stall_alarm(self.interval);
        }
        let mut c = lock(&self.core);
        if c.term.is_none() {
            return Flow::stop(); // pagewatch is leaving
        }
        let quit = match read {
            Ok(s) => c.sample(s, took_us),
            Err(e) => {
                c.app.update(Msg::SampleTook(took_us));
                c.apply(Msg::SampleError(e.to_string()))
            }
        };
        // `/metrics` (`--listen`) serves the screen's own step: one pipeline, one judge.
        if let Some(f) = &mut self.metrics {
            match c.app.take_published() {
                Some((model, first)) => f.step(model, first, read_s),
                None => f.error(),
            }
        }
        let drawn = c.draw();
        let stop = quit || drawn.is_err();
        if let Err(e) = drawn {
            c.failed = Some(e);
        }
        drop(c);
        if stop {
            // Wake the main thread: it returns the failure, or quits.
            let _ = self.tx.send(if quit { Msg::Quit } else { Msg::Resize });
            return Flow::stop();
        }
        Flow::go_on()
    }
}

/// A thread named for `top -H` and the per-thread figures of `benches/tui_pty.rs`.
fn named(name: &str) -> std::thread::Builder {
    std::thread::Builder::new().name(name.to_owned())
}

pub(crate) fn spawn_input(tx: Sender<Msg>) -> Result<()> {
    named("input").spawn(move || {
        loop {
            let msg = match event::read() {
                Ok(Event::Key(k)) => crate::app::keymap::key_of(&k).map(Msg::Key),
                Ok(Event::Mouse(m)) => crate::app::keymap::mouse_of(&m).map(Msg::Mouse),
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

/// SIGTERM, SIGHUP, SIGINT and SIGQUIT quit (the terminal is restored as on `q`); SIGALRM is the sampler's stall alarm (`arm_stall_alarm`),
/// which becomes a tick: the main thread then runs the clock on its own ticks until samples
/// come again.
pub(crate) fn spawn_signals(tx: Sender<Msg>) -> Result<()> {
    use signal_hook::consts::{SIGALRM, SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGALRM])
            .context("installing signal handlers")?;
    named("signals").spawn(move || {
        for sig in signals.forever() {
            let msg = if sig == SIGALRM {
                Msg::Tick {
                    now_ms: SystemClock.wall_ms(),
                }
            } else {
                Msg::Quit
            };
            if tx.send(msg).is_err() || sig != SIGALRM {
                return;
            }
        }
    })?;
    Ok(())
}

/// Arms the process's alarm to ring (SIGALRM, see `spawn_signals`) one interval plus
/// `STALL_TICKS` seconds from now, rounded up to whole seconds. The sampler re-arms it after
/// every read (and before the first, and on an interval change), so it rings only when a read
/// is stuck: as the main thread's tick used to, one interval plus two ticks after the last
/// sample. `alarm(2)` replaces the previous alarm: one system call, no thread woken. Children
/// are not affected (fork does not inherit an alarm).
#[allow(unsafe_code)]
fn arm_stall_alarm(interval: Duration) {
    let secs = (interval.as_secs_f64() + f64::from(STALL_TICKS)).ceil();
    // SAFETY: alarm(2) takes a number and cannot fail; pagewatch uses no other alarm.
    unsafe {
        libc::alarm(secs.clamp(1.0, f64::from(u32::MAX)) as u32);
    }
}

/// How many ticks past a due sample the clock waits before running on the main thread's own
/// ticks: `App` finds sampling stalled after one interval plus 1.5 s.
const STALL_TICKS: u32 = 2;

/// How many ticks past a due sample the main thread's own tick is, while samples drive the
/// screen: a fallback for the stall alarm, and how often an idle main thread wakes.
const FALLBACK_TICKS: u32 = 8;

/// When the main loop's own tick is due. The tick only matters when samples do not drive the
/// screen (`App::needs_ticks`) or stop coming. A sample that arrives while samples drive the
/// screen pushes the tick `FALLBACK_TICKS` past the next sample; the sampler moves it without
/// waking the main thread, which wakes at the deadline it last saw, finds it moved and waits
/// again (every few samples). A stall is caught sooner by the sampler's alarm
/// (`arm_stall_alarm`): it rings one interval plus `STALL_TICKS` after the last read began,
/// the first tick at which `App` finds sampling stalled (interval + 1.5 s); its tick restarts
/// the timer, and the clock runs on ticks until samples come again.
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

    /// A sample arrived on time at `now`; the next one is due `interval` later. The sampler's
    /// stall alarm rings first if it does not come; this later tick is only a fallback.
    fn sample_arrived(&mut self, now: Instant, interval: Duration) {
        self.next = now + interval + FALLBACK_TICKS * self.tick;
    }

    /// A tick came from elsewhere (the stall alarm): the next is one tick from now.
    fn restart(&mut self, now: Instant) {
        self.next = now + self.tick;
    }

    /// Ticks are needed from now on (the display was paused): the next is at most one tick
    /// away.
    fn needed(&mut self, now: Instant) {
        self.next = self.next.min(now + self.tick);
    }
}

/// pagewatch's own CPU time per second of wall time.
struct CpuMeter {
    last: Option<(Instant, Duration)>,
}

/// Readings closer together than this are skipped, and the window grows until the next call:
/// a tick and a sample a few ms apart would give a noisy figure, and asking the kernel for a
/// process's CPU time is a system call that sums every thread's (`thread_group_cputime`), so
/// at 1 Hz it is asked once every five samples, which also steadies the figure.
const CPU_WINDOW: Duration = Duration::from_millis(4900);

impl CpuMeter {
    fn new() -> Self {
        Self { last: None }
    }

    fn cpu_time() -> Duration {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    /// ms of CPU per second since the previous reading, when at least `CPU_WINDOW` ago (the
    /// CPU time is only asked for then).
    fn sample(&mut self) -> Option<f64> {
        let wall = Instant::now();
        if self
            .last
            .is_some_and(|(t, _)| wall.saturating_duration_since(t) < CPU_WINDOW)
        {
            return None;
        }
        self.reading(wall, Self::cpu_time())
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
#[path = "tui_tests.rs"]
mod tests;
