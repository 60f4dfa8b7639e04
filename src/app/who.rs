//! The "who" views' state changes: opening the processes or cgroups view, their sort and
//! selection (kept on the process, not the row), scoping the processes to a cgroup, asking
//! for a task's kernel stack (re-read every sample while open) and the rows' command lines.
//!
//! While a who view is open it takes the arrows, `s`, Enter and Esc (as htop's process list
//! does); the other keys keep their meaning. Owns: those transitions. Must not touch: drawing,
//! files (the stack is read by the runtime, `JobCmd::ReadStack`).

use super::{Action, App, Effect, JobCmd};
use crate::config::{ProcSort, WhoView};
use crate::model::procs::ProcRow as Process;

/// The rows whose command lines are read while `a` is on (more than any screen shows).
const CMDLINE_ROWS: usize = 60;

impl App {
    /// Handles `a` when it is a who-view action, or one a who view takes while open; `None`
    /// when the action is not for the who views.
    pub(super) fn who_act(&mut self, a: Action) -> Option<Vec<Effect>> {
        let ui = &mut self.ui;
        match (a, ui.who) {
            (Action::Processes, _) => toggle(&mut ui.who, WhoView::Processes),
            (Action::Cgroups, _) => toggle(&mut ui.who, WhoView::Cgroups),
            (Action::Sort, Some(WhoView::Processes)) => ui.proc_sort = ui.proc_sort.next(),
            (Action::Up | Action::Down, Some(WhoView::Processes)) => {
                let pids = self.shown_pids();
                let cur = self.selected_pid();
                self.ui.proc_selected = step(&pids, cur, a == Action::Down);
            }
            (Action::Up | Action::Down, Some(WhoView::Cgroups)) => {
                let paths = self.cgroup_paths();
                self.ui.cgroup_selected =
                    step(&paths, self.ui.cgroup_selected.clone(), a == Action::Down);
            }
            (Action::Detail, Some(WhoView::Cgroups)) => {
                // Enter on a cgroup scopes the processes view to it.
                let sel = self.ui.cgroup_selected.clone();
                if let Some(path) = sel.or_else(|| self.cgroup_paths().into_iter().next()) {
                    self.ui.scope = Some(path);
                    self.ui.who = Some(WhoView::Processes);
                    self.ui.proc_selected = None;
                }
            }
            (Action::Back, Some(_)) if !ui.help && !ui.detail => {
                if ui.stack.is_some() || ui.stack_pid.is_some() {
                    ui.stack = None;
                    ui.stack_pid = None;
                } else if ui.scope.is_some() {
                    ui.scope = None;
                } else {
                    ui.who = None;
                }
            }
            (Action::Stack, Some(WhoView::Processes)) => {
                let pid = self.selected_pid()?;
                self.ui.stack_pid = Some(pid);
                return Some(vec![Effect::Job(JobCmd::ReadStack(pid))]);
            }
            (Action::Cmdline, Some(WhoView::Processes)) => {
                self.ui.cmdline = !self.ui.cmdline;
                if !self.ui.cmdline {
                    self.ui.cmdlines.clear();
                }
                return Some(self.who_refresh());
            }
            (Action::Cmdline, _) => {
                self.notice =
                    Some("a shows command lines in the processes view: open it (w)".into());
            }
            (Action::Stack, _) => {
                self.notice = Some(
                    "K shows a task's kernel stack: open the processes view (w) and select it"
                        .into(),
                );
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// The selected process: the one chosen, else the first row shown, which is then kept
    /// (`pin_selection`) so the selection follows the process when the rows re-sort.
    #[must_use]
    pub fn selected_pid(&self) -> Option<u32> {
        self.ui
            .proc_selected
            .or_else(|| self.shown_pids().first().copied())
    }

    /// The pids of the processes view's rows, in display order (the memory rows under the
    /// memory sort).
    #[must_use]
    pub fn shown_pids(&self) -> Vec<u32> {
        if self.ui.proc_sort == ProcSort::Memory {
            self.sorted_memory().iter().map(|r| r.pid).collect()
        } else {
            self.sorted_processes().iter().map(|p| p.pid).collect()
        }
    }

    /// The memory rows in display order (the model's: stalled in reclaim, then resident).
    #[must_use]
    pub fn sorted_memory(&self) -> Vec<&crate::model::procs_memory::MemRow> {
        self.model
            .as_ref()
            .and_then(|m| m.processes_by_memory.as_ref())
            .map(|v| v.iter().collect())
            .unwrap_or_default()
    }

    /// At each sample while the processes view is open (live): keeps the selection on the
    /// process shown first when none was chosen, re-reads the open kernel stack, and reads
    /// the shown rows' command lines while `a` is on.
    pub(super) fn who_refresh(&mut self) -> Vec<Effect> {
        if self.ui.who != Some(WhoView::Processes) {
            return Vec::new();
        }
        if self.ui.proc_selected.is_none() {
            self.ui.proc_selected = self.shown_pids().first().copied();
        }
        if self.caps.captured || self.replay.is_some() {
            return Vec::new();
        }
        let mut fx = Vec::new();
        if let Some(pid) = self.ui.stack_pid {
            fx.push(Effect::Job(JobCmd::ReadStack(pid)));
        }
        if self.ui.cmdline {
            let mut pids = self.shown_pids();
            pids.truncate(CMDLINE_ROWS);
            fx.push(Effect::Job(JobCmd::ReadCmdlines(pids)));
        }
        fx
    }

    /// The processes in display order: the current sort, busiest first.
    #[must_use]
    pub fn sorted_processes(&self) -> Vec<&Process> {
        let Some(m) = &self.model else {
            return Vec::new();
        };
        let mut v: Vec<&Process> = m.processes.iter().flatten().collect();
        self.ui.proc_sort.sort(&mut v);
        v
    }

    /// The cgroups in display order (as the model sorts them: most active first).
    fn cgroup_paths(&self) -> Vec<String> {
        self.model
            .as_ref()
            .and_then(|m| m.cgroups.as_ref())
            .map(|c| c.rows.iter().map(|r| r.path.clone()).collect())
            .unwrap_or_default()
    }
}

/// Opens `view`, or closes it when it is the one open.
fn toggle(who: &mut Option<WhoView>, view: WhoView) {
    *who = if *who == Some(view) { None } else { Some(view) };
}

/// The item after (or before) `cur` in `items`; the first when `cur` is not among them.
fn step<T: PartialEq + Clone>(items: &[T], cur: Option<T>, down: bool) -> Option<T> {
    let i = cur.and_then(|c| items.iter().position(|x| *x == c));
    let next = match i {
        None => 0,
        Some(i) if down => (i + 1).min(items.len().saturating_sub(1)),
        Some(i) => i.saturating_sub(1),
    };
    items.get(next).cloned()
}

impl ProcSort {
    /// Sorts `v` by this column: busiest first (pid and name ascending).
    pub fn sort(self, v: &mut [&Process]) {
        let key = |p: &Process| -> f64 {
            match self {
                ProcSort::Storage => {
                    let (d, r) = (p.dirtied_bytes_per_s, p.read_bytes_per_s);
                    if d.is_none() && r.is_none() {
                        -1.0
                    } else {
                        d.unwrap_or(0.0) + r.unwrap_or(0.0)
                    }
                }
                // The memory sort shows the memory rows (`sorted_memory`); here, by rss.
                ProcSort::Memory => p.rss_bytes.map_or(-1.0, |b| b as f64),
                ProcSort::Dirtied => p.dirtied_bytes_per_s.unwrap_or(-1.0),
                ProcSort::Read => p.read_bytes_per_s.unwrap_or(-1.0),
                ProcSort::Rchar => p.rchar_per_s.unwrap_or(-1.0),
                ProcSort::Wchar => p.wchar_per_s.unwrap_or(-1.0),
                ProcSort::IoWait => p.iowait_ms_per_s.unwrap_or(-1.0),
                ProcSort::Pid => -f64::from(p.pid),
            }
        };
        v.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.pid.cmp(&b.pid)));
    }
}
