//! The figures a report's parts share: a row of the figures table and what the report says
//! about one disk. `analysis` fills them; `summary`, `findings` and `charts` read them.
//!
//! Owns: `Row`, `DiskReport`, `At`, `WorstAwait`, and `chart_file` (a device chart's file
//! name). Must not touch: computing them, I/O.

use super::periods::Period;
use super::stats::Stats;

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
    /// Saturated periods (the pipeline's verdict per record); `peak` is the worst
    /// r/w-weighted await, ms.
    pub saturated: Vec<Period>,
    /// Why the worst saturated record was saturated (the pipeline's `saturation_why` of the
    /// saturated record with the deepest queue); `None` when never saturated.
    pub worst_why: Option<String>,
    /// Periods it was not saturated but queued `DEEP_QUEUE` deep with no calm baseline of
    /// its own to judge it (`Saturation::unjudged`); `peak` as above.
    pub unjudged: Vec<Period>,
    /// The evidence of the deepest of those records; `None` when there were none.
    pub unjudged_why: Option<String>,
    /// Chart file name.
    pub chart: String,
}

/// A figure at a moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct At {
    /// The value.
    pub value: f64,
    /// Read time of the record, ms since the epoch.
    pub time_ms: i64,
}

/// The worst disk latency under load (`load::worst_under_load`): a direction's await over
/// one loaded period of its disk, weighted by its IOs.
#[derive(Debug, Clone, PartialEq)]
pub struct WorstAwait {
    /// Device name.
    pub disk: String,
    /// `r_await`, `w_await` or `d_await`.
    pub column: &'static str,
    /// That direction's mean IOs per second over the period.
    pub ops_per_s: f64,
    /// Milliseconds, weighted by IOs, and when the period began.
    pub at: At,
    /// Read time of the period's last loaded record, ms since the epoch.
    pub end_ms: i64,
    /// Seconds of the period's loaded records.
    pub seconds: f64,
}

/// The longest device part of a chart's file name, in bytes; a longer one is cut and ends
/// with a hash of the whole name.
const NAME_PART: usize = 64;

/// The file name of `prefix`'s chart for `device` (`disk-sda.svg`, `latency-cciss_c0d0.svg`):
/// characters other than ASCII letters, digits, `-` and `_` become `_`, and a name longer
/// than `NAME_PART` is cut and ends with 8 hex digits of a hash of the whole name, so a
/// device name from a crafted recording (5,000 characters, issue 51) cannot exceed
/// NAME_MAX (255 bytes) and stop the report, and two long names stay apart.
#[must_use]
pub fn chart_file(prefix: &str, device: &str) -> String {
    let safe: String = device
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.len() <= NAME_PART {
        return format!("{prefix}-{safe}.svg");
    }
    let hash = crc32fast::hash(device.as_bytes());
    // `safe` is ASCII: any byte index is a char boundary.
    format!("{prefix}-{}-{hash:08x}.svg", &safe[..NAME_PART - 9])
}
