//! The fleet (`pagewatch connect h1 h2 … hN`): one `App` a host, each fed by its own stream,
//! and the list over them: one line a host, worst first, with its link and the verdict's
//! answers in short. `Enter` opens the selected host's own screen (its app takes the keys);
//! `Esc` there, with nothing open over that screen, comes back to the list.
//!
//! Owns: `Fleet`, `FleetMsg`, the list's lines (`FleetLine`) and their order. Must not touch:
//! ssh, threads, the terminal (the shell's `fleet` runtime), drawing (`ui::fleet`).

use super::{App, Effect, Key, Msg, REMOTE_LOST};
use crate::model::answers::ReclaimState;

/// Everything that changes the fleet.
#[derive(Debug, Clone)]
pub enum FleetMsg {
    /// Host `host` (its index in the order given) sent a sample, or its link failed
    /// (`Msg::SampleError`, which says "connection to … lost" while it is).
    Host {
        /// The host's index.
        host: usize,
        /// What came.
        msg: Msg,
    },
    /// A key, a resize, a tick or a quit: to the list, or to the open host's screen.
    Screen(Msg),
}

/// One host of the fleet: its name as given and its own app (pipeline, history, screen).
#[derive(Debug)]
pub struct Host {
    /// The host as given to `connect`.
    pub name: String,
    /// Its screen's state.
    pub app: App,
}

/// The fleet's state.
#[derive(Debug)]
pub struct Fleet {
    /// The hosts, in the order given.
    pub hosts: Vec<Host>,
    /// The selected host (an index into `hosts`: the selection follows the host when the
    /// order changes).
    pub selected: usize,
    /// The host whose own screen is open, if any.
    pub open: Option<usize>,
    /// Wall clock, ms (from ticks).
    pub now_ms: i64,
    dirty: bool,
}

/// How a host's link stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Link {
    /// Samples come.
    Live,
    /// No sample yet.
    Waiting,
    /// The stream broke; reconnecting with backoff.
    Lost,
}

impl Link {
    /// The word on the list.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Link::Live => "live",
            Link::Waiting => "waiting",
            Link::Lost => "LOST",
        }
    }
}

/// One line of the list: a host's link and its verdict in short.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetLine {
    /// Index into `Fleet::hosts`.
    pub host: usize,
    /// The host's name.
    pub name: String,
    /// Its link.
    pub link: Link,
    /// Seconds since its last sample; `None` before the first.
    pub age_s: Option<i64>,
    /// MemAvailable, kB (as /proc/meminfo counts).
    pub available: Option<u64>,
    /// The worst dirty domain's state (`writers throttled (global)`); `None` without one.
    pub dirty: Option<crate::model::dirty::State>,
    /// That domain.
    pub domain: String,
    /// Throttled writers over the interval.
    pub writers: usize,
    /// The saturated disks, most queued first.
    pub saturated: Vec<String>,
    /// Who reclaims, when it is headline news (`ReclaimVerdict::stalls`); `None` otherwise.
    pub reclaim: Option<ReclaimState>,
    /// Memory PSI `some` over the interval, percent.
    pub psi_pct: Option<f64>,
    /// The story in one line (`culprit fio ×2 dirtying 612M/s; …`), or the error that stands.
    pub note: Option<String>,
}

impl FleetLine {
    /// Worse first: a lost link, then the dirty state, reclaim stalls, saturated disks.
    fn rank(&self) -> impl Ord {
        (
            self.link == Link::Lost,
            self.dirty,
            self.reclaim,
            self.saturated.len(),
        )
    }
}

impl Fleet {
    /// A fleet of these hosts' apps, the first selected, the list shown.
    #[must_use]
    pub fn new(hosts: Vec<Host>) -> Self {
        Self {
            hosts,
            selected: 0,
            open: None,
            now_ms: 0,
            dirty: true,
        }
    }

    /// Whether anything visible changed since the last call (the runtime redraws then).
    pub fn take_dirty(&mut self) -> bool {
        let mut any = std::mem::take(&mut self.dirty);
        for h in &mut self.hosts {
            any |= h.app.take_dirty();
        }
        any
    }

    /// Applies one message; `true` when pagewatch should quit.
    pub fn update(&mut self, msg: FleetMsg) -> bool {
        match msg {
            FleetMsg::Host { host, msg } => {
                let Some(h) = self.hosts.get_mut(host) else {
                    return false;
                };
                self.dirty |= self.open.is_none();
                let effects = match &msg {
                    Msg::Sample(raw) => h.app.sample(raw),
                    _ => h.app.update(msg),
                };
                quits(&effects)
            }
            FleetMsg::Screen(Msg::Quit) => true,
            FleetMsg::Screen(Msg::Tick { now_ms }) => {
                self.now_ms = now_ms;
                self.dirty = true;
                for h in &mut self.hosts {
                    h.app.update(Msg::Tick { now_ms });
                }
                false
            }
            FleetMsg::Screen(m) => self.screen(m),
        }
    }

    /// A key or resize: the open host's screen takes it, but for `Esc` with nothing over that
    /// screen; else the list's keys (arrows, `Enter`, `q`).
    fn screen(&mut self, msg: Msg) -> bool {
        self.dirty = true;
        if let Some(i) = self.open {
            let app = &mut self.hosts[i].app;
            if matches!(msg, Msg::Key(Key::Esc)) && !overlaid(app) {
                self.open = None;
                return false;
            }
            return quits(&app.update(msg));
        }
        let Msg::Key(k) = msg else {
            return false;
        };
        let order: Vec<usize> = self.lines().iter().map(|l| l.host).collect();
        let at = order.iter().position(|&h| h == self.selected).unwrap_or(0);
        match k {
            Key::Up | Key::Char('k') => self.selected = order[at.saturating_sub(1)],
            Key::Down | Key::Char('j') => self.selected = order[(at + 1).min(order.len() - 1)],
            Key::Enter => {
                self.open = Some(self.selected);
                self.hosts[self.selected].app.update(Msg::Resize);
            }
            Key::Char('q') | Key::Ctrl('c') => return true,
            _ => {}
        }
        false
    }

    /// The list's lines, worst first (ties in the order given).
    #[must_use]
    pub fn lines(&self) -> Vec<FleetLine> {
        let mut out: Vec<FleetLine> = (self.hosts.iter().enumerate())
            .map(|(i, h)| line(i, h, self.now_ms))
            .collect();
        out.sort_by(|a, b| b.rank().cmp(&a.rank()).then(a.host.cmp(&b.host)));
        out
    }
}

/// Whether something is open over an app's main screen that its own `Esc` closes.
fn overlaid(app: &App) -> bool {
    app.ui.help
        || app.ui.detail
        || app.prompt.is_some()
        || app.jobs.detail.is_some()
        || app.phase_table.is_some()
        || app.ui.who.is_some()
}

fn quits(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::Quit))
}

/// A host's line from its app.
fn line(i: usize, h: &Host, now_ms: i64) -> FleetLine {
    let app = &h.app;
    let lost = app.error.as_deref().filter(|e| e.starts_with(REMOTE_LOST));
    let link = match (&app.model, lost) {
        (_, Some(_)) => Link::Lost,
        (None, None) => Link::Waiting,
        (Some(_), None) => Link::Live,
    };
    let model = app.model.as_ref();
    let verdict = model.and_then(|m| m.verdict.as_ref());
    let note = match app.error.as_deref() {
        Some(e) => Some(e.to_owned()),
        None => verdict.and_then(|v| v.story.line()),
    };
    FleetLine {
        host: i,
        name: h.name.clone(),
        link,
        age_s: model.map(|_| (now_ms.max(app.sample_ms) - app.sample_ms) / 1000),
        available: model.and_then(|m| m.memory.MemAvailable.or(m.memory.derived_MemAvailable)),
        dirty: verdict.and_then(|v| v.dirty.state),
        domain: verdict.map(|v| v.dirty.domain.clone()).unwrap_or_default(),
        writers: verdict.map_or(0, |v| v.dirty.writers),
        saturated: verdict.map(|v| v.saturated.clone()).unwrap_or_default(),
        reclaim: verdict
            .filter(|v| v.reclaim.stalls())
            .map(|v| v.reclaim.state),
        psi_pct: verdict.and_then(|v| v.reclaim.stall_pct),
        note,
    }
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
