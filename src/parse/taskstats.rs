//! Taskstats exit records (issue #24): the kernel's `struct taskstats` sent over generic
//! netlink when a task exits, decoded by version, and the `names::EXITS` pseudo-file the
//! source writes them into (one line per exited task), so that recordings replay the same
//! parsing and derivation.
//!
//! Owns: `decode_datagram` (netlink bytes → `TaskExit`s), `Layout` (where each field of
//! `struct taskstats` lives in each version), and the pseudo-file's text (`render`, `parse`).
//! Must not touch: sockets (`source::taskstats`), crediting (`model::exits`).
//!
//! # The struct by version (include/uapi/linux/taskstats.h)
//!
//! Fields are only ever appended, except once: version 15 (kernel 6.15) inserted
//! `*_delay_max` and `*_delay_min` after each `*_delay_total`, moving every later field
//! (`ac_comm` from offset 80 to 128, `ac_pid` from 128 to 176, `write_bytes` from 256 to 304).
//! Version 16 (commit 0bf2d838de1f "taskstats: fix struct taskstats breaks backward
//! compatibility since version 15", also in 6.14/6.15 stable) moved them to the end again, so
//! versions up to 14 and from 16 share one layout (`Layout::BASE`) and version 15 has its own
//! (`Layout::V15`). Version 1 (kernel 2.6.18's first) had no `ac_comm` and is not read. A field
//! is read only when the payload (the kernel's `sizeof(struct taskstats)`) covers it: older
//! kernels send shorter structs (v12 added `ac_tgid` and `ac_tgetime` at 368 and 376).
//!
//! # What the kernel sends at an exit (kernel/taskstats.c `taskstats_exit`)
//!
//! One `TASKSTATS_CMD_NEW` message per exiting task with a `TASKSTATS_TYPE_AGGR_PID` nest
//! (`TYPE_PID`, `TYPE_STATS`): that task's own counters. Its io fields (`read_char`,
//! `write_bytes`, …) are the task's own, rounded down to KiB (`xacct_add_tsk`), never its
//! children's. `ac_flag` carries `AGROUP` (0x20, v12+) when the task is the last of its
//! thread group. When the group had several threads, that last exit's message carries a
//! second nest, `TASKSTATS_TYPE_AGGR_TGID`: `signal->stats`, which the kernel fills with the
//! delay-accounting fields only (`fill_tgid_exit` → `delayacct_add_tsk`), and whose `version`
//! is 0 (the struct is zero-allocated): it is read with the version of the message's per-task
//! record. On 64-bit kernels without efficient unaligned access a `TASKSTATS_TYPE_NULL`
//! attribute pads the nest; unknown attributes are skipped.
//!
//! # The text
//!
//! ```text
//! state listening        listening | off | no-permission | no-family | error
//! why TEXT               (optional) why not listening
//! since 8121000000000    the previous drain's monotonic time, ns (- at the first)
//! read 8122000000000     this drain's: every exit below happened in (since, read]
//! lost 0                 receive-buffer overflows (ENOBUFS) since listening: exits lost
//! t 4242 4242 4100 32 16 1500000 1490000 3000 200000 …  a task: see `TaskExit`'s fields
//! g 4242 0 0 …           the group's delay record of the task above
//! ```
//!
//! A `t` line is `t pid tgid ppid flags version etime_us tgetime_us utime_us stime_us rchar
//! wchar read_bytes write_bytes cancelled_write_bytes` then the delays (`count total_ns` for
//! blkio, swapin, freepages, thrashing, compact) then the comm (last: it may hold spaces). A
//! `g` line is `g tgid` and the delays. A field the struct did not carry is `-`.

use crate::{Error, Result};

/// The pseudo-file's sample name, for error messages.
const FILE: &str = crate::sample::names::EXITS;

/// Generic netlink's control family (`GENL_ID_CTRL`).
pub const GENL_ID_CTRL: u16 = 0x10;
/// `CTRL_CMD_NEWFAMILY`, the control family's reply to `CTRL_CMD_GETFAMILY`.
pub const CTRL_CMD_NEWFAMILY: u8 = 1;
/// `CTRL_CMD_GETFAMILY`.
pub const CTRL_CMD_GETFAMILY: u8 = 3;
/// `CTRL_ATTR_FAMILY_ID` (u16).
pub const CTRL_ATTR_FAMILY_ID: u16 = 1;
/// `CTRL_ATTR_FAMILY_NAME` (NUL-terminated string).
pub const CTRL_ATTR_FAMILY_NAME: u16 = 2;
/// `TASKSTATS_CMD_GET`.
pub const TASKSTATS_CMD_GET: u8 = 1;
/// `TASKSTATS_CMD_NEW`: the kernel's exit (and reply) messages.
pub const TASKSTATS_CMD_NEW: u8 = 2;
/// `TASKSTATS_CMD_ATTR_REGISTER_CPUMASK` (a cpulist string, `0-3`).
pub const ATTR_REGISTER_CPUMASK: u16 = 3;
/// `TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK`.
pub const ATTR_DEREGISTER_CPUMASK: u16 = 4;
/// `NLMSG_ERROR`: an error (or, with error 0, an acknowledgement).
pub const NLMSG_ERROR: u16 = 2;
const TYPE_PID: u16 = 1;
const TYPE_TGID: u16 = 2;
const TYPE_STATS: u16 = 3;
const TYPE_AGGR_PID: u16 = 4;
const TYPE_AGGR_TGID: u16 = 5;
/// `ac_flag`: the last task of its thread group (`include/uapi/linux/acct.h`, v12+).
pub const AGROUP: u8 = 0x20;
/// `nlmsghdr` + `genlmsghdr`.
const HEADERS: usize = 16 + 4;

/// Block IO, swap-in, direct reclaim, thrashing and compaction delays: (count, total ns).
pub type Delays = [Option<(u64, u64)>; 5];

/// The delay kinds, in `Delays` order.
pub const DELAY_NAMES: [&str; 5] = ["blkio", "swapin", "freepages", "thrashing", "compact"];

/// One exited task (a `TYPE_PID` record) or a thread group's delays (`TYPE_TGID`, `group`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskExit {
    /// A thread group's record: only `pid` (the tgid) and `delays` mean anything.
    pub group: bool,
    /// The task's pid (the init namespace's); the tgid for a group record.
    pub pid: u32,
    /// Its thread group (`ac_tgid`, v12+).
    pub tgid: Option<u32>,
    /// Its parent process (`ac_ppid`: the real parent's tgid at the exit).
    pub ppid: Option<u32>,
    /// `ac_flag` (`AGROUP`: the last task of its group).
    pub flags: u8,
    /// The struct's version.
    pub version: u16,
    /// Its age at the exit, µs (`ac_etime`).
    pub etime_us: Option<u64>,
    /// Its thread group leader's age at the exit, µs (`ac_tgetime`, v12+).
    pub tgetime_us: Option<u64>,
    /// User and system CPU time, µs.
    pub utime_us: Option<u64>,
    /// System CPU time, µs.
    pub stime_us: Option<u64>,
    /// The task's own io: rchar, wchar, read_bytes, write_bytes, cancelled_write_bytes
    /// (KiB-rounded by the kernel).
    pub io: Option<[u64; 5]>,
    /// Delay accounting (zero unless `kernel.task_delayacct` was on when it was forked).
    pub delays: Delays,
    /// Its command name (`ac_comm`).
    pub comm: String,
}

/// Where the fields of `struct taskstats` live in one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    comm: usize,
    pid: usize,
    ppid: usize,
    etime: usize,
    utime: usize,
    stime: usize,
    read_char: usize,
    write_char: usize,
    read_bytes: usize,
    write_bytes: usize,
    cancelled: usize,
    tgid: usize,
    tgetime: usize,
    /// The (count, total) offsets of each delay, in `Delays` order.
    delays: [usize; 5],
}

impl Layout {
    /// Versions 2–14 and 16 on.
    pub const BASE: Layout = Layout {
        comm: 80,
        pid: 128,
        ppid: 132,
        etime: 144,
        utime: 152,
        stime: 160,
        read_char: 216,
        write_char: 224,
        read_bytes: 248,
        write_bytes: 256,
        cancelled: 264,
        tgid: 368,
        tgetime: 376,
        delays: [32, 48, 312, 328, 352],
    };
    /// Version 15: a max and a min after each delay total (16 bytes more per delay kind).
    pub const V15: Layout = Layout {
        comm: 128,
        pid: 176,
        ppid: 180,
        etime: 192,
        utime: 200,
        stime: 208,
        read_char: 264,
        write_char: 272,
        read_bytes: 296,
        write_bytes: 304,
        cancelled: 312,
        tgid: 464,
        tgetime: 472,
        delays: [48, 80, 360, 392, 432],
    };

    /// The layout of `version`; `None` for version 0 and 1 (no comm, padding after version).
    #[must_use]
    pub fn of(version: u16) -> Option<Layout> {
        match version {
            0 | 1 => None,
            15 => Some(Layout::V15),
            _ => Some(Layout::BASE),
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Decodes one `struct taskstats` payload; `version` overrides the struct's own (a group
/// record carries 0). `None` when the version is unknown or the payload too short for the
/// pid.
#[must_use]
pub fn decode_stats(b: &[u8], version: Option<u16>) -> Option<TaskExit> {
    let version = version.unwrap_or(u16_at(b, 0)?);
    let l = Layout::of(version)?;
    let comm = b.get(l.comm..l.comm + 32).map(|c| {
        let end = c.iter().position(|&x| x == 0).unwrap_or(c.len());
        String::from_utf8_lossy(&c[..end]).into_owned()
    });
    let delays = l
        .delays
        .map(|at| Some((u64_at(b, at)?, u64_at(b, at + 8)?)));
    let io = (|| {
        Some([
            u64_at(b, l.read_char)?,
            u64_at(b, l.write_char)?,
            u64_at(b, l.read_bytes)?,
            u64_at(b, l.write_bytes)?,
            u64_at(b, l.cancelled)?,
        ])
    })();
    Some(TaskExit {
        group: false,
        pid: u32_at(b, l.pid)?,
        tgid: u32_at(b, l.tgid),
        ppid: u32_at(b, l.ppid),
        flags: *b.get(8)?,
        version,
        etime_us: u64_at(b, l.etime),
        tgetime_us: u64_at(b, l.tgetime),
        utime_us: u64_at(b, l.utime),
        stime_us: u64_at(b, l.stime),
        io,
        delays,
        comm: comm.unwrap_or_default(),
    })
}

/// The attributes of a netlink attribute stream: (type, payload).
fn attrs(mut b: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let len = usize::from(u16_at(b, 0)?);
        let kind = u16_at(b, 2)? & 0x3fff;
        if len < 4 || len > b.len() {
            return None;
        }
        let payload = &b[4..len];
        b = b.get((len + 3) & !3..).unwrap_or(&[]);
        Some((kind, payload))
    })
}

/// The netlink messages of a datagram: (type, payload after the `nlmsghdr`).
pub fn messages(mut b: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let len = u32_at(b, 0)? as usize;
        let kind = u16_at(b, 4)?;
        if len < 16 || len > b.len() {
            return None;
        }
        let payload = &b[16..len];
        b = b.get((len + 3) & !3..).unwrap_or(&[]);
        Some((kind, payload))
    })
}

/// The exit records of one datagram from the taskstats family (`family`), in order: each
/// task's record, then its group's when the message has one.
pub fn decode_datagram(b: &[u8], family: u16, out: &mut Vec<TaskExit>) {
    for (kind, payload) in messages(b) {
        if kind != family || payload.first() != Some(&TASKSTATS_CMD_NEW) {
            continue;
        }
        let mut version = None;
        for (aggr, nest) in attrs(payload.get(HEADERS - 16..).unwrap_or(&[])) {
            let group = match aggr {
                TYPE_AGGR_PID => false,
                TYPE_AGGR_TGID => true,
                _ => continue,
            };
            let mut id = None;
            let mut rec = None;
            for (kind, p) in attrs(nest) {
                match kind {
                    TYPE_PID | TYPE_TGID => id = u32_at(p, 0),
                    TYPE_STATS => rec = decode_stats(p, if group { version } else { None }),
                    _ => {}
                }
            }
            if let (Some(id), Some(mut r)) = (id, rec) {
                if group {
                    r = TaskExit {
                        group: true,
                        pid: id,
                        version: r.version,
                        delays: r.delays,
                        ..TaskExit::default()
                    };
                } else {
                    version = Some(r.version);
                    r.pid = id;
                }
                out.push(r);
            }
        }
    }
}

/// The pseudo-file: the listener's state and the exits of one drain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exits {
    /// `listening`, or why not (`off`, `no-permission`, `no-family`, `error`).
    pub state: String,
    /// Free text, when not listening.
    pub why: Option<String>,
    /// The previous drain's monotonic time, ns.
    pub since_ns: Option<u64>,
    /// This drain's monotonic time, ns.
    pub read_ns: u64,
    /// Receive-buffer overflows since listening (exits lost).
    pub lost: u64,
    /// The records, in the order the kernel sent them.
    pub records: Vec<TaskExit>,
}

impl Exits {
    /// The listener is registered: every exit is in some sample.
    #[must_use]
    pub fn listening(&self) -> bool {
        self.state == "listening"
    }
}

fn opt(out: &mut String, v: Option<u64>) {
    use std::fmt::Write;
    match v {
        Some(v) => drop(write!(out, " {v}")),
        None => out.push_str(" -"),
    }
}

fn delays_text(out: &mut String, d: &Delays) {
    for x in d {
        opt(out, x.map(|x| x.0));
        opt(out, x.map(|x| x.1));
    }
}

/// Writes the pseudo-file.
#[must_use]
pub fn render(e: &Exits) -> String {
    use std::fmt::Write;
    let clean = |s: &str| s.replace(['\n', '\r'], "?");
    let mut out = format!("state {}\n", clean(&e.state));
    if let Some(w) = &e.why {
        let _ = writeln!(out, "why {}", clean(w));
    }
    match e.since_ns {
        Some(s) => drop(writeln!(out, "since {s}")),
        None => out.push_str("since -\n"),
    }
    let _ = writeln!(out, "read {}\nlost {}", e.read_ns, e.lost);
    for r in &e.records {
        if r.group {
            let _ = write!(out, "g {}", r.pid);
        } else {
            let _ = write!(out, "t {}", r.pid);
            opt(&mut out, r.tgid.map(u64::from));
            opt(&mut out, r.ppid.map(u64::from));
            let _ = write!(out, " {} {}", r.flags, r.version);
            for v in [r.etime_us, r.tgetime_us, r.utime_us, r.stime_us] {
                opt(&mut out, v);
            }
            for i in 0..5 {
                opt(&mut out, r.io.map(|io| io[i]));
            }
        }
        delays_text(&mut out, &r.delays);
        if !r.group {
            let _ = write!(out, " {}", clean(&r.comm));
        }
        out.push('\n');
    }
    out
}

/// Parses the pseudo-file.
pub fn parse(text: &str) -> Result<Exits> {
    let mut e = Exits::default();
    for (i, line) in text.lines().enumerate() {
        let err = |msg: &str| Error::parse(FILE, i + 1, msg.to_owned());
        let (tag, rest) = line.split_once(' ').unwrap_or((line, ""));
        let num = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| err(&format!("bad number {s:?}")))
        };
        let maybe = |s: &str| if s == "-" { Ok(None) } else { num(s).map(Some) };
        match tag {
            "state" => rest.clone_into(&mut e.state),
            "why" => e.why = Some(rest.to_owned()),
            "since" => e.since_ns = maybe(rest)?,
            "read" => e.read_ns = num(rest)?,
            "lost" => e.lost = num(rest)?,
            "t" | "g" => {
                let group = tag == "g";
                let n = if group { 11 } else { 24 };
                let mut f = rest.splitn(n + 1, ' ');
                let mut fields = Vec::with_capacity(n);
                for _ in 0..n {
                    fields.push(maybe(f.next().ok_or_else(|| err("too few fields"))?)?);
                }
                let comm = f.next().unwrap_or("").to_owned();
                let id = |v: Option<u64>| v.and_then(|v| u32::try_from(v).ok());
                let pid = id(fields[0]).ok_or_else(|| err("no pid"))?;
                let d = &fields[n - 10..];
                let delays: Delays = std::array::from_fn(|k| Some((d[2 * k]?, d[2 * k + 1]?)));
                let r = if group {
                    TaskExit {
                        group,
                        pid,
                        delays,
                        ..TaskExit::default()
                    }
                } else {
                    let io = (|| {
                        Some([
                            fields[9]?,
                            fields[10]?,
                            fields[11]?,
                            fields[12]?,
                            fields[13]?,
                        ])
                    })();
                    TaskExit {
                        group,
                        pid,
                        tgid: id(fields[1]),
                        ppid: id(fields[2]),
                        flags: fields[3].and_then(|v| u8::try_from(v).ok()).unwrap_or(0),
                        version: fields[4].and_then(|v| u16::try_from(v).ok()).unwrap_or(0),
                        etime_us: fields[5],
                        tgetime_us: fields[6],
                        utime_us: fields[7],
                        stime_us: fields[8],
                        io,
                        delays,
                        comm,
                    }
                };
                e.records.push(r);
            }
            "" => {}
            _ => return Err(err(&format!("unknown line {tag:?}"))),
        }
    }
    Ok(e)
}

#[cfg(test)]
#[path = "taskstats_tests.rs"]
mod tests;
