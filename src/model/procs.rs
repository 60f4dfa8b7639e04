//! Per-process IO between two process walks (spec §11): who dirties pages, who reads from
//! storage, who waits for block IO, and which tasks sleep in `balance_dirty_pages`.
//!
//! Owns: `derive` (pure: previous walk, current walk → rows), `Tracker` (the last walk and its
//! rows, fed every snapshot by the app and batch mode, since walks come every few samples),
//! and `throttled_by_wchan`, the throttled-writer rows without the tracepoint. Must not
//! touch: files, the clock (rates divide by the walks' own timestamps).
//!
//! The figures and their limits:
//! - `dirtied_bytes_per_s` is `write_bytes`, counted when the process dirties a page (not when
//!   it reaches the disk: writeback by the flusher is nobody's), mmap stores included.
//! - `read_bytes_per_s` is `read_bytes`, counted at bio submit, readahead included.
//! - `rchar_per_s`/`wchar_per_s` are the bytes passed to read/write syscalls: cache hits, but
//!   also pipes, sockets and ttys.
//! - `cache_hit_est_pct` = 1 − Δread_bytes/Δrchar: an *estimate*, because rchar counts pipes
//!   and sockets (which never touch storage) and read_bytes counts readahead (pages read
//!   before they are asked for) and reads by mmap faults (not in rchar). Given only when
//!   rchar moved at least `HIT_MIN_RCHAR` bytes, clamped to 0–100.
//! - All io counters of a process include its exited threads and, once it reaps them, its
//!   children's totals (the kernel adds them at wait()): a shell whose dd just exited shows
//!   dd's whole output as one burst.
//! - `iowait_ms_per_s` is stat field 42 (block-IO delay, throttle sleeps included) in ms per
//!   s; `None` when `kernel.task_delayacct` is off (the field is then 0, not a measurement).
//!   Field 42 is the main thread's: a multi-threaded process needs the threads' sum
//!   (`blkio_tasks`) at both ends, which the source reads only for processes it writes, so
//!   its first active interval has none.

use serde::Serialize;

use super::rate::elapsed_s;
use super::throttled::{ThrottleSource, Throttled};
use crate::parse::procs::{ProcIo, ProcRecord, Walk};

/// Rows `Model::processes` keeps: the most active.
pub const TOP: usize = 20;
/// The cache-hit estimate needs rchar to move at least this much over the interval.
pub const HIT_MIN_RCHAR: u64 = 1 << 20;
/// Rows are dropped when no walk came for this long (the walks were turned off).
pub const STALE_NS: u64 = 5_000_000_000;

/// One process over the interval between two walks.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// The rows of walk `cur`, most active first; `prev` is the walk before it, if the caller has
/// it (a process's previous reading is found there or carried in `cur`).
#[must_use]
pub fn derive(prev: Option<&Walk>, cur: &Walk) -> Vec<ProcRow> {
    let prev = prev.filter(|p| cur.prev_mono_ns == Some(p.mono_ns));
    let delayacct = cur.task_delayacct == Some(true);
    let mut rows: Vec<ProcRow> = cur
        .records
        .iter()
        .filter(|r| !r.carried)
        .map(|r| {
            let before = previous(prev, cur, r);
            row(r, before, cur, delayacct)
        })
        .collect();
    rows.sort_by(|a, b| activity(b).total_cmp(&activity(a)).then(a.pid.cmp(&b.pid)));
    rows
}

/// The reading of `r`'s process at the previous walk, and that walk's time.
fn previous<'a>(
    prev: Option<&'a Walk>,
    cur: &'a Walk,
    r: &ProcRecord,
) -> Option<(&'a ProcRecord, u64)> {
    let same = |o: &&ProcRecord| o.pid == r.pid && o.starttime == r.starttime;
    let carried = cur.records.iter().filter(|o| o.carried).find(same);
    match (carried, cur.prev_mono_ns) {
        (Some(c), Some(t)) => Some((c, t)),
        (Some(_), None) => None,
        (None, _) => {
            let p = prev?;
            p.records
                .iter()
                .filter(|o| !o.carried)
                .find(same)
                .map(|o| (o, p.mono_ns))
        }
    }
}

fn row(r: &ProcRecord, before: Option<(&ProcRecord, u64)>, cur: &Walk, delayacct: bool) -> ProcRow {
    let dt = before.and_then(|(_, t)| elapsed_s(t, cur.mono_ns));
    let counters = match (before.map(|(b, _)| &b.io), &r.io) {
        (Some(ProcIo::Counters(a)), ProcIo::Counters(b)) => Some((a, b)),
        _ => None,
    };
    let rate = |f: fn(&crate::parse::procs::IoCounters) -> u64| {
        let (a, b) = counters?;
        Some(f(b).checked_sub(f(a))? as f64 / dt?)
    };
    let hit = counters.and_then(|(a, b)| {
        let rchar = b.rchar.checked_sub(a.rchar)?;
        let read = b.read_bytes.checked_sub(a.read_bytes)?;
        (rchar >= HIT_MIN_RCHAR && dt.is_some())
            .then(|| (100.0 * (1.0 - read as f64 / rchar as f64)).clamp(0.0, 100.0))
    });
    let iowait = before
        .filter(|_| delayacct && cur.clk_tck > 0)
        .and_then(|(b, _)| {
            let ticks = match (b.blkio_tasks, r.blkio_tasks) {
                (Some(x), Some(y)) => y.checked_sub(x)?,
                _ if r.stat.num_threads == 1 && b.stat.num_threads == 1 => {
                    r.stat.blkio_ticks?.checked_sub(b.stat.blkio_ticks?)?
                }
                _ => return None,
            };
            Some(ticks as f64 * 1000.0 / cur.clk_tck as f64 / dt?)
        });
    let no_permission = r.io == ProcIo::Denied;
    let (rss_bytes, anon_bytes, rss_growth_bytes_per_s, majflt_per_s) =
        super::procs_memory::row_memory(r, before.map(|(b, _)| b), cur.page_size, dt);
    ProcRow {
        pid: r.pid,
        comm: r.stat.comm.clone(),
        cgroup: r.cgroup.clone(),
        dirtied_bytes_per_s: rate(|c| c.write_bytes),
        read_bytes_per_s: rate(|c| c.read_bytes),
        rchar_per_s: rate(|c| c.rchar),
        wchar_per_s: rate(|c| c.wchar),
        cache_hit_est_pct: hit,
        iowait_ms_per_s: iowait,
        state: r.stat.state,
        // Without ptrace access the kernel prints `0` whatever the task does.
        wchan: r.wchan.clone().filter(|_| !no_permission),
        no_permission,
        rss_bytes,
        anon_bytes,
        rss_growth_bytes_per_s,
        majflt_per_s,
    }
}

/// Sort key: bytes to or from storage, then IO wait, then syscall bytes, then D state.
fn activity(r: &ProcRow) -> f64 {
    let v = |x: Option<f64>| x.unwrap_or(0.0);
    let storage = v(r.dirtied_bytes_per_s) + v(r.read_bytes_per_s);
    let syscalls = v(r.rchar_per_s) + v(r.wchar_per_s);
    // Storage bytes dominate; an ms/s of IO wait weighs as 1 MB/s; syscall bytes a
    // thousandth; a D-state task with nothing else ranks above an idle one.
    storage + v(r.iowait_ms_per_s) * 1e6 + syscalls / 1e3 + if r.state == 'D' { 1.0 } else { 0.0 }
}

/// Throttled-writer rows from the rows whose wchan is `balance_dirty_pages` (spec §11; the
/// fallback when the tracepoint is not armed). `pause_ms_per_s` is the block-IO wait from
/// delay accounting (which includes the throttle sleeps), `None` when it is off. `is_self`
/// is left false: the caller knows its own pid.
#[must_use]
pub fn throttled_by_wchan(rows: &[ProcRow]) -> Vec<Throttled> {
    rows.iter()
        .filter(|r| r.wchan.as_deref() == Some("balance_dirty_pages"))
        .map(|r| Throttled {
            cgroup: r.cgroup.clone(),
            pause_ms_per_s: r.iowait_ms_per_s,
            ..Throttled::new(r.pid, r.comm.clone(), ThrottleSource::Wchan)
        })
        .collect()
}

/// Follows the walks across snapshots: feed it every snapshot; it keeps the last walk and
/// the rows derived at it until the next walk (or until walks stop for `STALE_NS`).
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    last: Option<std::sync::Arc<Walk>>,
    rows: Option<Vec<ProcRow>>,
    memory: Option<Vec<super::procs_memory::MemRow>>,
    /// Command names of the last two walks' processes: a throttled writer that exited
    /// before the tracepoint's comm was read keeps its name.
    names: std::collections::HashMap<u32, String>,
}

impl Tracker {
    /// Takes the next snapshot's walk, if it has one.
    pub fn update(&mut self, snap: &crate::parse::Snapshot) {
        if let Some(w) = &snap.procs {
            self.rows = Some(derive(self.last.as_deref(), w));
            let mut names = std::collections::HashMap::new();
            for walk in self.last.iter().map(AsRef::as_ref).chain([w.as_ref()]) {
                let comms = walk.records.iter().map(|r| (r.pid, &r.stat.comm));
                let comms = comms.chain(walk.memory.iter().map(|r| (r.pid, &r.stat.comm)));
                names.extend(comms.map(|(p, c)| (p, c.clone())));
            }
            self.names = names;
            self.memory = Some(super::procs_memory::memory_rows(w)).filter(|m| !m.is_empty());
            self.last = Some(w.clone());
        } else if self
            .last
            .as_ref()
            .is_some_and(|w| snap.mono_ns.saturating_sub(w.mono_ns) > STALE_NS)
        {
            self.last = None;
            self.rows = None;
            self.memory = None;
            self.names.clear();
        }
    }

    /// Every row of the last walk, most active first; `None` when no walk is recent.
    #[must_use]
    pub fn rows(&self) -> Option<&[ProcRow]> {
        self.rows.as_deref()
    }

    /// The memory rows of the last walk (the memory sort); `None` when no walk is recent.
    #[must_use]
    pub fn memory(&self) -> Option<&[super::procs_memory::MemRow]> {
        self.memory.as_deref()
    }

    /// The last walk itself (its scope, delay accounting, clock ticks).
    #[must_use]
    pub fn walk(&self) -> Option<&Walk> {
        self.last.as_deref()
    }

    /// Fills `Model::processes` (the `TOP` rows), `Model::processes_by_memory` and
    /// `Model::task_delayacct`, and, while the tracepoint is not armed, `Model::throttled`
    /// with the walk's wchan rows (spec §11); a throttled writer without a name (it exited
    /// before the tracepoint's reader asked) gets its name from the last two walks.
    pub fn fill(&self, m: &mut super::Model) {
        m.processes = self
            .rows
            .as_ref()
            .map(|r| r.iter().take(TOP).cloned().collect());
        m.processes_by_memory.clone_from(&self.memory);
        m.task_delayacct = self.last.as_ref().and_then(|w| w.task_delayacct);
        let wchan = self
            .rows
            .as_deref()
            .map(throttled_by_wchan)
            .unwrap_or_default();
        m.throttled =
            super::throttled::rows(m.tracer.as_ref(), std::mem::take(&mut m.throttled), wchan);
        for t in m.throttled.iter_mut().filter(|t| t.comm.is_empty()) {
            if let Some(name) = self.names.get(&t.pid) {
                t.comm.clone_from(name);
            }
        }
    }
}

#[cfg(test)]
#[path = "procs_tests.rs"]
mod tests;
