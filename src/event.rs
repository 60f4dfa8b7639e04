//! Things that happen during a session besides samples: jobs starting and stopping, fio
//! results, cache drops and the user's own markers.
//!
//! Owns: `Event` and its kinds, shared by the jobs, the app (chart markers), recordings and
//! reports. Must not touch: anything that produces or stores them.

use serde::{Deserialize, Serialize};

/// One event at one wall-clock moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Milliseconds since the Unix epoch.
    pub wall_ms: i64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// A job (memory eater or fio) started.
    JobStart {
        /// pagewatch's job number, unique within a session.
        job: u32,
        /// Short label, such as `eat 12.0G` or `fio randread`.
        what: String,
        /// The exact command line run (no shell).
        argv: Vec<String>,
        /// Process id, when the process started.
        pid: Option<u32>,
    },
    /// A job ended: released, finished, stopped, failed or killed.
    JobStop {
        /// The job number from `JobStart`.
        job: u32,
        /// How it ended, in plain words (`finished`, `released`, `failed: …`).
        how: String,
    },
    /// fio's final (or last partial) result for a job.
    FioResult {
        /// The job number from `JobStart`.
        job: u32,
        /// The figures.
        result: FioSummary,
    },
    /// Caches were dropped (`echo N > /proc/sys/vm/drop_caches`, after a sync).
    DropCaches {
        /// 1 = page cache, 3 = also dentries and inodes.
        level: u8,
        /// How long the sync and the drop took, ms.
        took_ms: u64,
    },
    /// A marker the user added with `M`.
    Marker {
        /// The user's text.
        text: String,
    },
    /// A playbook started a new phase: everything until the next phase (or the end of the
    /// recording) belongs to it.
    Phase {
        /// The playbook's name.
        play: String,
        /// The phase's name.
        name: String,
        /// The disk under the fio directory, whose figures the phase table shows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
    /// A kernel setting was changed (by a playbook or the `T` key) or restored.
    Tune {
        /// The setting, such as `vm.dirty_bytes` or `vda/queue/scheduler`.
        setting: String,
        /// The value before.
        old: String,
        /// The value written.
        new: String,
        /// True when this put the original value back.
        restore: bool,
        /// What the change leaves behind beyond its value (wbt set by hand for good:
        /// `jobs::wbt::restore_note`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

/// The figures of one fio job run, summed over its fio jobs (`numjobs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FioSummary {
    /// The preset or custom label the run was started with.
    pub name: String,
    /// fio's version string, such as `fio-3.33`.
    pub fio_version: String,
    /// How long the jobs ran, ms.
    pub runtime_ms: u64,
    /// Reads.
    pub read: FioDir,
    /// Writes.
    pub write: FioDir,
    /// fsync/fdatasync calls: `ios`, their rate over the write runtime, and their latency in
    /// the `clat_*` fields (fio's `sync.lat_ns`). All zero when the job did not sync; absent in
    /// recordings made before it was kept.
    #[serde(default)]
    pub sync: FioDir,
    /// True when fio was killed before its final report: these are the last periodic figures.
    pub partial: bool,
    /// fio's error, when it failed (errno text or its stderr).
    pub error: Option<String>,
}

/// One direction (read or write) of a fio result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct FioDir {
    /// Bytes transferred.
    pub io_bytes: u64,
    /// I/O operations completed.
    pub ios: u64,
    /// Operations per second over the run.
    pub iops: f64,
    /// Bytes per second over the run.
    pub bw_bytes_s: f64,
    /// Mean completion latency, µs.
    pub clat_mean_us: f64,
    /// 99th percentile completion latency, µs.
    pub clat_p99_us: f64,
}

impl Event {
    /// A short one-line description for timelines and chart labels. Text that came from a
    /// file (a playbook's phases and markers, a recording's events) has its control
    /// characters escaped (`fmt::escape_controls`): the label is safe on a terminal.
    #[must_use]
    pub fn label(&self) -> String {
        let text = self.raw_label();
        match crate::fmt::escape_controls(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(o) => o,
        }
    }

    fn raw_label(&self) -> String {
        match &self.kind {
            EventKind::JobStart { job, what, .. } => format!("#{job} start {what}"),
            EventKind::JobStop { job, how } => format!("#{job} {how}"),
            EventKind::FioResult { job, result } => format!(
                "#{job} fio result: read {:.0} IOPS, write {:.0} IOPS",
                result.read.iops, result.write.iops
            ),
            EventKind::DropCaches { level, took_ms } => {
                format!("drop caches {level} ({took_ms} ms)")
            }
            EventKind::Marker { text } => format!("marker: {text}"),
            EventKind::Phase { play, name, .. } => format!("{play}: phase {name}"),
            EventKind::Tune {
                setting,
                old,
                new,
                restore,
                note,
            } => {
                let what = if *restore { "restored" } else { "tuned" };
                let note = note.as_deref().map_or(String::new(), |n| format!("; {n}"));
                format!("{what} {setting}: {old} -> {new}{note}")
            }
        }
    }
}
