//! The direct-reclaim tracer's records as a sample carries them (spec §3.3): each task's
//! entry into and exit from global direct reclaim (`vmscan:mm_vmscan_direct_reclaim_begin`,
//! `_end`) and memcg limit reclaim (`mm_vmscan_memcg_reclaim_begin`, `_end`), one line a
//! record, with the tasks' processes and the read's time span.
//!
//! Owns: the events' layouts (fields found by name in each `format`, so a kernel that moves
//! one still decodes), decoding a record (`Layouts::decode`), the pseudo-file's text both
//! ways (`render`, `parse_records`), and the begins a read leaves open (`still_open`, which
//! the source carries into the next read). Must not touch: tracefs (`source::reclaim_trace`
//! reads the pages), the time in reclaim (`model::reclaim_tasks` pairs the records).
//!
//! The pseudo-file (`RECORDS`), one item a line:
//! - `since_ns N`, `now_ns N`: the span this read covers, on the trace clock (`mono`): from
//!   the previous read (or the arming) to this one;
//! - `fresh 1`: the first read since arming, whose exits without an entry were in reclaim
//!   when it was armed (later, such an exit lost its entry to a wrapped buffer);
//! - `lost N`: events the kernel dropped (the ring wrapped before the read);
//! - `b TS TID KIND`, `e TS TID KIND NR`: an entry (`KIND` `g` global, `m` memcg) and an
//!   exit with the pages it reclaimed; `o TS TID KIND`: an entry of an earlier read still
//!   open at its end, carried;
//! - `task TID TGID COMM`: the process of a task named above (`COMM` to the line's end).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::trace::{TraceStatus, parse_format, parse_status};
use super::trace_raw::{Field, event_id};
use crate::sample::RawSample;

/// The tracer's status (same keys as the balance_dirty_pages tracer's).
pub const STATUS: &str = "sys/kernel/tracing/instances/pagewatch-reclaim/status";
/// The records of the interval (see the module doc).
pub const RECORDS: &str = "sys/kernel/tracing/instances/pagewatch-reclaim/records";

/// The events, under `events/`: global direct reclaim's pair, then memcg reclaim's (absent
/// without `CONFIG_MEMCG`).
pub const EVENTS: [&str; 4] = [
    "vmscan/mm_vmscan_direct_reclaim_begin",
    "vmscan/mm_vmscan_direct_reclaim_end",
    "vmscan/mm_vmscan_memcg_reclaim_begin",
    "vmscan/mm_vmscan_memcg_reclaim_end",
];

/// One record: a task entering or leaving reclaim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// The trace clock, ns.
    pub ts: u64,
    /// The task (`common_pid`: a thread's id).
    pub tid: u32,
    /// An entry (`_begin`), an exit (`_end`), or an entry carried from an earlier read.
    pub mark: Mark,
    /// memcg limit reclaim (`try_to_free_mem_cgroup_pages`) rather than global.
    pub memcg: bool,
    /// For an exit: the pages it reclaimed (`nr_reclaimed`).
    pub reclaimed: u64,
}

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Entered reclaim.
    Begin,
    /// Left it.
    End,
    /// Entered in an earlier read and not yet left at its end.
    Open,
}

/// A task's process, as the source resolved it at the read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The process (thread group) id.
    pub tgid: u32,
    /// The process's command name.
    pub comm: String,
}

/// One read of the tracer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Records {
    /// The span the read covers, trace clock ns.
    pub since_ns: u64,
    /// When it was read.
    pub now_ns: u64,
    /// The first read since arming.
    pub fresh: bool,
    /// Events the kernel dropped.
    pub lost: u64,
    /// In time order.
    pub records: Vec<Record>,
    /// By task id.
    pub tasks: BTreeMap<u32, Task>,
}

/// What a sample carries of the tracer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReclaimTrace {
    /// Armed, or why not.
    pub status: TraceStatus,
    /// The read's records, while armed.
    pub records: Option<Records>,
    /// Why the pseudo-file could not be read, when it could not.
    pub error: Option<String>,
}

/// Where each enabled event keeps what is read: by event id, the mark, memcg or not, and
/// `nr_reclaimed` for an exit.
#[derive(Debug, Clone, Default)]
pub struct Layouts {
    by_id: BTreeMap<u16, (Mark, bool, Option<Field>)>,
    pid: Option<Field>,
}

impl Layouts {
    /// The layouts of `(event dir, format text)` pairs; an exit without `nr_reclaimed` or a
    /// format without an ID is an error naming it.
    pub fn new(formats: &[(&str, &str)]) -> Result<Self, String> {
        let mut out = Self::default();
        for (dir, text) in formats {
            let fmt = parse_format(text).map_err(|e| format!("{dir}: {e}"))?;
            let name = dir.rsplit('/').next().unwrap_or("");
            let memcg = name.contains("memcg");
            let mark = if name.ends_with("_begin") {
                Mark::Begin
            } else if name.ends_with("_end") {
                Mark::End
            } else {
                return Err(format!("{dir}: not an event of this tracer"));
            };
            let id = fmt
                .id
                .and_then(|i| u16::try_from(i).ok())
                .ok_or_else(|| format!("{dir}: no ID"))?;
            let nr = match mark {
                Mark::End => Some(
                    Field::find(&fmt, "nr_reclaimed")
                        .ok_or_else(|| format!("{dir}: no integer nr_reclaimed"))?,
                ),
                _ => None,
            };
            out.pid = Some(
                Field::find(&fmt, "common_pid").ok_or_else(|| format!("{dir}: no common_pid"))?,
            );
            out.by_id.insert(id, (mark, memcg, nr));
        }
        Ok(out)
    }

    /// One record (the bytes after the entry header) at `ts`; `None` for another event's or
    /// a record shorter than its format.
    #[must_use]
    pub fn decode(&self, rec: &[u8], ts: u64) -> Option<Record> {
        let (mark, memcg, nr) = *self.by_id.get(&event_id(rec)?)?;
        let tid = u32::try_from(self.pid?.get(rec)?).ok()?;
        let reclaimed = match nr {
            Some(f) => f.get_u64(rec)?,
            None => 0,
        };
        Some(Record {
            ts,
            tid,
            mark,
            memcg,
            reclaimed,
        })
    }
}

/// The entries open at the end of a read, carried into the next as `Mark::Open`: each
/// task's last record, when it is an entry.
#[must_use]
pub fn still_open(records: &[Record]) -> Vec<Record> {
    let mut last: BTreeMap<u32, Record> = BTreeMap::new();
    for r in records {
        last.insert(r.tid, *r);
    }
    last.into_values()
        .filter(|r| r.mark != Mark::End)
        .map(|r| Record {
            mark: Mark::Open,
            ..r
        })
        .collect()
}

/// The pseudo-file's text.
#[must_use]
pub fn render(r: &Records) -> String {
    let mut s = format!("since_ns {}\nnow_ns {}\n", r.since_ns, r.now_ns);
    if r.fresh {
        s.push_str("fresh 1\n");
    }
    let _ = writeln!(s, "lost {}", r.lost);
    for x in &r.records {
        let kind = if x.memcg { 'm' } else { 'g' };
        let _ = match x.mark {
            Mark::Begin => writeln!(s, "b {} {} {kind}", x.ts, x.tid),
            Mark::Open => writeln!(s, "o {} {} {kind}", x.ts, x.tid),
            Mark::End => writeln!(s, "e {} {} {kind} {}", x.ts, x.tid, x.reclaimed),
        };
    }
    for (tid, t) in &r.tasks {
        let comm = t.comm.replace('\n', " ");
        let _ = writeln!(s, "task {tid} {} {comm}", t.tgid);
    }
    s
}

/// Parses the pseudo-file; an error names its line. Records are sorted by time.
pub fn parse_records(text: &str) -> Result<Records, String> {
    let mut out = Records::default();
    for (i, line) in text.lines().enumerate() {
        let bad = |what: &str| format!("{RECORDS}:{}: {what}", i + 1);
        let mut w = line.splitn(4, ' ');
        let Some(kind) = w.next().filter(|k| !k.is_empty()) else {
            continue;
        };
        let mut num = || {
            w.next()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| bad("not a number"))
        };
        match kind {
            "since_ns" => out.since_ns = num()?,
            "now_ns" => out.now_ns = num()?,
            "fresh" => out.fresh = num()? != 0,
            "lost" => out.lost = num()?,
            "b" | "o" | "e" => {
                let ts = num()?;
                let tid = u32::try_from(num()?).map_err(|_| bad("bad task id"))?;
                let rest = w.next().unwrap_or("");
                let (k, nr) = rest.split_once(' ').unwrap_or((rest, ""));
                let memcg = match k {
                    "g" => false,
                    "m" => true,
                    _ => return Err(bad("kind is neither g nor m")),
                };
                let (mark, reclaimed) = match kind {
                    "b" => (Mark::Begin, 0),
                    "o" => (Mark::Open, 0),
                    _ => (
                        Mark::End,
                        nr.trim().parse().map_err(|_| bad("no nr_reclaimed"))?,
                    ),
                };
                out.records.push(Record {
                    ts,
                    tid,
                    mark,
                    memcg,
                    reclaimed,
                });
            }
            "task" => {
                let tid = u32::try_from(num()?).map_err(|_| bad("bad task id"))?;
                let leader = u32::try_from(num()?).map_err(|_| bad("bad process id"))?;
                let comm = w.next().unwrap_or("").to_owned();
                out.tasks.insert(tid, Task { tgid: leader, comm });
            }
            _ => {}
        }
    }
    if out.now_ns < out.since_ns {
        return Err(format!("{RECORDS}: now_ns before since_ns"));
    }
    // Carried entries first at equal times: they began before anything of this read.
    out.records
        .sort_by_key(|r| (r.ts, u8::from(r.mark != Mark::Open)));
    Ok(out)
}

/// The tracer's part of a sample: `None` when it carries no status (never wanted, older
/// recordings).
#[must_use]
pub fn parse(sample: &RawSample) -> Option<ReclaimTrace> {
    let (status, mut error) = match parse_status(sample.file(STATUS)?) {
        Ok(s) => (s, None),
        Err(e) => (
            parse_status("state error\n").ok()?,
            Some(format!("{STATUS}: {e}")),
        ),
    };
    let records = sample.file(RECORDS).and_then(|t| {
        parse_records(t)
            .map_err(|e| {
                error.get_or_insert(e);
            })
            .ok()
    });
    Some(ReclaimTrace {
        status,
        records,
        error,
    })
}

#[cfg(test)]
#[path = "reclaim_trace_tests.rs"]
mod tests;
