//! The throttled writers of one sample interval: the `balance_dirty_pages` events (spec §7)
//! reduced to one line per task, and the pseudo-file (`names::TRACE_WRITERS`) that carries
//! them in samples and recordings.
//!
//! Owns: that reduction (pure), the event it reduces (`BdpEvent`, which `trace` parses) and
//! the pseudo-file's text, both ways. Must not touch: tracefs (the source reads the events
//! and calls `reduce` and `render`), rates (the model divides by the interval).
//!
//! Why a reduction at the edge: under sustained throttling the kernel emits ~100 sleeping
//! events a second (~15 KB/s as records, ~35 KB/s as text), twenty times the recording budget
//! of 2 MB/h; one line per writer is what the model shows anyway. The sum of the pauses, the
//! event count and the figures of each task's last event lose nothing the screen, the report
//! or the JSON use.
//!
//! The pseudo-file: `events N` (the events reduced), `lost N` (the kernel dropped them), then
//! one line per task: `pid=… events=… pause_ms=… last_ns=… bdi=… limit=… setpoint=… dirty=…
//! task_ratelimit=…`, the optional figures (`cgroup_ino`, `wb_setpoint`, `wb_dirty`,
//! `dirty_ratelimit`) when the kernel has them, `stopped=…` (the events that stopped the task),
//! and `comm=` last (a comm may hold spaces). Recordings made before `stopped=` was written
//! have none: the row's `stopped` is `None`.

use std::fmt::Write;

use serde::Serialize;

use crate::Error;
use crate::sample::names;

/// One `balance_dirty_pages` event. Pages, KiB/s and ms as in spec §7.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BdpEvent {
    /// Task id of the writer (a thread).
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// CPU the event was recorded on.
    pub cpu: u32,
    /// Trace clock timestamp, seconds.
    pub ts_s: f64,
    /// The BDI (`8:0`).
    pub bdi: String,
    /// The hard limit of the throttling domain, pages.
    pub limit: u64,
    /// `(limit + freerun) / 2`, pages.
    pub setpoint: u64,
    /// nr_dirty + nr_writeback of the domain, pages.
    pub dirty: u64,
    /// This wb's setpoint (`bdi_setpoint` on older kernels), pages.
    pub wb_setpoint: Option<u64>,
    /// This wb's dirty + writeback (`bdi_dirty` on older kernels), pages.
    pub wb_dirty: Option<u64>,
    /// The wb's base rate, KiB/s.
    pub dirty_ratelimit: Option<u64>,
    /// The rate the task is allowed, KiB/s.
    pub task_ratelimit: u64,
    /// Pages dirtied since the last check.
    pub dirtied: Option<u64>,
    /// The next check interval, pages.
    pub dirtied_pause: Option<u64>,
    /// Time already spent in this call, ms.
    pub paused: Option<u64>,
    /// The sleep about to be taken, ms; ≤ 0: none.
    pub pause: i64,
    /// Time the dirtied pages should take at task_ratelimit, ms.
    pub period: Option<u64>,
    /// Time since the task last left a pause, ms.
    pub think: Option<i64>,
    /// Cgroup inode of the wb (cgroup writeback); absent on older kernels.
    pub cgroup_ino: Option<u64>,
}

/// One task's events over the interval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriterRow {
    /// Task id.
    pub pid: u32,
    /// Its command name (empty when unknown).
    pub comm: String,
    /// Events of this task (each announcing a sleep: the instance filters `pause > 0`).
    pub events: u64,
    /// The sum of its positive `pause`, ms.
    pub pause_ms: u64,
    /// The trace clock of its last event, ns.
    pub last_ns: u64,
    /// The rest from its last event: the BDI (`8:0`).
    pub bdi: String,
    /// The throttling domain's hard limit, pages.
    pub limit: u64,
    /// The domain's setpoint, pages.
    pub setpoint: u64,
    /// The domain's dirty + writeback, pages.
    pub dirty: u64,
    /// The rate the task is allowed, KiB/s.
    pub task_ratelimit: u64,
    /// The cgroup inode of the wb it wrote through (cgroup writeback kernels).
    pub cgroup_ino: Option<u64>,
    /// The wb's setpoint, pages.
    pub wb_setpoint: Option<u64>,
    /// The wb's dirty + writeback, pages.
    pub wb_dirty: Option<u64>,
    /// The wb's base rate, KiB/s.
    pub dirty_ratelimit: Option<u64>,
    /// Its events with `task_ratelimit` 0: the kernel stopped the task, its domain's dirty
    /// count at the hard limit (`pos_ratio` 0, the longest pause, spec §1.10, §7). `None` in
    /// a recording made before this was counted.
    pub stopped: Option<u64>,
}

/// Every writer of one interval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writers {
    /// One row per task id, in task id order.
    pub rows: Vec<WriterRow>,
    /// Events reduced.
    pub events: u64,
    /// Events the kernel dropped (its buffer wrapped before pagewatch read it).
    pub lost: u64,
    /// The first line that could not be read and was skipped (`file:line: problem`).
    pub skipped: Option<String>,
}

/// Reduces events (any order; each task's last is the one with the latest clock) to one row
/// per task.
#[must_use]
pub fn reduce(events: &[BdpEvent], lost: u64) -> Writers {
    let mut rows: Vec<WriterRow> = Vec::new();
    for e in events {
        let ts = (e.ts_s.max(0.0) * 1e9).round() as u64;
        let i = match rows.binary_search_by_key(&e.pid, |r| r.pid) {
            Ok(i) => i,
            Err(i) => {
                rows.insert(
                    i,
                    WriterRow {
                        pid: e.pid,
                        ..WriterRow::default()
                    },
                );
                i
            }
        };
        let r = &mut rows[i];
        r.events += 1;
        *r.stopped.get_or_insert(0) += u64::from(e.task_ratelimit == 0);
        r.pause_ms = r.pause_ms.saturating_add(e.pause.max(0).unsigned_abs());
        if r.events == 1 || ts >= r.last_ns {
            r.last_ns = ts;
            if !e.comm.is_empty() {
                r.comm.clone_from(&e.comm);
            }
            r.bdi.clone_from(&e.bdi);
            r.limit = e.limit;
            r.setpoint = e.setpoint;
            r.dirty = e.dirty;
            r.task_ratelimit = e.task_ratelimit;
            r.cgroup_ino = e.cgroup_ino;
            r.wb_setpoint = e.wb_setpoint;
            r.wb_dirty = e.wb_dirty;
            r.dirty_ratelimit = e.dirty_ratelimit;
        }
    }
    Writers {
        rows,
        events: events.len() as u64,
        lost,
        skipped: None,
    }
}

/// The pseudo-file's text.
#[must_use]
pub fn render(w: &Writers) -> String {
    let mut s = format!("events {}\nlost {}\n", w.events, w.lost);
    for r in &w.rows {
        let _ = write!(
            s,
            "pid={} events={} pause_ms={} last_ns={} bdi={} limit={} setpoint={} dirty={} \
             task_ratelimit={}",
            r.pid,
            r.events,
            r.pause_ms,
            r.last_ns,
            r.bdi.replace(char::is_whitespace, "_"),
            r.limit,
            r.setpoint,
            r.dirty,
            r.task_ratelimit
        );
        for (k, v) in [
            ("cgroup_ino", r.cgroup_ino),
            ("wb_setpoint", r.wb_setpoint),
            ("wb_dirty", r.wb_dirty),
            ("dirty_ratelimit", r.dirty_ratelimit),
            ("stopped", r.stopped),
        ] {
            if let Some(v) = v {
                let _ = write!(s, " {k}={v}");
            }
        }
        let _ = writeln!(s, " comm={}", r.comm.replace('\n', " "));
    }
    s
}

/// Parses the pseudo-file. A line that cannot be read is skipped and named in `skipped`
/// (`file:line: problem`, and how many more): the good rows of the sample stand.
#[must_use]
pub fn parse(text: &str) -> Writers {
    let file = names::TRACE_WRITERS;
    let mut w = Writers::default();
    let mut bad: Vec<Error> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let err = |m: &str| Error::parse(file, n, m);
        if let Some(v) = line.strip_prefix("events ") {
            match v.trim().parse() {
                Ok(v) => w.events = v,
                Err(_) => bad.push(err("events is not a number")),
            }
        } else if let Some(v) = line.strip_prefix("lost ") {
            match v.trim().parse() {
                Ok(v) => w.lost = v,
                Err(_) => bad.push(err("lost is not a number")),
            }
        } else if line.starts_with("pid=") {
            match row(line) {
                Ok(r) => w.rows.push(r),
                Err(m) => bad.push(err(m)),
            }
        } else if !line.trim().is_empty() {
            bad.push(err("not a writer line"));
        }
    }
    w.rows.sort_by_key(|r| r.pid);
    w.skipped = bad.first().map(|e| match bad.len() {
        1 => format!("{e} (line skipped)"),
        n => format!("{e} (skipped, and {} more)", n - 1),
    });
    w
}

fn row(line: &str) -> std::result::Result<WriterRow, &'static str> {
    let (fields, comm) = line.split_once(" comm=").unwrap_or((line, ""));
    let mut r = WriterRow {
        comm: comm.to_owned(),
        ..WriterRow::default()
    };
    let (mut pid, mut bdi) = (None, None);
    for kv in fields.split_ascii_whitespace() {
        let (k, v) = kv.split_once('=').ok_or("a field without '='")?;
        let num = || v.parse::<u64>().map_err(|_| "not a number");
        match k {
            "pid" => pid = Some(u32::try_from(num()?).map_err(|_| "pid out of range")?),
            "events" => r.events = num()?,
            "pause_ms" => r.pause_ms = num()?,
            "last_ns" => r.last_ns = num()?,
            "bdi" => bdi = Some(v.to_owned()),
            "limit" => r.limit = num()?,
            "setpoint" => r.setpoint = num()?,
            "dirty" => r.dirty = num()?,
            "task_ratelimit" => r.task_ratelimit = num()?,
            "cgroup_ino" => r.cgroup_ino = Some(num()?),
            "wb_setpoint" => r.wb_setpoint = Some(num()?),
            "wb_dirty" => r.wb_dirty = Some(num()?),
            "dirty_ratelimit" => r.dirty_ratelimit = Some(num()?),
            "stopped" => r.stopped = Some(num()?),
            _ => {}
        }
    }
    r.pid = pid.ok_or("no pid")?;
    r.bdi = bdi.ok_or("no bdi")?;
    Ok(r)
}

#[cfg(test)]
#[path = "trace_writers_tests.rs"]
mod tests;
