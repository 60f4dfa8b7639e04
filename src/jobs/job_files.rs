//! Measuring a job's data files: size and page-cache residency of each (cachestat or mincore),
//! for a fio pagewatch did not start (its scan) and for a job's detail view.
//!
//! Owns: `measure` (opens each file read-only, never reads its data; paced by its CPU cost,
//! `file_pace`) and `foreign_view`, the scan's run as the app is told about it. Must not
//! touch: the processes, the app.

use std::path::Path;
use std::sync::Mutex;

use super::cachestat::{CacheMethod, cached_pages};
use super::file_pace::Pacer;
use super::foreign::ForeignFio as Scanned;
use super::foreign_files::{DataFile, MAX_FILES, data_files};
use super::pid_io::IoRates;
use super::protocol::{ForeignFio, JobFile};
use crate::source::{Clock, SystemClock, thread_cpu_ns};

/// Size and residency of each file, at most `MAX_FILES`, through its fd link when there is
/// one (deleted files, other mount namespaces); a file that cannot be opened is left out. Each
/// file is measured only when `pacer` says it is due (`file_pace`), else its last figures serve.
pub fn measure(files: &[DataFile], pacer: &Mutex<Pacer>) -> Vec<JobFile> {
    let files = &files[..files.len().min(MAX_FILES)];
    let now_ns = SystemClock.mono_ns();
    let Ok(mut pacer) = pacer.lock() else {
        return Vec::new();
    };
    pacer.measure(files, now_ns, |f| {
        let t0 = thread_cpu_ns();
        let file = measure_one(f)?;
        Some((file, thread_cpu_ns().saturating_sub(t0)))
    })
}

/// One file's size and residency.
fn measure_one(f: &DataFile) -> Option<JobFile> {
    let path = f.via.as_deref().unwrap_or(&f.path);
    let info = cached_pages(path).ok()?;
    let size = std::fs::metadata(path).ok()?.len();
    Some(JobFile {
        path: f.path.display().to_string(),
        size_bytes: size,
        cached_pages: info.pages_cached,
        total_pages: info.pages_total,
        method: match info.method {
            CacheMethod::Cachestat => "cachestat",
            CacheMethod::Mincore => "mincore",
        },
        age_s: 0,
    })
}

/// Measures the files a command line names (`--filename=` of a job pagewatch started).
#[must_use]
pub fn measure_paths(paths: &[String], pacer: &Mutex<Pacer>) -> Vec<JobFile> {
    let files: Vec<DataFile> = paths
        .iter()
        .map(|p| DataFile {
            path: p.into(),
            via: None,
        })
        .collect();
    measure(&files, pacer)
}

/// A scanned fio run as the app sees it: command line, rates over all its processes, its
/// data files measured.
#[must_use]
pub fn foreign_view(f: &Scanned, rates: Option<IoRates>, pacer: &Mutex<Pacer>) -> ForeignFio {
    let cwd = f.cwd.as_deref().unwrap_or(Path::new("/"));
    ForeignFio {
        pid: f.pid,
        cmdline: f.cmdline.join(" "),
        read_bytes_s: rates.map(|r| r.read_bytes_s),
        write_bytes_s: rates.map(|r| r.write_bytes_s),
        rchar_s: rates.map(|r| r.rchar_s),
        wchar_s: rates.map(|r| r.wchar_s),
        files: measure(&data_files(f, cwd), pacer),
        workers: f.procs.iter().filter(|p| p.pid != f.pid).count(),
    }
}
