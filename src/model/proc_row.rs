//! The processes' vocabulary: one process's row over the interval between two walks, and the
//! limits that size and rate the rows. It sits at the bottom of the process files, so
//! `procs` (the tracker), `exits`, `sync` and `commands` all speak it without importing one
//! another; the figures' meaning and limits are `procs`'s module doc.
//!
//! Owns: `ProcRow`, `ExitDelays`, `TOP`, `MIN_BORN_SPAN_NS`. Must not touch: files, the
//! clock.

use serde::Serialize;

use crate::parse::procs::IoCounters;

/// Rows `Model::processes` keeps: the most active.
pub const TOP: usize = 20;

/// The shortest span a process born since the previous walk is rated over (`procs`'s module
/// doc).
pub const MIN_BORN_SPAN_NS: u64 = 1_000_000_000;

/// One process over the interval between two walks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProcRow {
    /// Its pid.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Its cgroup v2 path, when known.
    pub cgroup: Option<String>,
    /// Pages it dirtied, bytes/s (io `write_bytes`).
    pub dirtied_bytes_per_s: Option<f64>,
    /// Bytes read from storage for it, bytes/s (io `read_bytes`).
    pub read_bytes_per_s: Option<f64>,
    /// Bytes its read syscalls returned, bytes/s (io `rchar`).
    pub rchar_per_s: Option<f64>,
    /// Bytes its write syscalls took, bytes/s (io `wchar`).
    pub wchar_per_s: Option<f64>,
    /// Estimated share of its reads served from the page cache, % (see the module doc).
    pub cache_hit_est_pct: Option<f64>,
    /// Block-IO wait, ms per s (delay accounting); `None` when it is off.
    pub iowait_ms_per_s: Option<f64>,
    /// Its state letter at the walk (R, S, D, …).
    pub state: char,
    /// The kernel function its main thread sleeps in (`balance_dirty_pages`: throttled);
    /// `None` when not readable.
    pub wchan: Option<String>,
    /// Its io file was not readable (another user's process, not root): the rates are
    /// unknown, not zero.
    pub no_permission: bool,
    /// Its resident bytes (stat field 24), `None` in recordings without a page size.
    pub rss_bytes: Option<u64>,
    /// Its resident anonymous bytes (statm resident − shared, `procs_memory`).
    pub anon_bytes: Option<u64>,
    /// Change of its resident bytes since the previous walk, per second.
    pub rss_growth_bytes_per_s: Option<f64>,
    /// Major page faults per second (stat field 12).
    pub majflt_per_s: Option<f64>,
    /// The span the rates cover, ms: the interval between the walks, or the process's age
    /// when it started since the previous walk; `None` without rates.
    pub walk_ms: Option<u64>,
    /// The monotonic time (ms) of the walk the rates come from: records between walks repeat
    /// the last walk's rows with the same value (count each walk once).
    pub rates_from_walk_ms: u64,
    /// Its io counters jumped with children it reaped (see the module doc): not its rate.
    pub reaped_children: bool,
    /// The dirtied bytes of that jump (write_bytes), when `reaped_children`.
    pub reaped_dirtied_bytes: Option<u64>,
    /// Its command line (NULs as spaces, capped), when the walk read it.
    pub cmdline: Option<String>,
    /// A process that exited since the previous walk, credited from its taskstats exit
    /// record (`model::exits`): its rates are its own IO since the last walk that read it.
    pub exited: bool,
    /// An exited process's lifetime delays (`exited` rows only).
    pub exit_delays: Option<ExitDelays>,
    /// The io jump of a `reaped_children` row (its own and its children's), for
    /// `model::exits` to take the children's totals from.
    #[serde(skip)]
    pub reaped_io: Option<IoCounters>,
    /// Sync calls (fsync, fdatasync, sync_file_range, msync) completed per second over the
    /// sample interval (an `exited` row: since the previous walk, over `walk_ms`); `None`
    /// while the sync tracer is not armed (`model::sync`).
    pub fsync_per_s: Option<f64>,
    /// Their mean latency, ms; `None` without a completed call.
    pub fsync_mean_ms: Option<f64>,
    /// The longest sync wait of the interval, completed or still waiting, ms.
    pub fsync_max_ms: Option<f64>,
}

/// An exited process's lifetime delays, ms (delay accounting: zero unless it was forked
/// with `kernel.task_delayacct` on).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExitDelays {
    /// Waiting for block IO.
    pub blkio_ms: Option<f64>,
    /// Waiting for swap-in.
    pub swapin_ms: Option<f64>,
    /// In direct reclaim (`freepages`).
    pub reclaim_ms: Option<f64>,
    /// Thrashing (refaulting its working set).
    pub thrashing_ms: Option<f64>,
    /// In memory compaction.
    pub compact_ms: Option<f64>,
}
