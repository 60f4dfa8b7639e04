//! Pairing with fio processes pagewatch did not start: find them under /proc, group workers
//! under their main process, and turn successive scans into per-process IO rates.
//!
//! Owns: `scan` (reads /proc/PID/comm of every process, then /proc/PID/{stat,cmdline,io,fd} of
//! fio ones; read-only, never signals) and `scan_pids` (the same from the pids a process walk
//! found named fio: no comm read; issue #27), the pure `group` of found processes, and `FioPairing`,
//! which keeps the previous counters and is given the elapsed time by the caller (no clock in
//! here). A process is fio when its comm is `fio` (fio's workers keep that name); a worker is
//! a fio process whose parent is a fio process. A fio binary started under another name (a
//! renamed copy or symlink) is not found: checking every process's /proc/PID/exe for it, as
//! well as reading its stat, made a scan cost several times as much. Target files are the
//! regular files among fds 3 and up (`foreign_files` picks the data files among them). Must
//! not touch: the processes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::pid_io::{IoCounters, IoRates, parse_cmdline, parse_io, parse_stat};

/// One regular file a fio process has open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFile {
    /// Where the fd points (may end in ` (deleted)`).
    pub path: PathBuf,
    /// `PROC/PID/fd/N`: opens the very file, even when deleted or in another mount namespace.
    pub via: PathBuf,
}

/// One fio process (the main one or a worker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FioProc {
    /// Its pid.
    pub pid: u32,
    /// Its parent's pid.
    pub ppid: u32,
    /// R, S, D (waiting for IO), …
    pub state: char,
    /// /proc/PID/io, when readable (same uid or root).
    pub io: Option<IoCounters>,
    /// Its stat's reaped-children marks (`pid_io::StatFields::reaped_marks`).
    pub reaped_marks: u64,
    /// Regular files open on fds 3 and up.
    pub files: Vec<OpenFile>,
}

/// A fio run: its main process and its workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignFio {
    /// The main process's pid.
    pub pid: u32,
    /// The main process's parent.
    pub ppid: u32,
    /// The main process's command line, exactly.
    pub cmdline: Vec<String>,
    /// The main process first, then workers by pid.
    pub procs: Vec<FioProc>,
    /// The main process's working directory (`/proc/PID/cwd`), for the relative paths of its
    /// options; `None` when unreadable.
    pub cwd: Option<PathBuf>,
}

impl ForeignFio {
    /// The regular files any of its processes has open, by path, without repeats.
    #[must_use]
    pub fn files(&self) -> Vec<&OpenFile> {
        let mut seen = BTreeSet::new();
        self.procs
            .iter()
            .flat_map(|p| &p.files)
            .filter(|f| seen.insert(&f.path))
            .collect()
    }
}

/// Finds fio processes under `proc_root` (normally `/proc`) by reading every process's comm.
/// `exclude`: pids of fio processes pagewatch started, or of their parents (pagewatch's
/// `__guard`); their whole run is skipped. When a recent process walk covered every process,
/// `scan_pids` with the walk's fio pids does the same without a look at every process.
#[must_use]
pub fn scan(proc_root: &Path, exclude: &BTreeSet<u32>) -> Vec<ForeignFio> {
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let pids = dir.flatten().filter_map(|e| {
        let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
        comm_is_fio(&e.path()).then_some(pid)
    });
    scan_pids(proc_root, pids, exclude)
}

/// Reads the fio processes among `pids` (the walk's `fio` line: processes whose comm was
/// `fio`) and groups them; a pid gone or reused by another program since is skipped.
#[must_use]
pub fn scan_pids(
    proc_root: &Path,
    pids: impl IntoIterator<Item = u32>,
    exclude: &BTreeSet<u32>,
) -> Vec<ForeignFio> {
    let mut found = Vec::new();
    let mut cmdlines = BTreeMap::new();
    for pid in pids {
        let base = proc_root.join(pid.to_string());
        // Processes come and go between reads: anything unreadable is skipped.
        let Some(stat) = std::fs::read(base.join("stat"))
            .ok()
            .and_then(|t| parse_stat(&t).ok())
            .filter(|s| s.comm == "fio")
        else {
            continue;
        };
        let io = std::fs::read(base.join("io"))
            .ok()
            .and_then(|t| parse_io(&t).ok());
        cmdlines.insert(
            pid,
            parse_cmdline(&std::fs::read(base.join("cmdline")).unwrap_or_default()),
        );
        found.push(FioProc {
            pid,
            ppid: stat.ppid,
            state: stat.state,
            io,
            reaped_marks: stat.reaped_marks,
            files: open_files(&base.join("fd")),
        });
    }
    let mut runs = group(found, cmdlines, exclude);
    for r in &mut runs {
        r.cwd = std::fs::read_link(proc_root.join(r.pid.to_string()).join("cwd")).ok();
    }
    runs
}

/// Whether `PID/comm` reads `fio`: one open and one read of a 16-byte file, the cheapest
/// look at a process.
fn comm_is_fio(base: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 32];
    let Ok(mut f) = std::fs::File::open(base.join("comm")) else {
        return false;
    };
    let n = f.read(&mut buf).unwrap_or(0);
    buf[..n].strip_suffix(b"\n").unwrap_or(&buf[..n]) == b"fio"
}

fn open_files(fd_dir: &Path) -> Vec<OpenFile> {
    let Ok(dir) = std::fs::read_dir(fd_dir) else {
        return Vec::new();
    };
    let mut files: Vec<(u32, OpenFile)> = dir
        .flatten()
        .filter_map(|e| {
            let n: u32 = e.file_name().to_str()?.parse().ok()?;
            if n < 3 {
                return None;
            }
            let via = e.path();
            // metadata follows the magic link to the open file itself.
            if !std::fs::metadata(&via).ok()?.is_file() {
                return None;
            }
            let path = std::fs::read_link(&via).ok()?;
            Some((n, OpenFile { path, via }))
        })
        .collect();
    files.sort_by_key(|(n, _)| *n);
    files.into_iter().map(|(_, f)| f).collect()
}

/// Groups fio processes into runs: a process whose parent is not fio is a main process; every
/// other one belongs to the main process found by walking up its parents. Pure.
#[must_use]
pub fn group(
    procs: Vec<FioProc>,
    mut cmdlines: BTreeMap<u32, Vec<String>>,
    exclude: &BTreeSet<u32>,
) -> Vec<ForeignFio> {
    let parent: BTreeMap<u32, u32> = procs.iter().map(|p| (p.pid, p.ppid)).collect();
    let root_of = |mut pid: u32| {
        // Bounded walk: a pid loop cannot happen in /proc, but a hand-made tree could have one.
        for _ in 0..parent.len() {
            match parent.get(&pid) {
                Some(pp) if parent.contains_key(pp) => pid = *pp,
                _ => break,
            }
        }
        pid
    };
    let mut runs: BTreeMap<u32, ForeignFio> = BTreeMap::new();
    for p in procs {
        let root = root_of(p.pid);
        let run = runs.entry(root).or_insert_with(|| ForeignFio {
            pid: root,
            ppid: parent.get(&root).copied().unwrap_or(0),
            cmdline: cmdlines.remove(&root).unwrap_or_default(),
            procs: Vec::new(),
            cwd: None,
        });
        run.procs.push(p);
    }
    runs.into_values()
        .filter(|r| !exclude.contains(&r.pid) && !exclude.contains(&r.ppid))
        .map(|mut r| {
            let main = r.pid;
            r.procs.sort_by_key(|p| (p.pid != main, p.pid));
            r
        })
        .collect()
}

/// Rates of one fio process since the previous scan.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcRates {
    /// Its pid.
    pub pid: u32,
    /// Its state letter at this scan.
    pub state: char,
    /// None on its first scan, when io is unreadable, when a counter went back, or when it
    /// reaped children since the last scan (`reaped`).
    pub rates: Option<IoRates>,
    /// It reaped children since the last scan: the kernel added their io totals to its
    /// counters at wait() (`wait_task_zombie`), so the jump is theirs, already counted while
    /// they ran (fio's main process reaping its workers at the end of a run: a jump of 17 GB
    /// in one scan was seen as 17.3 GB/s written).
    pub reaped: bool,
}

/// Rates of one fio run since the previous scan.
#[derive(Debug, Clone, PartialEq)]
pub struct FioRates {
    /// The main process's pid.
    pub pid: u32,
    /// Each process, in `ForeignFio::procs` order.
    pub procs: Vec<ProcRates>,
    /// Sum over the processes that have rates; None when none has.
    pub total: Option<IoRates>,
}

/// Turns successive scans into rates. Feed it every scan with the monotonic time it was taken.
#[derive(Debug, Default)]
pub struct FioPairing {
    /// Each process's scan time, counters and reaped-children marks.
    prev: BTreeMap<u32, (u64, IoCounters, u64)>,
}

impl FioPairing {
    /// Rates for `scan` taken at `mono_ns`; forgets processes that are gone.
    pub fn update(&mut self, scan: &[ForeignFio], mono_ns: u64) -> Vec<FioRates> {
        let mut next = BTreeMap::new();
        let out = scan
            .iter()
            .map(|run| {
                let procs: Vec<ProcRates> = run
                    .procs
                    .iter()
                    .map(|p| {
                        let before = self.prev.get(&p.pid);
                        let reaped = before.is_some_and(|b| p.reaped_marks > b.2);
                        let rates = p.io.and_then(|cur| {
                            next.insert(p.pid, (mono_ns, cur, p.reaped_marks));
                            let (t0, prev, _) = before.filter(|_| !reaped)?;
                            IoRates::between(prev, &cur, mono_ns.checked_sub(*t0)?)
                        });
                        ProcRates {
                            pid: p.pid,
                            state: p.state,
                            rates,
                            reaped,
                        }
                    })
                    .collect();
                let total = procs.iter().filter_map(|p| p.rates).reduce(IoRates::plus);
                FioRates {
                    pid: run.pid,
                    procs,
                    total,
                }
            })
            .collect();
        self.prev = next;
        out
    }
}

#[cfg(test)]
#[path = "foreign_tests.rs"]
mod tests;
