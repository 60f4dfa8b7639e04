//! The victims: per-process sync latency (fsync, fdatasync, sync_file_range, msync with
//! `MS_SYNC`) over the sample interval, from the sync tracer's pseudo-file, and its join to
//! the processes' rows (`fsync_per_s`, `fsync_mean_ms`, `fsync_max_ms`).
//!
//! Owns: `Sync` (the tracer's state and the rates by process, most waiting first), `derive`
//! (pure: the pseudo-file and the interval → rates), `name` (a process gone before the
//! tracer could read its name is named from the walks or its exit record: `dd`, not `?`, in
//! every output), `join` (the rows `Model::processes` shows, the victims among them) and
//! `SinceWalk` (an exited row's calls). Must not touch: files, pairing
//! (`parse::trace_sync`).
//!
//! The figures cover the sample interval (`Model::interval_s`), not the walk's: a process's
//! IO rates repeat until the next walk, its sync figures are new every sample.
//! - `fsync_per_s`: sync calls completed in the interval, per second; 0 for a process
//!   without any while the tracer is armed; `None` when it is not armed (or the kernel has
//!   no syscall tracepoints: `source` then says `delayacct`, and the IOWAIT column, block-IO
//!   delay, is the only sign of a sync wait).
//! - `fsync_mean_ms`: their mean latency, entry to exit; `None` without a completed call.
//! - `fsync_max_ms`: the longest wait of the interval, a completed call's or one still
//!   waiting at the read (a victim stuck for seconds shows before its call returns).
//! - O_SYNC/O_DSYNC writes are not timed (`source::sync_trace` says why): their wait is in
//!   IOWAIT.
//! - A process that exited since the last walk (an `exited` row) has no calls in the sample
//!   after its exit: its figures are its calls since the previous walk (`SinceWalk`), over
//!   the span its IO rates cover (`ProcRow::walk_ms`), so a dd that fsynced once and exited
//!   a second before the walk reads 1 call, not a false 0; `None` when a sample of that span
//!   was not measured. The source drains the exits, walks, then reads the tracer: every call
//!   of a process whose exit a walk credits is in that sample's read or an earlier one (a
//!   call between a walk and the read of its own sample counts toward that walk).

use std::collections::HashMap;

use serde::Serialize;

use super::proc_row::ProcRow;
use crate::parse::sync_calls::{SyncCalls, SyncSource};
use crate::parse::trace::TraceState;

/// Processes with sync calls shown beyond `procs::TOP` (the victims do little IO of their
/// own and would rank below the writers that slow them).
pub const VICTIMS: usize = 5;

/// The sync tracer and the interval's rates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sync {
    /// Armed, or why not.
    pub state: TraceState,
    /// Where the figures come from (`syscalls`, or `delayacct` where the kernel has no
    /// syscall tracepoints).
    pub source: SyncSource,
    /// Why not armed, or a read error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Records the kernel dropped this interval (its buffer wrapped).
    pub lost: u64,
    /// Records dropped without their other half.
    pub unpaired: u64,
    /// The tracer's own CPU time over the interval, ms (its read, pairing and mapping);
    /// `None` when it read nothing this sample (not armed, or just armed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<f64>,
    /// Processes with sync calls, most time waiting first.
    pub rows: Vec<SyncRate>,
}

/// One process's sync calls over the interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncRate {
    /// Its pid (thread group id).
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Calls completed, per second.
    pub per_s: f64,
    /// Their mean latency, ms; `None` without one.
    pub mean_ms: Option<f64>,
    /// The longest wait, completed or in progress, ms; `None` without either.
    pub max_ms: Option<f64>,
    /// Time spent in the completed calls, ms per second.
    pub wait_ms_per_s: f64,
}

impl Sync {
    /// Whether the figures are measured: armed on the syscall tracepoints, and its buffers
    /// read this sample (`cpu_ms` is there; the sample that arms it has read nothing yet).
    #[must_use]
    pub fn measured(&self) -> bool {
        self.state == TraceState::Armed
            && self.source == SyncSource::Syscalls
            && self.cpu_ms.is_some()
    }
}

/// The interval's rates from the pseudo-file; `dt_s` is the interval (no rows without it).
#[must_use]
pub fn derive(c: &SyncCalls, dt_s: Option<f64>) -> Sync {
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut rows: Vec<SyncRate> = match dt_s.filter(|d| *d > 0.0) {
        Some(dt) if c.state == TraceState::Armed && c.cpu_ns.is_some() => c
            .rows
            .iter()
            .map(|r| SyncRate {
                pid: r.tgid,
                comm: r.comm.clone(),
                per_s: r.calls as f64 / dt,
                mean_ms: (r.calls > 0).then(|| ms(r.total_ns) / r.calls as f64),
                max_ms: (r.calls > 0 || r.open_ns > 0).then(|| ms(r.max_ns.max(r.open_ns))),
                wait_ms_per_s: ms(r.total_ns) / dt,
            })
            .collect(),
        _ => Vec::new(),
    };
    let weight = |r: &SyncRate| r.wait_ms_per_s + r.max_ms.unwrap_or(0.0);
    rows.sort_by(|a, b| weight(b).total_cmp(&weight(a)).then(a.pid.cmp(&b.pid)));
    Sync {
        state: c.state,
        source: c.source,
        why: c.why.clone().or_else(|| c.skipped.clone()),
        lost: c.lost,
        unpaired: c.unpaired,
        cpu_ms: c.cpu_ns.map(|ns| ns as f64 / 1e6),
        rows,
    }
}

/// The rows `Model::processes` shows: the `top` most active of `rows`, then the processes
/// with sync calls among the rest (at most `VICTIMS`, most waiting first), then, when the walk
/// covers every process (`whole`), those the walk did not list (no IO of their own since the
/// last walk: their IO rates are unknown). Each row but the exited ones gets its sync figures
/// (module doc) when the tracer measures; an exited row keeps those `SinceWalk::stamp` gave
/// it at its walk.
#[must_use]
pub fn join(rows: &[ProcRow], top: usize, sync: Option<&Sync>, whole: bool) -> Vec<ProcRow> {
    let mut out: Vec<ProcRow> = rows.iter().take(top).cloned().collect();
    let Some(s) = sync.filter(|s| s.measured()) else {
        return out;
    };
    let mut added = 0;
    for v in &s.rows {
        if added == VICTIMS {
            break;
        }
        if out.iter().any(|r| r.pid == v.pid) {
            continue;
        }
        if let Some(r) = rows.iter().find(|r| r.pid == v.pid) {
            out.push(r.clone());
        } else if whole {
            out.push(ProcRow {
                pid: v.pid,
                comm: v.comm.clone(),
                state: ' ',
                ..ProcRow::default()
            });
        } else {
            continue;
        }
        added += 1;
    }
    for r in out.iter_mut().filter(|r| !r.exited) {
        let v = s.rows.iter().find(|v| v.pid == r.pid);
        r.fsync_per_s = Some(v.map_or(0.0, |v| v.per_s));
        r.fsync_mean_ms = v.and_then(|v| v.mean_ms);
        r.fsync_max_ms = v.and_then(|v| v.max_ms);
    }
    out
}

/// Names the rows whose process was gone before the tracer read its name, by `name_of` (the
/// last walks' names, the exit records since the last walk).
pub fn name(s: &mut Sync, name_of: impl Fn(u32) -> Option<String>) {
    for v in s.rows.iter_mut().filter(|v| v.comm.is_empty()) {
        if let Some(n) = name_of(v.pid) {
            v.comm = n;
        }
    }
}

/// Processes `SinceWalk` keeps at most between two walks.
const SINCE_WALK_MAX: usize = 65_536;

/// One process's completed sync calls since the last walk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    calls: u64,
    total_ns: u64,
    max_ns: u64,
}

/// The sync calls of every process since the last walk, for the rows of the processes that
/// exited in between (module doc); fed every sample, stamped and cleared at each walk.
#[derive(Debug, Clone, Default)]
pub struct SinceWalk {
    by_pid: HashMap<u32, Tally>,
    /// Samples since the last walk whose calls were not measured (the tracer off, or the
    /// sample that armed it): the sums are then incomplete.
    unmeasured: bool,
}

impl SinceWalk {
    /// Adds one sample's calls; `None` (no sync figures in it) counts as unmeasured.
    pub fn add(&mut self, c: Option<&SyncCalls>) {
        let measured = c.is_some_and(|c| {
            c.state == TraceState::Armed && c.source == SyncSource::Syscalls && c.cpu_ns.is_some()
        });
        if !measured {
            self.unmeasured = true;
            return;
        }
        if self.by_pid.len() > SINCE_WALK_MAX {
            // No walk for a long while (walks off, the tracer on): the sums are unbounded
            // otherwise, and no exited row will take them.
            self.by_pid.clear();
            self.unmeasured = true;
        }
        for r in c.iter().flat_map(|c| &c.rows) {
            let e = self.by_pid.entry(r.tgid).or_default();
            e.calls += r.calls;
            e.total_ns += r.total_ns;
            e.max_ns = e.max_ns.max(r.max_ns);
        }
    }

    /// At a walk: gives each exited row its calls since the previous walk over its span
    /// (`walk_ms`), when every sample of it was measured; then starts again.
    pub fn stamp(&mut self, rows: &mut [ProcRow]) {
        if !self.unmeasured {
            for r in rows.iter_mut().filter(|r| r.exited) {
                let Some(span_s) = r.walk_ms.filter(|&ms| ms > 0).map(|ms| ms as f64 / 1e3) else {
                    continue;
                };
                let c = self.by_pid.get(&r.pid).copied().unwrap_or_default();
                let ms = |ns: u64| ns as f64 / 1e6;
                r.fsync_per_s = Some(c.calls as f64 / span_s);
                r.fsync_mean_ms = (c.calls > 0).then(|| ms(c.total_ns) / c.calls as f64);
                r.fsync_max_ms = (c.calls > 0).then(|| ms(c.max_ns));
            }
        }
        self.by_pid.clear();
        self.unmeasured = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::trace_sync::SyncRow;

    fn calls(rows: Vec<SyncRow>) -> SyncCalls {
        SyncCalls {
            rows,
            cpu_ns: Some(50_000),
            ..SyncCalls::state(TraceState::Armed, SyncSource::Syscalls, None)
        }
    }

    fn row(tgid: u32, n: u64, total_ms: u64, max_ms: u64, open_ms: u64) -> SyncRow {
        SyncRow {
            tgid,
            comm: format!("p{tgid}"),
            calls: n,
            total_ns: total_ms * 1_000_000,
            max_ns: max_ms * 1_000_000,
            open_ns: open_ms * 1_000_000,
        }
    }

    #[test]
    fn rates_over_the_interval_and_a_call_still_waiting_counts_in_the_max() {
        let s = derive(
            &calls(vec![row(7, 20, 160, 42, 0), row(9, 0, 0, 0, 3000)]),
            Some(2.0),
        );
        assert!(s.measured());
        let p7 = s.rows.iter().find(|r| r.pid == 7).unwrap();
        assert_eq!(
            (p7.per_s, p7.mean_ms, p7.max_ms),
            (10.0, Some(8.0), Some(42.0))
        );
        assert!((p7.wait_ms_per_s - 80.0).abs() < 1e-9);
        let p9 = &s.rows[0];
        assert_eq!(p9.pid, 9, "stuck for 3 s: first");
        assert_eq!((p9.per_s, p9.mean_ms, p9.max_ms), (0.0, None, Some(3000.0)));
        assert!(
            derive(&calls(vec![row(7, 1, 1, 1, 0)]), None)
                .rows
                .is_empty()
        );
    }

    #[test]
    fn the_join_adds_victims_beyond_the_top_and_zero_for_the_rest() {
        let proc = |pid: u32| ProcRow {
            pid,
            comm: format!("p{pid}"),
            ..ProcRow::default()
        };
        let rows: Vec<ProcRow> = (1..=4).map(proc).collect();
        let s = derive(
            &calls(vec![row(4, 20, 160, 42, 0), row(50, 2, 2, 1, 0)]),
            Some(1.0),
        );
        let out = join(&rows, 2, Some(&s), true);
        let pids: Vec<u32> = out.iter().map(|r| r.pid).collect();
        assert_eq!(pids, [1, 2, 4, 50], "the victims after the top two");
        assert_eq!(out[0].fsync_per_s, Some(0.0));
        assert_eq!(out[0].fsync_mean_ms, None);
        assert_eq!(
            (
                out[2].fsync_per_s,
                out[2].fsync_mean_ms,
                out[2].fsync_max_ms
            ),
            (Some(20.0), Some(8.0), Some(42.0))
        );
        assert_eq!(out[3].comm, "p50");
        let scoped = join(&rows, 2, Some(&s), false);
        assert_eq!(
            scoped.len(),
            3,
            "a scoped walk gets no process from outside it"
        );
        let off = Sync {
            state: TraceState::Off,
            ..s.clone()
        };
        let out = join(&rows, 2, Some(&off), true);
        assert_eq!(out.len(), 2);
        assert!(
            out.iter().all(|r| r.fsync_per_s.is_none()),
            "null when not armed"
        );
        let just_armed = derive(
            &SyncCalls {
                cpu_ns: None,
                ..calls(vec![row(4, 20, 160, 42, 0)])
            },
            Some(1.0),
        );
        assert!(!just_armed.measured() && just_armed.rows.is_empty());
        let out = join(&rows, 2, Some(&just_armed), true);
        assert!(
            out.iter().all(|r| r.fsync_per_s.is_none()),
            "nothing read yet"
        );
        let fallback = Sync {
            state: TraceState::NoEvent,
            source: SyncSource::Delayacct,
            ..s
        };
        assert!(!fallback.measured());
    }

    #[test]
    fn an_exited_row_counts_its_calls_since_the_last_walk_over_its_span() {
        let exited = |pid: u32, walk_ms: u64| ProcRow {
            pid,
            comm: "dd".into(),
            exited: true,
            walk_ms: Some(walk_ms),
            ..ProcRow::default()
        };
        let live = ProcRow {
            pid: 3,
            comm: "sh".into(),
            ..ProcRow::default()
        };
        let mut w = SinceWalk::default();
        // Two samples between walks: dd 7 fsyncs once (20 ms) in the first and exits; dd 8
        // twice (10 and 30 ms) over both; dd 9 none.
        w.add(Some(&calls(vec![
            row(7, 1, 20, 20, 0),
            row(8, 1, 10, 10, 0),
        ])));
        w.add(Some(&calls(vec![row(8, 1, 30, 30, 0)])));
        let mut rows = vec![
            exited(7, 1000),
            exited(8, 2000),
            exited(9, 1500),
            live.clone(),
        ];
        w.stamp(&mut rows);
        let figs = |r: &ProcRow| (r.fsync_per_s, r.fsync_mean_ms, r.fsync_max_ms);
        assert_eq!(figs(&rows[0]), (Some(1.0), Some(20.0), Some(20.0)));
        assert_eq!(
            figs(&rows[1]),
            (Some(1.0), Some(20.0), Some(30.0)),
            "2 calls over 2 s"
        );
        assert_eq!(figs(&rows[2]), (Some(0.0), None, None), "measured: none");
        assert_eq!(
            figs(&rows[3]),
            (None, None, None),
            "live rows are the join's"
        );
        // The join keeps them, though this sample's calls have none of those processes.
        let now = derive(&calls(vec![row(11, 1, 5, 5, 0)]), Some(1.0));
        let out = join(&rows, 4, Some(&now), true);
        assert_eq!(figs(&out[0]), (Some(1.0), Some(20.0), Some(20.0)));
        assert_eq!(figs(&out[3]), (Some(0.0), None, None));
        assert_eq!(
            figs(&out[4]),
            (Some(1.0), Some(5.0), Some(5.0)),
            "a live victim's are"
        );
        // A process gone before the tracer read its name is named by the caller's lookup.
        let gone = SyncRow {
            comm: String::new(),
            ..row(12, 1, 5, 5, 0)
        };
        let mut now = derive(&calls(vec![gone, row(13, 1, 5, 5, 0)]), Some(1.0));
        name(&mut now, |p| Some(format!("n{p}")));
        let names: Vec<&str> = now.rows.iter().map(|v| v.comm.as_str()).collect();
        assert_eq!(names, ["n12", "p13"], "a name the tracer read is kept");
        // Cleared at the walk: the next span starts from nothing.
        let mut next = vec![exited(8, 1000)];
        w.add(Some(&calls(vec![])));
        w.stamp(&mut next);
        assert_eq!(figs(&next[0]), (Some(0.0), None, None));
        // A sample of the span not measured (the tracer off, or just armed): unknown, not 0.
        for gap in [
            None,
            Some(SyncCalls::state(TraceState::Off, SyncSource::None, None)),
            Some(SyncCalls {
                cpu_ns: None,
                ..calls(vec![])
            }),
        ] {
            w.add(gap.as_ref());
            w.add(Some(&calls(vec![row(8, 1, 10, 10, 0)])));
            let mut rows = vec![exited(8, 1000)];
            w.stamp(&mut rows);
            assert_eq!(figs(&rows[0]), (None, None, None), "{gap:?}");
        }
    }
}
