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
//! run), and io is not re-read. Without held fds, or where schedstat reads `0 0 0` (no
//! CONFIG_SCHED_INFO), everything is read every walk. A carried reading (`p`) may then hold a
//! stat line from an earlier walk whose figures are the same.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::read::{Records, clean, denied, open_regular, read_from_start, text};
use crate::parse::procs::{StatLine, parse_stat};

/// How many walks an io file that could not be opened for lack of permission is left alone.
const IO_RETRY_WALKS: u64 = 15;
/// Read size for one per-process file (a stat line is under 1 KiB).
const STEP: usize = 4096;

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
    io: Io,
    sched: Option<String>,
    pub(super) fds: Option<Fds>,
}

/// The fds a process keeps between walks (procfs only).
pub(super) struct Fds {
    stat: File,
    io: Option<File>,
    sched: Option<File>,
}

/// A process's io file at a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Io {
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

/// What one walk's visits share.
pub(super) struct Visit<'a> {
    pub(super) root: &'a Path,
    pub(super) walk: u64,
    pub(super) procfs: bool,
    pub(super) delayacct_on: bool,
    pub(super) buf: &'a mut Vec<u8>,
    pub(super) out: &'a mut String,
    pub(super) held: &'a mut usize,
    pub(super) max_held: usize,
}

impl Visit<'_> {
    /// Reads process `pid`, writes it when active, and keeps what it saw in `seen`.
    pub(super) fn visit(&mut self, pid: u32, seen: &mut HashMap<u32, Seen>) {
        let mut entry = seen.remove(&pid);
        let sched = entry.as_mut().and_then(|e| self.held_sched(e));
        match (entry, sched) {
            (Some(e), Some(sched)) => self.visit_held(pid, e, sched, seen),
            (entry, _) => self.visit_fresh(pid, entry, seen),
        }
    }

    fn dir(&self, pid: u32) -> PathBuf {
        self.root.join(pid.to_string())
    }

    fn release(&mut self, e: &mut Seen) {
        if e.fds.take().is_some() {
            *self.held -= 1;
        }
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

    fn visit_held(
        &mut self,
        pid: u32,
        mut e: Seen,
        sched: Option<String>,
        seen: &mut HashMap<u32, Seen>,
    ) {
        let ran = sched.as_deref().is_none_or(|s| s.trim() == "0 0 0") || sched != e.sched;
        e.sched = sched;
        if !ran && e.threads == 1 {
            let io = e.io.clone();
            return self.finish(pid, e, None, io, seen);
        }
        let stat = if ran {
            let read = e
                .fds
                .as_ref()
                .map(|f| read_from_start(&f.stat, self.buf, STEP, Some(Records::One)));
            let Some(Ok(n)) = read else {
                self.release(&mut e);
                return self.visit_fresh(pid, Some(e), seen);
            };
            let line = clean(text(&self.buf[..n]).trim_end_matches('\n')).into_owned();
            match parse_stat(&line) {
                Ok(f) if f.starttime == e.start => Some((line, f)),
                _ => {
                    self.release(&mut e);
                    return self.visit_fresh(pid, Some(e), seen);
                }
            }
        } else {
            None
        };
        let io = self.read_io(&self.dir(pid), &mut e);
        self.finish(pid, e, stat, io, seen);
    }

    fn visit_fresh(&mut self, pid: u32, entry: Option<Seen>, seen: &mut HashMap<u32, Seen>) {
        let dir = self.dir(pid);
        // schedstat first: a run after it shows at the next walk.
        let sched = self
            .open_read(&dir.join("schedstat"))
            .ok()
            .map(|(f, n)| (f, text(&self.buf[..n]).into_owned()));
        let Ok((stat_fd, n)) = self.open_read(&dir.join("stat")) else {
            return;
        };
        let line = clean(text(&self.buf[..n]).trim_end_matches('\n')).into_owned();
        let Ok(fields) = parse_stat(&line) else {
            return;
        };
        // Another start time: a new process under a reused pid, with no history.
        let entry = entry.filter(|e| e.start == fields.starttime);
        let mut e = entry.unwrap_or_else(|| Seen {
            start: fields.starttime,
            walk: 0,
            written: false,
            stat: String::new(),
            state: fields.state,
            threads: fields.num_threads,
            blkio: None,
            io: Io::Absent,
            sched: None,
            fds: None,
        });
        let (sched_fd, sched_text) = sched.unzip();
        e.sched = sched_text;
        if self.procfs && e.fds.is_none() && *self.held < self.max_held {
            e.fds = Some(Fds {
                stat: stat_fd,
                io: None,
                sched: sched_fd,
            });
            *self.held += 1;
        }
        let io = self.read_io(&dir, &mut e);
        self.finish(pid, e, Some((line, fields)), io, seen);
    }

    /// Decides whether the process is written, writes it, and remembers this walk's reading.
    fn finish(
        &mut self,
        pid: u32,
        mut e: Seen,
        stat: Option<(String, StatLine)>,
        io: Io,
        seen: &mut HashMap<u32, Seen>,
    ) {
        let (state, threads, blkio) = match &stat {
            Some((_, f)) => (f.state, f.num_threads, f.blkio_ticks),
            None => (e.state, e.threads, e.blkio),
        };
        let was_last = e.walk != 0 && e.walk + 1 == self.walk;
        let changed = was_last && (!io.same(&e.io) || blkio != e.blkio);
        let write = state == 'D' || changed;
        if write {
            if was_last && !e.written {
                self.record('p', pid, e.start, &e.stat, &e.io);
            }
            let line = stat.as_ref().map_or(e.stat.as_str(), |(l, _)| l.as_str());
            let line = line.to_owned();
            self.record('P', pid, e.start, &line, &io);
            self.extras(&self.dir(pid), threads);
        }
        if let Some((line, _)) = stat {
            e.stat = line;
        }
        (e.state, e.threads, e.blkio, e.io) = (state, threads, blkio, io);
        e.walk = self.walk;
        e.written = write;
        seen.insert(pid, e);
    }

    /// The io file, through the held fd when there is one.
    fn read_io(&mut self, dir: &Path, e: &mut Seen) -> Io {
        if let Io::Denied(since) = e.io
            && self.walk < since + IO_RETRY_WALKS
        {
            return e.io.clone();
        }
        let records = self.procfs.then_some(Records::One);
        if let Some(f) = e.fds.as_mut().and_then(|f| f.io.as_ref()) {
            match read_from_start(f, self.buf, STEP, records) {
                Ok(n) => return Io::Text(text(&self.buf[..n]).into_owned()),
                Err(err) if denied(&err) => {
                    if let Some(f) = e.fds.as_mut() {
                        f.io = None;
                    }
                    return Io::Denied(self.walk);
                }
                Err(_) => {
                    if let Some(f) = e.fds.as_mut() {
                        f.io = None;
                    }
                }
            }
        }
        match self.open_read(&dir.join("io")) {
            Ok((f, n)) => {
                if let Some(fds) = e.fds.as_mut() {
                    fds.io = Some(f);
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

    /// wchan, cgroup and the threads' field 42 of a process being written.
    fn extras(&mut self, dir: &Path, threads: u64) {
        use std::fmt::Write;
        if let Some(w) = self.read_small(&dir.join("wchan")) {
            let _ = writeln!(self.out, "wchan {}", clean(w.trim_end()));
        }
        if let Some(cg) = self.read_small(&dir.join("cgroup"))
            && let Some(path) = cg.lines().find_map(|l| l.strip_prefix("0::"))
        {
            let _ = writeln!(self.out, "cgroup {}", clean(path));
        }
        if self.delayacct_on && threads > 1 {
            let tasks = dir.join("task");
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

    /// A file opened, read and closed; `None` when it cannot be.
    fn read_small(&mut self, path: &Path) -> Option<String> {
        let (_, n) = self.open_read(path).ok()?;
        Some(text(&self.buf[..n]).into_owned())
    }

    /// Opens and reads a per-process file whole. On procfs the file is known to be regular
    /// and one record (single_open); elsewhere (a captured tree) it is checked like any other.
    fn open_read(&mut self, path: &Path) -> std::io::Result<(File, usize)> {
        let f = if self.procfs {
            File::open(path)?
        } else {
            open_regular(path)?
        };
        let n = read_from_start(&f, self.buf, STEP, self.procfs.then_some(Records::One))?;
        Ok((f, n))
    }
}
