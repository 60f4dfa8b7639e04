//! The "who" views' state changes: opening the processes or cgroups view, their sort and
//! selection (kept on the process, not the row), scoping the processes to a cgroup, asking
//! for a task's kernel stack (re-read every sample while open) and the rows' command lines.
//!
//! While a who view is open it takes the arrows, `s`, Enter and Esc (as htop's process list
//! does); the other keys keep their meaning. Owns: those transitions. Must not touch: drawing,
//! files (the stack is read by the runtime, `JobCmd::ReadStack`).

use super::{Action, App, Effect, JobCmd};
use crate::config::{CgroupSort, ProcSort, WhoView};
use crate::model::cgroups::CgroupRow;
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
            (Action::Sort, Some(WhoView::Cgroups)) => ui.cgroup_sort = ui.cgroup_sort.next(),
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
            (Action::RollUp, Some(WhoView::Processes)) => ui.proc_rollup = !ui.proc_rollup,
            (Action::RollUp, _) => {
                self.notice =
                    Some("r rolls the processes up by command: open the processes view (w)".into());
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
            // The walk carries the command lines of the processes it wrote: read only the
            // others' (the memory rows, a process whose line the walk did not have).
            let mut pids = self.shown_pids();
            pids.truncate(CMDLINE_ROWS);
            pids.retain(|&p| self.walk_cmdline(p).is_none());
            if !pids.is_empty() {
                fx.push(Effect::Job(JobCmd::ReadCmdlines(pids)));
            }
        }
        fx
    }

    /// The command line of process `pid` as the walk carried it (`ProcRow::cmdline`).
    fn walk_cmdline(&self, pid: u32) -> Option<&str> {
        let rows = self.model.as_ref()?.processes.as_ref()?;
        let row = rows.iter().find(|r| r.pid == pid)?;
        row.cmdline.as_deref().filter(|l| !l.is_empty())
    }

    /// The command line shown for `pid` while `a` is on: the walk's, else the one read for the
    /// shown rows (`JobCmd::ReadCmdlines`); `None` when neither has it.
    #[must_use]
    pub fn cmdline_of(&self, pid: u32) -> Option<&str> {
        self.walk_cmdline(pid)
            .or_else(|| self.ui.cmdlines.get(&pid).map(String::as_str))
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

    /// The cgroups in display order: the view's sort (`Activity`: the model's order, most
    /// active first).
    #[must_use]
    pub fn sorted_cgroups(&self) -> Vec<&CgroupRow> {
        let Some(c) = self.model.as_ref().and_then(|m| m.cgroups.as_ref()) else {
            return Vec::new();
        };
        let mut v: Vec<&CgroupRow> = c.rows.iter().collect();
        self.ui.cgroup_sort.sort(&mut v);
        v
    }

    fn cgroup_paths(&self) -> Vec<String> {
        self.sorted_cgroups()
            .iter()
            .map(|r| r.path.clone())
            .collect()
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
                // ms/s in sync calls, then a longer wait (one still waiting counts).
                ProcSort::Sync => match (p.fsync_per_s, p.fsync_mean_ms, p.fsync_max_ms) {
                    (None, ..) => -1.0,
                    (Some(n), mean, max) => n * mean.unwrap_or(0.0) + max.unwrap_or(0.0),
                },
                ProcSort::Pid => -f64::from(p.pid),
            }
        };
        v.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.pid.cmp(&b.pid)));
    }
}

impl CgroupSort {
    /// Sorts `v` (the model's rows, most active first) by this key. The thrashing keys take
    /// each group's own rate: its figure less those of its children among the rows (memory.stat
    /// counts a group's descendants in its own), so the group that thrashes leads, not its
    /// parent; ties go to the larger figure, then the deeper group, then the path. A group
    /// without the rate (its first sample, an older kernel) sorts last.
    pub fn sort(self, v: &mut [&CgroupRow]) {
        let rate: fn(&CgroupRow) -> Option<f64> = match self {
            CgroupSort::Activity => return,
            CgroupSort::Path => {
                v.sort_by(|a, b| a.path.cmp(&b.path));
                return;
            }
            CgroupSort::Refault => {
                |r| Some(r.refault_file_per_s? + r.refault_anon_per_s.unwrap_or(0.0))
            }
            CgroupSort::Scan => |r| r.pgscan_per_s,
            CgroupSort::MajFault => |r| r.pgmajfault_per_s,
        };
        let mut children: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
        for r in v.iter() {
            if let (Some(x), Some(i)) = (rate(r), r.path.rfind('/')) {
                let parent = if i == 0 { "/" } else { &r.path[..i] };
                *children.entry(parent).or_default() += x;
            }
        }
        let key = |r: &CgroupRow| -> (f64, f64) {
            rate(r).map_or((-1.0, -1.0), |x| {
                let own = x - children.get(r.path.as_str()).copied().unwrap_or(0.0);
                (own.max(0.0), x)
            })
        };
        let keys: std::collections::HashMap<&str, (f64, f64)> =
            v.iter().map(|r| (r.path.as_str(), key(r))).collect();
        v.sort_by(|a, b| {
            let (ka, kb) = (keys[a.path.as_str()], keys[b.path.as_str()]);
            kb.0.total_cmp(&ka.0)
                .then(kb.1.total_cmp(&ka.1))
                .then(b.depth.cmp(&a.depth))
                .then_with(|| a.path.cmp(&b.path))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, refault: Option<f64>, scan: Option<f64>) -> CgroupRow {
        CgroupRow {
            path: path.into(),
            depth: path.matches('/').count(),
            refault_file_per_s: refault,
            refault_anon_per_s: refault.map(|_| 0.0),
            pgscan_per_s: scan,
            ..CgroupRow::default()
        }
    }

    fn sorted(key: CgroupSort, rows: &[CgroupRow]) -> Vec<&str> {
        let mut v: Vec<&CgroupRow> = rows.iter().collect();
        key.sort(&mut v);
        v.iter().map(|r| r.path.as_str()).collect()
    }

    #[test]
    fn thrashing_sorts_by_the_groups_own_rate() {
        // Hierarchical counters: /k8s's 15/s are its children's 10 + 5.
        let rows = [
            row("/idle", Some(0.0), Some(0.0)),
            row("/k8s", Some(15.0), Some(15.0)),
            row("/k8s/a", Some(10.0), Some(1.0)),
            row("/k8s/b", Some(5.0), Some(14.0)),
            row("/new", None, None),
            row("/solo", Some(12.0), Some(0.0)),
        ];
        assert_eq!(
            sorted(CgroupSort::Refault, &rows),
            ["/solo", "/k8s/a", "/k8s/b", "/k8s", "/idle", "/new"]
        );
        assert_eq!(
            sorted(CgroupSort::Scan, &rows),
            ["/k8s/b", "/k8s/a", "/k8s", "/idle", "/solo", "/new"]
        );
        // /k8s owns none of its scans but is above the idle groups by its figure; ties by
        // path. The model's order stands for `Activity`.
        assert_eq!(sorted(CgroupSort::Activity, &rows)[0], "/idle");
        assert_eq!(sorted(CgroupSort::Path, &rows)[5], "/solo");
        let mut k = CgroupSort::default();
        let cycle: Vec<CgroupSort> = (0..5)
            .map(|_| {
                let cur = k;
                k = k.next();
                cur
            })
            .collect();
        assert_eq!(
            cycle,
            [
                CgroupSort::Activity,
                CgroupSort::Refault,
                CgroupSort::Scan,
                CgroupSort::MajFault,
                CgroupSort::Path
            ]
        );
        assert_eq!(k, CgroupSort::Activity);
    }
}
