//! One process at one walk: what the walker keeps of it between walks and how it decides what
//! to read and whether to write it (`source::procs` describes the format and the rules).
//!
//! Owns: `Seen` (a process's last readings and held fds) and `Visit`. Must not touch: rates,
//! the walk's header, listing processes.
//!
//! # Reading only what can have changed
//!
//! `/proc/PID/stat` costs the kernel about 5 µs (do_task_stat), `io` 2 µs, `schedstat`
//! 1.5 µs. `schedstat` (the main thread's run time, run delay and timeslices) is read first:
//! when it is the same text as at the last walk, the main thread has not run since, so its
//! state (short of being woken and not yet run), its field 42 (delay accounting ends the wait
//! in the task's own context) and its thread count (cloning needs the task to run) are as they
//! were, and the stat line is not re-read. When in addition the process had one thread, its io
//! counters cannot have moved either (every io counter is charged in the context of the
//! process's own threads, and reaping a child, which adds its totals, needs the parent to
//! run), and io is not re-read. Without held fds (past the fd budget, where schedstat is not
//! read at all), or where schedstat reads `0 0 0` (no CONFIG_SCHED_INFO), stat and io are
//! read every walk. A carried reading (`p`) may then hold a
//! stat line from an earlier walk whose figures are the same. A multi-threaded process whose
//! io is denied has its stat re-read even when its main thread has not run: its other
//! threads' CPU time is then the only sign of work (`moved`).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::read::{Records, clean, denied, open_regular, out_of_fds, read_from_start, text};
use crate::parse::procs::{StatLine, parse_stat};

/// How many walks an io file that could not be opened for lack of permission is left alone.
const IO_RETRY_WALKS: u64 = 15;
/// Read size for one per-process file (a stat line is under 1 KiB).
const STEP: usize = 4096;

/// What the walker keeps between walks: a process's `Seen` by pid. Boxed, so that the
/// table's slots (about twice as many as processes) are pointers rather than a whole `Seen`
/// each: with the smaller read buffers (`read::read_from_start`), RSS at 1,000 processes went
/// from 7.9 to 7.5 MB (issue #27, docs/PERFORMANCE.md fourth round).
pub(super) type Table = HashMap<u32, Box<Seen>>;

/// A process as the last walk saw it.
pub(super) struct Seen {
    start: u64,
    /// The walk it was last seen at (0: not yet).
    pub(super) walk: u64,
    written: bool,
    stat: String,
    state: char,
    threads: u64,
    blkio: Option<u64>,
    /// utime + stime and majflt: what moves when another user's process is busy.
    cpu: u64,
    majflt: u64,
    /// stat field 24 (resident pages) as last read.
    pub(super) rss: u64,
    /// rss and majflt at the previous walk, when it was seen there (growth, faults/s).
    pub(super) before: Option<(u64, u64)>,
    /// Its comm is `fio`.
    pub(super) fio: bool,
    io: Io,
    sched: Option<String>,
    pub(super) fds: Option<Fds>,
    /// Its command line as last read, and the comm it was read under (an exec changes both):
    /// only for processes once written, so boxed.
    cmdline: Option<Box<(String, String)>>,
    /// The last walk its main thread was seen to run at (or it was first seen).
    pub(super) ran_at: u64,
    /// Its memory record's body as last read (`procs_memory`), and what it was read under.
    pub(super) memory: Option<Box<Cached>>,
}

impl Seen {
    /// majflt as last read (the memory records, `procs_memory`).
    pub(super) fn majflt(&self) -> u64 {
        self.majflt
    }

    /// The start time, state and last stat line (the memory records, `procs_memory`).
    pub(super) fn ident(&self) -> (u64, char, &str) {
        (self.start, self.state, &self.stat)
    }

    /// The comm of the stat line kept (empty before the first).
    fn stat_comm(&self) -> String {
        parse_stat(&self.stat).map(|f| f.comm).unwrap_or_default()
    }

    fn new(f: &StatLine) -> Self {
        Seen {
            start: f.starttime,
            walk: 0,
            written: false,
            stat: String::new(),
            state: f.state,
            threads: f.num_threads,
            blkio: None,
            cpu: f.cpu_ticks,
            majflt: f.majflt,
            rss: f.rss_pages,
            before: None,
            fio: f.comm == "fio",
            io: Io::Absent,
            sched: None,
            fds: None,
            cmdline: None,
            ran_at: 0,
            memory: None,
        }
    }
}

/// The fds a process keeps between walks (procfs only).
pub(super) struct Fds {
    stat: File,
    io: Option<File>,
    sched: Option<File>,
    /// The files of a process that is written (`extras`) or is a memory candidate
    /// (`procs_memory`), each opened at its first read and kept while the process holds fds.
    more: Vec<(Extra, File)>,
}

impl Fds {
    /// How many fds these are (the walker's budget counts fds, not processes).
    pub(super) fn count(&self) -> usize {
        1 + usize::from(self.io.is_some()) + usize::from(self.sched.is_some()) + self.more.len()
    }

    /// The `Extra` files kept, with their fd numbers (for tests).
    #[cfg(test)]
    pub(super) fn extra_fds(&self) -> Vec<(Extra, i32)> {
        use std::os::fd::AsRawFd;
        self.more.iter().map(|(x, f)| (*x, f.as_raw_fd())).collect()
    }

    /// The stat fd's number (for tests).
    #[cfg(test)]
    pub(super) fn stat_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.stat.as_raw_fd()
    }
}

/// A per-process file read only for the processes a walk writes or ranks by memory. The
/// same few processes are read walk after walk (on an idle machine the terminal, its shell and
/// pagewatch itself), so their fds are kept like stat's: issue 27 measured the walk's opens
/// and closes at an eighth of its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Extra {
    Wchan,
    Statm,
    Cgroup,
    Status,
    OomScoreAdj,
}

impl Extra {
    fn name(self) -> &'static str {
        match self {
            Extra::Wchan => "wchan",
            Extra::Statm => "statm",
            Extra::Cgroup => "cgroup",
            Extra::Status => "status",
            Extra::OomScoreAdj => "oom_score_adj",
        }
    }
}

/// The path of the cgroup v1 hierarchy that has the memory controller, from a
/// `/proc/PID/cgroup` text (`5:memory:/box`, or `7:cpu,memory:/box` where controllers share a
/// hierarchy); `None` where memory is on cgroup v2 or off.
fn v1_memory_path(cgroup: &str) -> Option<&str> {
    cgroup.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (id, controllers, path) = (f.next()?, f.next()?, f.next()?);
        (id != "0" && controllers.split(',').any(|c| c == "memory")).then_some(path)
    })
}

/// A process's io file at a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Io {
    Text(String),
    /// No permission, since walk N.
    Denied(u64),
    Absent,
}

impl Io {
    /// The same reading (the walk a refusal started at does not count).
    fn same(&self, o: &Io) -> bool {
        match (self, o) {
            (Io::Text(a), Io::Text(b)) => a == b,
            (Io::Denied(_), Io::Denied(_)) | (Io::Absent, Io::Absent) => true,
            _ => false,
        }
    }
}

/// What the keep rule compares between two walks' readings of one process.
#[derive(Debug, Clone, Copy)]
pub(super) struct Marks<'a> {
    pub(super) io: &'a Io,
    /// stat field 42.
    pub(super) blkio: Option<u64>,
    /// stat fields 14 + 15.
    pub(super) cpu: u64,
    /// stat field 12.
    pub(super) majflt: u64,
}

/// Whether a process seen at both walks was active in between: its io text or its field 42
/// moved; or, when its io is not readable (another user's process, not root: the io never
/// moves and field 42 is 0 without delay accounting), its CPU time or major faults moved.
pub(super) fn moved(before: Marks<'_>, now: Marks<'_>) -> bool {
    if !now.io.same(before.io) || now.blkio != before.blkio {
        return true;
    }
    matches!(now.io, Io::Denied(_)) && (now.cpu != before.cpu || now.majflt != before.majflt)
}

/// Whether a process first seen counted anything since it started: an io counter, field 42,
/// or (its io denied) CPU time or major faults.
fn did_something(now: Marks<'_>) -> bool {
    let io = match now.io {
        Io::Text(t) => crate::parse::procs::parse_io(t)
            .is_ok_and(|c| c != crate::parse::procs::IoCounters::default()),
        Io::Denied(_) => now.cpu > 0 || now.majflt > 0,
        Io::Absent => false,
    };
    io || now.blkio.is_some_and(|b| b > 0)
}

/// The longest command line a record carries, bytes.
pub(super) const CMDLINE_MAX: usize = 256;

/// A `/proc/PID/cmdline` as one line: the NULs between arguments as spaces, trailing NULs
/// dropped, newlines as `?`, cut at `CMDLINE_MAX` bytes (on a character boundary).
pub(super) fn cmdline_text(raw: &str) -> String {
    let mut s = raw
        .trim_end_matches('\0')
        .replace('\0', " ")
        .replace('\n', "?");
    if s.len() > CMDLINE_MAX {
        let mut end = CMDLINE_MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// What one walk's visits share.
pub(super) struct Visit<'a> {
    pub(super) root: &'a Path,
    pub(super) walk: u64,
    pub(super) procfs: bool,
    pub(super) delayacct_on: bool,
    /// The start time (boot-clock ticks) from which a process started after the previous
    /// walk; `None` on a first walk.
    pub(super) new_after: Option<u64>,
    /// On a first walk, the start time from which a process started within the last
    /// `procs::FIRST_WALK_WRITERS_NS`: all its `write_bytes` are that recent, so it is named
    /// a writer at once (`None` on other walks, where `new_after` serves).
    pub(super) recent_after: Option<u64>,
    pub(super) buf: &'a mut Vec<u8>,
    pub(super) out: &'a mut String,
    /// Fds held, and how many may be (`procs::fd_budget`; lowered when an open runs out).
    pub(super) held: &'a mut usize,
    pub(super) max_held: &'a mut usize,
    /// The pids whose comm is `fio`, in walk order.
    pub(super) fio: &'a mut Vec<u32>,
    /// The written processes whose `write_bytes` rose since the previous walk (or, born
    /// since, is not 0): `(growth, pid)`, for `writer_files`.
    pub(super) writers: &'a mut Vec<(u64, u32)>,
}

/// A process's files as a visit without held fds read them.
struct Fresh {
    sched: Option<(File, String)>,
    stat_fd: File,
    line: String,
    fields: StatLine,
}

impl Visit<'_> {
    /// Reads process `pid`, writes it when active, and keeps what it saw in `seen` (updated
    /// in place: the table lives across walks).
    pub(super) fn visit(&mut self, pid: u32, seen: &mut Table) {
        if let Some(e) = seen.get_mut(&pid) {
            match self.held_sched(e) {
                Some(sched) => self.visit_held(pid, e, sched),
                None => self.visit_fresh(pid, e),
            }
        } else if let Some(fresh) = self.read_fresh(pid) {
            let mut e = Box::new(Seen::new(&fresh.fields));
            self.take_fresh(pid, &mut e, fresh);
            seen.insert(pid, e);
        }
    }

    fn dir(&self, pid: u32) -> PathBuf {
        self.root.join(pid.to_string())
    }

    fn release(&mut self, e: &mut Seen) {
        if let Some(f) = e.fds.take() {
            *self.held -= f.count();
        }
    }

    /// Room for `n` more held fds.
    fn room(&self, n: usize) -> bool {
        self.procfs && *self.held + n <= *self.max_held
    }

    /// schedstat through the held fds: `Some(text)` (`Some(None)`: no schedstat fd), or
    /// `None` when there are no fds or a read failed (the fds are then released).
    #[allow(clippy::option_option)]
    fn held_sched(&mut self, e: &mut Seen) -> Option<Option<String>> {
        let fds = e.fds.as_ref()?;
        let Some(f) = &fds.sched else {
            return Some(None);
        };
        if let Ok(n) = read_from_start(f, self.buf, STEP, Some(Records::One)) {
            return Some(Some(text(&self.buf[..n]).into_owned()));
        }
        // Gone, or a pid reused: the fds name the old process.
        self.release(e);
        None
    }

    fn visit_held(&mut self, pid: u32, e: &mut Seen, sched: Option<String>) {
        let ran = sched.as_deref().is_none_or(|s| s.trim() == "0 0 0") || sched != e.sched;
        e.sched = sched;
        if ran {
            e.ran_at = self.walk;
        }
        if !ran && e.threads == 1 {
            let io = e.io.clone();
            return self.finish(pid, e, None, io);
        }
        // Another user's multi-threaded process: its io is not readable, so its stat (CPU
        // time, faults) is what shows its other threads at work. Any multi-threaded process:
        // its other threads can grow its memory (stat rss) while the main one sleeps.
        let stat = if ran || matches!(e.io, Io::Denied(_)) || e.threads > 1 {
            let read = e
                .fds
                .as_ref()
                .map(|f| read_from_start(&f.stat, self.buf, STEP, Some(Records::One)));
            let Some(Ok(n)) = read else {
                self.release(e);
                return self.visit_fresh(pid, e);
            };
            let line = clean(text(&self.buf[..n]).trim_end_matches('\n')).into_owned();
            match parse_stat(&line) {
                Ok(f) if f.starttime == e.start => Some((line, f)),
                _ => {
                    self.release(e);
                    return self.visit_fresh(pid, e);
                }
            }
        } else {
            None
        };
        let io = self.read_io(&self.dir(pid), e);
        self.finish(pid, e, stat, io);
    }

    /// A known process without usable held fds: read afresh; another start time is a new
    /// process under a reused pid, with no history. Gone: left for the walk's sweep.
    fn visit_fresh(&mut self, pid: u32, e: &mut Seen) {
        let Some(fresh) = self.read_fresh(pid) else {
            return;
        };
        if fresh.fields.starttime != e.start {
            self.release(e);
            *e = Seen::new(&fresh.fields);
        }
        self.take_fresh(pid, e, fresh);
    }

    /// Opens and reads schedstat and stat (schedstat first: a run after it shows at the next
    /// walk). schedstat only serves held fds (an unchanged one spares re-reading stat), so
    /// it is not read when the budget has no room for both.
    fn read_fresh(&mut self, pid: u32) -> Option<Fresh> {
        let dir = self.dir(pid);
        let sched = if self.room(2) {
            self.open_read(&dir.join("schedstat"))
                .ok()
                .map(|(f, n)| (f, text(&self.buf[..n]).into_owned()))
        } else {
            None
        };
        let (stat_fd, n) = self.open_read(&dir.join("stat")).ok()?;
        let line = clean(text(&self.buf[..n]).trim_end_matches('\n')).into_owned();
        let fields = parse_stat(&line).ok()?;
        Some(Fresh {
            sched,
            stat_fd,
            line,
            fields,
        })
    }

    /// Keeps the fds when the budget has room (else they close here: read without holding),
    /// reads io and finishes.
    fn take_fresh(&mut self, pid: u32, e: &mut Seen, fresh: Fresh) {
        e.ran_at = self.walk;
        let (sched_fd, sched_text) = fresh.sched.unzip();
        e.sched = sched_text;
        let need = 1 + usize::from(sched_fd.is_some());
        if e.fds.is_none() && self.room(need) {
            e.fds = Some(Fds {
                stat: fresh.stat_fd,
                io: None,
                sched: sched_fd,
                more: Vec::new(),
            });
            *self.held += need;
        }
        let io = self.read_io(&self.dir(pid), e);
        self.finish(pid, e, Some((fresh.line, fresh.fields)), io);
    }

    /// Decides whether the process is written, writes it, and remembers this walk's reading.
    fn finish(&mut self, pid: u32, e: &mut Seen, stat: Option<(String, StatLine)>, io: Io) {
        let (state, threads, blkio, cpu, majflt) = match &stat {
            Some((_, f)) => (f.state, f.num_threads, f.blkio_ticks, f.cpu_ticks, f.majflt),
            None => (e.state, e.threads, e.blkio, e.cpu, e.majflt),
        };
        let was_last = e.walk != 0 && e.walk + 1 == self.walk;
        e.before = was_last.then_some((e.rss, e.majflt));
        if let Some((_, f)) = &stat {
            e.rss = f.rss_pages;
        }
        let before = Marks {
            io: &e.io,
            blkio: e.blkio,
            cpu: e.cpu,
            majflt: e.majflt,
        };
        let now = Marks {
            io: &io,
            blkio,
            cpu,
            majflt,
        };
        // A process born since the previous walk: everything it counted is new.
        let born = e.walk == 0 && self.new_after.is_some_and(|t| e.start >= t);
        let write =
            state == 'D' || (was_last && moved(before, now)) || (born && did_something(now));
        if write {
            if was_last && !e.written {
                self.record('p', pid, e.start, &e.stat, &e.io);
            }
            let line = stat.as_ref().map_or(e.stat.as_str(), |(l, _)| l.as_str());
            self.record('P', pid, e.start, line, &io);
            self.extras(pid, e, threads);
            // A process written at the previous walk too had its command line there: the
            // model carries it (recordings stay small).
            let comm = stat.as_ref().map(|(_, f)| f.comm.as_str());
            let carried = was_last && e.written;
            self.cmdline(&self.dir(pid), e, comm, !carried);
        }
        // A first walk names the writers that started within the last seconds: one that
        // lives less than the walk period is gone by the next walk (issue 53's lab dd: 3.8 s,
        // first seen by a first walk, gone by the one a second later).
        let recent = e.walk == 0 && self.recent_after.is_some_and(|t| e.start >= t);
        if write || recent {
            self.note_writer(pid, e, &io, was_last, born || recent);
        }
        if let Some((line, f)) = stat {
            e.stat = line;
            e.fio = f.comm == "fio";
        }
        (e.state, e.threads, e.blkio, e.io) = (state, threads, blkio, io);
        (e.cpu, e.majflt) = (cpu, majflt);
        e.walk = self.walk;
        e.written = write;
        if e.fio {
            self.fio.push(pid);
        }
    }

    /// Notes `pid` among the walk's writers when its `write_bytes` rose since the previous
    /// walk's reading `e.io` (`was_last`), or is not 0 and it was born since (`born`).
    fn note_writer(&mut self, pid: u32, e: &Seen, io: &Io, was_last: bool, born: bool) {
        let Io::Text(now) = io else { return };
        let before = match &e.io {
            Io::Text(t) if was_last => super::writer_files::write_bytes(t),
            _ => born.then_some(0),
        };
        if let (Some(now), Some(before)) = (super::writer_files::write_bytes(now), before)
            && now > before
        {
            self.writers.push((now - before, pid));
        }
    }

    /// The io file, through the held fd when there is one.
    fn read_io(&mut self, dir: &Path, e: &mut Seen) -> Io {
        if let Io::Denied(since) = e.io
            && self.walk < since + IO_RETRY_WALKS
        {
            return e.io.clone();
        }
        let records = self.procfs.then_some(Records::One);
        if let Some(f) = e.fds.as_ref().and_then(|f| f.io.as_ref()) {
            let read = read_from_start(f, self.buf, STEP, records);
            if let Ok(n) = read {
                return Io::Text(text(&self.buf[..n]).into_owned());
            }
            if let Some(fds) = e.fds.as_mut() {
                fds.io = None;
                *self.held -= 1;
            }
            if read.is_err_and(|err| denied(&err)) {
                return Io::Denied(self.walk);
            }
        }
        match self.open_read(&dir.join("io")) {
            Ok((f, n)) => {
                if e.fds.is_some() && self.room(1) {
                    if let Some(fds) = e.fds.as_mut() {
                        fds.io = Some(f);
                    }
                    *self.held += 1;
                }
                Io::Text(text(&self.buf[..n]).into_owned())
            }
            Err(err) if denied(&err) => Io::Denied(self.walk),
            Err(_) => Io::Absent,
        }
    }

    fn record(&mut self, tag: char, pid: u32, starttime: u64, stat: &str, io: &Io) {
        use std::fmt::Write;
        let _ = writeln!(self.out, "{tag} {pid} {starttime}\nstat {stat}");
        match io {
            Io::Text(t) => {
                self.out.push_str(t);
                if !t.ends_with('\n') {
                    self.out.push('\n');
                }
            }
            Io::Denied(_) => self.out.push_str("io denied\n"),
            Io::Absent => self.out.push_str("io absent\n"),
        }
    }

    /// wchan, cgroup, statm and the threads' field 42 of a process being written.
    fn extras(&mut self, pid: u32, e: &mut Seen, threads: u64) {
        use std::fmt::Write;
        if let Some(w) = self.read_kept(pid, e, Extra::Wchan) {
            let _ = writeln!(self.out, "wchan {}", clean(w.trim_end()));
        }
        if let Some(m) = self.read_kept(pid, e, Extra::Statm) {
            let _ = writeln!(self.out, "statm {}", clean(m.trim_end()));
        }
        if let Some(cg) = self.read_kept(pid, e, Extra::Cgroup) {
            if let Some(path) = cg.lines().find_map(|l| l.strip_prefix("0::")) {
                let _ = writeln!(self.out, "cgroup {}", clean(path));
            }
            if let Some(path) = v1_memory_path(&cg) {
                let _ = writeln!(self.out, "memcg_v1 {}", clean(path));
            }
        }
        if self.delayacct_on && threads > 1 {
            let tasks = self.dir(pid).join("task");
            let sum = std::fs::read_dir(&tasks).ok().map(|d| {
                d.flatten()
                    .filter_map(|t| self.read_small(&t.path().join("stat")))
                    .filter_map(|s| parse_stat(&s).ok()?.blkio_ticks)
                    .sum::<u64>()
            });
            if let Some(sum) = sum {
                let _ = writeln!(self.out, "blkio_tasks {sum}");
            }
        }
    }

    /// The `cmdline` line of a process being written: read at its first record, and again
    /// when its comm changed (`comm`: this walk's, when its stat was re-read); written when
    /// `always` (the previous walk did not write the process) or when it changed.
    fn cmdline(&mut self, dir: &Path, e: &mut Seen, comm: Option<&str>, always: bool) {
        use std::fmt::Write;
        let comm = comm.map_or_else(|| e.stat_comm(), str::to_owned);
        let changed = e.cmdline.as_deref().is_none_or(|(c, _)| *c != comm);
        if changed {
            let line = self
                .read_small(&dir.join("cmdline"))
                .map(|t| cmdline_text(&t))
                .unwrap_or_default();
            e.cmdline = Some(Box::new((comm, line)));
        }
        if let Some((_, line)) = e.cmdline.as_deref()
            && !line.is_empty()
            && (always || changed)
        {
            let _ = writeln!(self.out, "cmdline {line}");
        }
    }

    /// One of a process's `Extra` files: through its held fd, or opened, read and kept when
    /// the process holds fds and the budget has room, else opened, read and closed. The
    /// process's identity was checked at this walk's visit (a held schedstat or stat read
    /// fails, or its start time differs, once the pid names another process); a held read
    /// that fails drops that fd and opens afresh. `None` when the file cannot be read.
    pub(super) fn read_kept(&mut self, pid: u32, e: &mut Seen, which: Extra) -> Option<String> {
        if let Some(fds) = e.fds.as_mut()
            && let Some(i) = fds.more.iter().position(|(w, _)| *w == which)
        {
            if let Ok(n) = read_from_start(&fds.more[i].1, self.buf, STEP, Some(Records::One)) {
                return Some(text(&self.buf[..n]).into_owned());
            }
            fds.more.swap_remove(i);
            *self.held -= 1;
        }
        let (f, n) = self.open_read(&self.dir(pid).join(which.name())).ok()?;
        let read = text(&self.buf[..n]).into_owned();
        if self.room(1)
            && let Some(fds) = e.fds.as_mut()
        {
            fds.more.push((which, f));
            *self.held += 1;
        }
        Some(read)
    }

    /// A file opened, read and closed; `None` when it cannot be.
    pub(super) fn read_small(&mut self, path: &Path) -> Option<String> {
        let (_, n) = self.open_read(path).ok()?;
        Some(text(&self.buf[..n]).into_owned())
    }

    /// Opens and reads a per-process file whole. On procfs the file is known to be regular
    /// and one record (single_open); elsewhere (a captured tree) it is checked like any other.
    /// Out of fds all the same (something else in pagewatch holds more than the reserve):
    /// the walker holds no more from then on.
    fn open_read(&mut self, path: &Path) -> std::io::Result<(File, usize)> {
        let f = if self.procfs {
            File::open(path)
        } else {
            open_regular(path)
        };
        let f = f.inspect_err(|e| {
            if out_of_fds(e) {
                *self.max_held = (*self.max_held).min(*self.held);
            }
        })?;
        let n = read_from_start(&f, self.buf, STEP, self.procfs.then_some(Records::One))?;
        Ok((f, n))
    }
}

/// A memory record's `mem`, `oom_score_adj` and `wchan` lines, and what they were read under.
pub(super) struct Cached {
    pub(super) walk: u64,
    pub(super) state: char,
    pub(super) rss: u64,
    pub(super) majflt: u64,
    pub(super) lines: String,
}
