//! The jobs pagewatch started (memory eaters, fio runs) and the fio processes it found, as the
//! app knows them from messages.
//!
//! Owns: `Jobs` and `Job` (the reports they change by, `JobMsg`, are `jobs::protocol`'s), the
//! pane's rows as `JobRef`s (our jobs, the foreign fios, those that ended), the selection over
//! them, what `x` does to the selected row (`XAction`), the job detail view's subject, and how
//! many ended rows are kept (`MAX_ENDED`). Must not touch: processes; the runtime starts and
//! stops them and reports back with `JobMsg`s.

use crate::event::FioSummary;
use crate::jobs::fio::FioFigures;
use crate::jobs::protocol::{ForeignFio, JobFile, JobKind, JobMsg};

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Asked for; no process yet.
    Starting,
    /// fio is laying out its test file.
    Preparing,
    /// The eater is touching memory.
    Ramping,
    /// The eater holds its memory.
    Holding,
    /// fio is running.
    Running,
    /// Asked to stop; waiting for it to exit.
    Stopping,
    /// Ended normally (released, finished, stopped).
    Done,
    /// Ended with an error.
    Failed,
}

impl JobState {
    /// Whether the job still has (or is about to have) a process.
    #[must_use]
    pub fn active(self) -> bool {
        !matches!(self, JobState::Done | JobState::Failed)
    }

    /// The word shown in the jobs pane.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            JobState::Starting => "starting",
            JobState::Preparing => "laying out",
            JobState::Ramping => "ramping",
            JobState::Holding => "holding",
            JobState::Running => "running",
            JobState::Stopping => "stopping",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }
}

/// One job.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Job number, from 1.
    pub id: u32,
    /// Eater or fio.
    pub kind: JobKind,
    /// Short label (`eat 12.0G`, `fio randread size=2G`).
    pub label: String,
    /// Process id once started.
    pub pid: Option<u32>,
    /// State.
    pub state: JobState,
    /// Wall time it was asked for, ms.
    pub started_ms: i64,
    /// Wall time it ended, ms.
    pub ended_ms: Option<i64>,
    /// Eater: bytes touched so far and the target.
    pub eat: Option<(u64, u64)>,
    /// fio: the latest interval's figures.
    pub fio: Option<FioFigures>,
    /// fio: the final (or partial) result.
    pub result: Option<FioSummary>,
    /// The latest message: a warning, fio's error, why it ended.
    pub note: Option<String>,
    /// The exact command run, once started.
    pub argv: Vec<String>,
    /// Its files with their residency, as last measured (while its detail view is open).
    pub files: Vec<JobFile>,
}

/// A fio pagewatch did not start that is gone: its last figures and when it was missed.
#[derive(Debug, Clone, PartialEq)]
pub struct EndedForeign {
    /// As the last scan that found it saw it.
    pub fio: ForeignFio,
    /// Wall time of the first scan that did not find it, ms.
    pub ended_ms: i64,
}

/// One row of the jobs pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobRef {
    /// A job pagewatch started, by id.
    Own(u32),
    /// A running fio pagewatch did not start, by main pid.
    Foreign(u32),
    /// A fio pagewatch did not start that ended, by main pid.
    Gone(u32),
}

/// What `x` does to the selected row (the pane's title says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAction {
    /// Stop this fio job.
    Stop(u32),
    /// Release this memory eater.
    Release(u32),
    /// Take this ended row off the list.
    Dismiss(JobRef),
    /// Nothing: this fio (main pid) is not pagewatch's.
    NotOurs(u32),
    /// Nothing to act on.
    Nothing,
}

impl XAction {
    /// The pane title's words for it (`x stops #2`).
    #[must_use]
    pub fn title(self) -> String {
        match self {
            XAction::Stop(id) => format!("x stops #{id}"),
            XAction::Release(id) => format!("x releases #{id}"),
            XAction::Dismiss(_) => "x dismisses".to_owned(),
            XAction::NotOurs(_) => "x: foreign fio, not ours".to_owned(),
            XAction::Nothing => "x: nothing to stop".to_owned(),
        }
    }
}

/// Ended rows kept, of our jobs and of foreign fios each; the oldest go first.
pub const MAX_ENDED: usize = 4;

/// Every job of the session, oldest first, and the fio processes found running.
#[derive(Debug, Clone, Default)]
pub struct Jobs {
    /// Jobs, oldest first.
    pub list: Vec<Job>,
    /// Selected job id.
    pub selected: Option<u32>,
    /// fio processes pagewatch did not start.
    pub foreign: Vec<ForeignFio>,
    /// Those that ended, oldest first (at most `MAX_ENDED`).
    pub ended_foreign: Vec<EndedForeign>,
    /// Of the foreign fios whose workers are gone (the main process finishing), each one's
    /// view at its last scan with workers: what its ended row shows (`set_foreign`).
    last_work: Vec<ForeignFio>,
    /// A selected row that is not one of our jobs (a foreign fio).
    pub selected_other: Option<JobRef>,
    /// The row whose detail view is open (`Enter`).
    pub detail: Option<JobRef>,
    next_id: u32,
}

impl Jobs {
    /// Adds a job in state `Starting` and returns its id.
    pub fn add(&mut self, kind: JobKind, label: String, now_ms: i64) -> u32 {
        self.next_id += 1;
        let id = self.next_id;
        self.list.push(Job {
            id,
            kind,
            label,
            pid: None,
            state: JobState::Starting,
            started_ms: now_ms,
            ended_ms: None,
            eat: None,
            fio: None,
            result: None,
            note: None,
            argv: Vec::new(),
            files: Vec::new(),
        });
        self.select(JobRef::Own(id));
        id
    }

    /// Whether the pane has any row (our jobs, foreign fios running or ended).
    #[must_use]
    pub fn has_rows(&self) -> bool {
        !(self.list.is_empty() && self.foreign.is_empty() && self.ended_foreign.is_empty())
    }

    /// The pane's rows, top to bottom: our jobs oldest first, the foreign fios, those ended.
    #[must_use]
    pub fn rows(&self) -> Vec<JobRef> {
        let own = self.list.iter().map(|j| JobRef::Own(j.id));
        let foreign = self.foreign.iter().map(|f| JobRef::Foreign(f.pid));
        let gone = self.ended_foreign.iter().map(|e| JobRef::Gone(e.fio.pid));
        own.chain(foreign).chain(gone).collect()
    }

    /// Selects a row.
    pub fn select(&mut self, r: JobRef) {
        match r {
            JobRef::Own(id) => {
                self.selected = Some(id);
                self.selected_other = None;
            }
            other => self.selected_other = Some(other),
        }
    }

    /// The selected row: a foreign one chosen with the arrows while it lasts, else the
    /// selected job (`selected`), else the first foreign fio.
    #[must_use]
    pub fn current(&self) -> Option<JobRef> {
        self.selected_other
            .filter(|r| self.rows().contains(r))
            .or_else(|| self.selected().map(|j| JobRef::Own(j.id)))
            .or_else(|| self.rows().first().copied())
    }

    /// A foreign fio, running (`Foreign`) or ended (`Gone`), with when it ended.
    #[must_use]
    pub fn foreign_of(&self, r: JobRef) -> Option<(&ForeignFio, Option<i64>)> {
        match r {
            JobRef::Foreign(pid) => self
                .foreign
                .iter()
                .find(|f| f.pid == pid)
                .map(|f| (f, None)),
            JobRef::Gone(pid) => (self.ended_foreign.iter())
                .find(|e| e.fio.pid == pid)
                .map(|e| (&e.fio, Some(e.ended_ms))),
            JobRef::Own(_) => None,
        }
    }

    /// What `x` does now: to the selected row; on an ended job of ours, it stops (or
    /// releases) the newest active job when there is one (as `x` always did after a job
    /// finished), else dismisses the ended row.
    #[must_use]
    pub fn x_action(&self) -> XAction {
        let act = |j: &Job| match j.kind {
            JobKind::Eat => XAction::Release(j.id),
            JobKind::Fio => XAction::Stop(j.id),
        };
        match self.current() {
            None => XAction::Nothing,
            Some(r @ JobRef::Own(id)) => match self.get(id) {
                Some(j) if j.state.active() => act(j),
                Some(_) => (self.list.iter().rev())
                    .find(|j| j.state.active())
                    .map_or(XAction::Dismiss(r), act),
                None => XAction::Nothing,
            },
            Some(JobRef::Foreign(pid)) => XAction::NotOurs(pid),
            Some(r @ JobRef::Gone(_)) => XAction::Dismiss(r),
        }
    }

    /// Takes an ended row off the list (and closes its detail view).
    pub fn dismiss(&mut self, r: JobRef) {
        match r {
            JobRef::Own(id) => self.list.retain(|j| j.id != id || j.state.active()),
            JobRef::Gone(pid) => self.ended_foreign.retain(|e| e.fio.pid != pid),
            JobRef::Foreign(_) => return,
        }
        if self.detail == Some(r) {
            self.detail = None;
        }
        if self.selected_other == Some(r) {
            self.selected_other = None;
        }
    }

    /// A scan's foreign fios at `now_ms`: one no longer found is kept as ended with its last
    /// figures, until dismissed or replaced by a new run of the same command line (one not
    /// running at the previous scan). A run whose workers are gone (fio's main process
    /// finishing) ends with the figures of its last scan with workers: the main process holds
    /// no data file, and its counters jumped with its reaped workers' (no rate,
    /// `jobs::foreign::ProcRates::reaped`), so its own last scan would read "no data file
    /// seen" and a rate of nothing.
    pub fn set_foreign(&mut self, found: Vec<ForeignFio>, now_ms: i64) {
        for n in found.iter().filter(|n| n.workers == 0) {
            let worked = (self.foreign.iter()).find(|o| o.pid == n.pid && o.workers > 0);
            if let Some(o) = worked {
                self.last_work.retain(|w| w.pid != n.pid);
                self.last_work.push(o.clone());
            }
        }
        let old = std::mem::replace(&mut self.foreign, found);
        let new_runs: Vec<&ForeignFio> = (self.foreign.iter())
            .filter(|n| !old.iter().any(|o| o.pid == n.pid))
            .collect();
        self.ended_foreign.retain(|e| {
            !new_runs
                .iter()
                .any(|n| n.pid == e.fio.pid || n.cmdline == e.fio.cmdline)
        });
        for f in old {
            if !self.foreign.iter().any(|n| n.pid == f.pid) {
                self.ended_foreign.retain(|e| e.fio.pid != f.pid);
                let last = (self.last_work.iter().position(|w| w.pid == f.pid))
                    .map(|i| self.last_work.swap_remove(i));
                self.ended_foreign.push(EndedForeign {
                    fio: last.unwrap_or(f),
                    ended_ms: now_ms,
                });
            }
        }
        let foreign = &self.foreign;
        (self.last_work).retain(|w| foreign.iter().any(|n| n.pid == w.pid && n.workers == 0));
        let extra = self.ended_foreign.len().saturating_sub(MAX_ENDED);
        self.ended_foreign.drain(..extra);
    }

    /// Keeps at most `MAX_ENDED` of our ended jobs, the newest.
    fn cap_ended(&mut self) {
        let ended: Vec<u32> = (self.list.iter())
            .filter(|j| !j.state.active())
            .map(|j| j.id)
            .collect();
        let drop = &ended[..ended.len().saturating_sub(MAX_ENDED)];
        self.list.retain(|j| !drop.contains(&j.id));
    }

    /// The job with this id.
    #[must_use]
    pub fn get(&self, id: u32) -> Option<&Job> {
        self.list.iter().find(|j| j.id == id)
    }

    /// The selected job, else the newest active one, else the newest.
    #[must_use]
    pub fn selected(&self) -> Option<&Job> {
        self.selected
            .and_then(|id| self.get(id))
            .or_else(|| self.list.iter().rev().find(|j| j.state.active()))
            .or_else(|| self.list.last())
    }

    /// Moves the selection one row up or down.
    pub fn move_selection(&mut self, down: bool) {
        let rows = self.rows();
        let Some(cur) = self.current() else {
            return;
        };
        let i = rows.iter().position(|r| *r == cur).unwrap_or(0);
        let next = if down {
            (i + 1).min(rows.len() - 1)
        } else {
            i.saturating_sub(1)
        };
        self.select(rows[next]);
    }

    /// Marks a job as asked to stop.
    pub fn stopping(&mut self, id: u32) {
        if let Some(j) = self.list.iter_mut().find(|j| j.id == id)
            && j.state.active()
        {
            j.state = JobState::Stopping;
        }
    }

    /// Applies a report from the runtime.
    pub fn apply(&mut self, msg: &JobMsg, now_ms: i64) {
        let Some(j) = self.list.iter_mut().find(|j| j.id == msg.id()) else {
            return;
        };
        match msg {
            JobMsg::Started { pid, argv, .. } => {
                j.pid = Some(*pid);
                j.argv.clone_from(argv);
                // "laying out …" is over once the job itself starts.
                j.note = None;
                if j.started_ms <= 0 {
                    // Asked for before the first clock reading (command-line jobs).
                    j.started_ms = now_ms;
                }
                if j.state == JobState::Starting {
                    j.state = match j.kind {
                        JobKind::Eat => JobState::Ramping,
                        JobKind::Fio => JobState::Running,
                    };
                }
            }
            JobMsg::Eat {
                touched,
                target,
                holding,
                ..
            } => {
                j.eat = Some((*touched, *target));
                if j.state != JobState::Stopping {
                    j.state = if *holding {
                        JobState::Holding
                    } else {
                        JobState::Ramping
                    };
                }
            }
            JobMsg::Preparing { .. } => {
                if j.state != JobState::Stopping {
                    j.state = JobState::Preparing;
                }
            }
            JobMsg::Fio { figures, .. } => {
                j.fio = Some(*figures);
                if j.state != JobState::Stopping {
                    j.state = JobState::Running;
                }
            }
            JobMsg::Note { text, .. } => j.note = Some(text.clone()),
            JobMsg::Ended {
                how,
                failed,
                result,
                ..
            } => {
                j.state = if *failed {
                    JobState::Failed
                } else {
                    JobState::Done
                };
                if j.started_ms <= 0 {
                    // Failed before the first clock reading: it ran for no time at all.
                    j.started_ms = now_ms;
                }
                j.ended_ms = Some(now_ms);
                j.note = Some(how.clone());
                if result.is_some() {
                    j.result.clone_from(result);
                }
                self.cap_ended();
            }
        }
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
