//! Throttled writers: the tasks the kernel paces in `balance_dirty_pages()`, from the
//! `writeback:balance_dirty_pages` tracepoint (root, exact, spec §7) or, without it, from the
//! tasks whose wchan is `balance_dirty_pages` (approximate, spec §11).
//!
//! Owns: `Throttled`, one row of that list (with its process and parents, which link a fio
//! worker to its fio: `works_for`), the per-task sums of the tracepoint's events
//! over an interval, the tracer's state as the model shows it, and the kernel's hard limit
//! read from the events (spec §1.10). Must not touch: I/O, tracefs (the source arms it).

use serde::Serialize;

use crate::parse::trace::{Trace, TraceState};

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
    /// Times the kernel stopped it in the interval: events with `task_ratelimit` 0, its
    /// domain's dirty count at the hard limit (spec §1.10, §7). `None` from the walk, and in
    /// recordings made before the count was kept.
    pub stopped: Option<u64>,
    /// The hard limit of the domain that paced it, pages: the tracepoint's `limit`; for a
    /// writer paced by its memcg on a kernel that reports the global limit there, the
    /// memcg's threshold (`verdict::fold_dirty`, spec §1.8, §1.10).
    pub limit_pages: Option<u64>,
    /// The tracepoint's own `limit` when `limit_pages` is not it.
    pub kernel_limit_pages: Option<u64>,
    /// The path of the dirty domain that paced it (`/`, `/box`, or a device's `maj:min`).
    pub domain: Option<String>,
    /// The kernel's setpoint, pages (tracepoint `setpoint`).
    pub setpoint_pages: Option<u64>,
    /// Where the row comes from.
    pub source: ThrottleSource,
    /// This is pagewatch itself (a recording on the throttled disk).
    pub is_self: bool,
    /// Its thread group (its process), when known (`names::THROTTLED_LINEAGE`, or the walk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tgid: Option<u32>,
    /// Its process's parent, that one's parent, … (at most three), when known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<u32>,
}

impl Throttled {
    /// Paced this interval: a tracepoint pause over 0 ms, or seen by the walk's wchan in
    /// `balance_dirty_pages()`. The headline's writer count (`Domain::throttled_writers`)
    /// counts these, pagewatch aside.
    #[must_use]
    pub fn paused(&self) -> bool {
        match self.source {
            ThrottleSource::Tracepoint => self.pause_ms_per_s.is_some_and(|p| p > 0.0),
            ThrottleSource::Wchan => true,
        }
    }

    /// A row that says only who and from where; every figure unknown, not pagewatch.
    #[must_use]
    pub fn new(pid: u32, comm: impl Into<String>, source: ThrottleSource) -> Self {
        Self {
            pid,
            comm: comm.into(),
            cgroup: None,
            cgroup_ino: None,
            bdi: None,
            pause_ms_per_s: None,
            task_ratelimit_kbps: None,
            stopped: None,
            limit_pages: None,
            kernel_limit_pages: None,
            domain: None,
            setpoint_pages: None,
            source,
            is_self: false,
            tgid: None,
            parents: Vec::new(),
        }
    }

    /// Whether it works for the process `pid`: it is that process (or one of its threads),
    /// or a descendant within three generations (a fio worker under its fio, under
    /// pagewatch's guard).
    #[must_use]
    pub fn works_for(&self, pid: u32) -> bool {
        pid > 1 && (self.pid == pid || self.tgid == Some(pid) || self.parents.contains(&pid))
    }
}

/// Each row's thread group and parents from the sample's lineage (`parse::lineage`).
#[must_use]
pub fn with_lineage(
    mut rows: Vec<Throttled>,
    lineage: &std::collections::BTreeMap<u32, crate::parse::lineage::Task>,
) -> Vec<Throttled> {
    for r in &mut rows {
        if let Some(t) = lineage.get(&r.pid) {
            r.tgid = Some(t.tgid);
            r.parents.clone_from(&t.parents);
        }
    }
    rows
}

/// The rows still without a lineage (wchan rows: a walk's processes) get their parents from
/// the walk's records, as far as the walk has them (at most three).
pub fn with_walk_parents(rows: &mut [Throttled], walk: Option<&crate::parse::procs::Walk>) {
    let Some(w) = walk else { return };
    let ppid = |pid: u32| w.records.iter().find(|r| r.pid == pid).map(|r| r.stat.ppid);
    for r in rows.iter_mut().filter(|r| r.tgid.is_none()) {
        let Some(mut p) = ppid(r.pid) else { continue };
        r.tgid = Some(r.pid);
        for _ in 0..3 {
            if p == 0 {
                break;
            }
            r.parents.push(p);
            match ppid(p) {
                Some(next) if p > 1 => p = next,
                _ => break,
            }
        }
    }
}

/// Whether the tracepoint is armed, and what its last read held: the model's view of the
/// source's status pseudo-file (spec §7).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tracer {
    /// Armed, or why not (`armed`, `off`, `not-root`, `no-tracefs`, `no-event`, `error`).
    pub state: TraceState,
    /// More on why not, when the source said.
    pub why: Option<String>,
    /// Events read over the interval (only those announcing a sleep: the source's instance
    /// filters on `pause > 0`).
    pub events: usize,
    /// Events the kernel dropped (its buffer wrapped before pagewatch read it).
    pub lost: u64,
    /// The read stopped at its cap: the rest waits for the next one (late, maybe lost).
    pub capped: bool,
    /// Why the events or the format could not be parsed (`file:line: problem`).
    pub error: Option<String>,
}

impl Tracer {
    /// The tracer state of a sample.
    #[must_use]
    pub fn derive(t: &Trace) -> Self {
        Tracer {
            state: t.status.state,
            why: t.status.why.clone(),
            events: usize::try_from(t.writers.events).unwrap_or(usize::MAX),
            lost: t.writers.lost,
            capped: t.status.capped,
            error: t.error.clone(),
        }
    }
}

/// The throttled writers of one interval from the tracepoint: one row per task id, pause ms
/// per second = the sum of its positive `pause` over the interval ÷ the interval, at most
/// 1000 (each event announces the sleep about to be taken, spec §7), the other figures from
/// its last event.
/// `dt_s` `None` (first sample): no rate. Sorted by `by_pause`.
#[must_use]
pub fn from_trace(t: &Trace, dt_s: Option<f64>) -> Vec<Throttled> {
    let mut out: Vec<Throttled> = t
        .writers
        .rows
        .iter()
        .map(|w| Throttled {
            bdi: Some(w.bdi.clone()),
            cgroup_ino: w.cgroup_ino,
            task_ratelimit_kbps: Some(w.task_ratelimit),
            stopped: w.stopped,
            limit_pages: Some(w.limit),
            setpoint_pages: Some(w.setpoint),
            // Each event announces the sleep about to be taken, so a pause announced near the
            // end of the interval runs into the next one: one task cannot sleep longer than
            // the interval, so its figure is capped at 1000 ms/s (seen without the cap: a dd
            // alternating 800 and 1200 ms/s at a 0.5 s interval).
            pause_ms_per_s: dt_s
                .filter(|d| *d > 0.0)
                .map(|d| (w.pause_ms as f64 / d).min(1000.0)),
            is_self: t.status.pid == Some(w.pid) || t.status.tasks.contains(&w.pid),
            ..Throttled::new(w.pid, w.comm.clone(), ThrottleSource::Tracepoint)
        })
        .collect();
    out.sort_by(by_pause);
    out
}

/// Most paused first (rows without a figure last), then by task id.
#[must_use]
pub fn by_pause(a: &Throttled, b: &Throttled) -> std::cmp::Ordering {
    let key = |r: &Throttled| r.pause_ms_per_s.unwrap_or(-1.0);
    key(b).total_cmp(&key(a)).then(a.pid.cmp(&b.pid))
}

/// The list the model shows: the tracepoint's rows while it is armed (exact: every sleep in
/// balance_dirty_pages() has its event), plus the wchan rows of tasks it did not report (a
/// task already asleep when the tracepoint was armed, or whose events are not read yet);
/// else the wchan rows of the last process walk.
#[must_use]
pub fn rows(
    tracer: Option<&Tracer>,
    tracepoint: Vec<Throttled>,
    wchan: Vec<Throttled>,
) -> Vec<Throttled> {
    let armed = tracer.is_some_and(|t| t.state == TraceState::Armed);
    let mut out = if armed {
        let mut out = tracepoint;
        let seen: Vec<u32> = out.iter().map(|r| r.pid).collect();
        out.extend(wchan.into_iter().filter(|w| !seen.contains(&w.pid)));
        out
    } else {
        wchan
    };
    out.sort_by(by_pause);
    out
}

/// The kernel's hard limit and setpoint of the global dirty domain, pages, from the last
/// event of the interval that reports it (spec §1.10, §7). An event reports the global
/// domain when it has no cgroup (kernels before cgroup writeback) or the root cgroup's
/// (inode 1); a memcg domain's limit is its own.
#[must_use]
pub fn kernel_limit(t: &Trace) -> Option<(u64, u64)> {
    t.writers
        .rows
        .iter()
        .filter(|w| w.cgroup_ino.is_none_or(|i| i == ROOT_CGROUP_INO))
        .max_by_key(|w| w.last_ns)
        .map(|w| (w.limit, w.setpoint))
}

/// Whether the interval's rows count the kernel's stops (`WriterRow::stopped`): every row
/// a recording made since then carries the count.
#[must_use]
pub fn stops_counted(t: &Trace) -> bool {
    t.writers.rows.iter().all(|w| w.stopped.is_some())
}

/// Names each row's cgroup from the tracepoint's `cgroup_ino` and the cgroup tree's inodes
/// (the group's path below the cgroup2 mount; `/` for the root group).
#[must_use]
pub fn with_cgroup_paths(
    mut rows: Vec<Throttled>,
    cgroups: Option<&crate::parse::cgroup::Cgroups>,
) -> Vec<Throttled> {
    let Some(cg) = cgroups else { return rows };
    for r in &mut rows {
        if r.cgroup.is_none()
            && let Some(ino) = r.cgroup_ino
        {
            r.cgroup = if ino == ROOT_CGROUP_INO {
                Some("/".to_owned())
            } else {
                cg.groups
                    .iter()
                    .find(|g| g.ino == ino)
                    .map(|g| g.path.clone())
            };
        }
    }
    rows
}

/// The inode of a cgroup hierarchy's root (kernfs numbers it 1).
pub const ROOT_CGROUP_INO: u64 = 1;

#[cfg(test)]
#[path = "throttled_tests.rs"]
mod tests;
