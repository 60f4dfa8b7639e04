//! The dirty-files scan (spec §15.4): which files hold the dirty and writeback pages,
//! measured with cachestat(2), by path, on the files the process walk found open for writing
//! by the processes whose `write_bytes` rose (`names::WRITER_FILES`, `source::writer_files`:
//! a new one is measured in the walk's own sample, scan due or not, since a short writer is
//! gone by the next), on the regular files open for writing of the processes the model names
//! (`Wants::dirty_files`, the top dirtiers), and again, by path, on the files that held dirty
//! pages in the last `REMEMBER_NS` (their writer may have exited: `cp` returns long before
//! its data is on disk). The `names::DIRTY_FILES` pseudo-file carries the records.
//!
//! Owns: when a scan runs, which fds it opens, the files it remembers and the pseudo-file's
//! text. Must not touch: ranking, bytes, device names (`model::dirty_files`).
//!
//! Cost: at most `MAX_FILES` cachestat calls (each O(cached folios) in the kernel) and as
//! many opens every `SCAN_EVERY_NS`, only while the model names a dirtier or a remembered
//! file still had dirty pages; nothing otherwise. Between scans the files the last one
//! listed (at most `MAX_FILES`, those with dirty or writeback pages) are measured again at
//! every sample, one open, fstat and cachestat each (`refresh`): their bytes follow the
//! device's as it drains, and a file written back leaves the table at the next sample. That
//! refresh is paced by its own CPU cost (`REFRESH_SPACING`: 20 % of one CPU at most), which
//! only very large cached files reach. Shared memory (tmpfs, ramfs, hugetlbfs)
//! is never written back to a disk: skipped. Without root only the user's own processes'
//! fds are listed (and cachestat answers EPERM on files the caller may neither write nor
//! own, counted as `denied`). ENOSYS (before 6.5) stops the scan and says so.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::collect::{Collect, Pass};
use super::writer_files::{Writer, comm_of, worth_opening};
use crate::Result;
use crate::sample::names;

/// At most this many files measured per scan.
pub(super) const MAX_FILES: usize = 20;
/// A scan every 5 s.
const SCAN_EVERY_NS: u64 = 5_000_000_000;
/// A file that held dirty pages is re-measured for this long after (60 s).
const REMEMBER_NS: u64 = 60_000_000_000;
/// The refresh of the listed files runs again once this many times its last CPU cost has
/// passed (20 % of one CPU at most). cachestat walks the file's page cache, shadow entries
/// included: microseconds on a file of a few MB, 26-31 ms on a 4 GiB file under memory
/// pressure (docs/PERFORMANCE.md, issue 27's thirteenth round); twenty of those would take
/// half a CPU every tick, paced here to one refresh every 2.6 s. Not tighter: under TCG
/// (the lab) one 200 MB file's refresh may come near 50 ms, and a refresh skipped there
/// leaves the file a sample behind its device (at 20 times, the lab once read 120 MiB in
/// the file against vda's 104, likely that).
const REFRESH_SPACING: u64 = 5;
/// Filesystems whose pages never go to a disk (`statfs` f_type): tmpfs/shmem, ramfs,
/// hugetlbfs.
const NOT_WRITTEN_BACK: [i64; 3] = [0x0102_1994, 0x8584_58f6, 0x9584_58f6];

/// A file found with dirty pages, kept for `REMEMBER_NS`.
struct Seen {
    path: PathBuf,
    pid: u32,
    comm: String,
    last_dirty_ns: u64,
}

/// One measured file.
struct Measured {
    /// What it is opened by to be measured again (`refresh`): the owner's
    /// `/proc/PID/fd/N` when found through it, else its path.
    open: PathBuf,
    pid: u32,
    dev: u64,
    ino: u64,
    cs: super::Cachestat,
    comm: String,
    path: String,
    by_path: bool,
}

/// The dirty-files collector.
pub(super) struct DirtyFiles {
    proc_root: PathBuf,
    last_scan_ns: Option<u64>,
    remembered: HashMap<(u64, u64), Seen>,
    /// The files the last scan or refresh listed (dirty or writeback pages), measured again
    /// at every sample between scans.
    listed: Vec<Measured>,
    /// When `refresh_listed` last measured them: a scan in the same sample starts from
    /// those figures, read beside the device's.
    refreshed_ns: Option<u64>,
    /// The last refresh's CPU cost, ns (`REFRESH_SPACING`).
    refresh_cost_ns: u64,
    /// cachestat answered ENOSYS: no scan again.
    no_cachestat: bool,
    /// Whether the kernel lacks cachestat (ENOSYS), asked once at the first scan:
    /// `lacks_cachestat`, or a test's stand-in.
    probe: Option<fn() -> bool>,
    text: Option<String>,
}

/// Whether this kernel lacks cachestat(2) (ENOSYS, before 6.5), by calling it on `/`: the
/// syscall number is looked up before the fd, so a kernel that has it answers anything but
/// ENOSYS (a directory's page cache: zeros).
fn lacks_cachestat() -> bool {
    File::open("/").is_ok_and(|f| {
        super::cachestat(f.as_fd()).is_err_and(|e| e.raw_os_error() == Some(libc::ENOSYS))
    })
}

impl DirtyFiles {
    pub fn new(proc_root: &Path) -> Self {
        Self {
            proc_root: proc_root.to_owned(),
            last_scan_ns: None,
            remembered: HashMap::new(),
            listed: Vec::new(),
            refreshed_ns: None,
            refresh_cost_ns: 0,
            no_cachestat: false,
            probe: Some(lacks_cachestat),
            text: None,
        }
    }

    /// One scan at `now`: the walk's `writers`' files by path, the fds of `pids` open for
    /// writing, then the remembered files not seen among them.
    fn scan(&mut self, pids: &[u32], writers: &[Writer<'_>], now: u64) {
        // The listed files measured early in this sample (`refresh_listed`) are kept as
        // measured then: the scan adds the others.
        let mut out: Vec<Measured> = if self.refreshed_ns == Some(now) {
            std::mem::take(&mut self.listed)
        } else {
            Vec::new()
        };
        let mut denied = 0u32;
        let mut error = None;
        // Asked once, not only when a file is opened: a writer gone before the scan (5.10 in
        // the lab: dd exited 5 s before the first scan) left no fd, cachestat was never
        // called, and the empty table said "ok", not that cachestat is missing.
        self.probe_once();
        if self.no_cachestat {
            self.text = Some(self.render(&out, now, denied));
            return;
        }
        self.measure_writers(writers, &mut out, &mut denied);
        'pids: for &pid in pids {
            if self.no_cachestat {
                break;
            }
            let comm = comm_of(&self.proc_root, pid);
            let fd_dir = self.proc_root.join(pid.to_string()).join("fd");
            let Ok(entries) = std::fs::read_dir(&fd_dir) else {
                continue;
            };
            for e in entries.flatten() {
                if out.len() >= MAX_FILES {
                    break 'pids;
                }
                let Ok(target) = std::fs::read_link(e.path()) else {
                    continue;
                };
                let target = target.to_string_lossy().into_owned();
                if !worth_opening(&target) || !self.writable(pid, &e.file_name()) {
                    continue;
                }
                match Self::measure(&e.path(), &out) {
                    Ok(Some((dev, ino, cs))) => out.push(Measured {
                        open: e.path(),
                        pid,
                        dev,
                        ino,
                        cs,
                        comm: comm.clone(),
                        path: target,
                        by_path: false,
                    }),
                    Ok(None) => {}
                    Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                        self.no_cachestat = true;
                        break 'pids;
                    }
                    Err(e) => {
                        denied += 1;
                        if e.raw_os_error() != Some(libc::EPERM) {
                            error.get_or_insert_with(|| e.to_string());
                        }
                    }
                }
            }
        }
        if !self.no_cachestat {
            self.measure_remembered(&mut out, now);
        }
        self.remember(&out, now);
        self.text = Some(self.render(&out, now, denied));
        out.retain(|m| m.cs.nr_dirty + m.cs.nr_writeback > 0);
        self.listed = out;
    }

    /// Early in the sample at `now`, right after the device figures (`source::bdi_stats`):
    /// the listed files measured again (`refresh`), so that a file's bytes and its device's
    /// are read within moments of each other. After the process walk, a scan (when due)
    /// starts from these figures. In the lab (a device writing back 8 MiB at a time at
    /// 20 MB/s) the file read after the walk was 120 MiB against vda's 128 MiB.
    /// Paced by its own cost (`REFRESH_SPACING`): between refreshes the last figures serve.
    pub fn refresh_listed(&mut self, now: u64) {
        let due = self.refreshed_ns.is_none_or(|t| {
            now >= t.saturating_add(self.refresh_cost_ns.saturating_mul(REFRESH_SPACING))
        });
        if !self.listed.is_empty() && due {
            let cpu0 = super::thread_cpu_ns();
            self.refresh(now);
            self.refresh_cost_ns = super::thread_cpu_ns().saturating_sub(cpu0);
            self.refreshed_ns = Some(now);
        }
    }

    /// Between scans, the listed files measured again (at most `MAX_FILES`, one open and
    /// one cachestat each), so their bytes follow the device's as it drains and a file
    /// written back leaves the table at the next sample, not at the next scan 5 s on
    /// (issue 53: the lab's file read 140 MB for 5 s while vda's fell from 147 to 50 MB). A
    /// file whose owner closed it or exited is measured by its path from then on (`x`); one
    /// that cannot be opened, or whose path now names another file, is dropped.
    fn refresh(&mut self, now: u64) {
        let mut listed = std::mem::take(&mut self.listed);
        let proc_root = &self.proc_root;
        listed.retain_mut(|m| {
            let again = Self::remeasure(&m.open, (m.dev, m.ino)).or_else(|| {
                let path = Path::new(m.path.as_str());
                (m.open != path)
                    .then(|| Self::remeasure(path, (m.dev, m.ino)))
                    .flatten()
                    .inspect(|_| {
                        path.clone_into(&mut m.open);
                        m.by_path = true;
                    })
            });
            // A writer's file found by its path (`measure_writers`): exited when its pid is.
            if !m.by_path && m.open == Path::new(m.path.as_str()) {
                m.by_path = !proc_root.join(m.pid.to_string()).exists();
            }
            again.is_some_and(|cs| {
                m.cs = cs;
                cs.nr_dirty + cs.nr_writeback > 0
            })
        });
        self.remember(&listed, now);
        let denied = self.denied_last();
        self.text = Some(self.render(&listed, now, denied));
        self.listed = listed;
    }

    /// The last scan's count of files not measured (carried by its refreshes).
    fn denied_last(&self) -> u32 {
        self.text
            .as_deref()
            .and_then(|t| t.lines().find_map(|l| l.strip_prefix("denied ")))
            .and_then(|d| d.parse().ok())
            .unwrap_or(0)
    }

    /// `path`'s cachestat when it still names the file `key` (`(dev, ino)`).
    fn remeasure(path: &Path, key: (u64, u64)) -> Option<super::Cachestat> {
        let f = open_quietly(path).ok()?;
        let meta = f.metadata().ok()?;
        ((meta.dev(), meta.ino()) == key)
            .then(|| super::cachestat(f.as_fd()).ok())
            .flatten()
    }

    /// Asks the kernel, the first time, whether it has cachestat.
    fn probe_once(&mut self) {
        if let Some(probe) = self.probe.take() {
            self.no_cachestat = probe();
        }
    }

    /// Whether fd `fd` of `pid` is open for writing (its fdinfo's flags): a file only read
    /// is not what this process dirtied.
    fn writable(&self, pid: u32, fd: &std::ffi::OsStr) -> bool {
        let info = self.proc_root.join(pid.to_string()).join("fdinfo").join(fd);
        std::fs::read_to_string(info).is_ok_and(|i| super::writer_files::open_for_writing(&i))
    }

    /// The files the walk found open for writing (`names::WRITER_FILES`), by path, within
    /// `MAX_FILES`; `by_path` (shown as exited) when their writer is gone.
    fn measure_writers(
        &mut self,
        writers: &[Writer<'_>],
        out: &mut Vec<Measured>,
        denied: &mut u32,
    ) {
        for w in writers {
            if out.len() >= MAX_FILES {
                break;
            }
            match Self::measure(Path::new(w.path), out) {
                Ok(Some((dev, ino, cs))) => out.push(Measured {
                    open: PathBuf::from(w.path),
                    pid: w.pid,
                    dev,
                    ino,
                    cs,
                    comm: w.comm.to_owned(),
                    path: w.path.to_owned(),
                    by_path: !self.proc_root.join(w.pid.to_string()).exists(),
                }),
                Ok(None) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                    self.no_cachestat = true;
                    return;
                }
                // Gone or renamed since the walk (a ` (deleted)` path): not counted.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => *denied += 1,
            }
        }
    }

    /// The remembered files the fds did not cover, by path, within `MAX_FILES`.
    fn measure_remembered(&mut self, out: &mut Vec<Measured>, now: u64) {
        self.remembered
            .retain(|_, s| now.saturating_sub(s.last_dirty_ns) < REMEMBER_NS);
        let mut keys: Vec<(u64, u64)> = self.remembered.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            if out.len() >= MAX_FILES {
                break;
            }
            if out.iter().any(|m| (m.dev, m.ino) == key) {
                continue;
            }
            let s = &self.remembered[&key];
            match Self::measure(&s.path, out) {
                // The same file (a path can be replaced): else it is forgotten.
                Ok(Some((dev, ino, cs))) if (dev, ino) == key => out.push(Measured {
                    open: s.path.clone(),
                    pid: s.pid,
                    dev,
                    ino,
                    cs,
                    comm: s.comm.clone(),
                    path: s.path.to_string_lossy().into_owned(),
                    by_path: true,
                }),
                _ => {
                    self.remembered.remove(&key);
                }
            }
        }
    }

    /// Opens `path` read-only without blocking and measures it: `None` for what is not a
    /// regular file on a written-back filesystem, or a file `out` already holds.
    fn measure(
        path: &Path,
        out: &[Measured],
    ) -> std::io::Result<Option<(u64, u64, super::Cachestat)>> {
        let f = open_quietly(path)?;
        let meta = f.metadata()?;
        if !meta.is_file()
            || out
                .iter()
                .any(|m| (m.dev, m.ino) == (meta.dev(), meta.ino()))
        {
            return Ok(None);
        }
        let fs = rustix::fs::fstatfs(f.as_fd())?;
        #[allow(clippy::unnecessary_cast, reason = "f_type's type differs by target")]
        if NOT_WRITTEN_BACK.contains(&(fs.f_type as i64)) {
            return Ok(None);
        }
        let cs = super::cachestat(f.as_fd())?;
        Ok(Some((meta.dev(), meta.ino(), cs)))
    }

    fn remember(&mut self, out: &[Measured], now: u64) {
        for m in out.iter().filter(|m| m.cs.nr_dirty + m.cs.nr_writeback > 0) {
            let s = self
                .remembered
                .entry((m.dev, m.ino))
                .or_insert_with(|| Seen {
                    path: PathBuf::from(&m.path),
                    pid: m.pid,
                    comm: m.comm.clone(),
                    last_dirty_ns: now,
                });
            s.last_dirty_ns = now;
        }
    }

    fn render(&self, out: &[Measured], now: u64, denied: u32) -> String {
        let mut t = String::new();
        let state = if self.no_cachestat {
            "no-cachestat"
        } else {
            "ok"
        };
        let _ = writeln!(t, "state {state}\nscan {now}\ndenied {denied}");
        for m in out.iter().filter(|m| m.cs.nr_dirty + m.cs.nr_writeback > 0) {
            let (maj, min) = (libc::major(m.dev), libc::minor(m.dev));
            let _ = writeln!(
                t,
                "{} {} {maj}:{min} {} {} {} {} {}\t{}",
                if m.by_path { 'x' } else { 'f' },
                m.pid,
                m.ino,
                m.cs.nr_cache,
                m.cs.nr_dirty,
                m.cs.nr_writeback,
                clean(&m.comm),
                clean(&m.path)
            );
        }
        t
    }
}

/// `path` opened read-only without blocking, and without touching its atime when allowed.
fn open_quietly(path: &Path) -> std::io::Result<File> {
    File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOATIME)
        .open(path)
        .or_else(|_| {
            // O_NOATIME needs ownership: without it.
            File::options()
                .read(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(path)
        })
}

/// A tab or newline as `?`, so a record stays one line.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n'], "?")
}

impl<'a> Collect<'a> for DirtyFiles {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        // Before the gate: a kernel without cachestat says so in every sample, writers or
        // not, so the empty table says why.
        self.probe_once();
        let pids = &pass.wants.dirty_files;
        let writers = pass
            .fresh(names::WRITER_FILES)
            .map(super::writer_files::parse)
            .unwrap_or_default();
        let active = !pids.is_empty()
            || !writers.is_empty()
            || !self.remembered.is_empty()
            || self.no_cachestat;
        if !active {
            self.text = None;
            self.listed.clear();
            self.last_scan_ns = None;
            return Ok(());
        }
        // A writer's file not yet remembered is measured at once: its writer may be gone
        // by the next scan (the walk comes at most every 2 s).
        let new_writer = writers.iter().any(|w| {
            !self
                .remembered
                .values()
                .any(|s| s.path == Path::new(w.path))
        });
        let due = new_writer
            || self
                .last_scan_ns
                .is_none_or(|t| pass.mono_ns.saturating_sub(t) >= SCAN_EVERY_NS);
        if due && self.no_cachestat {
            self.text = Some(format!(
                "state no-cachestat\nscan {}\ndenied 0\n",
                pass.mono_ns
            ));
            self.last_scan_ns = Some(pass.mono_ns);
        } else if due {
            self.scan(&pids.clone(), &writers, pass.mono_ns);
            self.last_scan_ns = Some(pass.mono_ns);
        }
        let this: &'a Self = self;
        if let Some(t) = &this.text {
            pass.put(names::DIRTY_FILES, std::borrow::Cow::Borrowed(t));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "dirty_files_tests.rs"]
mod tests;
