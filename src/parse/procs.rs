//! The process walk (`names::PROCS`, spec §11): the per-walk pseudo-file the source writes,
//! and the two per-process files it carries, `/proc/PID/stat` and `/proc/PID/io`.
//!
//! Owns: text → `Walk`, `StatLine`, `IoCounters`; bad input is `proc/pids:LINE: problem`.
//! Also the stat and io parsers `jobs::pid_io` uses for fio pairing (one parser of each file).
//! Must not touch: files, the clock, rates (`model::procs`).
//!
//! The format (written by `source::procs`, documented there in full): header lines
//! `walk MONO_NS`, `prev MONO_NS|-`, `clk_tck N`, `task_delayacct 0|1|-`, `scope PATH|-`,
//! optionally `page_size N`, `scope_error TEXT` and `fio PID…`; then records, each opened by
//! `P PID STARTTIME` (a process of this walk) or `p PID STARTTIME` (its reading at the
//! previous walk, carried because it was left out of that walk's file), followed by
//! `stat RAW_LINE`, the io file's own lines (`rchar: N` …) or `io denied` / `io absent`, and
//! for `P` records `wchan TEXT`, `cgroup PATH`, optionally `memcg_v1 PATH`, `statm RAW_LINE`,
//! `blkio_tasks N` and `cmdline TEXT`. A `boot NS` header line (CLOCK_BOOTTIME at the walk)
//! may follow `scope`. Last, the memory records (`source::procs_memory`):
//! `M PID STARTTIME STATE RSS_PAGES MAJFLT BEFORE_RSS|- BEFORE_MAJFLT|-`, then optionally
//! `mem VMRSS RSSANON RSSFILE RSSSHMEM VMSWAP` (kB, `-` each when absent), `oom_score_adj N`,
//! `wchan TEXT` and `comm TEXT`. Also owns `MemRecord`.

use serde::Serialize;

use crate::{Error, Result};

/// The sample name the errors cite.
const FILE: &str = crate::sample::names::PROCS;

/// The counters of /proc/PID/io, bytes (Documentation/filesystems/proc.rst §3.3, spec §11).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IoCounters {
    /// Bytes passed to read()-family syscalls, page-cache hits, pipes and sockets included.
    pub rchar: u64,
    /// Bytes passed to write()-family syscalls.
    pub wchar: u64,
    /// Bytes fetched from storage (at bio submit, readahead included).
    pub read_bytes: u64,
    /// Bytes sent towards storage, counted when pages are dirtied (clean → dirty).
    pub write_bytes: u64,
}

/// Accumulates the `key: value` lines of an io file.
#[derive(Debug, Default)]
struct IoFields([Option<u64>; 4]);

/// The io keys we keep, in `IoFields` order; the others (syscr, syscw, cancelled) are known.
const IO_KEYS: [&str; 4] = ["rchar", "wchar", "read_bytes", "write_bytes"];
const IO_OTHER: [&str; 3] = ["syscr", "syscw", "cancelled_write_bytes"];

impl IoFields {
    /// Takes one line; `Ok(false)` when it is not an io line at all.
    fn take(&mut self, line: &str) -> std::result::Result<bool, String> {
        let Some((key, value)) = line.split_once(": ") else {
            return Ok(false);
        };
        let slot = IO_KEYS.iter().position(|k| *k == key);
        if slot.is_none() && !IO_OTHER.contains(&key) {
            return Ok(false);
        }
        let v: u64 = value
            .trim()
            .parse()
            .map_err(|_| format!("io: {key}: not a number: {value:?}"))?;
        if let Some(i) = slot {
            self.0[i] = Some(v);
        }
        Ok(true)
    }

    fn any(&self) -> bool {
        self.0.iter().any(Option::is_some)
    }

    fn finish(&self) -> std::result::Result<IoCounters, String> {
        let get = |i: usize| self.0[i].ok_or_else(|| format!("io: no {} line", IO_KEYS[i]));
        Ok(IoCounters {
            rchar: get(0)?,
            wchar: get(1)?,
            read_bytes: get(2)?,
            write_bytes: get(3)?,
        })
    }
}

/// Parses a whole /proc/PID/io text; the message names the problem, the caller the file.
pub fn parse_io(text: &str) -> std::result::Result<IoCounters, String> {
    let mut f = IoFields::default();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if !f.take(line)? {
            return Err(format!("io: unexpected line {line:?}"));
        }
    }
    f.finish()
}

/// The fields of /proc/PID/stat a walk uses (proc(5); field numbers are 1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatLine {
    /// Field 1.
    pub pid: u32,
    /// Field 2, the command name without its parentheses (up to 15 bytes; may itself contain
    /// spaces and parentheses, so the fields after it are found after the last `)`).
    pub comm: String,
    /// Field 3: R, S, D (uninterruptible, usually waiting for IO), Z, I, …
    pub state: char,
    /// Field 4.
    pub ppid: u32,
    /// Field 12, `majflt`: major page faults (each a read from storage).
    pub majflt: u64,
    /// Fields 14 + 15, `utime + stime`: CPU time, clock ticks, the whole thread group's.
    pub cpu_ticks: u64,
    /// Field 20.
    pub num_threads: u64,
    /// Field 24, `rss`: resident pages (anon + file + shmem, the mm's counters).
    pub rss_pages: u64,
    /// Field 22, clock ticks after boot: with the pid, it names one process instance.
    pub starttime: u64,
    /// Field 42, `delayacct_blkio_ticks`: the main thread's block-IO wait (dirty-throttle
    /// sleeps included), clock ticks; always 0 unless `kernel.task_delayacct=1` (spec §11).
    /// `None` on kernels whose stat line stops before it.
    pub blkio_ticks: Option<u64>,
    /// Fields 11 + 13 + 16 + 17 (`cminflt`, `cmajflt`, `cutime`, `cstime`): what the kernel
    /// adds from each child it reaps with wait() (`wait_task_zombie`, where the child's io
    /// counters join the parent's too). A move between two walks means children were reaped.
    pub reaped_marks: u64,
}

/// Parses one /proc/PID/stat line.
pub fn parse_stat(text: &str) -> std::result::Result<StatLine, String> {
    let text = text.trim_end_matches('\n');
    let (open, close) = match (text.find(" ("), text.rfind(')')) {
        (Some(o), Some(c)) if c > o => (o, c),
        _ => return Err(format!("stat: no (comm) in {text:?}")),
    };
    let pid = text[..open]
        .parse()
        .map_err(|_| format!("stat: bad pid {:?}", &text[..open]))?;
    let comm = text[open + 2..close].to_owned();
    let rest: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    // `rest[i]` is field i + 3.
    let field = |n: usize| -> std::result::Result<u64, String> {
        let t = rest
            .get(n - 3)
            .ok_or_else(|| format!("stat: no field {n}"))?;
        t.parse()
            .map_err(|_| format!("stat: field {n} not a number: {t:?}"))
    };
    let mut state = rest.first().map_or("", |s| *s).chars();
    let (Some(st), None) = (state.next(), state.next()) else {
        return Err(format!("stat: bad state in {text:?}"));
    };
    Ok(StatLine {
        pid,
        comm,
        state: st,
        ppid: u32::try_from(field(4)?).map_err(|_| "stat: ppid out of range".to_owned())?,
        majflt: field(12)?,
        cpu_ticks: field(14)?.saturating_add(field(15)?),
        num_threads: field(20)?,
        rss_pages: field(24)?,
        starttime: field(22)?,
        blkio_ticks: if rest.len() > 42 - 3 {
            Some(field(42)?)
        } else {
            None
        },
        reaped_marks: field(11)?
            .saturating_add(field(13)?)
            .saturating_add(field(16)?)
            .saturating_add(field(17)?),
    })
}

/// A process's io file, as the walk found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ProcIo {
    /// Read.
    Counters(IoCounters),
    /// Not readable by pagewatch (another user's process without root): unknown, never 0.
    Denied,
    /// No io file (a kernel without task IO accounting).
    Absent,
}

/// One process in a walk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcRecord {
    /// Its pid.
    pub pid: u32,
    /// Its start time (stat field 22): a pid reused by a new process has another.
    pub starttime: u64,
    /// This is the process's reading at the previous walk, carried because that walk's file
    /// left it out (it was idle then); not a process of this walk.
    pub carried: bool,
    /// Its stat line.
    pub stat: StatLine,
    /// Its io counters.
    pub io: ProcIo,
    /// `/proc/PID/wchan` (the main thread's), `None` when not read.
    pub wchan: Option<String>,
    /// Its cgroup, when read: the cgroup v2 path (`0::` line of `/proc/PID/cgroup`), or where
    /// the memory controller is on a cgroup v1 hierarchy, `memory:` and its path there (the
    /// group whose limit reclaims its page cache; a hybrid host's v2 path says nothing of it).
    pub cgroup: Option<String>,
    /// Field 42 summed over every thread (`task/*/stat`), when the source read them.
    pub blkio_tasks: Option<u64>,
    /// `/proc/PID/statm` `resident` and `shared` pages, when the source read it (`P`
    /// records). resident − shared is the anon count exactly: the kernel's `task_statm`
    /// makes `shared` = file + shmem and `resident` = shared + anon.
    pub statm: Option<(u64, u64)>,
    /// Its command line (`/proc/PID/cmdline`, NULs as spaces, capped), when read.
    pub cmdline: Option<String>,
}

/// A process among the walk's largest by resident memory (an `M` record, `source::procs_memory`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemRecord {
    /// Its pid.
    pub pid: u32,
    /// Its start time (stat field 22).
    pub starttime: u64,
    /// Its comm, state, rss (pages) and majflt as last read (the other stat fields are 0).
    pub stat: StatLine,
    /// Its stat `rss` pages and `majflt` at the previous walk, when it was seen there.
    pub before: Option<(u64, u64)>,
    /// `/proc/PID/status` VmRSS, RssAnon, RssFile, RssShmem, VmSwap, kB (`None`: no line).
    pub vm_rss_kb: Option<u64>,
    /// RssAnon, kB.
    pub rss_anon_kb: Option<u64>,
    /// RssFile, kB.
    pub rss_file_kb: Option<u64>,
    /// RssShmem, kB.
    pub rss_shmem_kb: Option<u64>,
    /// VmSwap, kB.
    pub vm_swap_kb: Option<u64>,
    /// `/proc/PID/oom_score_adj`.
    pub oom_score_adj: Option<i32>,
    /// `/proc/PID/wchan`, when read.
    pub wchan: Option<String>,
}

/// One process walk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Walk {
    /// Monotonic time of the walk, ns (the sample's own time).
    pub mono_ns: u64,
    /// Time of the walk before it; `None` on a first walk (no rates).
    pub prev_mono_ns: Option<u64>,
    /// Clock ticks per second of the stat times (`sysconf(_SC_CLK_TCK)`).
    pub clk_tck: u64,
    /// `kernel.task_delayacct`: whether field 42 counts; `None` when the knob is absent.
    pub task_delayacct: Option<bool>,
    /// `/proc`'s `hidepid=` when it hid other users' processes from the walk.
    pub hidepid: Option<String>,
    /// pagewatch's own pid (`self` line; `None` in captured trees and older recordings).
    pub own_pid: Option<u32>,
    /// The cgroup the walk was scoped to.
    pub scope: Option<String>,
    /// `CLOCK_BOOTTIME` at the walk, ns: the clock of the stat start times (field 22), so a
    /// process that started after the previous walk is known (`None` in older recordings).
    pub boot_ns: Option<u64>,
    /// The pace the walk ran at, ns: the next walk is due this long after (`sample::Pace`;
    /// `None` in older recordings, whose walks came at most 5 s apart).
    pub period_ns: Option<u64>,
    /// Why the scope could not be walked (no cgroup2 mount, no such group).
    pub scope_error: Option<String>,
    /// The processes of the walk whose comm is `fio`, active or not (the foreign-fio scan
    /// starts from them instead of reading every process's comm); empty when none.
    pub fio: Vec<u32>,
    /// The processes written, in file order.
    pub records: Vec<ProcRecord>,
    /// The page size the stat and statm pages count in (`page_size` line); `None` in older
    /// recordings (then no memory figures).
    pub page_size: Option<u64>,
    /// The largest processes by resident memory, and those in D state (`M` records).
    pub memory: Vec<MemRecord>,
}

/// Parses the walk pseudo-file.
pub fn parse(text: &str) -> Result<Walk> {
    let mut w = Walk::default();
    let mut open: Option<(usize, Partial)> = None;
    let mut mem: Option<(usize, MemPartial)> = None;
    let mut have_walk = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let err = |msg: String| Error::parse(FILE, n, msg);
        let (tag, value) = line.split_once(' ').unwrap_or((line, ""));
        match tag {
            "P" | "p" | "M" => {
                if let Some((at, rec)) = open.take() {
                    w.records
                        .push(rec.finish().map_err(|m| Error::parse(FILE, at, m))?);
                }
                if let Some((at, rec)) = mem.take() {
                    w.memory
                        .push(rec.finish().map_err(|m| Error::parse(FILE, at, m))?);
                }
                if tag == "M" {
                    mem = Some((n, MemPartial::new(value).map_err(err)?));
                    continue;
                }
                let (pid, start) = value
                    .split_once(' ')
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                    .ok_or_else(|| err(format!("bad record line {line:?}")))?;
                {
                    open = Some((n, Partial::new(pid, start, tag == "p")));
                }
            }
            _ if mem.is_some() => {
                if let Some((_, rec)) = mem.as_mut() {
                    rec.take(tag, value).map_err(err)?;
                }
            }
            _ if open.is_some() => {
                if let Some((_, rec)) = open.as_mut() {
                    rec.take(tag, value, line).map_err(err)?;
                }
            }
            "walk" => {
                w.mono_ns = number(value).map_err(err)?;
                have_walk = true;
            }
            "prev" => w.prev_mono_ns = dash(value).map(number).transpose().map_err(err)?,
            "clk_tck" => w.clk_tck = number(value).map_err(err)?,
            "task_delayacct" => {
                w.task_delayacct = dash(value).map(|v| v.trim() != "0");
            }
            "scope" => w.scope = dash(value).map(str::to_owned),
            "hidepid" => w.hidepid = Some(value.to_owned()),
            "self" => {
                let pid = number(value).map_err(err)?;
                w.own_pid = Some(u32::try_from(pid).map_err(|_| err(format!("pid {pid}")))?);
            }
            "page_size" => w.page_size = Some(number(value).map_err(err)?),
            "boot" => w.boot_ns = Some(number(value).map_err(err)?),
            "period" => w.period_ns = Some(number(value).map_err(err)?),
            "scope_error" => w.scope_error = Some(value.to_owned()),
            "fio" => {
                w.fio = value
                    .split_ascii_whitespace()
                    .map(|v| v.parse().map_err(|_| format!("fio: bad pid {v:?}")))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(err)?;
            }
            _ => return Err(err(format!("unexpected line {line:?}"))),
        }
    }
    if let Some((at, rec)) = open {
        w.records
            .push(rec.finish().map_err(|m| Error::parse(FILE, at, m))?);
    }
    if let Some((at, rec)) = mem {
        w.memory
            .push(rec.finish().map_err(|m| Error::parse(FILE, at, m))?);
    }
    if !have_walk {
        return Err(Error::parse(FILE, 0, "no walk line"));
    }
    if w.clk_tck == 0 {
        return Err(Error::parse(FILE, 0, "no clk_tck line (or 0)"));
    }
    Ok(w)
}

fn dash(v: &str) -> Option<&str> {
    (v != "-").then_some(v)
}

fn number(v: &str) -> std::result::Result<u64, String> {
    v.parse().map_err(|_| format!("not a number: {v:?}"))
}

/// A record being read.
struct Partial {
    pid: u32,
    starttime: u64,
    carried: bool,
    stat: Option<StatLine>,
    io: IoFields,
    io_word: Option<ProcIo>,
    wchan: Option<String>,
    cgroup: Option<String>,
    memcg_v1: Option<String>,
    blkio_tasks: Option<u64>,
    statm: Option<(u64, u64)>,
    cmdline: Option<String>,
}

impl Partial {
    fn new(pid: u32, starttime: u64, carried: bool) -> Self {
        Self {
            pid,
            starttime,
            carried,
            stat: None,
            io: IoFields::default(),
            io_word: None,
            wchan: None,
            cgroup: None,
            memcg_v1: None,
            blkio_tasks: None,
            statm: None,
            cmdline: None,
        }
    }

    fn take(&mut self, tag: &str, value: &str, line: &str) -> std::result::Result<(), String> {
        match tag {
            "stat" => self.stat = Some(parse_stat(value)?),
            "io" => {
                self.io_word = Some(match value {
                    "denied" => ProcIo::Denied,
                    "absent" => ProcIo::Absent,
                    _ => return Err(format!("io: expected denied or absent, not {value:?}")),
                });
            }
            "wchan" => self.wchan = wchan(value),
            "cgroup" => self.cgroup = Some(value.to_owned()),
            "memcg_v1" => self.memcg_v1 = Some(value.to_owned()),
            "blkio_tasks" => self.blkio_tasks = Some(number(value)?),
            "statm" => self.statm = Some(statm(value)?),
            "cmdline" => self.cmdline = Some(value.to_owned()),
            _ => {
                if !self.io.take(line)? {
                    return Err(format!("unexpected line {line:?}"));
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> std::result::Result<ProcRecord, String> {
        let stat = self
            .stat
            .ok_or_else(|| format!("record {}: no stat line", self.pid))?;
        if stat.pid != self.pid || stat.starttime != self.starttime {
            return Err(format!(
                "record {} {}: stat says pid {} start {}",
                self.pid, self.starttime, stat.pid, stat.starttime
            ));
        }
        let io = match (self.io_word, self.io.any()) {
            (Some(w), false) => w,
            (None, true) => ProcIo::Counters(self.io.finish()?),
            (None, false) => return Err(format!("record {}: no io", self.pid)),
            (Some(_), true) => return Err(format!("record {}: io twice", self.pid)),
        };
        Ok(ProcRecord {
            pid: self.pid,
            starttime: self.starttime,
            carried: self.carried,
            stat,
            io,
            wchan: self.wchan,
            cgroup: self.memcg_v1.map(|p| format!("memory:{p}")).or(self.cgroup),
            blkio_tasks: self.blkio_tasks,
            statm: self.statm,
            cmdline: self.cmdline,
        })
    }
}

/// `resident` and `shared` of a statm line (`size resident shared text lib data dt`, pages).
fn statm(value: &str) -> std::result::Result<(u64, u64), String> {
    let mut f = value
        .split_ascii_whitespace()
        .skip(1)
        .map(str::parse::<u64>);
    match (f.next(), f.next()) {
        (Some(Ok(r)), Some(Ok(s))) => Ok((r, s)),
        _ => Err(format!("statm: bad line {value:?}")),
    }
}

/// An `M` record being read.
struct MemPartial(MemRecord);

impl MemPartial {
    /// From the `M` line's value: pid, start, state, rss pages, majflt, and the previous
    /// walk's rss and majflt (`-` `-` when it was not seen there).
    fn new(value: &str) -> std::result::Result<Self, String> {
        let f: Vec<&str> = value.split(' ').collect();
        let [pid, start, state, rss, majflt, brss, bmaj] = f[..] else {
            return Err(format!("memory record: bad line M {value}"));
        };
        let mut letters = state.chars();
        let (Some(state), None) = (letters.next(), letters.next()) else {
            return Err(format!("memory record: bad state {state:?}"));
        };
        let pid = u32::try_from(number(pid)?).map_err(|_| "memory record: bad pid".to_owned())?;
        let starttime = number(start)?;
        let before = match (dash(brss), dash(bmaj)) {
            (Some(r), Some(m)) => Some((number(r)?, number(m)?)),
            _ => None,
        };
        let fields = StatLine {
            pid,
            comm: String::new(),
            state,
            ppid: 0,
            majflt: number(majflt)?,
            cpu_ticks: 0,
            num_threads: 0,
            rss_pages: number(rss)?,
            starttime,
            blkio_ticks: None,
            reaped_marks: 0,
        };
        Ok(Self(MemRecord {
            pid,
            starttime,
            stat: fields,
            before,
            vm_rss_kb: None,
            rss_anon_kb: None,
            rss_file_kb: None,
            rss_shmem_kb: None,
            vm_swap_kb: None,
            oom_score_adj: None,
            wchan: None,
        }))
    }

    fn take(&mut self, tag: &str, value: &str) -> std::result::Result<(), String> {
        let r = &mut self.0;
        match tag {
            "mem" => {
                let kb: Vec<Option<u64>> = value
                    .split(' ')
                    .map(|v| dash(v).map(number).transpose())
                    .collect::<std::result::Result<_, _>>()?;
                let [rss, anon, file, shmem, swap] = kb[..] else {
                    return Err(format!("mem: expected five figures, not {value:?}"));
                };
                (r.vm_rss_kb, r.rss_anon_kb, r.rss_file_kb) = (rss, anon, file);
                (r.rss_shmem_kb, r.vm_swap_kb) = (shmem, swap);
            }
            "comm" => value.clone_into(&mut r.stat.comm),
            "oom_score_adj" => {
                r.oom_score_adj = Some(
                    value
                        .trim()
                        .parse()
                        .map_err(|_| format!("oom_score_adj: not a number: {value:?}"))?,
                );
            }
            "wchan" => r.wchan = wchan(value),
            _ => return Err(format!("memory record: unexpected line {tag} {value}")),
        }
        Ok(())
    }

    #[allow(clippy::unnecessary_wraps)] // as `Partial::finish`, for the one call site
    fn finish(self) -> std::result::Result<MemRecord, String> {
        Ok(self.0)
    }
}

/// A wchan as the kernel gives it: the function a task sleeps in. The kernel writes `0` for
/// a task that is running or whose symbol it cannot name (`proc_pid_wchan`), and that is no
/// function: `None`, as an unread wchan (issue 50: a fio worker in direct reclaim read state
/// `R` and wchan `"0"`, a string where JSON promises null).
fn wchan(value: &str) -> Option<String> {
    let v = value.trim();
    (!v.is_empty() && v != "0").then(|| v.to_owned())
}

#[cfg(test)]
#[path = "procs_tests.rs"]
pub(crate) mod tests;
