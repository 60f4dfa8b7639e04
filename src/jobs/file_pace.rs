//! Paces the page-cache measurement of job data files. cachestat(2) walks the file's part of
//! the page cache, the shadow entries of evicted pages included, and mincore(2) looks up every
//! page: 26 ms of CPU a call on a 4 GiB file under memory pressure here (278k pages cached,
//! 466k evicted), microseconds on a small one. Measured at every scan (2 s while a foreign fio
//! runs) or every sample (a job's detail view), such a file cost pagewatch 9.5 ms/s while it
//! was diagnosing the machine. So a file is measured again only once `SPACING` times its last
//! measurement's CPU cost has passed (0.2 % of one CPU at most), and between measurements its
//! last figures serve, with their age (`JobFile::age_s`) so the screen says how old. A file
//! not asked about for `FORGET_NS` is forgotten.
//!
//! Owns: `Pacer`. Must not touch: the processes, the app, the clock (times are passed in).

use std::collections::HashMap;
use std::path::PathBuf;

use super::foreign_files::DataFile;
use super::protocol::JobFile;

/// A file is measured again after this many times what its last measurement cost.
pub const SPACING: u64 = 500;
/// A file not asked about for this long is forgotten, ns.
pub const FORGET_NS: u64 = 60_000_000_000;

/// One file's last measurement.
#[derive(Debug, Clone)]
struct Last {
    /// When it was measured, monotonic ns.
    at_ns: u64,
    /// Its CPU cost, ns.
    cost_ns: u64,
    /// When a caller last asked for it, monotonic ns.
    asked_ns: u64,
    /// Its figures.
    file: JobFile,
}

/// The last measurement of each file, by path.
#[derive(Debug, Default)]
pub struct Pacer {
    files: HashMap<PathBuf, Last>,
}

impl Pacer {
    /// The figures of each of `files` at `now_ns`: measured by `measure` (figures and CPU cost,
    /// ns; `None` when the file cannot be opened) when it is due, else its last figures.
    pub fn measure(
        &mut self,
        files: &[DataFile],
        now_ns: u64,
        mut measure: impl FnMut(&DataFile) -> Option<(JobFile, u64)>,
    ) -> Vec<JobFile> {
        self.files
            .retain(|_, l| now_ns.saturating_sub(l.asked_ns) <= FORGET_NS);
        files
            .iter()
            .filter_map(|f| {
                if let Some(l) = self.files.get_mut(&f.path) {
                    l.asked_ns = now_ns;
                    let due = l.at_ns.saturating_add(l.cost_ns.saturating_mul(SPACING));
                    if now_ns < due {
                        let age_s = now_ns.saturating_sub(l.at_ns) / 1_000_000_000;
                        return Some(JobFile {
                            age_s,
                            ..l.file.clone()
                        });
                    }
                }
                let Some((file, cost_ns)) = measure(f) else {
                    self.files.remove(&f.path);
                    return None;
                };
                let last = Last {
                    at_ns: now_ns,
                    cost_ns,
                    asked_ns: now_ns,
                    file: file.clone(),
                };
                self.files.insert(f.path.clone(), last);
                Some(file)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn file(path: &str) -> DataFile {
        DataFile {
            path: path.into(),
            via: None,
        }
    }

    fn figures(path: &str, cached: u64) -> JobFile {
        JobFile {
            path: path.into(),
            size_bytes: 4 << 30,
            cached_pages: cached,
            total_pages: 1 << 20,
            method: "cachestat",
            age_s: 0,
        }
    }

    #[test]
    fn a_dear_file_is_measured_after_spacing_times_its_cost_a_cheap_one_every_time() {
        let mut p = Pacer::default();
        let mut calls = Vec::new();
        let files = [file("/big"), file("/small")];
        // /big costs 26 ms (due 13 s later), /small 20 µs (due 10 ms later).
        let at = |p: &mut Pacer, now_ms: u64, cached: u64, calls: &mut Vec<(u64, String)>| {
            p.measure(&files, now_ms * MS, |f| {
                let path = f.path.display().to_string();
                calls.push((now_ms, path.clone()));
                let cost = if path == "/big" { 26 * MS } else { 20_000 };
                Some((figures(&path, cached), cost))
            })
        };
        let first = at(&mut p, 0, 100, &mut calls);
        assert_eq!(first[0].cached_pages, 100);
        let second = at(&mut p, 2_000, 200, &mut calls);
        assert_eq!(
            (second[0].cached_pages, second[1].cached_pages),
            (100, 200),
            "/big's last figures until it is due; /small measured again"
        );
        assert_eq!((second[0].age_s, second[1].age_s), (2, 0), "with their age");
        at(&mut p, 12_999, 300, &mut calls);
        let due = at(&mut p, 13_000, 400, &mut calls);
        assert_eq!((due[0].cached_pages, due[0].age_s), (400, 0));
        let big: Vec<u64> = calls
            .iter()
            .filter(|(_, f)| f == "/big")
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(big, [0, 13_000]);
        // /small each time but at 13 000 ms, 1 ms after its last (its spacing is 10 ms).
        let small: Vec<u64> = calls
            .iter()
            .filter(|(_, f)| f == "/small")
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(small, [0, 2_000, 12_999]);
    }

    #[test]
    fn a_file_gone_or_not_asked_about_is_forgotten() {
        let mut p = Pacer::default();
        let files = [file("/a")];
        let ok = |f: &DataFile| Some((figures(&f.path.display().to_string(), 1), 10 * MS));
        assert_eq!(p.measure(&files, 0, ok).len(), 1);
        // Due again at 5 s; asked at 1 s, it still serves the last figures.
        assert_eq!(p.measure(&files, 1_000 * MS, |_| None).len(), 1);
        // Removed: a failed measurement drops it.
        assert!(p.measure(&files, 6_000 * MS, |_| None).is_empty());
        assert!(p.files.is_empty());
        p.measure(&files, 7_000 * MS, ok);
        p.measure(&[], 7_000 * MS + FORGET_NS + 1, ok);
        assert!(p.files.is_empty(), "not asked about for a minute");
    }
}
