//! The dirty-files scan (spec §15.4): which files hold the dirty and writeback pages,
//! measured with cachestat(2) on the open regular files of the processes the model names
//! (`Wants::dirty_files`, the top dirtiers), and again, by path, on the files that held dirty
//! pages in the last `REMEMBER_NS` (their writer may have exited: `cp` returns long before
//! its data is on disk). The `names::DIRTY_FILES` pseudo-file carries the records.
//!
//! Owns: when a scan runs, which fds it opens, the files it remembers and the pseudo-file's
//! text. Must not touch: ranking, bytes, device names (`model::dirty_files`).
//!
//! Cost: at most `MAX_FILES` cachestat calls (each O(cached folios) in the kernel) and as
//! many opens every `SCAN_EVERY_NS`, only while the model names a dirtier or a remembered
//! file still had dirty pages; nothing otherwise. Shared memory (tmpfs, ramfs, hugetlbfs)
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
use crate::Result;
use crate::sample::names;

/// At most this many files measured per scan.
pub(super) const MAX_FILES: usize = 20;
/// A scan every 5 s.
const SCAN_EVERY_NS: u64 = 5_000_000_000;
/// A file that held dirty pages is re-measured for this long after (60 s).
const REMEMBER_NS: u64 = 60_000_000_000;
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
    /// cachestat answered ENOSYS: no scan again.
    no_cachestat: bool,
    text: Option<String>,
}

impl DirtyFiles {
    pub fn new(proc_root: &Path) -> Self {
        Self {
            proc_root: proc_root.to_owned(),
            last_scan_ns: None,
            remembered: HashMap::new(),
            no_cachestat: false,
            text: None,
        }
    }

    /// One scan at `now`: the fds of `pids`, then the remembered files not seen among them.
    fn scan(&mut self, pids: &[u32], now: u64) {
        let mut out: Vec<Measured> = Vec::new();
        let mut denied = 0u32;
        let mut error = None;
        'pids: for &pid in pids {
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
                if !worth_opening(&target) {
                    continue;
                }
                match Self::measure(&e.path(), &out) {
                    Ok(Some((dev, ino, cs))) => out.push(Measured {
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
        let f = File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOATIME)
            .open(path)
            .or_else(|_| {
                // O_NOATIME needs ownership: without it.
                File::options()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                    .open(path)
            })?;
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

/// Regular files only: paths, not `socket:[…]`, `pipe:[…]`, `anon_inode:…`, nor devices,
/// pseudo filesystems or memfds.
fn worth_opening(target: &str) -> bool {
    target.starts_with('/')
        && !["/dev/", "/proc/", "/sys/", "/memfd:"]
            .iter()
            .any(|p| target.starts_with(p))
}

fn comm_of(proc_root: &Path, pid: u32) -> String {
    std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm"))
        .map_or_else(|_| "?".to_owned(), |c| c.trim_end().to_owned())
}

/// A tab or newline as `?`, so a record stays one line.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n'], "?")
}

impl<'a> Collect<'a> for DirtyFiles {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        let pids = &pass.wants.dirty_files;
        let active = !pids.is_empty() || !self.remembered.is_empty() || self.no_cachestat;
        if !active {
            self.text = None;
            self.last_scan_ns = None;
            return Ok(());
        }
        let due = self
            .last_scan_ns
            .is_none_or(|t| pass.mono_ns.saturating_sub(t) >= SCAN_EVERY_NS);
        if due && self.no_cachestat {
            self.text = Some(format!(
                "state no-cachestat\nscan {}\ndenied 0\n",
                pass.mono_ns
            ));
            self.last_scan_ns = Some(pass.mono_ns);
        } else if due {
            self.scan(&pids.clone(), pass.mono_ns);
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
