//! The job protocol: what the app or a playbook asks the job edges to do (`JobCmd`) and what
//! they report back (`JobReport`). The app wraps them (`Effect::Job`, `Msg::Job`); the play
//! sequencer and the supervisor speak them without knowing the app.
//!
//! Owns: `JobCmd`, `JobReport`, `JobKind`, `JobMsg`, `ForeignFio`, `JobFile`. Must not touch: anything
//! that performs them.

use crate::event::FioSummary;
use crate::jobs::fio::FioFigures;

/// A job edge's work: start or stop a job, drop caches, write a setting, look around.
#[derive(Debug, Clone, PartialEq)]
pub enum JobCmd {
    /// Read this task's kernel stack (`/proc/PID/stack`, root) and report it
    /// (`JobReport::Stack`).
    ReadStack(u32),
    /// Read these processes' command lines (`/proc/PID/cmdline`, the rows shown) and
    /// report them (`JobReport::Cmdlines`).
    ReadCmdlines(Vec<u32>),
    /// Start a memory eater as job `id`.
    StartEat {
        /// Job number.
        id: u32,
        /// Size as typed (`2G`, `50%`).
        size: String,
        /// Take more than MemAvailable minus the margin.
        force: bool,
    },
    /// Start fio as job `id`.
    StartFio {
        /// Job number.
        id: u32,
        /// `preset,key=value,...`.
        spec: String,
    },
    /// Stop or release job `id`.
    StopJob(u32),
    /// Measure the page-cache residency of job `id`'s files (its detail view is open); report
    /// with `JobReport::Files`.
    MeasureFiles {
        /// Job number.
        id: u32,
        /// The files, as its command line names them.
        paths: Vec<String>,
    },
    /// Sync, then drop caches at this level.
    DropCaches(u8),
    /// Look for fio processes pagewatch did not start: among these pids, the fio processes
    /// of a recent process walk over every process (no comm to read); `None`: no such walk,
    /// read every process's comm.
    ScanFio(Option<Vec<u32>>),
    /// Write a setting (`value` `None`: put the original back), through the restore guard;
    /// report with `JobReport::Tuned`.
    Tune {
        /// The allowlisted setting.
        setting: crate::jobs::tune::Setting,
        /// The checked value.
        value: Option<String>,
    },
}

/// What a job edge reports back.
#[derive(Debug, Clone)]
pub enum JobReport {
    /// A report about a job pagewatch started.
    Job(JobMsg),
    /// fio processes pagewatch did not start, with their rates.
    Foreign(Vec<ForeignFio>),
    /// Job `id`'s files with their residency (`JobCmd::MeasureFiles`).
    Files {
        /// Job number.
        id: u32,
        /// The files that could be measured.
        files: Vec<JobFile>,
    },
    /// Caches were dropped.
    Dropped {
        /// 1 or 3.
        level: u8,
        /// How long sync and drop took, ms.
        took_ms: u64,
    },
    /// Something to tell the user (a refusal, a failure).
    Notice(String),
    /// A task's kernel stack, or why it could not be read.
    Stack {
        /// The task.
        pid: u32,
        /// The stack's text, or the reason it is not there.
        text: String,
    },
    /// Command lines of the rows shown (`JobCmd::ReadCmdlines`): (pid, line); a process
    /// without one (a kernel thread, gone) is left out.
    Cmdlines(Vec<(u32, String)>),
    /// A setting was written (or put back), or why not (`JobCmd::Tune`).
    Tuned(Result<crate::jobs::tune::Change, String>),
}

/// Which kind of job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    /// `pagewatch eat`.
    Eat,
    /// fio.
    Fio,
}

/// What the runtime reports about a job.
#[derive(Debug, Clone, PartialEq)]
pub enum JobMsg {
    /// The process started.
    Started {
        /// Job number.
        id: u32,
        /// Its pid.
        pid: u32,
        /// The exact command run.
        argv: Vec<String>,
    },
    /// Eater progress.
    Eat {
        /// Job number.
        id: u32,
        /// Bytes touched.
        touched: u64,
        /// Target bytes.
        target: u64,
        /// Whether it has reached the target and holds it.
        holding: bool,
    },
    /// fio is laying out its file.
    Preparing {
        /// Job number.
        id: u32,
    },
    /// fio's figures for the last interval.
    Fio {
        /// Job number.
        id: u32,
        /// The figures.
        figures: FioFigures,
    },
    /// A warning or message to show with the job.
    Note {
        /// Job number.
        id: u32,
        /// The text.
        text: String,
    },
    /// The job ended.
    Ended {
        /// Job number.
        id: u32,
        /// How, in plain words.
        how: String,
        /// Whether it failed.
        failed: bool,
        /// fio's result, if any.
        result: Option<FioSummary>,
    },
}

impl JobMsg {
    /// The job it is about.
    #[must_use]
    pub fn id(&self) -> u32 {
        match self {
            JobMsg::Started { id, .. }
            | JobMsg::Eat { id, .. }
            | JobMsg::Preparing { id }
            | JobMsg::Fio { id, .. }
            | JobMsg::Note { id, .. }
            | JobMsg::Ended { id, .. } => *id,
        }
    }
}

/// A fio process pagewatch did not start, with its rates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ForeignFio {
    /// Main pid.
    pub pid: u32,
    /// Its command line.
    pub cmdline: String,
    /// Bytes/s fetched from storage (`read_bytes`), all its processes.
    pub read_bytes_s: Option<f64>,
    /// Bytes/s dirtied for storage (`write_bytes`).
    pub write_bytes_s: Option<f64>,
    /// Bytes/s through read syscalls, cache hits included (`rchar`).
    pub rchar_s: Option<f64>,
    /// Bytes/s through write syscalls (`wchar`).
    pub wchar_s: Option<f64>,
    /// Its data files (`foreign_files::data_files`: the workers' files, never fio's report or
    /// logs), each with its residency.
    pub files: Vec<JobFile>,
    /// Its worker processes (fio's main process not counted).
    pub workers: usize,
}

/// A job's data file and how much of it is in the page cache.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobFile {
    /// The file (may end in ` (deleted)`).
    pub path: String,
    /// Its size, bytes.
    pub size_bytes: u64,
    /// Pages of it in the page cache.
    pub cached_pages: u64,
    /// Pages it spans.
    pub total_pages: u64,
    /// How it was measured (`cachestat`, `mincore`).
    pub method: &'static str,
    /// Whole seconds since it was measured: a dear file's figures serve until it is due again
    /// (`file_pace`), up to about 15 s on a 4 GiB file under memory pressure; 0 when fresh.
    pub age_s: u64,
}

impl JobFile {
    /// The share of it in the page cache, % (0 for an empty file).
    #[must_use]
    pub fn cached_pct(&self) -> f64 {
        if self.total_pages == 0 {
            0.0
        } else {
            self.cached_pages as f64 * 100.0 / self.total_pages as f64
        }
    }

    /// ` (12 s old)` when its figures are from an earlier measurement than the last second's,
    /// else nothing.
    #[must_use]
    pub fn age(&self) -> String {
        if self.age_s >= 2 {
            format!(" ({} s old)", self.age_s)
        } else {
            String::new()
        }
    }
}
