//! Throttled writers: the tasks the kernel paces in `balance_dirty_pages()`, from the
//! `writeback:balance_dirty_pages` tracepoint (root, exact, spec §7) or, without it, from the
//! tasks whose wchan is `balance_dirty_pages` (approximate, spec §11).
//!
//! Owns: `Throttled`, one row of that list. Must not touch: I/O.

use serde::Serialize;

/// Where a throttled-writer row comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThrottleSource {
    /// The `writeback:balance_dirty_pages` tracepoint in pagewatch's tracefs instance.
    Tracepoint,
    /// The task's `/proc/PID/wchan` read `balance_dirty_pages` at a walk (approximate: a task
    /// seen there at one instant; its pause figure, if any, is delay accounting's blkio time).
    Wchan,
}

/// One throttled writer over the last interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throttled {
    /// Task id (the writing thread; the tracepoint reports threads).
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Its cgroup v2 path (`/system.slice/db.service`), when known.
    pub cgroup: Option<String>,
    /// The inode of the cgroup of the wb it wrote through (tracepoint `cgroup_ino`).
    pub cgroup_ino: Option<u64>,
    /// The device (`8:0`, tracepoint `bdi`), when known.
    pub bdi: Option<String>,
    /// Milliseconds slept in balance_dirty_pages per second (tracepoint: the sum of positive
    /// `pause` over the interval; wchan: delay accounting's blkio ms/s when enabled).
    pub pause_ms_per_s: Option<f64>,
    /// The rate the kernel allows the task, KiB/s (tracepoint `task_ratelimit`), last seen.
    pub task_ratelimit_kbps: Option<u64>,
    /// The kernel's hard limit of the throttling domain, pages (tracepoint `limit`).
    pub limit_pages: Option<u64>,
    /// The kernel's setpoint, pages (tracepoint `setpoint`).
    pub setpoint_pages: Option<u64>,
    /// Where the row comes from.
    pub source: ThrottleSource,
    /// This is pagewatch itself (a recording on the throttled disk).
    pub is_self: bool,
}
