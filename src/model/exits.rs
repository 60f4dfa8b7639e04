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
//! An exited process's row comes at the next walk with rates (a first walk has none: the
//! exits before it wait for the walk after it, and so do those of a pause in the walks; at
//! most `MAX_DEAD` wait, for at most `MAX_WAIT_NS`). It is its own IO the walks' rates have not yet credited, over the
//! span from the last walk that read it to its exit (its age at the exit, `ac_tgetime`, less
//! its age at that walk), or over its age when no walk read it:
//! - started after the listener registered (its whole life was listened to): its own totals
//!   at the end less the bytes its rows' rates credited (rate × `walk_ms`, summed over the
//!   walks that read it; none when no walk read it). So it counts once and in full: what it
//!   did before a first walk (no rates) or while a walk withheld it is in its exit row;
//! - older than the listener: its totals less its reading at the last walk that read it
//!   (what it did before that is not known to be this run's). One no walk read gets no row;
//!   nor does one no walk read when the walks are scoped to a cgroup (an exit record does not
//!   say its cgroup).
//!
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
/// Exits kept at most while they wait for a walk with rates (the oldest go first): the
/// listener drains at every sample, walk or not.
const MAX_DEAD: usize = 20_000;
/// How long an exit waits for a walk with rates: the walks start within seconds of a disk or
/// the CPUs turning busy, and a row's rate is over the walk's interval, so an exit older than
/// this is nothing a walk's rows should show. Without it a mode that never walks (`serve`),
/// or a screen between busy spells, kept up to `MAX_DEAD` exits of 120 bytes and a name each
/// (issue 52: `serve` at `--interval 0.1` grew one array to 3.8 MB, 2.4 MB resident, in 7
/// minutes of a build's exits; the screen's RSS rose in steps, the array doubling).
pub const MAX_WAIT_NS: u64 = 60_000_000_000;

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
    /// Its start time (stat field 22, clock ticks): the same process at the next walk.
    start: u64,
    /// Its own bytes the walks' rates have credited so far (rate × `walk_ms` summed over its
    /// rows): rchar, wchar, read_bytes, write_bytes.
    credited: [f64; 4],
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
        if self.listening_since.is_none() || e.since_ns.is_none() {
            // The first drain of a registration (a new one: the exits in between were missed,
            // so no parent's charge is exact until its next reap).
            self.listening_since = Some(e.read_ns);
            self.lost = e.lost;
            self.reaped.values_mut().for_each(|r| r.exact = false);
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
        self.forget_old(e.read_ns);
    }

    /// Drops the exits that waited `MAX_WAIT_NS` for a walk by `read_ns`, and the room they
    /// took once most of it is empty.
    fn forget_old(&mut self, read_ns: u64) {
        let oldest = read_ns.saturating_sub(MAX_WAIT_NS);
        let old = (self.dead.iter())
            .take_while(|d| d.since_ns.unwrap_or(0) < oldest)
            .count();
        self.dead.drain(..old);
        crate::malloc::fit(&mut self.dead);
    }

    /// The exits waiting for a walk with rates, and the room kept for them.
    #[must_use]
    pub fn waiting(&self) -> (usize, usize) {
        (self.dead.len(), self.dead.capacity())
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
        if self.dead.len() > MAX_DEAD {
            let over = self.dead.len() - MAX_DEAD;
            self.dead.drain(..over);
        }
    }

    /// At walk `w` (whose rows `rows` were just derived): charges reaping parents their
    /// children's totals, adds the rows of the processes that exited since the last walk with
    /// rates, and keeps `w`'s readings (and what its rows credited) for the next. A walk
    /// without rates (a first walk) credits no exit: they wait for the next.
    pub fn at_walk(&mut self, w: &Walk, rows: &mut Vec<ProcRow>) {
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
        let Some(interval) = interval else {
            let dead = std::mem::take(&mut self.dead);
            self.keep_bases(w, rows, &dead);
            self.dead = dead;
            return;
        };
        let dead = std::mem::take(&mut self.dead);
        let mut exited: Vec<ProcRow> = Vec::new();
        for d in &dead {
            if let Some(row) = self.exited_row(d, w, interval) {
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

    /// Whether `d` started after the listener registered: its whole life was listened to, so
    /// no walk before the listener read it, and its exit record holds all it did.
    fn whole_life(&self, d: &Dead) -> bool {
        match (self.listening_since, d.since_ns, d.age_ns) {
            (Some(l), Some(s), Some(a)) => s.checked_sub(a).is_some_and(|start| start >= l),
            _ => false,
        }
    }

    fn exited_row(&self, d: &Dead, w: &Walk, interval: u64) -> Option<ProcRow> {
        let age = d.age_ns?;
        let base = self.bases.get(&d.pid).filter(|b| {
            // The same process: no older at the walk than at its exit, and its exit, reckoned
            // from the walk and its ages, in the drain's window (a reused pid fails).
            let exit = b.walk_ns.saturating_add(age.saturating_sub(b.age_ns));
            b.age_ns <= age
                && d.since_ns
                    .is_none_or(|s| exit <= s.saturating_add(2 * SLACK_NS) && exit + SLACK_NS >= s)
        });
        let whole = self.whole_life(d);
        // What is taken off its own totals: what the walks' rates credited it (its whole life
        // was listened to), else its reading at the last walk.
        let (less, span, cgroup, cmdline) = match base {
            Some(b) => {
                let less = if whole {
                    b.credited
                } else {
                    let io = b.io;
                    [io.rchar, io.wchar, io.read_bytes, io.write_bytes].map(|v| v as f64)
                };
                (less, age - b.age_ns, b.cgroup.clone(), b.cmdline.clone())
            }
            // A walk scoped to a cgroup credits only the processes it read: an exit record
            // does not say its cgroup.
            None if w.scope.is_some() => return None,
            // No walk read it and it is younger than the listener: all it did is uncredited.
            None if whole => ([0.0; 4], age, None, None),
            None => return None,
        };
        let floor = MIN_BORN_SPAN_NS.min(interval);
        let span = span.clamp(floor, interval.max(floor)) as f64 / 1e9;
        let rate = |i: usize| Some((d.own[i] as f64 - less[i]).max(0.0) / span);
        let from_zero = base.is_none();
        let iowait = d
            .blkio_ns
            .filter(|_| from_zero && w.task_delayacct == Some(true))
            .map(|ns| ns as f64 / 1e6 / span);
        Some(ProcRow {
            pid: d.pid,
            comm: d.comm.clone(),
            cgroup,
            rchar_per_s: rate(0),
            wchar_per_s: rate(1),
            read_bytes_per_s: rate(2),
            dirtied_bytes_per_s: rate(3),
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

    /// Keeps walk `w`'s readings (with the rows' command lines, and the bytes their rates
    /// credited added to what earlier walks credited the same process) for the exits to come.
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
        let credited: HashMap<u32, [f64; 4]> = rows
            .iter()
            .filter(|x| !x.exited)
            .map(|x| (x.pid, credited(x)))
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
            let old = self.bases.get(&r.pid).filter(|b| b.start == r.starttime);
            let cmdline = lines
                .get(&r.pid)
                .map(|l| (*l).clone())
                .or_else(|| old.and_then(|b| b.cmdline.clone()));
            let mut sum = old.map_or([0.0; 4], |b| b.credited);
            for (s, c) in sum
                .iter_mut()
                .zip(credited.get(&r.pid).unwrap_or(&[0.0; 4]))
            {
                *s += c;
            }
            self.bases.insert(
                r.pid,
                Base {
                    io,
                    start: r.starttime,
                    credited: sum,
                    age_ns: boot.saturating_sub(start),
                    walk_ns: w.mono_ns,
                    cgroup: r.cgroup.clone(),
                    cmdline,
                },
            );
        }
    }
}

/// The bytes a live row's rates credit its process (rate × its span; none without a rate):
/// rchar, wchar, read_bytes, write_bytes.
fn credited(r: &ProcRow) -> [f64; 4] {
    let secs = r.walk_ms.unwrap_or(0) as f64 / 1000.0;
    [
        r.rchar_per_s,
        r.wchar_per_s,
        r.read_bytes_per_s,
        r.dirtied_bytes_per_s,
    ]
    .map(|v| v.unwrap_or(0.0) * secs)
}

#[cfg(test)]
#[path = "exits_tests.rs"]
pub(crate) mod tests;
