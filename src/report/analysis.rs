//! What a report says, computed once from a recording: the records in range, each series'
//! statistics, the throttled / direct-reclaim / saturated periods and the headline figures.
//!
//! Owns: choosing records, series and periods. Must not touch: I/O, Markdown, SVG.

use anyhow::bail;

use super::periods::{self, Flag, Period};
use super::range::{Range, datetime_utc};
use super::stats::Stats;
use crate::event::Event;
use crate::history::History;
use crate::model::dirty::State;
use crate::model::saturation::saturation;
use crate::model::{Disk, Model, Options, series};
use crate::record::Recording;

/// The screen's history window (`App::new`), so the await baseline a disk is judged against
/// is the one the screen would have shown at that moment.
const BASELINE_TICKS: usize = 600;
const MIB: f64 = 1024.0 * 1024.0;

/// A figure at a moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct At {
    /// The value.
    pub value: f64,
    /// Read time of the record, ms since the epoch.
    pub time_ms: i64,
}

/// The worst disk latency seen.
#[derive(Debug, Clone, PartialEq)]
pub struct WorstAwait {
    /// Device name.
    pub disk: String,
    /// `r_await` or `w_await`.
    pub column: &'static str,
    /// Milliseconds, and when.
    pub at: At,
}

/// Headline figures for the closing note.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportSummary {
    /// Records in the report period.
    pub records: usize,
    /// Samples of the whole recording that failed to parse and were skipped.
    pub skipped_samples: usize,
    /// Lowest MemAvailable, MiB.
    pub min_mem_available_mib: Option<At>,
    /// Highest nr_dirty + nr_writeback as a percentage of the dirty threshold.
    pub max_dirty_pct_of_thresh: Option<At>,
    /// Seconds with writers throttled (or at the hard limit).
    pub throttled_s: f64,
    /// Seconds with direct reclaim.
    pub direct_reclaim_s: f64,
    /// Highest r_await or w_await of any disk.
    pub worst_await: Option<WorstAwait>,
    /// Seconds each saturated disk was saturated (disks never saturated are left out).
    pub saturated_s: Vec<(String, f64)>,
    /// Files written (by `report::write`).
    pub files: Vec<std::path::PathBuf>,
}

/// One row of the figures table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Series name.
    pub name: &'static str,
    /// Unit.
    pub unit: &'static str,
    /// Decimals to print.
    pub decimals: usize,
    /// Statistics; `None` when no record had the figure.
    pub stats: Option<Stats>,
}

/// What the report says about one disk that did I/O in the period.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskReport {
    /// Kernel name.
    pub name: String,
    /// Figures.
    pub rows: Vec<Row>,
    /// Saturated periods; `peak` is the worst r/w-weighted await, ms.
    pub saturated: Vec<Period>,
    /// Chart file name.
    pub chart: String,
}

/// Everything a report shows.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The requested range.
    pub range: Range,
    /// Records in range, oldest first.
    pub models: Vec<Model>,
    /// Samples that failed to parse: (index, reason).
    pub failures: Vec<(usize, String)>,
    /// Events in range, oldest first; the timeline numbers them E1, E2, … in this order.
    pub events: Vec<Event>,
    /// System-wide figures.
    pub system: Vec<Row>,
    /// Disks with I/O in range, by name.
    pub disks: Vec<DiskReport>,
    /// Disks without I/O in range.
    pub idle_disks: Vec<String>,
    /// Periods with writers throttled; `peak` is dirty+writeback as % of the threshold.
    pub throttled: Vec<Period>,
    /// Periods with direct reclaim; `peak` is the direct scan rate, pages/s.
    pub direct: Vec<Period>,
    /// Headline figures.
    pub summary: ReportSummary,
}

type Get = fn(&Model) -> Option<f64>;

fn pages_mib(m: &Model, p: Option<u64>) -> Option<f64> {
    p.map(|p| p as f64 * m.page_size as f64 / MIB)
}

/// The effective dirty threshold, pages (kernel's, else derived).
pub(crate) fn thresh(m: &Model) -> Option<u64> {
    m.dirty.thresh_pages.or(m.dirty.derived_thresh_pages)
}

/// The effective background threshold, pages.
pub(crate) fn bg_thresh(m: &Model) -> Option<u64> {
    m.dirty.bg_thresh_pages.or(m.dirty.derived_bg_thresh_pages)
}

/// System series: (name, unit, decimals, value).
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
    ("CPU iowait", "%", 1, |m| m.cpu.map(|c| c.iowait_pct)),
    ("CPU system", "%", 1, |m| m.cpu.map(|c| c.system_pct)),
    ("tasks blocked (D)", "", 0, |m| m.procs_blocked.map(f64::from)),
    ("PSI memory some", "%", 1, |m| psi(m.pressure.memory)),
    ("PSI io some", "%", 1, |m| psi(m.pressure.io)),
    ("PSI io full", "%", 1, |m| {
        m.pressure.io.and_then(|p| p.full).and_then(|f| f.total_pct)
    }),
];

fn psi(p: Option<crate::model::Pressure>) -> Option<f64> {
    p.and_then(|p| p.some).and_then(|s| s.total_pct)
}

type DiskGet = fn(&Disk) -> Option<f64>;

/// Per-disk series: (iostat name, unit, decimals, value).
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

/// The r/w-weighted await of a record, ms; `None` without I/O.
fn weighted_await(d: &Disk) -> Option<f64> {
    let (r, w) = (d.cols.r_s?, d.cols.w_s?);
    (r + w > 0.0).then(|| {
        (r * d.cols.r_await.unwrap_or(0.0) + w * d.cols.w_await.unwrap_or(0.0)) / (r + w)
    })
}

/// A file-name-safe form of a device name.
fn safe(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect()
}

fn flag(m: &Model, on: bool, peak: f64, severe: bool) -> Flag {
    Flag {
        time_ms: m.time_ms,
        interval_s: m.interval_s.unwrap_or(0.0),
        on,
        peak,
        severe,
    }
}

/// Derives every record and analyses those in `range`.
pub fn analyse(rec: &Recording, range: Range, opts: Options) -> anyhow::Result<Analysis> {
    let all = series::derive(&rec.samples, opts);
    if all.models.is_empty() {
        bail!(
            "the recording has {} usable sample(s) of {}; a report needs at least two",
            rec.samples.len() - all.failures.len(),
            rec.samples.len()
        );
    }
    // Saturation per record and disk, with the baseline the screen had at that record.
    let mut history = History::new(BASELINE_TICKS);
    let mut models = Vec::new();
    let mut sat: Vec<Vec<u8>> = Vec::new();
    for m in all.models {
        history.push(&m);
        if range.contains(m.time_ms) {
            let base = |d: &Disk| history.disks.get(&d.name).and_then(|h| h.baseline_await_ms);
            sat.push(m.disks.iter().map(|d| saturation(d, base(d))).collect());
            models.push(m);
        }
    }
    if models.is_empty() {
        bail!(
            "no records between {} and {} (the recording's records run from {} to {})",
            range.from_ms.map_or_else(|| "the start".into(), datetime_utc),
            range.to_ms.map_or_else(|| "the end".into(), datetime_utc),
            datetime_utc(first_time(rec)),
            datetime_utc(rec.samples.last().map_or(0, |s| s.wall_ms)),
        );
    }
    let mut events: Vec<Event> = rec
        .events
        .iter()
        .filter(|e| range.contains(e.wall_ms))
        .cloned()
        .collect();
    events.sort_by_key(|e| e.wall_ms);

    let system = SYSTEM
        .iter()
        .map(|&(name, unit, decimals, get)| Row {
            name,
            unit,
            decimals,
            stats: Stats::of(models.iter().map(get)),
        })
        .collect();

    let throttled = periods::merge(models.iter().map(|m| {
        let st = m.dirty.state;
        let pct = m.dirty.dirty_writeback_pages.zip(thresh(m)).map_or(0.0, |(d, t)| {
            if t > 0 { d as f64 / t as f64 * 100.0 } else { 0.0 }
        });
        flag(
            m,
            matches!(st, Some(State::WritersThrottled | State::AtHardLimit)),
            pct,
            st == Some(State::AtHardLimit),
        )
    }));
    let direct = periods::merge(models.iter().map(|m| {
        let scan = m.reclaim.pgscan_direct_s.unwrap_or(0.0);
        let stall = m.reclaim.allocstall_s.unwrap_or(0.0);
        flag(m, scan > 0.0 || stall > 0.0, scan, false)
    }));

    let mut names: Vec<&str> = models
        .iter()
        .flat_map(|m| m.disks.iter().map(|d| d.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut disks = Vec::new();
    let mut idle_disks = Vec::new();
    for name in names {
        let recs: Vec<(usize, &Disk)> = models
            .iter()
            .enumerate()
            .filter_map(|(i, m)| m.disks.iter().position(|d| d.name == name).map(|j| (i, j)))
            .map(|(i, j)| (i, &models[i].disks[j]))
            .collect();
        let busy = recs
            .iter()
            .any(|(_, d)| d.cols.r_s.unwrap_or(0.0) + d.cols.w_s.unwrap_or(0.0) > 0.0);
        if !busy {
            idle_disks.push(name.to_owned());
            continue;
        }
        let rows = DISK
            .iter()
            .map(|&(n, unit, decimals, get)| Row {
                name: n,
                unit,
                decimals,
                stats: Stats::of(recs.iter().map(|(_, d)| get(d))),
            })
            .collect();
        let saturated = periods::merge(models.iter().enumerate().map(|(i, m)| {
            let j = m.disks.iter().position(|d| d.name == name);
            let level = j.map_or(0, |j| sat[i][j]);
            let peak = j.and_then(|j| weighted_await(&m.disks[j])).unwrap_or(0.0);
            flag(m, level > 0, peak, level > 1)
        }));
        disks.push(DiskReport {
            name: name.to_owned(),
            rows,
            saturated,
            chart: format!("disk-{}.svg", safe(name)),
        });
    }

    let summary = summarise(&models, &throttled, &direct, &disks, all.failures.len());
    Ok(Analysis {
        range,
        models,
        failures: all.failures,
        events,
        system,
        disks,
        idle_disks,
        throttled,
        direct,
        summary,
    })
}

fn first_time(rec: &Recording) -> i64 {
    rec.samples.first().map_or(rec.header.started_ms, |s| s.wall_ms)
}

fn extreme(models: &[Model], get: impl Fn(&Model) -> Option<f64>, max: bool) -> Option<At> {
    models
        .iter()
        .filter_map(|m| get(m).map(|value| At { value, time_ms: m.time_ms }))
        .reduce(|a, b| {
            let better = if max { b.value > a.value } else { b.value < a.value };
            if better { b } else { a }
        })
}

fn summarise(
    models: &[Model],
    throttled: &[Period],
    direct: &[Period],
    disks: &[DiskReport],
    skipped: usize,
) -> ReportSummary {
    let mut worst: Option<WorstAwait> = None;
    for m in models {
        for d in &m.disks {
            for (column, v) in [("r_await", d.cols.r_await), ("w_await", d.cols.w_await)] {
                let Some(v) = v else { continue };
                if worst.as_ref().is_none_or(|w| v > w.at.value) {
                    worst = Some(WorstAwait {
                        disk: d.name.clone(),
                        column,
                        at: At { value: v, time_ms: m.time_ms },
                    });
                }
            }
        }
    }
    ReportSummary {
        records: models.len(),
        skipped_samples: skipped,
        min_mem_available_mib: extreme(models, SYSTEM[0].3, false),
        max_dirty_pct_of_thresh: extreme(
            models,
            |m| {
                let (d, t) = m.dirty.dirty_writeback_pages.zip(thresh(m))?;
                (t > 0).then(|| d as f64 / t as f64 * 100.0)
            },
            true,
        ),
        throttled_s: periods::total_seconds(throttled),
        direct_reclaim_s: periods::total_seconds(direct),
        worst_await: worst,
        saturated_s: disks
            .iter()
            .filter(|d| !d.saturated.is_empty())
            .map(|d| (d.name.clone(), periods::total_seconds(&d.saturated)))
            .collect(),
        files: Vec::new(),
    }
}
