//! What a report says, computed once from a recording: the records in range, each series'
//! statistics, the throttled / direct-reclaim / saturated periods and the headline figures.
//!
//! Owns: choosing records, series and periods. Must not touch: I/O, Markdown, SVG.

use anyhow::bail;

use super::periods::{self, Flag, Period};
use super::range::{Range, datetime_utc};
use super::series::{DISK, SYSTEM, dirty_pct_of_thresh};
use super::stats::Stats;
use super::summary::{ReportSummary, summarise};
pub use super::types::{DiskReport, Row};
use crate::event::Event;
use crate::model::dirty::State;
use crate::model::{Disk, Model, Options};
use crate::pipeline;
use crate::record::Recording;

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
    /// Periods with cgroup limit reclaim stalling tasks (the verdict's rule,
    /// `ReclaimVerdict::limit_stalls`); `peak` is the memcg scan rate, pages/s.
    pub limit_stall: Vec<Period>,
    /// Headline figures.
    pub summary: ReportSummary,
}

/// The r/w-weighted await of a record, ms; `None` without I/O.
fn weighted_await(d: &Disk) -> Option<f64> {
    let (r, w) = (d.cols.r_s?, d.cols.w_s?);
    (r + w > 0.0)
        .then(|| (r * d.cols.r_await.unwrap_or(0.0) + w * d.cols.w_await.unwrap_or(0.0)) / (r + w))
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
    let all = pipeline::derive_all(&rec.samples, opts);
    if all.models.is_empty() {
        bail!(
            "the recording has {} usable sample(s) of {}; a report needs at least two",
            rec.samples.len() - all.failures.len(),
            rec.samples.len()
        );
    }
    // Each record comes judged by the pipeline: saturation against the calm baseline the
    // screen had at that record, the dirty states with the interval's throttled writers.
    let models: Vec<Model> = all
        .models
        .into_iter()
        .filter(|m| range.contains(m.time_ms))
        .collect();
    if models.is_empty() {
        bail!(
            "no records between {} and {} (the recording's records run from {} to {})",
            range
                .from_ms
                .map_or_else(|| "the start".into(), datetime_utc),
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
        // Any dirty domain: a container's writers are throttled while the global line can
        // say "below background" (spec §1.8).
        let states = || {
            m.dirty
                .state
                .into_iter()
                .chain(m.domains.iter().filter_map(|d| d.state))
        };
        flag(
            m,
            states().any(|s| {
                matches!(
                    s,
                    State::WritersThrottled | State::OverThresh | State::AtHardLimit
                )
            }),
            dirty_pct_of_thresh(m).unwrap_or(0.0),
            states().any(|s| matches!(s, State::OverThresh | State::AtHardLimit)),
        )
    }));
    let direct = periods::merge(models.iter().map(|m| {
        let scan = m.reclaim.pgscan_direct_s.unwrap_or(0.0);
        flag(m, m.reclaim.direct_ran(), scan, false)
    }));
    let limit_stall = periods::merge(models.iter().map(|m| {
        let stalls = m.verdict.as_ref().is_some_and(|v| v.reclaim.limit_stalls());
        flag(m, stalls, m.reclaim.pgscan_memcg_s.unwrap_or(0.0), false)
    }));
    let (disks, idle_disks) = disk_reports(&models);
    let reclaim = [direct.as_slice(), limit_stall.as_slice()];
    let summary = summarise(&models, &throttled, reclaim, &disks, all.failures.len());
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
        limit_stall,
        summary,
    })
}

/// Busy disks' reports and idle disks' names.
fn disk_reports(models: &[Model]) -> (Vec<DiskReport>, Vec<String>) {
    let mut names: Vec<&str> = models
        .iter()
        .flat_map(|m| m.disks.iter().map(|d| d.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut disks = Vec::new();
    let mut idle = Vec::new();
    for name in names {
        let recs: Vec<&Disk> = models
            .iter()
            .filter_map(|m| m.disks.iter().find(|d| d.name == name))
            .collect();
        let busy = recs
            .iter()
            .any(|d| d.cols.r_s.unwrap_or(0.0) + d.cols.w_s.unwrap_or(0.0) > 0.0);
        if !busy {
            idle.push(name.to_owned());
            continue;
        }
        let rows = DISK
            .iter()
            .map(|&(n, unit, decimals, get)| Row {
                name: n,
                unit,
                decimals,
                stats: Stats::of(recs.iter().map(|d| get(d))),
            })
            .collect();
        let saturated = periods::merge(models.iter().map(|m| {
            let d = m.disks.iter().find(|d| d.name == name);
            let on = d.is_some_and(|d| d.saturation.saturated);
            let peak = d.and_then(weighted_await).unwrap_or(0.0);
            flag(m, on, peak, on)
        }));
        let unjudged = periods::merge(models.iter().map(|m| {
            let d = m.disks.iter().find(|d| d.name == name);
            let on = d.is_some_and(|d| d.saturation.unjudged);
            flag(m, on, d.and_then(weighted_await).unwrap_or(0.0), false)
        }));
        disks.push(DiskReport {
            name: name.to_owned(),
            rows,
            saturated,
            worst_why: deepest_why(&recs, |s| s.saturated),
            unjudged,
            unjudged_why: deepest_why(&recs, |s| s.unjudged),
            chart: super::types::chart_file("disk", name),
        });
    }
    (disks, idle)
}

/// The saturation evidence of the record with the deepest queue (the first of equals) among
/// those `which` picks (saturated, or not judged), as the verdict ranks devices.
fn deepest_why(
    recs: &[&Disk],
    which: impl Fn(&crate::model::saturation::Saturation) -> bool,
) -> Option<String> {
    recs.iter()
        .filter(|d| which(&d.saturation) && d.saturation.saturation_why.is_some())
        .fold(None::<&Disk>, |w, d| match w {
            Some(w) if d.cols.aqu_sz.unwrap_or(0.0) <= w.cols.aqu_sz.unwrap_or(0.0) => Some(w),
            _ => Some(d),
        })
        .and_then(|d| d.saturation.saturation_why.clone())
}

fn first_time(rec: &Recording) -> i64 {
    rec.samples
        .first()
        .map_or(rec.header.started_ms, |s| s.wall_ms)
}
