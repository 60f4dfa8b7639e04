//! The jobs pagewatch started (memory eaters, fio runs) and the fio processes it found, as the
//! app knows them from messages.
//!
//! Owns: `Jobs` and `Job` (the reports they change by, `JobMsg`, are `jobs::protocol`'s).
//! Must not touch: processes; the runtime starts and stops them and reports back with
//! `JobMsg`s.

use crate::event::FioSummary;
use crate::jobs::fio::FioFigures;
use crate::jobs::protocol::{ForeignFio, JobKind, JobMsg};

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
}

/// Every job of the session, oldest first, and the fio processes found running.
#[derive(Debug, Clone, Default)]
pub struct Jobs {
    /// Jobs, oldest first.
    pub list: Vec<Job>,
    /// Selected job id.
    pub selected: Option<u32>,
    /// fio processes pagewatch did not start.
    pub foreign: Vec<ForeignFio>,
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
        });
        self.selected = Some(id);
        id
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

    /// Moves the selection one job up or down.
    pub fn move_selection(&mut self, down: bool) {
        let Some(cur) = self.selected().map(|j| j.id) else {
            return;
        };
        let i = self.list.iter().position(|j| j.id == cur).unwrap_or(0);
        let next = if down {
            (i + 1).min(self.list.len() - 1)
        } else {
            i.saturating_sub(1)
        };
        self.selected = Some(self.list[next].id);
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
            JobMsg::Started { pid, .. } => {
                j.pid = Some(*pid);
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
            }
        }
    }
}
