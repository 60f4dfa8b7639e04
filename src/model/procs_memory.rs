//! The memory "who" (spec §11): which processes hold the memory, which grow it, which fault
//! pages in from storage, and which are stalled in reclaim, from the walk's `M` records and
//! the stat and statm of its `P` records.
//!
//! Owns: `MemRow`, `memory_rows` (pure: a walk → rows, the memory sort's order), the memory
//! figures of a `ProcRow` (`row_memory`) and `in_reclaim`. Must not touch: files, the clock
//! (rates divide by the walks' own timestamps).
//!
//! The figures and their limits:
//! - `rss_bytes` is VmRSS (status), else stat field 24: resident anon + file + shmem pages.
//!   Both read the mm's per-CPU-batched counters: a few hundred KiB of slack per CPU.
//! - `anon_bytes` is RssAnon (status) or, for `processes[]` rows, statm resident − shared,
//!   which is the same anon counter (`task_statm`: shared = file + shmem).
//! - `rss_growth_bytes_per_s` is the change of stat's rss since the previous walk; a process
//!   first seen at this walk has none.
//! - `majflt_per_s` is stat field 12 over the same interval: faults that read from storage
//!   (swap-ins and file pages, refaults of evicted ones included).
//! - `in_reclaim`: in D state with a wchan of the reclaim paths (`in_reclaim`): the task is
//!   stalled freeing memory for its own allocation. Such a task sorts first.

use serde::Serialize;

use super::rate::elapsed_s;
use crate::parse::procs::{MemRecord, ProcRecord, Walk};

/// One process of the memory sort.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemRow {
    /// Its pid.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Its state letter (R, S, D, …).
    pub state: char,
    /// Where its main thread sleeps, when readable.
    pub wchan: Option<String>,
    /// In D state in a reclaim path (the walk's wchan), or inside direct or memcg reclaim at
    /// the read (the reclaim tracer, `model::reclaim_tasks`).
    pub in_reclaim: bool,
    /// Milliseconds its tasks spent in direct or memcg reclaim per second of the interval
    /// (the reclaim tracer); `None` while the tracer is not armed.
    pub reclaim_ms_per_s: Option<f64>,
    /// Milliseconds its threads spent in direct compaction per second, from delay accounting
    /// (spec §13.1, `model::task_delays`); `None` where `kernel.task_delayacct` is off, the
    /// process was not queried in two samples in a row, or the query was refused.
    pub compact_ms_per_s: Option<f64>,
    /// The same for direct and memcg reclaim (delay accounting's `freepages`).
    pub freepages_delay_ms_per_s: Option<f64>,
    /// Resident bytes.
    pub rss_bytes: Option<u64>,
    /// Resident anonymous bytes.
    pub anon_bytes: Option<u64>,
    /// Resident file-backed bytes.
    pub file_bytes: Option<u64>,
    /// Resident shared-memory bytes.
    pub shmem_bytes: Option<u64>,
    /// Bytes of it swapped out.
    pub swap_bytes: Option<u64>,
    /// Change of its resident bytes since the previous walk, per second.
    pub rss_growth_bytes_per_s: Option<f64>,
    /// Major page faults per second over the same interval.
    pub majflt_per_s: Option<f64>,
    /// `/proc/PID/oom_score_adj` (−1000 never killed, 1000 killed first).
    pub oom_score_adj: Option<i32>,
}

impl MemRow {
    /// A row of `pid` and `comm` with nothing read (sleeping, no figures), for tests.
    #[cfg(test)]
    #[must_use]
    pub fn blank(pid: u32, comm: &str) -> Self {
        Self {
            pid,
            comm: comm.to_owned(),
            state: 'S',
            wchan: None,
            in_reclaim: false,
            reclaim_ms_per_s: None,
            compact_ms_per_s: None,
            freepages_delay_ms_per_s: None,
            rss_bytes: None,
            anon_bytes: None,
            file_bytes: None,
            shmem_bytes: None,
            swap_bytes: None,
            rss_growth_bytes_per_s: None,
            majflt_per_s: None,
            oom_score_adj: None,
        }
    }
}

/// Whether a wchan is one of the reclaim paths a task sleeps in when its allocation must
/// free memory first (direct reclaim, its throttle, compaction, the memcg high limit).
#[must_use]
pub fn in_reclaim(wchan: &str) -> bool {
    const PREFIXES: [&str; 7] = [
        "shrink_",
        "try_to_free_",
        "__alloc_pages",
        "reclaim_throttle",
        "throttle_direct_reclaim",
        "mem_cgroup_handle_over_high",
        "compact_",
    ];
    const EXACT: [&str; 4] = [
        "__perform_reclaim",
        "congestion_wait",
        "wait_iff_congested",
        "try_charge_memcg",
    ];
    PREFIXES.iter().any(|p| wchan.starts_with(p)) || EXACT.contains(&wchan)
}

/// The walk's memory rows, stalled-in-reclaim first, then by resident bytes.
#[must_use]
pub fn memory_rows(cur: &Walk) -> Vec<MemRow> {
    let dt = cur.prev_mono_ns.and_then(|p| elapsed_s(p, cur.mono_ns));
    let mut rows: Vec<MemRow> = cur
        .memory
        .iter()
        .map(|r| mem_row(r, cur.page_size, dt))
        .collect();
    sort_rows(&mut rows);
    rows
}

/// The memory sort's order: stalled in reclaim first, then by resident bytes.
pub fn sort_rows(rows: &mut [MemRow]) {
    rows.sort_by(|a, b| {
        b.in_reclaim
            .cmp(&a.in_reclaim)
            .then(b.rss_bytes.unwrap_or(0).cmp(&a.rss_bytes.unwrap_or(0)))
            .then(a.pid.cmp(&b.pid))
    });
}

fn mem_row(r: &MemRecord, page: Option<u64>, dt: Option<f64>) -> MemRow {
    let kb = |v: Option<u64>| v.map(|k| k.saturating_mul(1024));
    let pages = |n: u64| page.map(|p| n.saturating_mul(p));
    let growth = r
        .before
        .and_then(|(rss, _)| Some((pages(r.stat.rss_pages)? as f64 - pages(rss)? as f64) / dt?));
    let majflt = r
        .before
        .and_then(|(_, f)| Some(r.stat.majflt.checked_sub(f)? as f64 / dt?));
    let wchan = r.wchan.clone();
    MemRow {
        pid: r.pid,
        comm: r.stat.comm.clone(),
        state: r.stat.state,
        in_reclaim: r.stat.state == 'D' && wchan.as_deref().is_some_and(in_reclaim),
        wchan,
        reclaim_ms_per_s: None,
        compact_ms_per_s: None,
        freepages_delay_ms_per_s: None,
        rss_bytes: kb(r.vm_rss_kb).or_else(|| pages(r.stat.rss_pages)),
        anon_bytes: kb(r.rss_anon_kb),
        file_bytes: kb(r.rss_file_kb),
        shmem_bytes: kb(r.rss_shmem_kb),
        swap_bytes: kb(r.vm_swap_kb),
        rss_growth_bytes_per_s: growth,
        majflt_per_s: majflt,
        oom_score_adj: r.oom_score_adj,
    }
}

/// The memory figures of a `processes[]` row: rss and anon bytes, rss growth and major
/// faults per second against its reading `before` (taken `dt` seconds earlier).
#[must_use]
pub fn row_memory(
    r: &ProcRecord,
    before: Option<&ProcRecord>,
    page: Option<u64>,
    dt: Option<f64>,
) -> (Option<u64>, Option<u64>, Option<f64>, Option<f64>) {
    let pages = |n: u64| page.map(|p| n.saturating_mul(p));
    let rss = pages(r.stat.rss_pages);
    let anon = r
        .statm
        .and_then(|(res, shared)| pages(res.checked_sub(shared)?));
    let growth = before.and_then(|b| Some((rss? as f64 - pages(b.stat.rss_pages)? as f64) / dt?));
    let majflt = before.and_then(|b| Some(r.stat.majflt.checked_sub(b.stat.majflt)? as f64 / dt?));
    (rss, anon, growth, majflt)
}

#[cfg(test)]
#[path = "procs_memory_tests.rs"]
mod tests;
