//! The headline figures of a report (its closing note): lowest MemAvailable, highest dirty
//! against the threshold, seconds throttled and in direct reclaim, the worst disk latency and
//! how long each disk was saturated.
//!
//! Owns: `ReportSummary` and how it is computed from the analysed records. Must not touch: I/O.

use super::periods::{self, Period};
use super::series::{SYSTEM, dirty_pct_of_thresh};
use super::types::DiskReport;
use crate::model::Model;

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
    /// `r_await`, `w_await` or `d_await`.
    pub column: &'static str,
    /// That direction's IOs per second at that record.
    pub ops_per_s: f64,
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
    /// Seconds with writers throttled (or over the threshold).
    pub throttled_s: f64,
    /// Seconds with direct reclaim.
    pub direct_reclaim_s: f64,
    /// Highest await of any disk and direction carrying real load (`verdict::worst_latency`).
    pub worst_await: Option<WorstAwait>,
    /// Seconds each saturated disk was saturated (disks never saturated are left out).
    pub saturated_s: Vec<(String, f64)>,
    /// Files written (by `report::write`).
    pub files: Vec<std::path::PathBuf>,
}

fn extreme(models: &[Model], get: impl Fn(&Model) -> Option<f64>, max: bool) -> Option<At> {
    models
        .iter()
        .filter_map(|m| {
            get(m).map(|value| At {
                value,
                time_ms: m.time_ms,
            })
        })
        .reduce(|a, b| {
            let better = if max {
                b.value > a.value
            } else {
                b.value < a.value
            };
            if better { b } else { a }
        })
}

pub(crate) fn summarise(
    models: &[Model],
    throttled: &[Period],
    direct: &[Period],
    disks: &[DiskReport],
    skipped: usize,
) -> ReportSummary {
    // The worst latency of the records, each weighted by IOPS as the verdict weighs it: a
    // direction with a handful of IOs in a record is not the headline.
    let mut worst: Option<WorstAwait> = None;
    for m in models {
        let Some(l) = crate::model::verdict::worst_latency(&m.disks) else {
            continue;
        };
        if worst.as_ref().is_none_or(|w| l.await_ms > w.at.value) {
            worst = Some(WorstAwait {
                disk: l.device,
                column: l.column,
                ops_per_s: l.ops_per_s,
                at: At {
                    value: l.await_ms,
                    time_ms: m.time_ms,
                },
            });
        }
    }
    ReportSummary {
        records: models.len(),
        skipped_samples: skipped,
        min_mem_available_mib: extreme(models, SYSTEM[0].3, false),
        max_dirty_pct_of_thresh: extreme(models, dirty_pct_of_thresh, true),
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
