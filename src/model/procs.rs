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
//!   children's totals (the kernel adds them at wait(), `wait_task_zombie`). A process whose
//!   reaped-children marks (stat fields 11, 13, 16, 17: the children's minor and major faults
//!   and CPU time, added at the same wait()) moved over the interval is marked
//!   `reaped_children`: its io jump is no rate of its own (its rates are `None`; the dirtied
//!   bytes are kept as `reaped_dirtied_bytes`). A shell whose dd just exited shows no burst.
//!   Limits: the process's own IO in that interval is withheld with its children's (one io
//!   file holds both); a child that exits without being waited for (SIGCHLD ignored) adds
//!   nothing to anyone; a child that used no CPU tick and faulted no page leaves no mark.
//! - A process that started after the previous walk (stat field 22 at or after that walk on
//!   the boot clock, `Walk::boot_ns`) and has no earlier reading is rated against zero over
//!   its own age (the walk's boot time less its start), at least `MIN_BORN_SPAN_NS` (1 s)
//!   and at most the interval. Its age rather than the interval (pidstat divides by its
//!   interval, but that is 1 s with `pidstat -d 1`; a walk spans 2–5 s): a 1.5 s dd at
//!   100 MB/s reads 100 MB/s, not 30 MB/s under a steady 20 MB/s writer over a 5 s walk. The
//!   1 s floor is pidstat's resolution: a compiler that writes 30 MB in its last 100 ms reads
//!   30 MB/s, not 300 MB/s, and outranks no steady writer on one burst. `walk_ms` is the span
//!   each row's rates cover, so rate × span is always bytes.
//! - What a process did between its last walk and its exit is lost to it (it shows in the
//!   parent's reaped jump), unless taskstats exit notifications are read (root): then it is
//!   a row of its own, `exited`, and the parent's jump less its children's totals is the
//!   parent's rate (`model::exits`).
//! - Delay accounting counts only tasks forked after `kernel.task_delayacct` was turned on:
//!   when the tracker saw it switch on, `iowait_ms_per_s` of a task started before the first
//!   walk that saw it on is `None` (unknown), not 0.
//! - `iowait_ms_per_s` is stat field 42 (block-IO delay, throttle sleeps included) in ms per
//!   s; `None` when `kernel.task_delayacct` is off (the field is then 0, not a measurement).
//!   Field 42 is the main thread's: a multi-threaded process needs the threads' sum
//!   (`blkio_tasks`) at both ends, which the source reads only for processes it writes, so
//!   its first active interval has none.

use std::collections::HashMap;

pub use super::proc_row::{MIN_BORN_SPAN_NS, ProcRow, TOP};
use super::rate::elapsed_s;
use super::throttled::{ThrottleSource, Throttled};
use crate::parse::procs::{IoCounters, ProcIo, ProcRecord, Walk};

/// The cache-hit estimate needs rchar to move at least this much over the interval.
pub const HIT_MIN_RCHAR: u64 = 1 << 20;
/// Rows are dropped when no walk came for this long (the walks were turned off), or for the
/// walk's own period when that is longer (`Walk::period_ns`: 10 s on a quiet machine).
pub const STALE_NS: u64 = 5_000_000_000;

/// What `derive` needs beyond the two walks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Context {
    /// The boot time (ns) of the first walk that saw `kernel.task_delayacct` switch on, when
    /// the tracker saw it: tasks started before it have no delay accounting.
    pub delayacct_since_boot_ns: Option<u64>,
}

/// The rows of walk `cur`, most active first; `prev` is the walk before it, if the caller has
/// it (a process's previous reading is found there or carried in `cur`).
#[must_use]
pub fn derive(prev: Option<&Walk>, cur: &Walk) -> Vec<ProcRow> {
    derive_with(prev, cur, Context::default())
}

/// `derive` knowing when delay accounting was switched on.
#[must_use]
pub fn derive_with(prev: Option<&Walk>, cur: &Walk, ctx: Context) -> Vec<ProcRow> {
    let prev = prev.filter(|p| cur.prev_mono_ns == Some(p.mono_ns));
    let delayacct = cur.task_delayacct == Some(true);
    let mut rows: Vec<ProcRow> = cur
        .records
        .iter()
        .filter(|r| !r.carried)
        .map(|r| {
            let before = previous(prev, cur, r);
            let base = match before {
                Some((b, t)) => Some(Base::of(b, elapsed_s(t, cur.mono_ns))),
                None => born(cur, r).map(Base::zero),
            };
            let delayacct = delayacct && !older_than(cur, r, ctx.delayacct_since_boot_ns);
            row(r, base.as_ref(), before.map(|(b, _)| b), cur, delayacct)
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

/// What a row's rates are taken against: the previous reading, or zeros for a process born
/// since the previous walk.
struct Base {
    io: Option<IoCounters>,
    blkio: Option<u64>,
    blkio_tasks: Option<u64>,
    threads: u64,
    reaped_marks: u64,
    /// The span, s.
    dt: Option<f64>,
}

impl Base {
    fn of(b: &ProcRecord, dt: Option<f64>) -> Self {
        Base {
            io: match b.io {
                ProcIo::Counters(c) => Some(c),
                _ => None,
            },
            blkio: b.stat.blkio_ticks,
            blkio_tasks: b.blkio_tasks,
            threads: b.stat.num_threads,
            reaped_marks: b.stat.reaped_marks,
            dt,
        }
    }

    fn zero(age_s: f64) -> Self {
        Base {
            io: Some(IoCounters::default()),
            blkio: Some(0),
            blkio_tasks: Some(0),
            threads: 1,
            reaped_marks: 0,
            dt: Some(age_s),
        }
    }
}

/// A process's start time (stat field 22) on the boot clock, ns.
fn start_ns(cur: &Walk, r: &ProcRecord) -> Option<u64> {
    (cur.clk_tck > 0)
        .then(|| (u128::from(r.starttime) * 1_000_000_000 / u128::from(cur.clk_tck)) as u64)
}

/// The age (s) of a process that started after the previous walk (at or after it, in whole
/// clock ticks, as the source decides which to write); `None` otherwise or when the walks
/// do not say (a first walk, an older recording without `boot`). At least
/// `MIN_BORN_SPAN_NS` (and a tick), at most the interval.
fn born(cur: &Walk, r: &ProcRecord) -> Option<f64> {
    let boot = cur.boot_ns?;
    let interval = cur.mono_ns.checked_sub(cur.prev_mono_ns?)?;
    let tck = u128::from(cur.clk_tck.max(1));
    let prev_boot = boot.checked_sub(interval)?;
    let threshold = (u128::from(prev_boot) * tck / 1_000_000_000) as u64;
    if r.starttime < threshold {
        return None;
    }
    let one_tick_ns = 1e9 / cur.clk_tck.max(1) as f64;
    let floor = (MIN_BORN_SPAN_NS.min(interval) as f64).max(one_tick_ns);
    let age = boot.saturating_sub(start_ns(cur, r)?) as f64;
    Some(age.clamp(floor, (interval as f64).max(floor)) / 1e9)
}

/// The process started before `since` (boot ns), when it is known.
fn older_than(cur: &Walk, r: &ProcRecord, since: Option<u64>) -> bool {
    since.is_some_and(|s| start_ns(cur, r).is_some_and(|t| t < s))
}

/// `before`: its previous reading, when there is one (the memory figures need it; a process
/// born since the previous walk has none).
fn row(
    r: &ProcRecord,
    base: Option<&Base>,
    before: Option<&ProcRecord>,
    cur: &Walk,
    delayacct: bool,
) -> ProcRow {
    let dt = base.and_then(|b| b.dt);
    let reaped = base.is_some_and(|b| r.stat.reaped_marks > b.reaped_marks);
    let counters = match (base.and_then(|b| b.io.as_ref()), &r.io) {
        (Some(a), ProcIo::Counters(b)) if !reaped => Some((a, b)),
        _ => None,
    };
    let reaped_dirtied_bytes = match (base.and_then(|b| b.io), &r.io) {
        (Some(a), ProcIo::Counters(b)) if reaped => b.write_bytes.checked_sub(a.write_bytes),
        _ => None,
    };
    let rate = |f: fn(&IoCounters) -> u64| {
        let (a, b) = counters?;
        Some(f(b).checked_sub(f(a))? as f64 / dt?)
    };
    let hit = counters.and_then(|(a, b)| {
        let rchar = b.rchar.checked_sub(a.rchar)?;
        let read = b.read_bytes.checked_sub(a.read_bytes)?;
        (rchar >= HIT_MIN_RCHAR && dt.is_some())
            .then(|| (100.0 * (1.0 - read as f64 / rchar as f64)).clamp(0.0, 100.0))
    });
    let iowait = base.filter(|_| delayacct && cur.clk_tck > 0).and_then(|b| {
        let ticks = match (b.blkio_tasks, r.blkio_tasks) {
            (Some(x), Some(y)) => y.checked_sub(x)?,
            _ if r.stat.num_threads == 1 && b.threads == 1 => {
                r.stat.blkio_ticks?.checked_sub(b.blkio?)?
            }
            _ => return None,
        };
        Some(ticks as f64 * 1000.0 / cur.clk_tck as f64 / dt?)
    });
    let no_permission = r.io == ProcIo::Denied;
    let (rss_bytes, anon_bytes, rss_growth_bytes_per_s, majflt_per_s) =
        super::procs_memory::row_memory(r, before, cur.page_size, dt);
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
        walk_ms: dt.map(|d| (d * 1000.0).round() as u64),
        rates_from_walk_ms: cur.mono_ns / 1_000_000,
        reaped_children: reaped,
        reaped_dirtied_bytes,
        cmdline: r.cmdline.clone(),
        exited: false,
        exit_delays: None,
        reaped_io: match (base.and_then(|b| b.io), &r.io) {
            (Some(a), ProcIo::Counters(b)) if reaped => Some(IoCounters {
                rchar: b.rchar.saturating_sub(a.rchar),
                wchar: b.wchar.saturating_sub(a.wchar),
                read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
                write_bytes: b.write_bytes.saturating_sub(a.write_bytes),
            }),
            _ => None,
        },
        fsync_per_s: None,
        fsync_mean_ms: None,
        fsync_max_ms: None,
    }
}

/// Sort key: bytes to or from storage, then IO wait, then syscall bytes, then D state.
pub(crate) fn activity(r: &ProcRow) -> f64 {
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
    names: HashMap<u32, String>,
    /// `kernel.task_delayacct` at the last walk that read it (kept while walks are off).
    delayacct: Option<bool>,
    ctx: Context,
    /// The command lines of the last walk's processes: pid → (start time, command line).
    /// The source writes one only when the previous walk did not (or it changed).
    cmdlines: HashMap<u32, (u64, String)>,
    /// The taskstats exits (`model::exits`): exited processes' rows, reaping parents' rates.
    exits: super::exits::Exits,
    /// The sync calls since the last walk, for the exited rows (`model::sync::SinceWalk`).
    syncs: super::sync::SinceWalk,
    /// The last snapshot had a walk: its wchan rows are this interval's.
    fresh: bool,
    /// pagewatch's own command name, from the last walk that listed its own pid.
    own_comm: Option<String>,
}

impl Tracker {
    /// Takes the next snapshot's walk, if it has one.
    pub fn update(&mut self, snap: &crate::parse::Snapshot) {
        self.fresh = snap.procs.is_some();
        if let Some(e) = &snap.exits {
            self.exits.take(e);
        }
        self.syncs.add(snap.sync.as_ref());
        if let Some(w) = &snap.procs {
            if self.delayacct == Some(false) && w.task_delayacct == Some(true) {
                // Switched on since the last walk: tasks older than this walk were forked
                // without it (those forked in between cannot be told apart: unknown too).
                self.ctx.delayacct_since_boot_ns = w.boot_ns;
            }
            if w.task_delayacct.is_some() {
                self.delayacct = w.task_delayacct;
            }
            let mut rows = derive_with(self.last.as_deref(), w, self.ctx);
            self.carry_cmdlines(w, &mut rows);
            if self.exits.active() {
                self.exits.at_walk(w, &mut rows);
                rows.sort_by(|a, b| activity(b).total_cmp(&activity(a)).then(a.pid.cmp(&b.pid)));
            }
            self.syncs.stamp(&mut rows);
            self.rows = Some(rows);
            let mut names = HashMap::new();
            for walk in self.last.iter().map(AsRef::as_ref).chain([w.as_ref()]) {
                let comms = walk.records.iter().map(|r| (r.pid, &r.stat.comm));
                let comms = comms.chain(walk.memory.iter().map(|r| (r.pid, &r.stat.comm)));
                names.extend(comms.map(|(p, c)| (p, c.clone())));
            }
            self.names = names;
            if let Some(c) = w.own_pid.and_then(|p| self.names.get(&p)) {
                self.own_comm = Some(c.clone());
            }
            self.memory = Some(super::procs_memory::memory_rows(w)).filter(|m| !m.is_empty());
            self.last = Some(w.clone());
        } else if self.last.as_ref().is_some_and(|w| {
            let due = w.period_ns.map_or(STALE_NS, |p| p.max(STALE_NS));
            snap.mono_ns.saturating_sub(w.mono_ns) > due
        }) {
            self.last = None;
            self.rows = None;
            self.memory = None;
            self.names.clear();
            self.cmdlines.clear();
            // The exits are kept: those of the pause are credited at the walks' next interval.
            self.syncs = super::sync::SinceWalk::default();
        }
    }

    /// Gives rows without a command line the one the previous walk had for the same process
    /// (pid and start time), and keeps this walk's for the next.
    fn carry_cmdlines(&mut self, w: &Walk, rows: &mut [ProcRow]) {
        let mut next = HashMap::with_capacity(w.records.len());
        for r in w.records.iter().filter(|r| !r.carried) {
            let line = r.cmdline.clone().or_else(|| {
                let (start, line) = self.cmdlines.remove(&r.pid)?;
                (start == r.starttime).then_some(line)
            });
            if let Some(line) = line {
                next.insert(r.pid, (r.starttime, line));
            }
        }
        for row in rows.iter_mut().filter(|row| row.cmdline.is_none()) {
            row.cmdline = next.get(&row.pid).map(|(_, l)| l.clone());
        }
        self.cmdlines = next;
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

    /// Names the sync rows the tracer could not (`sync::name`), fills `Model::processes` (the
    /// `TOP` rows, the sync victims after them and their sync figures, `sync::join`),
    /// `Model::processes_by_memory` and `Model::task_delayacct`, and `Model::throttled` with
    /// the walk's wchan rows (spec §11): while the tracepoint is not armed, until the next walk;
    /// while it is and sees every pause, in the walk's own interval only; a throttled writer
    /// without a name (it exited before the tracepoint's reader asked) gets its name from the
    /// last two walks.
    pub fn fill(&self, m: &mut super::Model) {
        let whole = self.last.as_ref().is_some_and(|w| w.scope.is_none());
        if let Some(s) = m.sync.as_mut() {
            super::sync::name(s, |pid| {
                let exited = self
                    .rows
                    .iter()
                    .flatten()
                    .find(|r| r.pid == pid && r.exited);
                (self.names.get(&pid).cloned())
                    .or_else(|| exited.map(|r| r.comm.clone()))
                    .or_else(|| self.exits.comm_of(pid).map(str::to_owned))
            });
        }
        m.processes =
            (self.rows.as_deref()).map(|r| super::sync::join(r, TOP, m.sync.as_ref(), whole));
        m.processes_by_memory.clone_from(&self.memory);
        m.task_delayacct = self.last.as_ref().and_then(|w| w.task_delayacct);
        m.hidepid = self.last.as_ref().and_then(|w| w.hidepid.clone());
        m.own_pid = self.last.as_ref().and_then(|w| w.own_pid);
        m.own_comm.clone_from(&self.own_comm);
        m.delayacct_switched_on = self.ctx.delayacct_since_boot_ns.is_some();
        m.exits = self.exits.status().cloned();
        let interval_ms = self.last.as_ref().and_then(|w| {
            let ns = w.mono_ns.checked_sub(w.prev_mono_ns?)?;
            Some((ns + 500_000) / 1_000_000)
        });
        m.walk_interval_ms = interval_ms;
        m.commands = (self.rows.as_deref()).map(|r| super::commands::roll_up(r, interval_ms));
        // While the tracepoint sees every pause (armed, nothing lost or left unread), a writer
        // still throttled after a walk is in its rows: a wchan row is evidence only in its
        // walk's interval. Kept until the next walk, rows of writers that had exited or stopped
        // pausing read "throttled" beside a d+wb below background.
        let sees_all = m.tracer.as_ref().is_some_and(|t| {
            t.state == crate::parse::trace::TraceState::Armed && t.lost == 0 && !t.capped
        });
        let wchan = (self.rows.as_deref())
            .filter(|_| self.fresh || !sees_all)
            .map(throttled_by_wchan)
            .unwrap_or_default();
        m.throttled =
            super::throttled::rows(m.tracer.as_ref(), std::mem::take(&mut m.throttled), wchan);
        super::throttled::with_walk_parents(&mut m.throttled, self.last.as_deref());
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
