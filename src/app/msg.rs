//! Messages into the app and effects out of it.
//!
//! Owns: `Msg` and `Effect`, and what a click lands on (`Pointer`, `Target`; `pointer`
//! applies it). The job protocol inside them (`JobCmd`, `JobReport`) is `jobs::protocol`'s.
//! Must not touch: anything that performs them.

use super::keymap::{Action, Key, Mouse, MouseKind};
use super::state::Focus;
use crate::event::Event;
use crate::jobs::protocol::{JobCmd, JobReport};
use crate::sample::RawSample;

/// Everything that changes the app arrives as one of these.
#[derive(Debug, Clone)]
pub enum Msg {
    /// A fresh raw sample from the sampler.
    Sample(RawSample),
    /// The sampler failed to read (the message names the file).
    SampleError(String),
    /// A user action (tests and scripted input; keys arrive as `Key`).
    Action(Action),
    /// A key press.
    Key(Key),
    /// A mouse event as the terminal reported it; the runtime places it on the screen and
    /// sends it on as `Pointer`.
    Mouse(Mouse),
    /// A click or wheel turn on what is under the pointer.
    Pointer(Pointer),
    /// A job edge's report (the supervisor's, the play edge's).
    Job(JobReport),
    /// Something to tell the user (a refusal, a failure).
    Notice(String),
    /// The wall clock, once a second while samples do not drive the screen (see
    /// `App::needs_ticks`) or stop coming, so the screen clock runs even if sampling stalls.
    Tick {
        /// Milliseconds since the epoch.
        now_ms: i64,
    },
    /// How long the sampler's last read of /proc and /sys took, µs.
    SampleTook(u64),
    /// pagewatch's CPU use over the last second, ms per second.
    CpuUse(f64),
    /// The terminal was resized.
    Resize,
    /// The checks before a playbook from the screen starts (`Effect::CheckPlay`): the
    /// settings it will change with their current values, or why it cannot run.
    PlayChecked {
        /// The playbook.
        book: crate::play::Playbook,
        /// The disk under the fio directory, when known.
        device: Option<String>,
        /// (setting, value now, value it will get) for each tune step, or the refusal.
        result: Result<Vec<TuneView>, String>,
    },
    /// A setting's current value for the `tune` key's confirmation (`Effect::CheckTune`).
    TuneChecked {
        /// The setting.
        setting: crate::jobs::tune::Setting,
        /// The checked new value.
        value: String,
        /// (resolved name, value now, what writing it leaves behind for good:
        /// `jobs::wbt::lasting`), or why it cannot be tuned.
        result: Result<(String, String, Option<String>), String>,
    },
    /// Stop: a signal (SIGTERM, SIGHUP, SIGINT) arrived.
    Quit,
}

impl From<JobReport> for Msg {
    fn from(r: JobReport) -> Self {
        Msg::Job(r)
    }
}

/// A setting a playbook will change: its name, its value now and the value it will get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TuneView {
    /// Resolved name (`vm.dirty_bytes`, `vda/queue/scheduler`).
    pub setting: String,
    /// Its value now.
    pub old: String,
    /// The value the playbook writes (`original` for a restore step).
    pub new: String,
    /// What the change leaves behind for good, to confirm (`jobs::wbt::lasting`).
    pub lasting: Option<String>,
}

/// What pagewatch itself costs, shown in the header.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SelfCost {
    /// Time the last read of /proc and /sys took, µs.
    pub sample_us: u64,
    /// CPU time used per second of wall time, ms/s (user + system); `None` until the first
    /// window of the runtime's CPU meter is complete (about five seconds).
    pub cpu_ms_per_s: Option<f64>,
}

/// Side effects the runtime performs for the app.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Leave.
    Quit,
    /// Sample every this many seconds from now on.
    SetInterval(f64),
    /// Collect this "who" data from the next sample on (`Source::want`).
    Want(crate::sample::Wants),
    /// Keep the disks' calm baselines learned (`Step::learned`, `Source::keep_baselines`).
    KeepBaselines(crate::parse::baselines::Stored),
    /// A job edge's work (eaters, fio, cache drops, settings, stacks, the fio scan).
    Job(JobCmd),
    /// An event to record.
    Log(Event),
    /// Save these settings, changed in the screen, to the config file (`config_io`).
    Save(Vec<crate::config::Setting>),
    /// Re-read the rarely read files (zoneinfo, the vm sysctls, /sys/block) with the next
    /// sample: figures derived from them no longer match the kernel's.
    RefreshSlow,
    /// Check a playbook can run here (root, fio directory, free space, MemAvailable, one at
    /// a time) and read the settings it changes; report with `Msg::PlayChecked`.
    CheckPlay(crate::play::Playbook),
    /// Read a setting's current value; report with `Msg::TuneChecked`.
    CheckTune {
        /// The setting.
        setting: crate::jobs::tune::Setting,
        /// The checked new value.
        value: String,
    },
    /// A playbook from the screen ended: release the one-playbook lock.
    PlayEnded,
}

/// What is under the pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A pane, off its rows (its border, title or an empty row).
    Pane(Focus),
    /// A row of the disk table.
    Disk(String),
    /// A job's row in the jobs pane.
    Job(u32),
    /// A fio pagewatch did not start, running or ended, in the jobs pane.
    JobRow(super::jobs::JobRef),
    /// The processes or cgroups view, off its rows.
    Who,
    /// A row of the processes view.
    Process(u32),
    /// A row of the cgroups view (its path).
    Cgroup(String),
}

/// A click or wheel turn on a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// Click or wheel.
    pub kind: MouseKind,
    /// What is under the pointer.
    pub target: Target,
}
