//! The series a report summarises and charts: system-wide figures and per-disk iostat
//! columns, each a name, a unit, the decimals to print and how to read it from a `Model`.
//!
//! Owns: that table and the unit conversions (kB and pages to MiB). Must not touch: I/O.

use crate::model::{Disk, Model};

const MIB: f64 = 1024.0 * 1024.0;

type Get = fn(&Model) -> Option<f64>;

fn pages_mib(m: &Model, p: Option<u64>) -> Option<f64> {
    p.map(|p| p as f64 * m.page_size as f64 / MIB)
}

/// The effective dirty threshold, pages (kernel's, else derived).
pub(crate) fn thresh(m: &Model) -> Option<u64> {
    m.dirty.thresh_pages.or(m.dirty.derived_thresh_pages)
}

/// nr_dirty + nr_writeback as a percentage of the effective dirty threshold.
pub(crate) fn dirty_pct_of_thresh(m: &Model) -> Option<f64> {
    let (d, t) = m.dirty.dirty_writeback_pages.zip(thresh(m))?;
    (t > 0).then(|| d as f64 / t as f64 * 100.0)
}

/// The effective background threshold, pages.
pub(crate) fn bg_thresh(m: &Model) -> Option<u64> {
    m.dirty.bg_thresh_pages.or(m.dirty.derived_bg_thresh_pages)
}

/// System series: (name, unit, decimals, value).
#[rustfmt::skip]
pub(crate) const SYSTEM: [(&str, &str, usize, Get); 20] = [
    ("MemAvailable", "MiB", 1, |m| m.memory.MemAvailable.map(|k| k as f64 / 1024.0)),
    ("MemFree", "MiB", 1, |m| Some(m.memory.MemFree as f64 / 1024.0)),
    ("Dirty+Writeback", "MiB", 1, |m| pages_mib(m, m.dirty.dirty_writeback_pages)),
    ("dirty threshold", "MiB", 1, |m| pages_mib(m, thresh(m))),
    ("freerun (throttle start)", "MiB", 1, |m| pages_mib(m, m.dirty.freerun_pages)),
    ("background threshold", "MiB", 1, |m| pages_mib(m, bg_thresh(m))),
    ("dirtied", "MiB/s", 1, |m| m.dirty.dirtied_per_s.map(|p| p * m.page_size as f64 / MIB)),
    ("written back", "MiB/s", 1, |m| m.dirty.written_per_s.map(|p| p * m.page_size as f64 / MIB)),
    ("kswapd scan", "pages/s", 0, |m| m.reclaim.pgscan_kswapd_s),
    ("kswapd steal", "pages/s", 0, |m| m.reclaim.pgsteal_kswapd_s),
    ("direct scan", "pages/s", 0, |m| m.reclaim.pgscan_direct_s),
    ("direct steal", "pages/s", 0, |m| m.reclaim.pgsteal_direct_s),
    ("allocstall", "/s", 1, |m| m.reclaim.allocstall_s),
    ("major faults", "/s", 1, |m| m.reclaim.pgmajfault_s),
    ("CPU iowait", "%", 1, |m| m.cpu.and_then(|c| c.iowait_pct)),
    ("CPU system", "%", 1, |m| m.cpu.and_then(|c| c.system_pct)),
    ("tasks blocked (D)", "", 0, |m| m.procs_blocked.map(f64::from)),
    ("PSI memory some", "%", 1, |m| psi(m.pressure.memory)),
    ("PSI io some", "%", 1, |m| psi(m.pressure.io)),
    ("PSI io full", "%", 1, |m| m.pressure.io.and_then(|p| p.full).and_then(|f| f.total_pct)),
];

fn psi(p: Option<crate::model::Pressure>) -> Option<f64> {
    p.and_then(|p| p.some).and_then(|s| s.total_pct)
}

/// The share of the record's interval in which some (or, with `full`, all non-idle) tasks
/// stalled on the resource, %: Δtotal / Δt, exact over the interval where the kernel's avg10
/// is a decaying average.
pub(crate) fn psi_pct(p: Option<crate::model::Pressure>, full: bool) -> Option<f64> {
    let p = p?;
    if full { p.full } else { p.some }?.total_pct
}

/// Whether any record has a PSI figure (the kernel has /proc/pressure).
pub(crate) fn has_psi(models: &[Model]) -> bool {
    models.iter().any(|m| {
        let p = m.pressure;
        [p.cpu, p.memory, p.io]
            .into_iter()
            .any(|r| psi_pct(r, false).is_some())
    })
}

type DiskGet = fn(&Disk) -> Option<f64>;

/// Per-disk series: (iostat name, unit, decimals, value).
#[rustfmt::skip]
pub(crate) const DISK: [(&str, &str, usize, DiskGet); 8] = [
    ("r/s", "", 1, |d| d.cols.r_s),
    ("w/s", "", 1, |d| d.cols.w_s),
    ("rkB/s", "kB/s", 1, |d| d.cols.rkB_s),
    ("wkB/s", "kB/s", 1, |d| d.cols.wkB_s),
    ("r_await", "ms", 2, |d| d.cols.r_await),
    ("w_await", "ms", 2, |d| d.cols.w_await),
    ("aqu-sz", "", 2, |d| d.cols.aqu_sz),
    ("%util", "%", 1, |d| d.cols.util_pct),
];
