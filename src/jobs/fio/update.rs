//! What a fio job reports while it runs and how it ended: the vocabulary shared by the runner
//! that sends it and the verdict that builds the last report.
//!
//! Owns: `FioUpdate`. Must not touch: processes, files.

use std::path::PathBuf;

use super::live::FioLive;
use crate::event::FioSummary;

/// What a fio job reports, in order: maybe `Preparing` and `LayoutStarted`, then `Started`,
/// `Live`s and `Message`s, then exactly one `Finished` or `Failed`.
#[derive(Debug, Clone, PartialEq)]
pub enum FioUpdate {
    /// The test file is being laid out (`--create_only=1`) before the job.
    Preparing {
        /// The test file.
        file: PathBuf,
        /// The exact fio command line of the layout run.
        argv: Vec<String>,
    },
    /// The layout run's fio started: pagewatch's own, never a foreign fio (its guard's pid,
    /// as `Started`'s). Reported so that the foreign-fio scan leaves it out; no job message.
    LayoutStarted {
        /// Process group id (the layout run's guard).
        pid: u32,
    },
    /// The job's fio started.
    Started {
        /// Process group id (the guard's pid; fio and its workers are in this group).
        pid: u32,
    },
    /// A line fio printed that is not a status (stdout or stderr).
    Message(String),
    /// Figures of the last interval.
    Live(FioLive),
    /// fio finished, or was stopped and gave its result (`summary.partial` when it had to be
    /// killed and these are the last periodic figures).
    Finished {
        /// The result.
        summary: FioSummary,
        /// The exit code (0, or 128 after a stop, 137 after SIGKILL).
        exit: i32,
        /// fio's last stderr lines.
        stderr_tail: String,
    },
    /// The job could not run or fio reported an error.
    Failed {
        /// Why, in plain words (fio's own error text when it gave one).
        reason: String,
        /// fio's last stderr lines.
        stderr_tail: String,
        /// Figures gathered before the failure, if any.
        summary: Option<FioSummary>,
    },
}
