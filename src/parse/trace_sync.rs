//! The sync syscalls' tracepoints (`syscalls:sys_enter_fsync`/`sys_exit_fsync` and those of
//! `fdatasync`, `sync_file_range` and `msync`): their binary records decoded, each call's
//! entry paired with its exit per task, and the latencies reduced to one row per process
//! (`parse::sync_calls` carries the rows in samples).
//!
//! Owns: which events are read (`EVENTS`), `SyncLayout` (the event ids and fields, from their
//! `format` files), `Pairer` (entry → exit per task id, across reads and CPUs) and `reduce`.
//! Must not touch: tracefs (`source::sync_trace` reads the pages and maps task ids to
//! processes), the pseudo-file's text (`parse::sync_calls`).
//!
//! Pairing: the instance runs the `mono` clock, which is the same on every CPU, so a task
//! that enters on one CPU and leaves on another pairs by timestamp. Each read's calls, and
//! the exits left unmatched by the previous read, are sorted by time and walked: an entry
//! opens the task's call (a task is in one syscall at a time: an entry over an open one means
//! that one's exit was lost, and it is dropped as unpaired); an exit closes the open call of
//! the same syscall that started before it. An exit with no entry is kept for one more read
//! (its entry may sit in another CPU's pages the read cap left for later), then dropped as
//! unpaired (a call in progress when the tracer was armed). An entry never closed is dropped
//! once its task is gone (`Pairer::forget_gone`: the source asks /proc at each read) or once
//! older than `OPEN_MAX_NS` (its exit was lost in a wrapped buffer), and at most
//! `OPEN_MAX` calls are kept open. `msync` counts only with `MS_SYNC` (its `MS_ASYNC` form
//! writes nothing back since Linux 2.6.19).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::trace::TraceFormat;
use super::trace_raw::{Field, event_id};

/// The events enabled, relative to `events/`: each syscall's entry, then its exit.
pub const EVENTS: [&str; 8] = [
    "syscalls/sys_enter_fsync",
    "syscalls/sys_exit_fsync",
    "syscalls/sys_enter_fdatasync",
    "syscalls/sys_exit_fdatasync",
    "syscalls/sys_enter_sync_file_range",
    "syscalls/sys_exit_sync_file_range",
    "syscalls/sys_enter_msync",
    "syscalls/sys_exit_msync",
];

/// The syscalls, in `EVENTS` order (index = `Call::call`).
pub const CALLS: [&str; 4] = ["fsync", "fdatasync", "sync_file_range", "msync"];

/// `msync`'s flag that waits for the writeback (`MS_SYNC`).
const MS_SYNC: u64 = 4;
/// The index of `msync` in `CALLS`.
const MSYNC: u8 = 3;

/// An entry still open after this long is dropped (its exit was lost): 10 minutes.
pub const OPEN_MAX_NS: u64 = 600_000_000_000;
/// At most this many calls are kept open (one per task at most).
pub const OPEN_MAX: usize = 65_536;

/// One record: a task entering or leaving a sync syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// The task id (`common_pid`: a thread's id, not its process's).
    pub tid: u32,
    /// The trace clock, ns.
    pub ts: u64,
    /// Index in `CALLS`.
    pub call: u8,
    /// An entry (`sys_enter_*`) or an exit.
    pub enter: bool,
    /// For an entry: whether it counts (`msync` without `MS_SYNC` does not).
    pub counted: bool,
}

/// Where the records keep what pairing needs: each event's id and the task id; `msync`'s
/// flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncLayout {
    /// Event id → (index in `CALLS`, entry).
    ids: Vec<(u16, u8, bool)>,
    pid: Field,
    msync_flags: Option<Field>,
}

impl SyncLayout {
    /// The layout from the events' `format`s, in `EVENTS` order. Fails (with a sentence) when
    /// one has no id or no `common_pid`.
    pub fn new(formats: &[TraceFormat]) -> Result<Self, String> {
        if formats.len() != EVENTS.len() {
            return Err(format!(
                "{} formats for {} events",
                formats.len(),
                EVENTS.len()
            ));
        }
        let mut ids = Vec::with_capacity(EVENTS.len());
        let mut pid = None;
        for (i, f) in formats.iter().enumerate() {
            let id =
                f.id.and_then(|id| u16::try_from(id).ok())
                    .ok_or_else(|| format!("{} has no event id", EVENTS[i]))?;
            let p = Field::find(f, "common_pid")
                .ok_or_else(|| format!("{} has no common_pid", EVENTS[i]))?;
            if pid.is_some_and(|q| q != p) {
                return Err("common_pid differs between the events".into());
            }
            pid = Some(p);
            ids.push((id, (i / 2) as u8, i % 2 == 0));
        }
        Ok(Self {
            ids,
            pid: pid.ok_or("no events")?,
            msync_flags: Field::find(&formats[2 * MSYNC as usize], "flags"),
        })
    }

    /// One record (the bytes after the entry header) as a call; `None` for another event's
    /// record or one too short for its fields.
    #[must_use]
    pub fn decode(&self, rec: &[u8], ts: u64) -> Option<Call> {
        let id = event_id(rec)?;
        let &(_, call, enter) = self.ids.iter().find(|(i, _, _)| *i == id)?;
        let tid = u32::try_from(self.pid.get(rec)?).ok()?;
        let counted = !enter
            || call != MSYNC
            || self
                .msync_flags
                .and_then(|f| f.get_u64(rec))
                .is_none_or(|flags| flags & MS_SYNC != 0);
        Some(Call {
            tid,
            ts,
            call,
            enter,
            counted,
        })
    }
}

/// One completed sync call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// The task id.
    pub tid: u32,
    /// Index in `CALLS`.
    pub call: u8,
    /// Exit time less entry time, ns.
    pub ns: u64,
}

/// A call still in progress at a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Open {
    /// The task id.
    pub tid: u32,
    /// How long it has been waiting at the read, ns.
    pub age_ns: u64,
}

/// A hasher for task ids: one multiply (they are not chosen by an attacker who gains from
/// collisions, and pairing hashes two ids per call, thousands a second).
#[derive(Debug, Clone, Copy, Default)]
struct TidHasher(u64);

impl Hasher for TidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Pairs entries with exits across reads (the module doc).
#[derive(Debug, Clone, Default)]
pub struct Pairer {
    /// Task id → (entry time, call, counted).
    open: HashMap<u32, (u64, u8, bool), BuildHasherDefault<TidHasher>>,
    /// Exits the last read could not pair, tried once more.
    held: Vec<Call>,
    /// The latest timestamp seen.
    newest: u64,
    /// The clock at the last read.
    now: u64,
    /// Records dropped unpaired since the last `take_unpaired`.
    unpaired: u64,
}

impl Pairer {
    /// Pairs one read's calls (any order) with what earlier reads left open, appending each
    /// completed counted call to `done`. `now` is the trace clock at the read, when the
    /// caller has it (the `mono` clock is `CLOCK_MONOTONIC`); else the latest timestamp seen
    /// stands for it.
    pub fn pair(&mut self, mut calls: Vec<Call>, now: Option<u64>, done: &mut Vec<Done>) {
        let held = std::mem::take(&mut self.held);
        let fresh = calls.len();
        calls.extend(held.iter().copied());
        // Held exits are marked by position: they were read before this read's calls.
        let mut tagged: Vec<(Call, bool)> = (calls.iter().enumerate())
            .map(|(i, c)| (*c, i >= fresh))
            .collect();
        // By time; at one timestamp an entry before an exit.
        tagged.sort_unstable_by_key(|(c, held)| (c.ts, !c.enter, c.tid, *held));
        for (c, was_held) in tagged {
            self.newest = self.newest.max(c.ts);
            if c.enter {
                if self.open.insert(c.tid, (c.ts, c.call, c.counted)).is_some() {
                    self.unpaired += 1;
                }
                continue;
            }
            match self.open.get(&c.tid) {
                Some(&(ts, call, counted)) if call == c.call && ts <= c.ts => {
                    self.open.remove(&c.tid);
                    if counted {
                        done.push(Done {
                            tid: c.tid,
                            call,
                            ns: c.ts - ts,
                        });
                    }
                }
                _ if was_held => self.unpaired += 1,
                _ => self.held.push(c),
            }
        }
        let now = now.unwrap_or(self.newest).max(self.newest);
        let before = self.open.len();
        self.open
            .retain(|_, (ts, _, _)| now.saturating_sub(*ts) <= OPEN_MAX_NS);
        if self.open.len() > OPEN_MAX {
            let mut ts: Vec<u64> = self.open.values().map(|v| v.0).collect();
            ts.sort_unstable();
            let cut = ts[self.open.len() - OPEN_MAX];
            self.open.retain(|_, v| v.0 >= cut);
        }
        self.unpaired += (before - self.open.len()) as u64;
        self.now = now;
    }

    /// Drops the open calls of the tasks `gone` says have exited, as unpaired: a task that
    /// exited is in no syscall, so its exit was lost (a wrapped buffer) and its "wait" would
    /// grow a second a read for as long as `OPEN_MAX_NS` (seen: an fsync of an fio job that
    /// had ended read 1.8 s, then 2.8 s … 13.8 s over twelve reads).
    pub fn forget_gone(&mut self, mut gone: impl FnMut(u32) -> bool) {
        let before = self.open.len();
        self.open.retain(|tid, _| !gone(*tid));
        self.unpaired += (before - self.open.len()) as u64;
    }

    /// The counted calls in progress and how long each has waited, at the last read.
    #[must_use]
    pub fn open(&self) -> Vec<Open> {
        let mut v: Vec<Open> = (self.open.iter())
            .filter(|(_, (_, _, counted))| *counted)
            .map(|(&tid, &(ts, _, _))| Open {
                tid,
                age_ns: self.now.saturating_sub(ts),
            })
            .collect();
        v.sort_by_key(|o| o.tid);
        v
    }

    /// Records dropped unpaired since the last call (exits without an entry, entries whose
    /// exit was lost).
    pub fn take_unpaired(&mut self) -> u64 {
        std::mem::take(&mut self.unpaired)
    }
}

/// One process's sync calls over a read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncRow {
    /// The process (thread group) id.
    pub tgid: u32,
    /// Its command name (empty when it was gone before it was read).
    pub comm: String,
    /// Calls completed.
    pub calls: u64,
    /// Their summed latency, ns.
    pub total_ns: u64,
    /// The longest of them, ns.
    pub max_ns: u64,
    /// The longest call still in progress at the read, ns (0: none).
    pub open_ns: u64,
}

/// Sums completed calls and open ones by process, in tgid order; `process_of(tid)` gives a
/// task's process id and command name (`None`: the task is gone, its id stands for its
/// process).
#[must_use]
pub fn reduce(
    done: &[Done],
    open: &[Open],
    mut process_of: impl FnMut(u32) -> Option<(u32, String)>,
) -> Vec<SyncRow> {
    let mut rows: Vec<SyncRow> = Vec::new();
    let mut row = |rows: &mut Vec<SyncRow>, tid: u32| -> usize {
        let (tgid, comm) = process_of(tid).unwrap_or((tid, String::new()));
        match rows.binary_search_by_key(&tgid, |r| r.tgid) {
            Ok(i) => i,
            Err(i) => {
                rows.insert(
                    i,
                    SyncRow {
                        tgid,
                        comm,
                        ..SyncRow::default()
                    },
                );
                i
            }
        }
    };
    for d in done {
        let i = row(&mut rows, d.tid);
        let r = &mut rows[i];
        r.calls += 1;
        r.total_ns = r.total_ns.saturating_add(d.ns);
        r.max_ns = r.max_ns.max(d.ns);
    }
    for o in open {
        let i = row(&mut rows, o.tid);
        rows[i].open_ns = rows[i].open_ns.max(o.age_ns);
    }
    rows
}

#[cfg(test)]
#[path = "trace_sync_tests.rs"]
mod tests;
