//! Who stalls in direct compaction (issue 56, spec §13.1): each queried process's delay
//! accounting, `compact` and `freepages` (direct and memcg reclaim), as ms per second between
//! two readings of the same tgid (`names::TASK_DELAYS`), and the processes to query.
//!
//! Owns: `TaskDelays` (`derive`, pure: two samples' readings → rows), marking the memory rows
//! (`annotate`), and the choice of processes (`pids`). Must not touch: sockets
//! (`source::task_delays`), the text (`parse::taskstats`).
//!
//! A rate needs the process in both readings; a process first asked for has none (`null`).
//! The figures are `null` too where `kernel.task_delayacct` is off (nothing is queried) or the
//! query failed (the state says why). Only processes forked while delay accounting was on
//! count (spec §13.1): an older one reads 0 forever, and a total that went back (a pid reused)
//! gives no rate.

use serde::Serialize;

use super::procs_memory::MemRow;
use crate::parse::taskstats::Exits;

/// Processes queried a sample at most.
pub const MAX_PIDS: usize = crate::sample::MAX_DELAY_PIDS;
/// `Delays` index of direct reclaim (`freepages`) and of compaction.
const FREEPAGES: usize = 2;
const COMPACT: usize = 4;

/// One process's delays over the interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DelayRow {
    /// The process (thread group) id.
    pub pid: u32,
    /// Milliseconds its threads spent in direct compaction per second (summed over threads,
    /// so it can exceed 1000); `None` where the kernel's struct has no compaction delay.
    pub compact_ms_per_s: Option<f64>,
    /// Direct compactions its threads entered (skipped ones included, spec §13.1).
    pub compact_count: Option<u64>,
    /// Milliseconds in direct or memcg reclaim (`freepages`) per second.
    pub freepages_delay_ms_per_s: Option<f64>,
}

/// The interval's readings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskDelays {
    /// `on`, or why not (`no-permission`, `no-family`, `error`).
    pub state: String,
    /// Free text, when not on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// One per process read in both samples.
    pub rows: Vec<DelayRow>,
}

/// The delays between the previous sample's reading `prev` and this one's `cur`; `None`
/// when this sample read none.
#[must_use]
pub fn derive(prev: Option<&Exits>, cur: Option<&Exits>) -> Option<TaskDelays> {
    let cur = cur?;
    let mut rows = Vec::new();
    if let Some(prev) = prev.filter(|p| p.read_ns < cur.read_ns) {
        let dt_s = (cur.read_ns - prev.read_ns) as f64 / 1e9;
        for r in &cur.records {
            let Some(b) = prev.records.iter().find(|b| b.pid == r.pid) else {
                continue;
            };
            let per_s = |k: usize| {
                let ((n1, t1), (n0, t0)) = (r.delays[k]?, b.delays[k]?);
                let (dn, dt) = (n1.checked_sub(n0)?, t1.checked_sub(t0)?);
                Some((dt as f64 / 1e6 / dt_s, dn))
            };
            let compact = per_s(COMPACT);
            rows.push(DelayRow {
                pid: r.pid,
                compact_ms_per_s: compact.map(|c| c.0),
                compact_count: compact.map(|c| c.1),
                freepages_delay_ms_per_s: per_s(FREEPAGES).map(|f| f.0),
            });
        }
    }
    Some(TaskDelays {
        state: cur.state.clone(),
        why: cur.why.clone(),
        rows,
    })
}

/// Puts each row's delays on its memory row.
pub fn annotate(delays: Option<&TaskDelays>, rows: Option<&mut Vec<MemRow>>) {
    let (Some(d), Some(rows)) = (delays, rows) else {
        return;
    };
    for m in rows.iter_mut() {
        if let Some(r) = d.rows.iter().find(|r| r.pid == m.pid) {
            m.compact_ms_per_s = r.compact_ms_per_s;
            m.freepages_delay_ms_per_s = r.freepages_delay_ms_per_s;
        }
    }
}

/// The processes to query: the memory rows shown first (in reclaim first, then the largest),
/// at most `MAX_PIDS`, while delay accounting is on (`delayacct`, `Model::task_delayacct`) and `walking`
/// (the walk is wanted: `model::who` wants it while memory is taken, direct reclaim or
/// compaction ran, memory PSI rose, a disk is busy, or the processes view is open, and for
/// `LINGER_S` after); none otherwise.
#[must_use]
pub fn pids(delayacct: Option<bool>, rows: Option<&[MemRow]>, walking: bool) -> Vec<u32> {
    if delayacct != Some(true) || !walking {
        return Vec::new();
    }
    rows.unwrap_or_default()
        .iter()
        .take(MAX_PIDS)
        .map(|r| r.pid)
        .collect()
}

/// The process stalled longest in direct compaction, from `NAMED_MS_PER_S`:
/// `pagewatch-eat[123] in direct compaction 140 ms/s`.
#[must_use]
pub fn longest_compacting(rows: Option<&[MemRow]>) -> Option<String> {
    let r = rows?
        .iter()
        .filter(|r| r.compact_ms_per_s.unwrap_or(0.0) >= super::reclaim_tasks::NAMED_MS_PER_S)
        .max_by(|a, b| {
            a.compact_ms_per_s
                .partial_cmp(&b.compact_ms_per_s)
                .unwrap_or(std::cmp::Ordering::Equal)
        })?;
    Some(format!(
        "{}[{}] in direct compaction {:.0} ms/s",
        r.comm,
        r.pid,
        r.compact_ms_per_s.unwrap_or(0.0)
    ))
}

#[cfg(test)]
#[path = "task_delays_tests.rs"]
mod tests;
