//! Measuring a job's data files: size and page-cache residency of each (cachestat or mincore),
//! for a fio pagewatch did not start (its scan) and for a job's detail view.
//!
//! Owns: `measure` (opens each file read-only, never reads its data) and `foreign_view`, the
//! scan's run as the app is told about it. Must not touch: the processes, the app.

use std::path::Path;

use super::cachestat::{CacheMethod, cached_pages};
use super::foreign::ForeignFio as Scanned;
use super::foreign_files::{DataFile, MAX_FILES, data_files};
use super::pid_io::IoRates;
use super::protocol::{ForeignFio, JobFile};

/// Size and residency of each file, at most `MAX_FILES`, through its fd link when there is
/// one (deleted files, other mount namespaces); a file that cannot be opened is left out.
#[must_use]
pub fn measure(files: &[DataFile]) -> Vec<JobFile> {
    files
        .iter()
        .take(MAX_FILES)
        .filter_map(|f| {
            let info = cached_pages(f.via.as_deref().unwrap_or(&f.path)).ok()?;
            let size = std::fs::metadata(f.via.as_deref().unwrap_or(&f.path))
                .ok()?
                .len();
            Some(JobFile {
                path: f.path.display().to_string(),
                size_bytes: size,
                cached_pages: info.pages_cached,
                total_pages: info.pages_total,
                method: match info.method {
                    CacheMethod::Cachestat => "cachestat",
                    CacheMethod::Mincore => "mincore",
                },
            })
        })
        .collect()
}

/// Measures the files a command line names (`--filename=` of a job pagewatch started).
#[must_use]
pub fn measure_paths(paths: &[String]) -> Vec<JobFile> {
    let files: Vec<DataFile> = paths
        .iter()
        .map(|p| DataFile {
            path: p.into(),
            via: None,
        })
        .collect();
    measure(&files)
}

/// A scanned fio run as the app sees it: command line, rates over all its processes, its
/// data files measured.
#[must_use]
pub fn foreign_view(f: &Scanned, rates: Option<IoRates>) -> ForeignFio {
    let cwd = f.cwd.as_deref().unwrap_or(Path::new("/"));
    ForeignFio {
        pid: f.pid,
        cmdline: f.cmdline.join(" "),
        read_bytes_s: rates.map(|r| r.read_bytes_s),
        write_bytes_s: rates.map(|r| r.write_bytes_s),
        rchar_s: rates.map(|r| r.rchar_s),
        wchar_s: rates.map(|r| r.wchar_s),
        files: measure(&data_files(f, cwd)),
        workers: f.procs.iter().filter(|p| p.pid != f.pid).count(),
    }
}
