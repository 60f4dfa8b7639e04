//! The one owner of application state, changed only by messages.
//!
//! Owns: `App` (latest model, history, UI state) and `update`. Must not touch: the terminal,
//! files, threads or the clock: time arrives in messages.

mod experiments;
pub mod fleet;
mod job_detail;
pub mod jobs;
pub mod keymap;
pub mod msg;
mod phases;
mod play;
mod pointer;
mod prefs;
pub mod prompt;
mod remote;
pub mod replay;
pub mod scan;
mod state;
mod update;
mod who;

pub use jobs::{Job, JobState, Jobs};
pub use keymap::{Action, Key, Mouse, MouseKind};
pub use msg::{Effect, Msg, Pointer, SelfCost, Target, TuneView};
pub use phases::PhaseTable;
pub use prompt::{Field, PresetView, Prompt};
pub use remote::{LOST as REMOTE_LOST, Remote};
pub use replay::Replay;
pub use state::{Focus, UiState};

pub use crate::config::{CgroupSort, ProcSort, SortKey, WhoView};
use crate::event::{Event, EventKind};
use crate::history::History;
pub use crate::jobs::fio::FioFigures;
pub use crate::jobs::protocol::{ForeignFio, JobCmd, JobKind, JobMsg, JobReport};
use crate::model::{Disk, Model, Options};
use crate::parse::Snapshot;
use crate::pipeline::Pipeline;
use crate::source::HostInfo;

/// Most events kept for chart markers and the jobs pane.
const MAX_EVENTS: usize = 1000;

/// Interval steps for `+` and `-`, seconds.
const INTERVALS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0];

/// How the screen is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Look {
    /// No braille, block or box-drawing glyphs.
    pub ascii: bool,
    /// No colours (NO_COLOR).
    pub mono: bool,
}

/// The step kept for the `--listen` endpoint (`App::publish_steps`): its model, and whether
/// it was the first.
#[derive(Debug, Default)]
struct Published(Option<(Model, bool)>);

/// Application state.
#[derive(Debug)]
pub struct App {
    /// Host facts for the header.
    pub host: HostInfo,
    /// Drawing options.
    pub look: Look,
    /// Seconds between samples.
    pub interval_s: f64,
    /// Derived figures of the latest sample.
    pub model: Option<Model>,
    /// Focus, sort, selection, overlays.
    pub ui: UiState,
    /// The last sampling or parsing error, until a good sample arrives.
    pub error: Option<String>,
    /// Wall clock, ms (from ticks and samples).
    pub now_ms: i64,
    /// Wall time of the latest sample shown, ms.
    pub sample_ms: i64,
    /// Seconds since boot at the latest sample, when known.
    pub uptime_s: Option<f64>,
    /// pagewatch's own cost.
    pub self_cost: Option<SelfCost>,
    /// Jobs started from pagewatch and fio processes found running.
    pub jobs: Jobs,
    /// The open prompt, if any; keys go to it first.
    pub prompt: Option<Prompt>,
    /// Session events (job starts and stops, cache drops, markers), oldest first.
    pub events: Vec<Event>,
    /// The latest notice for the user (a refusal, a missing tool), until the next one.
    pub notice: Option<String>,
    /// Why the experiment keys are unavailable, if they are (replay, no tools); and why
    /// dropping caches is (not root).
    pub caps: Caps,
    /// fio presets for the `f` form.
    pub fio_presets: Vec<PresetView>,
    /// The recording being replayed.
    pub replay: Option<Replay>,
    /// The playbook running from the screen (`P`), if any.
    pub play: Option<crate::play::seq::Sequencer>,
    /// Playbooks from the picker are scaled by this (`--play-scale`).
    pub play_scale: f64,
    /// Playbook files offered in the picker before the built-ins (`--playbook`).
    pub playbooks: Vec<crate::play::Playbook>,
    /// A picked playbook is being checked or confirmed (one at a time).
    play_checking: bool,
    /// The checked playbook and its disk, waiting for the confirmation.
    play_pending: Option<(crate::play::Playbook, Option<String>)>,
    /// The phase table of the playbook that ended last, shown over the screen until closed.
    pub phase_table: Option<PhaseTable>,
    /// The running playbook's models (slimmed), for its phase table.
    play_models: Vec<Model>,
    /// The running playbook's events, from its start marker on (`None`: none runs).
    play_events: Option<Vec<Event>>,
    last_scan_ms: Option<i64>,
    /// The one pipeline from samples to judged models (parser, previous snapshot, process
    /// walks, who gate, refresh policy, disk baselines, chart history).
    pipeline: Pipeline,
    /// The last step's refresh and wants, for the runtime (`sample`).
    step_refresh: bool,
    step_wants: Option<crate::sample::Wants>,
    /// With the `--listen` endpoint (`publish_steps`), the last step kept for it.
    published: Option<Published>,
    /// The chart history as it stood when the display was paused: the pipeline goes on
    /// stepping (its baselines, the endpoint), the charts stay still.
    paused_history: Option<History>,
    /// The last step's learned baselines, for the runtime to keep (`Step::learned`).
    step_learned: Option<crate::parse::baselines::Stored>,
    dirty: bool,
}

impl App {
    /// A new app with no samples yet.
    #[must_use]
    pub fn new(host: HostInfo, look: Look, interval_s: f64) -> Self {
        Self {
            host,
            look,
            interval_s,
            model: None,
            ui: UiState::default(),
            error: None,
            now_ms: 0,
            sample_ms: 0,
            uptime_s: None,
            self_cost: None,
            jobs: Jobs::default(),
            prompt: None,
            events: Vec::new(),
            notice: None,
            caps: Caps::default(),
            fio_presets: Vec::new(),
            replay: None,
            play: None,
            play_scale: 1.0,
            playbooks: Vec::new(),
            play_checking: false,
            play_pending: None,
            phase_table: None,
            play_models: Vec::new(),
            play_events: None,
            last_scan_ms: None,
            pipeline: Pipeline::new(Options::default(), crate::pipeline::HISTORY),
            step_refresh: false,
            step_wants: None,
            published: None,
            paused_history: None,
            step_learned: None,
            dirty: true,
        }
    }

    /// Whether the runtime's ticks matter now: nothing shown yet, the display paused (samples
    /// are not shown, the clock runs on ticks) or a replay (ticks drive it). Otherwise samples
    /// drive the screen, and ticks matter only once sampling stalls (see `Msg::Tick`).
    #[must_use]
    pub fn needs_ticks(&self) -> bool {
        self.model.is_none() || self.ui.paused || self.replay.is_some()
    }

    /// Whether anything visible changed since the last call (the runtime redraws then).
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// Applies a fresh raw sample (what `Msg::Sample` does), borrowing it so the runtime can
    /// hand it back to the source for reuse.
    ///
    /// While the display is paused the sample is still stepped (the disks' baselines, the
    /// gate and the `--listen` endpoint go on; a recording is of the session), but nothing
    /// shown changes.
    pub fn sample(&mut self, raw: &crate::sample::RawSample) -> Vec<Effect> {
        let mut effects = self.remote_back(raw);
        if self.ui.paused {
            self.dirty = false;
            self.step_unshown(raw);
            effects.extend(self.asks());
            return effects;
        }
        self.dirty = true;
        self.ingest(raw);
        effects.extend(self.scan_due());
        effects.extend(self.drive_play(None));
        effects.extend(self.asks());
        effects.extend(self.who_refresh());
        effects.extend(self.job_files_due());
        effects
    }

    /// What the last steps asked of the source: the slow files re-read, the "who" data.
    fn asks(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        if std::mem::take(&mut self.step_refresh) {
            effects.push(Effect::RefreshSlow);
        }
        let wants = self.step_wants.take();
        if let Some(w) = wants.filter(|_| !self.caps.captured && self.replay.is_none()) {
            effects.push(Effect::Want(w));
        }
        let learned = self.step_learned.take();
        if let Some(l) = learned.filter(|_| !self.caps.captured && self.replay.is_none()) {
            effects.push(Effect::KeepBaselines(l));
        }
        effects
    }

    /// Steps a sample the paused display does not show.
    fn step_unshown(&mut self, raw: &crate::sample::RawSample) {
        self.pipeline.set_options(self.options());
        let view = self.who_view();
        if let Ok(step) = self.pipeline.push(raw, &view) {
            self.step_refresh |= step.refresh;
            if step.wants.is_some() {
                self.step_wants = step.wants;
            }
            if let Some(p) = &mut self.published {
                p.0 = Some((step.model, step.first));
            }
        }
    }

    /// Keeps every step from now on for the `--listen` endpoint (`take_published`), which
    /// serves the screen's own steps rather than deriving them again.
    pub fn publish_steps(&mut self) {
        self.published.get_or_insert_with(Published::default);
    }

    /// The last sample's step (its model, and whether it was the first step), once, when
    /// `publish_steps` asked for them and the sample parsed.
    pub fn take_published(&mut self) -> Option<(Model, bool)> {
        self.published.as_mut().and_then(|p| p.0.take())
    }

    /// The chart history (kept by the pipeline; as it stood when the display was paused).
    #[must_use]
    pub fn history(&self) -> &History {
        (self.paused_history.as_ref()).unwrap_or_else(|| self.pipeline.history())
    }

    /// The devices to time: `--latency`'s, and the one the detail view shows (`Enter`).
    fn latency_devices(&self) -> Vec<String> {
        let mut devs = self.caps.latency.clone();
        if self.ui.detail
            && let Some(d) = self.selected_disk()
        {
            devs.push(d.name.clone());
        }
        devs
    }

    /// What the screen shows that decides the "who" data collected.
    fn who_view(&self) -> crate::model::who::View {
        crate::model::who::View {
            processes: self.ui.who == Some(WhoView::Processes),
            cgroups: self.ui.who == Some(WhoView::Cgroups),
            scope: self.ui.scope.clone(),
            latency: self.latency_devices(),
            queue_time: self.caps.queue_time,
            detail: self.ui.detail,
        }
    }

    fn apply(&mut self, msg: Msg) -> Vec<Effect> {
        // Cost figures, ticks during healthy sampling and an eater's progress while it ramps
        // wait for the next sample's frame (an eater ramping 12G in 64M steps reported about
        // 11 a second, each a whole frame: 108 terminal writes in 10 s of its ramp, 12 now).
        self.dirty |= !matches!(
            msg,
            Msg::SampleTook(_)
                | Msg::CpuUse(_)
                | Msg::Tick { .. }
                | Msg::Job(JobReport::Job(JobMsg::Eat { holding: false, .. }))
        );
        match msg {
            Msg::Sample(raw) => return self.sample(&raw),
            Msg::SampleError(e) => self.error = Some(e),
            Msg::Tick { now_ms } if self.replay.is_some() => {
                let n = self.replay.as_mut().map_or(0, |r| r.advance(now_ms));
                self.step(n);
                self.dirty = n > 0;
            }
            Msg::Tick { now_ms } => {
                // Samples drive the clock; ticks only take over when sampling stalls (or has
                // not started), so an idle screen redraws once per sample, not twice.
                // A captured tree's samples carry time since boot, not the wall clock.
                let stalled = !self.caps.captured
                    && now_ms - self.sample_ms > 1500 + (self.interval_s * 1000.0) as i64;
                if self.model.is_none() || stalled || self.ui.paused {
                    self.dirty |= self.now_ms / 1000 != now_ms / 1000;
                    self.now_ms = now_ms;
                } else {
                    return Vec::new();
                }
            }
            Msg::SampleTook(us) => {
                self.self_cost
                    .get_or_insert_with(SelfCost::default)
                    .sample_us = us;
                return Vec::new();
            }
            Msg::CpuUse(ms) => {
                self.self_cost
                    .get_or_insert_with(SelfCost::default)
                    .cpu_ms_per_s = Some(ms);
                return Vec::new();
            }
            // A resize is redrawn; a mouse event is placed on the screen by the runtime first
            // (`ui::hit`) and comes back as `Msg::Pointer`.
            Msg::Job(JobReport::Stack { pid, text }) if self.ui.stack_pid == Some(pid) => {
                self.ui.stack = Some((pid, text));
            }
            // A stack closed (Esc) before its read came back stays closed.
            Msg::Resize | Msg::Mouse(_) | Msg::Job(JobReport::Stack { .. }) => {}
            Msg::Quit => return self.quit(),
            Msg::Action(a) => return self.act(a),
            Msg::Key(k) => return self.key(k),
            Msg::Pointer(p) => return self.pointer(p),
            Msg::Job(JobReport::Job(j)) => return self.job(&j),
            Msg::Job(JobReport::Foreign(f)) => self.jobs.set_foreign(f, self.now_ms),
            Msg::Job(JobReport::Files { id, files }) => {
                if let Some(j) = self.jobs.list.iter_mut().find(|j| j.id == id) {
                    j.files = files;
                }
            }
            Msg::Job(JobReport::Dropped { level, took_ms }) => {
                self.notice = Some(format!("dropped caches (level {level}) in {took_ms} ms"));
                return self.log(EventKind::DropCaches { level, took_ms });
            }
            Msg::Notice(n) | Msg::Job(JobReport::Notice(n)) => self.notice = Some(n),
            Msg::Job(JobReport::Cmdlines(lines)) => self.ui.cmdlines = lines.into_iter().collect(),
            m @ (Msg::Job(JobReport::Tuned(_))
            | Msg::PlayChecked { .. }
            | Msg::TuneChecked { .. }) => {
                return self.play_msg(m);
            }
        }
        Vec::new()
    }

    /// A key press: to the open prompt first, else through the keymap.
    fn key(&mut self, k: Key) -> Vec<Effect> {
        if self.prompt.is_some() {
            return self.prompt_key(k);
        }
        if self.phase_table.is_some() {
            return self.phases_key(k);
        }
        match keymap::lookup(k, self.replay.is_some()) {
            Some(a) => self.act(a),
            None => Vec::new(),
        }
    }

    /// Whether to look for fio processes pagewatch did not start now: see `scan::period_ms`
    /// (every 2 s while some are known, every 5 s while a disk or the CPUs are busy, not at
    /// all on an idle machine). While the process walk runs over every process, the scan
    /// starts from the fio pids it found (issue #27).
    fn scan_due(&mut self) -> Vec<Effect> {
        if !self.caps.scan_fio {
            return Vec::new();
        }
        let known = !self.jobs.foreign.is_empty();
        let Some(period) = scan::period_ms(self.model.as_ref(), self.host.cpus, known) else {
            return Vec::new();
        };
        if self
            .last_scan_ms
            .is_some_and(|t| self.sample_ms - t < period && self.sample_ms >= t)
        {
            return Vec::new();
        }
        self.last_scan_ms = Some(self.sample_ms);
        let walked = self.pipeline.walk().filter(|w| w.scope.is_none());
        vec![Effect::Job(JobCmd::ScanFio(walked.map(|w| w.fio.clone())))]
    }

    /// Leaving: every job still active gets its end event (so a recording shows how it
    /// ended), then the effect that stops the jobs and quits.
    fn quit(&mut self) -> Vec<Effect> {
        let active: Vec<u32> = (self.jobs.list.iter())
            .filter(|j| j.state.active())
            .map(|j| j.id)
            .collect();
        let mut out = self.quit_play();
        for job in active {
            out.extend(self.log(EventKind::JobStop {
                job,
                how: "stopped: pagewatch quit".to_owned(),
            }));
        }
        out.push(Effect::Quit);
        out
    }

    /// Records an event for the markers and returns the effect that logs it. A setting
    /// pagewatch changed or put back (by hand, by a playbook) also re-reads the slow files
    /// with the next sample: the sysctls and queue settings are otherwise read again only
    /// every 15 samples or once the derived thresholds stop matching the kernel's, and until then
    /// the dirty pane would label the kernel's new thresholds with the old setting.
    fn log(&mut self, kind: EventKind) -> Vec<Effect> {
        let retuned = matches!(kind, EventKind::Tune { .. });
        let ev = Event {
            wall_ms: self.now_ms,
            kind,
        };
        if self.events.len() >= MAX_EVENTS {
            self.events.remove(0);
        }
        self.events.push(ev.clone());
        if let Some(v) = &mut self.play_events {
            v.push(ev.clone());
        }
        let mut out = vec![Effect::Log(ev)];
        if retuned {
            out.push(Effect::RefreshSlow);
        }
        out
    }

    fn ingest(&mut self, raw: &crate::sample::RawSample) {
        self.pipeline.set_options(self.options());
        let view = self.who_view();
        match self.pipeline.push(raw, &view) {
            Ok(step) => self.show(step, uptime_s(raw)),
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// Steps and shows one parsed sample (a replay's).
    fn ingest_snapshot(&mut self, snap: Snapshot, uptime_s: Option<f64>) {
        self.pipeline.set_options(self.options());
        let view = self.who_view();
        let step = self.pipeline.push_snapshot(snap, &view);
        self.show(step, uptime_s);
    }

    /// Shows one step's model.
    fn show(&mut self, step: crate::pipeline::Step, uptime_s: Option<f64>) {
        if let Some(p) = &mut self.published {
            p.0 = Some((step.model.clone(), step.first));
        }
        let mut model = step.model;
        self.step_refresh |= step.refresh;
        if step.wants.is_some() {
            self.step_wants = step.wants;
        }
        if step.learned.is_some() {
            self.step_learned = step.learned;
        }
        self.phases_keep(&mut model);
        self.sample_ms = model.time_ms;
        self.now_ms = if self.replay.is_some() {
            model.time_ms
        } else {
            self.now_ms.max(model.time_ms)
        };
        self.uptime_s = uptime_s;
        // Live, a good sample clears the last error; a captured tree is read in a blink, so
        // an error in one of its roots stays on screen.
        if !self.caps.captured || model.zoneinfo_error.is_some() {
            // A zoneinfo that does not parse leaves out only what needs it: say so.
            self.error.clone_from(&model.zoneinfo_error);
        }
        self.model = Some(model);
    }

    fn options(&self) -> Options {
        Options {
            partitions: self.ui.partitions,
        }
    }

    fn act(&mut self, a: Action) -> Vec<Effect> {
        // Over the help, ↑ and ↓ move the help, not what is under it.
        if self.ui.help && matches!(a, Action::Up | Action::Down) {
            self.ui.help_end = a == Action::Down;
            return Vec::new();
        }
        if let Some(effects) = self.who_act(a) {
            return effects;
        }
        let ui = &mut self.ui;
        match a {
            // `q` closes the job detail view before it quits.
            Action::Quit if self.jobs.detail.is_some() => self.jobs.detail = None,
            Action::Quit => return self.quit(),
            Action::Help => {
                ui.help = !ui.help;
                ui.help_end = false;
            }
            Action::Back => {
                if ui.help {
                    ui.help = false;
                } else if self.jobs.detail.is_some() {
                    self.jobs.detail = None;
                } else {
                    ui.detail = false;
                }
            }
            Action::Pause if self.replay.is_some() => {
                if let Some(r) = &mut self.replay {
                    r.playing = !r.playing;
                }
            }
            Action::Pause => {
                ui.paused = !ui.paused;
                self.paused_history = ui.paused.then(|| self.pipeline.history().clone());
            }
            Action::Slower | Action::Faster if self.replay.is_some() => {
                if let Some(r) = &mut self.replay {
                    r.change_speed(a == Action::Faster);
                }
            }
            Action::Slower | Action::Faster => return self.step_interval(a == Action::Slower),
            Action::FocusNext | Action::FocusPrev => self.move_focus(a == Action::FocusNext),
            // Handled by `who_act` (these reach here only when there is nothing to act on).
            Action::Processes
            | Action::Cgroups
            | Action::Stack
            | Action::Cmdline
            | Action::RollUp => {}
            Action::Sort => ui.sort = ui.sort.next(),
            Action::Units => ui.pages = !ui.pages,
            Action::Up | Action::Down if ui.focus == Focus::Jobs => {
                self.jobs.move_selection(a == Action::Down);
            }
            Action::Up | Action::Down => self.move_selection(a == Action::Down),
            Action::Detail if ui.focus == Focus::Jobs => {
                self.jobs.detail = self.jobs.current();
                return self.job_files_due();
            }
            Action::Detail => {
                if self.selected_disk().is_some() {
                    self.ui.detail = true;
                }
            }
            Action::EatMemory
            | Action::RunFio
            | Action::StopJob
            | Action::DropCaches
            | Action::Marker
            | Action::Playbook
            | Action::Tune => return self.experiment(a),
            Action::StepBack
            | Action::StepForward
            | Action::MinuteBack
            | Action::MinuteForward
            | Action::Start
            | Action::End => self.seek(a),
            Action::Partitions => {
                ui.partitions = !ui.partitions;
                // Re-derive now from the snapshots we hold, so the table changes at once.
                self.pipeline.set_options(self.options());
                if let Some(model) = self.pipeline.rederive() {
                    self.model = Some(model);
                }
            }
        }
        Vec::new()
    }

    /// The focus to the next pane (or the previous); the jobs pane takes it only when it is
    /// on screen.
    fn move_focus(&mut self, next: bool) {
        let step = |f: Focus| if next { f.next() } else { f.prev() };
        self.ui.focus = step(self.ui.focus);
        if self.ui.focus == Focus::Jobs && !self.jobs.has_rows() {
            self.ui.focus = step(self.ui.focus);
        }
    }

    fn step_interval(&mut self, slower: bool) -> Vec<Effect> {
        let i = INTERVALS
            .iter()
            .position(|&v| v >= self.interval_s)
            .unwrap_or(INTERVALS.len() - 1);
        let next = if slower {
            INTERVALS[(i + usize::from(INTERVALS[i] <= self.interval_s)).min(INTERVALS.len() - 1)]
        } else {
            INTERVALS[i.saturating_sub(1)]
        };
        if (next - self.interval_s).abs() < f64::EPSILON {
            return Vec::new();
        }
        self.interval_s = next;
        vec![Effect::SetInterval(next)]
    }

    /// Disks in display order (the current sort, busiest first; among equally idle ones,
    /// the one busy most recently in the chart history first).
    #[must_use]
    pub fn sorted_disks(&self) -> Vec<&Disk> {
        let mut v: Vec<&Disk> = self.model.iter().flat_map(|m| &m.disks).collect();
        self.ui.sort.sort(&mut v, |d| self.last_busy(d));
        v
    }

    /// The tick of `d`'s last I/O in the chart history (`DiskHistory::last_busy`).
    fn last_busy(&self, d: &Disk) -> Option<u64> {
        (self.history().disks.get(&d.name)).and_then(crate::history::DiskHistory::last_busy)
    }

    /// The selected disk: the one chosen with the arrows, else the first in display order.
    #[must_use]
    pub fn selected_disk(&self) -> Option<&Disk> {
        let m = self.model.as_ref()?;
        let named =
            (self.ui.selected.as_deref()).and_then(|n| m.disks.iter().find(|d| d.name == n));
        named.or_else(|| self.ui.sort.first(&m.disks, |d| self.last_busy(d)))
    }

    /// `selected_disk` among disks already sorted (`sorted_disks`), without sorting again.
    #[must_use]
    pub fn selected_in<'a>(&self, sorted: &[&'a Disk]) -> Option<&'a Disk> {
        let named = self
            .ui
            .selected
            .as_deref()
            .and_then(|n| sorted.iter().find(|d| d.name == n));
        named.or(sorted.first()).copied()
    }

    fn move_selection(&mut self, down: bool) {
        let names: Vec<String> = self.sorted_disks().iter().map(|d| d.name.clone()).collect();
        if names.is_empty() {
            return;
        }
        let cur = self
            .selected_disk()
            .and_then(|d| names.iter().position(|n| *n == d.name))
            .unwrap_or(0);
        let next = if down {
            (cur + 1).min(names.len() - 1)
        } else {
            cur.saturating_sub(1)
        };
        self.ui.selected = Some(names[next].clone());
        self.ui.focus = Focus::Disks;
    }
}

/// What this session can do beyond watching.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools, reason = "independent capabilities")]
pub struct Caps {
    /// Why dropping caches is unavailable (`None`: it is available).
    pub drop_caches: Option<String>,
    /// Whether to look for fio processes pagewatch did not start (live /proc only).
    pub scan_fio: bool,
    /// Whether the experiment keys work (live /proc, not a tree or replay).
    pub experiments: bool,
    /// Why tuning kernel settings is unavailable (`None`: root, it is available).
    pub tune: Option<String>,
    /// The feed is a captured tree sequence (`--tree`): its samples carry time since boot, not
    /// the wall clock (no stall is judged), and its errors stay shown.
    pub captured: bool,
    /// The devices `--latency` asks to time from the start.
    pub latency: Vec<String>,
    /// `--queue-time`: the block tracer times the queue too.
    pub queue_time: bool,
    /// The machine a connected screen watches (`pagewatch connect`); read-only.
    pub remote: Option<Remote>,
}

/// Seconds since boot from a sample's `proc/uptime`.
#[must_use]
pub fn uptime_of(raw: &crate::sample::RawSample) -> Option<f64> {
    uptime_s(raw)
}

fn uptime_s(raw: &crate::sample::RawSample) -> Option<f64> {
    raw.file(crate::sample::names::UPTIME)
        .and_then(crate::source::parse_uptime_cs)
        .map(|cs| cs as f64 / 100.0)
}
#[cfg(test)]
mod tests;
