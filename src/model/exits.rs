//! Exited processes credited with their own IO, from taskstats exit records (issue #24):
//! a dd that lived 1.5 s between two walks is a row of its own (`exited: true`), and the
//! shell that reaped it no longer shows the dd's bytes as its rate.
//!
//! Owns: `Exits` (the exit records between walks, the readings the walks saw, the children's
//! totals each parent has yet to be charged) and `Status`. Must not touch: files, sockets,
//! the clock (times are the samples' and the walks' own), the per-process derivation of live
//! processes (`model::procs`).
//!
//! # Crediting an exit
//!
//! The kernel sends one record per exiting task with that task's own io counters (never its
//! children's; `parse::taskstats`). A process's own IO at its end is the sum over its threads'
//! records, gathered until the record flagged `AGROUP` (the last thread; on kernels before
//! taskstats v12, which lack the flag and `ac_tgid`, each task is its own process). Its
//! delays come from the group record when the kernel sent one (a multi-threaded process: the
//! sum over its threads), else from the task record: never both.
//!
//! At the next walk, an exited process's row is its own IO since the last walk that read it
//! (`/proc/PID/io` then, less its own total at the end), over the span from that walk to its
//! exit (its age at the exit, `ac_tgetime`, less its age at that walk); or, when no walk read
//! it and it started after the walk before the previous one (so any IO it had done by the
//! previous walk would have had it written), from zero over its age. Otherwise its base is
//! unknown (it was there before the walks saw it, or its reading was lost) and it gets no row;
//! nor does one no walk read when the walks are scoped to a cgroup (an exit record does not
//! say its cgroup).
//! The span is at least `procs::MIN_BORN_SPAN_NS` (1 s) and at most the walk's interval, as
//! for a process born between walks; `walk_ms` is that span.
//!
//! # The parent's jump
//!
//! When a parent reaps a child, the kernel adds the child's total (its own IO and all it had
//! reaped) to the parent's io file. Each exited process's total goes to its parent
//! (`ac_ppid`) as `pending`. At a walk where the parent's reaped-children marks moved
//! (`procs::ProcRow::reaped_children`), its rates are its io jump less `pending`, exactly,
//! when every pending child started after the listener registered (then all its descendants
//! did too) and no exit was lost; otherwise its rates stay `None` as without taskstats. The
//! pending total is cleared at that walk, and dropped after `PENDING_WALKS` walks without a
//! reap (a parent that ignores SIGCHLD is never charged).
//!
//! Limits: the io file of a parent includes what it reaped, its own total at the exit does
//! not: an exited parent's own IO is its total less that reading, floored at 0. The kernel
//! rounds each record's io down to KiB. Exits lost to a full receive buffer (`Status::lost`)
//! are not credited.

use std::collections::HashMap;

use serde::Serialize;

pub use super::proc_row::ExitDelays;
use super::proc_row::{MIN_BORN_SPAN_NS, ProcRow};
use crate::parse::procs::{IoCounters, ProcIo, Walk};
use crate::parse::taskstats::{AGROUP, Delays, Exits as Drain, TaskExit};

/// Walks a parent's pending children's total waits for its reap before it is dropped.
pub const PENDING_WALKS: u8 = 2;
/// Readings, partial thread sums and parents kept at most (one per live process each; a lost
/// exit record would otherwise leave its entry for good).
const MAX_KEPT: usize = 200_000;
/// Slack on the exit time reckoned from a walk's reading (clock ticks, the drain's window).
const SLACK_NS: u64 = 1_000_000_000;

/// Where exits come from, for the status line and the JSON (`exits` key of a record).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Status {
    /// `taskstats` while the listener is registered, else `none`.
    pub source: String,
    /// The listener's state (`listening`, `no-permission`, `no-family`, `error`, `off`).
    pub state: String,
    /// Why not listening.
    pub why: Option<String>,
    /// Receive-buffer overflows since listening: exit records lost.
    pub lost: u64,
}

impl ExitDelays {
    fn of(d: &Delays) -> Self {
        let ms = |i: usize| d[i].map(|(_, ns)| ns as f64 / 1e6);
        ExitDelays {
            blkio_ms: ms(0),
            swapin_ms: ms(1),
            reclaim_ms: ms(2),
            thrashing_ms: ms(3),
            compact_ms: ms(4),
        }
    }
}

/// io: rchar, wchar, read_bytes, write_bytes, cancelled.
type Io = [u64; 5];

fn add(a: &mut Io, b: &Io) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = x.saturating_add(*y);
    }
}

/// The threads of a process that exited so far.
#[derive(Debug, Clone, Default)]
struct Partial {
    io: Io,
    comm: Option<String>,
}

/// A process that exited since the last walk.
#[derive(Debug, Clone)]
struct Dead {
    pid: u32,
    comm: String,
    own: Io,
    /// Its age at the exit, ns.
    age_ns: Option<u64>,
    /// The exit happened in (since, read] (monotonic ns); `since` unknown at a first drain.
    since_ns: Option<u64>,
    delays: Delays,
    blkio_ns: Option<u64>,
}

/// What a parent has reaped that its io jump will hold.
#[derive(Debug, Clone, Default)]
struct Reaped {
    /// Everything it reaped in its life (its own exit passes it on).
    total: Io,
    /// Not yet charged at a walk.
    pending: Io,
    /// Every pending child's total is known exactly.
    exact: bool,
    walks: u8,
}

/// A walk's reading of a process.
#[derive(Debug, Clone)]
struct Base {
    io: IoCounters,
    /// Its age at that walk, ns.
    age_ns: u64,
    walk_ns: u64,
    cgroup: Option<String>,
    cmdline: Option<String>,
}

/// Follows the exits across samples; fed by `procs::Tracker`.
#[derive(Debug, Clone, Default)]
pub struct Exits {
    status: Option<Status>,
    listening_since: Option<u64>,
    lost: u64,
    partial: HashMap<u32, Partial>,
    dead: Vec<Dead>,
    reaped: HashMap<u32, Reaped>,
    bases: HashMap<u32, Base>,
}

impl Exits {
    /// The listener's status at the last sample that carried one.
    #[must_use]
    pub fn status(&self) -> Option<&Status> {
        self.status.as_ref()
    }

    /// The command name of process `pid`, when its exit record came since the last walk.
    #[must_use]
    pub fn comm_of(&self, pid: u32) -> Option<&str> {
        let d = self.dead.iter().rev().find(|d| d.pid == pid)?;
        Some(d.comm.as_str())
    }

    /// Whether exits are credited (the listener is registered).
    #[must_use]
    pub fn active(&self) -> bool {
        self.listening_since.is_some()
    }

    /// Takes one sample's drain (before its walk, if it has one: the source drains first).
    pub fn take(&mut self, e: &Drain) {
        self.status = Some(Status {
            source: if e.listening() { "taskstats" } else { "none" }.into(),
            state: e.state.clone(),
            why: e.why.clone(),
            lost: e.lost,
        });
        if !e.listening() {
            *self = Exits {
                status: self.status.take(),
                ..Exits::default()
            };
            return;
        }
        if self.listening_since.is_none() {
            self.listening_since = Some(e.read_ns);
            self.lost = e.lost;
        }
        if e.lost != self.lost {
            // Some exits were dropped: no parent's charge is exact until its next reap.
            self.lost = e.lost;
            self.reaped.values_mut().for_each(|r| r.exact = false);
        }
        for r in &e.records {
            if r.group {
                if let Some(d) = self.dead.last_mut().filter(|d| d.pid == r.pid) {
                    d.delays = r.delays;
                    d.blkio_ns = r.delays[0].map(|x| x.1);
                }
            } else {
                self.task(r, e);
            }
        }
    }

    fn task(&mut self, r: &TaskExit, e: &Drain) {
        let tgid = r.tgid.unwrap_or(r.pid);
        let p = self.partial.entry(tgid).or_default();
        if let Some(io) = &r.io {
            add(&mut p.io, io);
        }
        if r.pid == tgid {
            p.comm = Some(r.comm.clone());
        }
        let group_dead = r.flags & AGROUP != 0 || (r.version < 12 && r.pid == tgid);
        if !group_dead {
            return;
        }
        let p = self.partial.remove(&tgid).unwrap_or_default();
        let age_ns = r
            .tgetime_us
            .or(r.etime_us)
            .map(|us| us.saturating_mul(1000));
        // Started after the listener registered: every descendant's exit was seen too.
        let exact = match (self.listening_since, e.since_ns, age_ns) {
            (Some(l), Some(s), Some(a)) => s.saturating_sub(a) >= l && s >= a,
            _ => false,
        };
        let mine = self.reaped.remove(&tgid);
        let mut total = p.io;
        if let Some(m) = &mine {
            add(&mut total, &m.total);
        }
        let exact = exact && mine.is_none_or(|m| m.exact || m.pending == [0; 5]);
        if let Some(ppid) = r.ppid.filter(|&pp| pp != 0) {
            let parent = self.reaped.entry(ppid).or_insert_with(|| Reaped {
                exact: true,
                ..Reaped::default()
            });
            if parent.pending == [0; 5] {
                parent.exact = true;
                parent.walks = 0;
            }
            add(&mut parent.total, &total);
            add(&mut parent.pending, &total);
            parent.exact &= exact;
        }
        self.dead.push(Dead {
            pid: tgid,
            comm: p.comm.unwrap_or_else(|| r.comm.clone()),
            own: p.io,
            age_ns,
            since_ns: e.since_ns,
            delays: r.delays,
            blkio_ns: r.delays[0].map(|x| x.1),
        });
    }

    /// At walk `w` (whose rows `rows` were just derived; `last` is the walk before it):
    /// charges reaping parents their children's totals, adds the rows of the processes that
    /// exited since `last`, and keeps `w`'s readings for the next.
    pub fn at_walk(&mut self, w: &Walk, last: Option<&Walk>, rows: &mut Vec<ProcRow>) {
        if !self.active() {
            return;
        }
        let interval = w
            .prev_mono_ns
            .and_then(|p| w.mono_ns.checked_sub(p))
            .filter(|&i| i > 0);
        for row in rows.iter_mut() {
            self.charge(row);
        }
        for r in self.reaped.values_mut() {
            if r.pending != [0; 5] {
                r.walks += 1;
                if r.walks > PENDING_WALKS {
                    r.pending = [0; 5];
                    r.exact = true;
                }
            }
        }
        // Born after this walk's `prev` less its own interval: a process never written was idle
        // (all zero) at any walk that could have seen it.
        let born_after = last.and_then(|l| l.prev_mono_ns).or(w.prev_mono_ns);
        let dead = std::mem::take(&mut self.dead);
        let mut exited: Vec<ProcRow> = Vec::new();
        for d in &dead {
            if let Some(row) = self.exited_row(d, w, interval, born_after) {
                exited.push(row);
            }
            self.bases.remove(&d.pid);
        }
        let gone: std::collections::HashSet<u32> = exited.iter().map(|x| x.pid).collect();
        rows.retain(|r| !gone.contains(&r.pid));
        rows.extend(exited);
        self.keep_bases(w, rows, &dead);
    }

    /// A reaping parent's rates: its jump less its exited children's totals, when exact.
    fn charge(&mut self, row: &mut ProcRow) {
        if !row.reaped_children {
            return;
        }
        let Some(r) = self.reaped.get_mut(&row.pid) else {
            return;
        };
        let pending = std::mem::take(&mut r.pending);
        let exact = std::mem::replace(&mut r.exact, true) && pending != [0; 5];
        r.walks = 0;
        let (Some(jump), Some(ms)) = (row.reaped_io, row.walk_ms) else {
            return;
        };
        if !exact || ms == 0 {
            return;
        }
        let dt = ms as f64 / 1000.0;
        let own = |v: u64, i: usize| v.saturating_sub(pending[i]) as f64 / dt;
        row.rchar_per_s = Some(own(jump.rchar, 0));
        row.wchar_per_s = Some(own(jump.wchar, 1));
        row.read_bytes_per_s = Some(own(jump.read_bytes, 2));
        row.dirtied_bytes_per_s = Some(own(jump.write_bytes, 3));
        row.reaped_dirtied_bytes = Some(jump.write_bytes.min(pending[3]));
    }

    fn exited_row(
        &self,
        d: &Dead,
        w: &Walk,
        interval: Option<u64>,
        born_after: Option<u64>,
    ) -> Option<ProcRow> {
        let interval = interval?;
        let age = d.age_ns?;
        let base = self.bases.get(&d.pid).filter(|b| {
            // The same process: no older at the walk than at its exit, and its exit, reckoned
            // from the walk and its ages, in the drain's window (a reused pid fails).
            let exit = b.walk_ns.saturating_add(age.saturating_sub(b.age_ns));
            b.age_ns <= age
                && d.since_ns
                    .is_none_or(|s| exit <= s.saturating_add(2 * SLACK_NS) && exit + SLACK_NS >= s)
        });
        let (io, span, cgroup, cmdline) = match base {
            Some(b) => (b.io, age - b.age_ns, b.cgroup.clone(), b.cmdline.clone()),
            // A walk scoped to a cgroup credits only the processes it read: an exit record
            // does not say its cgroup.
            None if w.scope.is_some() => return None,
            None => {
                let since = d.since_ns?;
                if since.checked_sub(age)? < born_after? {
                    return None;
                }
                (IoCounters::default(), age, None, None)
            }
        };
        let floor = MIN_BORN_SPAN_NS.min(interval);
        let span = span.clamp(floor, interval.max(floor)) as f64 / 1e9;
        let rate = |now: u64, then: u64| Some(now.saturating_sub(then) as f64 / span);
        let from_zero = base.is_none();
        let iowait = d
            .blkio_ns
            .filter(|_| from_zero && w.task_delayacct == Some(true))
            .map(|ns| ns as f64 / 1e6 / span);
        Some(ProcRow {
            pid: d.pid,
            comm: d.comm.clone(),
            cgroup,
            rchar_per_s: rate(d.own[0], io.rchar),
            wchar_per_s: rate(d.own[1], io.wchar),
            read_bytes_per_s: rate(d.own[2], io.read_bytes),
            dirtied_bytes_per_s: rate(d.own[3], io.write_bytes),
            iowait_ms_per_s: iowait,
            state: 'X',
            walk_ms: Some((span * 1000.0).round() as u64),
            rates_from_walk_ms: w.mono_ns / 1_000_000,
            cmdline,
            exited: true,
            exit_delays: Some(ExitDelays::of(&d.delays)),
            ..ProcRow::default()
        })
    }

    /// Keeps walk `w`'s readings (with the rows' command lines) for the exits to come.
    fn keep_bases(&mut self, w: &Walk, rows: &[ProcRow], dead: &[Dead]) {
        let (Some(boot), tck) = (w.boot_ns, w.clk_tck.max(1)) else {
            return;
        };
        if self.bases.len() > MAX_KEPT {
            self.bases.clear();
        }
        if self.partial.len() > MAX_KEPT {
            self.partial.clear();
        }
        if self.reaped.len() > MAX_KEPT {
            self.reaped.clear();
        }
        let lines: HashMap<u32, &String> = rows
            .iter()
            .filter_map(|x| Some((x.pid, x.cmdline.as_ref()?)))
            .collect();
        let dead: std::collections::HashSet<u32> = dead.iter().map(|d| d.pid).collect();
        for r in w.records.iter().filter(|r| !r.carried) {
            let ProcIo::Counters(io) = r.io else {
                continue;
            };
            if dead.contains(&r.pid) {
                continue;
            }
            let start = (u128::from(r.starttime) * 1_000_000_000 / u128::from(tck)) as u64;
            let cmdline = lines
                .get(&r.pid)
                .map(|l| (*l).clone())
                .or_else(|| self.bases.get(&r.pid).and_then(|b| b.cmdline.clone()));
            self.bases.insert(
                r.pid,
                Base {
                    io,
                    age_ns: boot.saturating_sub(start),
                    walk_ns: w.mono_ns,
                    cgroup: r.cgroup.clone(),
                    cmdline,
                },
            );
        }
    }
}

#[cfg(test)]
#[path = "exits_tests.rs"]
mod tests;
