//! The phase table: per playbook phase, its duration, the fio results of the jobs started in
//! it, MemAvailable's minimum, the seconds writers were throttled and over the dirty
//! threshold (spec §1.4), the seconds with direct reclaim, the target device's await, aqu-sz
//! and %util, and what was tuned. Printed at the end of `pagewatch play` (text or JSON) and
//! in the report of a recording with phases.
//!
//! Owns: cutting models and events into phases and summing them. Pure: must not touch files,
//! the clock or the terminal.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::event::{Event, EventKind, FioSummary};
use crate::model::Model;
use crate::model::dirty::State;

/// One fio job's result in a phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FioRow {
    /// pagewatch's job number.
    pub job: u32,
    /// Preset name.
    pub name: String,
    /// `read` or `write`: the direction with more I/O.
    pub dir: &'static str,
    /// Operations per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes_s: f64,
    /// Mean completion latency, µs.
    pub clat_mean_us: f64,
    /// p99 completion latency, µs.
    pub clat_p99_us: f64,
    /// fsync calls per second; `None` when the job did not sync.
    pub fsync_per_s: Option<f64>,
    /// Mean fsync latency, µs (fio's `sync.lat_ns`).
    pub fsync_mean_us: Option<f64>,
    /// p99 fsync latency, µs.
    pub fsync_p99_us: Option<f64>,
    /// The run was cut short (these are its last periodic figures).
    pub partial: bool,
}

/// The device figures of a phase: means over its samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceRow {
    /// Kernel name.
    pub name: String,
    /// r/w-weighted await, ms.
    pub await_ms: Option<f64>,
    /// Average queue size.
    pub aqu_sz: Option<f64>,
    /// Busy time, %.
    pub util_pct: Option<f64>,
}

/// One phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseRow {
    /// The phase's name.
    pub name: String,
    /// Start, ms since the epoch.
    pub start_ms: i64,
    /// Seconds until the next phase or the end.
    pub duration_s: f64,
    /// fio results of the jobs started in this phase.
    pub fio: Vec<FioRow>,
    /// Lowest MemAvailable, kB.
    pub mem_available_min_kb: Option<u64>,
    /// Seconds with writers throttled (or worse).
    pub throttled_s: f64,
    /// Seconds with dirty + writeback over the threshold.
    pub over_thresh_s: f64,
    /// Seconds with direct reclaim scanning.
    pub direct_reclaim_s: f64,
    /// The target device.
    pub device: Option<DeviceRow>,
    /// Settings changed in this phase, `name old -> new`.
    pub tuned: Vec<String>,
}

fn fio_row(job: u32, r: &FioSummary) -> FioRow {
    let (dir, d) = if r.write.ios > r.read.ios {
        ("write", r.write)
    } else {
        ("read", r.read)
    };
    FioRow {
        job,
        name: esc(&r.name),
        dir,
        iops: d.iops,
        bw_bytes_s: d.bw_bytes_s,
        clat_mean_us: d.clat_mean_us,
        clat_p99_us: d.clat_p99_us,
        fsync_per_s: (r.sync.ios > 0).then_some(r.sync.iops),
        fsync_mean_us: (r.sync.ios > 0).then_some(r.sync.clat_mean_us),
        fsync_p99_us: (r.sync.ios > 0).then_some(r.sync.clat_p99_us),
        partial: r.partial,
    }
}

/// Text from the events (a recording's, perhaps hostile) as the table may show it.
fn esc(s: &str) -> String {
    crate::fmt::escape_controls(s).into_owned()
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The phases of `events` (oldest first) over `models`, with `device`'s figures; the last
/// phase ends at `end_ms`. Empty when there is no `Phase` event.
#[must_use]
pub fn phases(
    models: &[Model],
    events: &[Event],
    device: Option<&str>,
    end_ms: i64,
) -> Vec<PhaseRow> {
    let starts: Vec<(i64, &str)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Phase { name, .. } => Some((e.wall_ms, name.as_str())),
            _ => None,
        })
        .collect();
    let phase_of = |ms: i64| starts.iter().rposition(|(s, _)| *s <= ms);
    let mut started: BTreeMap<u32, Option<usize>> = BTreeMap::new();
    let mut rows: Vec<PhaseRow> = starts
        .iter()
        .enumerate()
        .map(|(i, (s, name))| {
            let end = starts.get(i + 1).map_or(end_ms, |n| n.0);
            PhaseRow {
                name: esc(name),
                start_ms: *s,
                duration_s: (end - s).max(0) as f64 / 1000.0,
                fio: Vec::new(),
                mem_available_min_kb: None,
                throttled_s: 0.0,
                over_thresh_s: 0.0,
                direct_reclaim_s: 0.0,
                device: None,
                tuned: Vec::new(),
            }
        })
        .collect();
    for e in events {
        match &e.kind {
            EventKind::JobStart { job, .. } => {
                started.insert(*job, phase_of(e.wall_ms));
            }
            EventKind::FioResult { job, result } => {
                let p = started
                    .get(job)
                    .copied()
                    .unwrap_or_else(|| phase_of(e.wall_ms));
                if let Some(row) = p.and_then(|p| rows.get_mut(p)) {
                    row.fio.push(fio_row(*job, result));
                }
            }
            EventKind::Tune {
                setting,
                old,
                new,
                note,
                ..
            } => {
                if let Some(row) = phase_of(e.wall_ms).and_then(|p| rows.get_mut(p)) {
                    let note = note.as_deref().map_or(String::new(), |n| format!(" ({n})"));
                    row.tuned
                        .push(esc(&format!("{setting} {old} -> {new}{note}")));
                }
            }
            _ => {}
        }
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let end = starts.get(i + 1).map_or(end_ms, |n| n.0);
        let inside: Vec<&Model> = models
            .iter()
            .filter(|m| m.time_ms > row.start_ms && m.time_ms <= end)
            .collect();
        summarise(row, &inside, device);
    }
    rows
}

fn summarise(row: &mut PhaseRow, models: &[&Model], device: Option<&str>) {
    row.mem_available_min_kb = models.iter().filter_map(|m| m.memory.MemAvailable).min();
    let (mut awaits, mut aqus, mut utils) = (Vec::new(), Vec::new(), Vec::new());
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        let state = m.dirty.state;
        if matches!(
            state,
            Some(State::WritersThrottled | State::OverThresh | State::AtHardLimit)
        ) {
            row.throttled_s += dt;
        }
        if matches!(state, Some(State::OverThresh | State::AtHardLimit)) {
            row.over_thresh_s += dt;
        }
        if m.reclaim.pgscan_direct_s.is_some_and(|r| r > 0.0) {
            row.direct_reclaim_s += dt;
        }
        if let Some(d) = device.and_then(|n| m.disks.iter().find(|d| d.name == n)) {
            let c = &d.cols;
            let (r, w) = (c.r_s.unwrap_or(0.0), c.w_s.unwrap_or(0.0));
            if r + w > 0.0 {
                awaits
                    .push((r * c.r_await.unwrap_or(0.0) + w * c.w_await.unwrap_or(0.0)) / (r + w));
            }
            aqus.extend(c.aqu_sz);
            utils.extend(c.util_pct);
        }
    }
    row.device = device.map(|n| DeviceRow {
        name: n.to_owned(),
        await_ms: mean(&awaits),
        aqu_sz: mean(&aqus),
        util_pct: mean(&utils),
    });
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

/// The table as text: one line per phase, then one line per fio job.
#[must_use]
pub fn render_text(rows: &[PhaseRow]) -> String {
    let mut o = String::new();
    let dev = rows
        .iter()
        .find_map(|r| r.device.as_ref().map(|d| d.name.clone()))
        .unwrap_or_else(|| "device".into());
    let _ = writeln!(
        o,
        "{:<20} {:>7} {:>10} {:>9} {:>8} {:>8} {:>9} {:>7} {:>6}  tuned",
        "phase",
        "secs",
        "MemAvl min",
        "throttled",
        "over thr",
        "direct",
        format!("{dev} await"),
        "aqu-sz",
        "%util"
    );
    for r in rows {
        let d = r.device.as_ref();
        let _ = writeln!(
            o,
            "{:<20} {:>7.1} {:>10} {:>8.0}s {:>7.0}s {:>7.0}s {:>9} {:>7} {:>6}  {}",
            r.name,
            r.duration_s,
            r.mem_available_min_kb
                .map_or("-".into(), |k| crate::fmt::bytes(k as f64 * 1024.0)),
            r.throttled_s,
            r.over_thresh_s,
            r.direct_reclaim_s,
            opt(d.and_then(|d| d.await_ms), 2),
            opt(d.and_then(|d| d.aqu_sz), 2),
            opt(d.and_then(|d| d.util_pct), 1),
            r.tuned.join(", ")
        );
    }
    let _ = writeln!(
        o,
        "\n{:<20} {:>4} {:<22} {:>5} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10}",
        "phase",
        "job",
        "fio",
        "dir",
        "IOPS",
        "MB/s",
        "mean ms",
        "p99 ms",
        "fsync/s",
        "fsync mean",
        "fsync p99"
    );
    for r in rows {
        for f in &r.fio {
            let _ = writeln!(
                o,
                "{:<20} {:>4} {:<22} {:>5} {:>10.0} {:>10.1} {:>10.3} {:>10.3} {:>8} {:>10} {:>10}{}",
                r.name,
                format!("#{}", f.job),
                f.name,
                f.dir,
                f.iops,
                f.bw_bytes_s / 1e6,
                f.clat_mean_us / 1000.0,
                f.clat_p99_us / 1000.0,
                opt(f.fsync_per_s, 0),
                opt(f.fsync_mean_us.map(|u| u / 1000.0), 3),
                opt(f.fsync_p99_us.map(|u| u / 1000.0), 3),
                if f.partial { " (partial)" } else { "" }
            );
        }
    }
    o
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
