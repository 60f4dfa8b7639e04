//! Who stalls in direct reclaim (spec §3.3): each task's time between
//! `mm_vmscan_direct_reclaim_begin`/`_end` (and the memcg pair) in the interval, summed by
//! process, in ms per second of the interval.
//!
//! Owns: `ReclaimTasks`, pairing one read's records (`pair`, pure), and marking the memory
//! rows (`annotate`: `in_reclaim`, `reclaim_ms_per_s`). Must not touch: the records' text
//! (`parse::reclaim_trace`), files, the clock: the span is the read's own (`since_ns` to
//! `now_ns`, the trace clock).
//!
//! Pairing, per task id, in time order (a task is in one reclaim at a time: the kernel sets
//! `PF_MEMALLOC` around it, so it never nests):
//! - an entry opens; an exit closes the open entry and counts the time between them, each end
//!   clipped to the read's span;
//! - an entry carried from the earlier read (`o`) counts from the span's start;
//! - an entry over an open one means the open one lost its exit (a wrapped buffer, or a task
//!   gone and its id reused): the open one is dropped, `unpaired`, not timed;
//! - an exit with no entry counts from the span's start in the first read since arming (the
//!   task was in reclaim when it was armed); later its entry was lost, so it is `unpaired`
//!   and not timed (an undercount, never an overcount);
//! - an entry still open at the read counts up to the read, and its task is `in_reclaim`.

use serde::Serialize;

use super::procs_memory::MemRow;
use crate::parse::reclaim_trace::{Mark, Records};

/// A process is named (the verdict, the pane) from this many ms/s in reclaim: under it a
/// stall is too short to matter and its "0 ms/s" would read as nothing.
pub const NAMED_MS_PER_S: f64 = 0.5;

/// One process's time in reclaim over the interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRow {
    /// The process (thread group) id.
    pub pid: u32,
    /// Its command name (empty when it was gone before the read).
    pub comm: String,
    /// Milliseconds its tasks spent in reclaim per second of the interval (summed over its
    /// threads, so it can exceed 1000).
    pub ms_per_s: f64,
    /// A task of it was still in reclaim at the read.
    pub in_reclaim: bool,
    /// Reclaims it entered or was in during the interval.
    pub stalls: u64,
    /// Pages its finished reclaims freed (`nr_reclaimed`).
    pub reclaimed_pages: u64,
    /// Some of it was memcg limit reclaim rather than global.
    pub memcg: bool,
}

/// The interval's reclaimers, while the tracer is armed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReclaimTasks {
    /// One per process that reclaimed, most time first.
    pub rows: Vec<TaskRow>,
    /// The interval the records cover, seconds.
    pub span_s: f64,
    /// Events the kernel dropped (the figures then undercount).
    pub lost: u64,
    /// Entries or exits that could not be paired, not timed.
    pub unpaired: u64,
}

impl ReclaimTasks {
    /// `fio[1234] 230 ms/s, pagewatch-eat[99] 40 ms/s`: the first `n` rows of at least
    /// `NAMED_MS_PER_S`; `None` when none.
    #[must_use]
    pub fn named(&self, n: usize) -> Option<String> {
        let parts: Vec<String> = self
            .rows
            .iter()
            .filter(|r| r.ms_per_s >= NAMED_MS_PER_S)
            .take(n)
            .map(|r| {
                let comm = if r.comm.is_empty() { "?" } else { &r.comm };
                format!("{comm}[{}] {:.0} ms/s", r.pid, r.ms_per_s)
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

#[derive(Default)]
struct Acc {
    ns: u64,
    in_reclaim: bool,
    stalls: u64,
    reclaimed: u64,
    memcg: bool,
}

/// Pairs one read's records (see the module doc).
#[must_use]
pub fn pair(r: &Records) -> ReclaimTasks {
    use std::collections::BTreeMap;
    let clip = |a: u64, b: u64| b.min(r.now_ns).saturating_sub(a.max(r.since_ns));
    let mut open: BTreeMap<u32, (u64, bool)> = BTreeMap::new();
    let mut by_tid: BTreeMap<u32, Acc> = BTreeMap::new();
    let mut unpaired = 0u64;
    for x in &r.records {
        let acc = by_tid.entry(x.tid).or_default();
        match x.mark {
            Mark::Begin | Mark::Open => {
                if open.insert(x.tid, (x.ts, x.memcg)).is_some() {
                    unpaired += 1;
                }
            }
            Mark::End => {
                let start = match open.remove(&x.tid) {
                    Some((ts, _)) => ts,
                    None if r.fresh => r.since_ns,
                    None => {
                        unpaired += 1;
                        continue;
                    }
                };
                acc.ns += clip(start, x.ts);
                acc.stalls += 1;
                acc.reclaimed += x.reclaimed;
                acc.memcg |= x.memcg;
            }
        }
    }
    for (tid, (ts, memcg)) in open {
        let acc = by_tid.entry(tid).or_default();
        acc.ns += clip(ts, r.now_ns);
        acc.stalls += 1;
        acc.in_reclaim = true;
        acc.memcg |= memcg;
    }
    let span_ns = r.now_ns - r.since_ns;
    let mut per_process: BTreeMap<u32, TaskRow> = BTreeMap::new();
    for (tid, a) in by_tid.into_iter().filter(|(_, a)| a.stalls > 0) {
        let (pid, comm) = r
            .tasks
            .get(&tid)
            .map_or((tid, String::new()), |t| (t.tgid, t.comm.clone()));
        let row = per_process.entry(pid).or_insert(TaskRow {
            pid,
            comm,
            ms_per_s: 0.0,
            in_reclaim: false,
            stalls: 0,
            reclaimed_pages: 0,
            memcg: false,
        });
        if span_ns > 0 {
            row.ms_per_s += a.ns as f64 / 1e6 / (span_ns as f64 / 1e9);
        }
        row.in_reclaim |= a.in_reclaim;
        row.stalls += a.stalls;
        row.reclaimed_pages += a.reclaimed;
        row.memcg |= a.memcg;
    }
    let mut rows: Vec<TaskRow> = per_process.into_values().collect();
    rows.sort_by(|a, b| b.ms_per_s.total_cmp(&a.ms_per_s).then(a.pid.cmp(&b.pid)));
    ReclaimTasks {
        rows,
        span_s: span_ns as f64 / 1e9,
        lost: r.lost,
        unpaired,
    }
}

/// Marks the memory rows with the tracer's figures: `reclaim_ms_per_s` (0 for a row that did
/// not reclaim while armed; left `None` when it is not), and `in_reclaim` for a row whose
/// task was inside reclaim at the read.
pub fn annotate(tasks: Option<&ReclaimTasks>, rows: Option<&mut Vec<MemRow>>) {
    let (Some(t), Some(rows)) = (tasks, rows) else {
        return;
    };
    for row in rows.iter_mut() {
        let mine = t.rows.iter().find(|r| r.pid == row.pid);
        row.reclaim_ms_per_s = Some(mine.map_or(0.0, |r| r.ms_per_s));
        row.in_reclaim |= mine.is_some_and(|r| r.in_reclaim);
    }
    super::procs_memory::sort_rows(rows);
}

#[cfg(test)]
#[path = "reclaim_tasks_tests.rs"]
mod tests;
