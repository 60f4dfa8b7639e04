//! Live figures from two consecutive fio statuses, and the summary of the last one.
//!
//! fio's statuses are cumulative, so interval figures are differences: rates are
//! Δio_bytes/Δtimestamp_ms and Δtotal_ios/Δtimestamp_ms, the interval mean completion latency is
//! Δ(mean·N)/ΔN, and the interval p99 comes from the difference of the json+ latency histograms
//! (falling back to fio's cumulative p99, labelled so). Owns: that arithmetic only, pure.

use super::status::{DirCounters, FioStatus, bins_delta, bins_merge, percentile};
use crate::event::{FioDir, FioSummary};

/// Figures of one interval (or since the start, for the first status).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioLive {
    /// fio's timestamp of the later status, ms since the epoch.
    pub timestamp_ms: i64,
    /// Length of the interval, ms (the job's runtime for the first status).
    pub interval_ms: u64,
    /// One entry per fio job.
    pub jobs: Vec<JobLive>,
}

/// Interval figures of one fio job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobLive {
    /// fio's job name.
    pub name: String,
    /// True when there was no usable previous status: figures are since the job started.
    pub since_start: bool,
    /// Reads.
    pub read: DirLive,
    /// Writes.
    pub write: DirLive,
    /// fsync/fdatasync calls: their rate and latency (`clat_*` hold fio's `sync.lat_ns`);
    /// zero for a job that does not sync.
    pub sync: DirLive,
}

/// Interval figures of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DirLive {
    /// Operations per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes_s: f64,
    /// Mean completion latency over the interval, µs (`None` without completions).
    pub clat_mean_us: Option<f64>,
    /// 99th percentile completion latency, µs.
    pub clat_p99_us: Option<f64>,
    /// True when `clat_p99_us` is fio's cumulative p99 (since the start), not the interval's.
    pub p99_cumulative: bool,
}

/// A status this soon after the last one rated is not rated on its own. fio's final report comes
/// right after its last periodic status (149 ms in `tests/fixtures/fio`; 18 ms in a CI run, whose
/// 18 ms counted 8 KiB read and no completed IO): rates over such a sliver are noise, and the
/// run's figures are in its summary. Statuses come every 1,000 ms (`--status-interval=1`).
pub const MIN_INTERVAL_MS: i64 = 500;

/// Whether `cur` is rated against `prev`, the last status rated: always the first, and a
/// status whose clock went back (`live` rates it since the start); otherwise only
/// `MIN_INTERVAL_MS` or more after `prev`.
#[must_use]
pub fn worth_rating(prev: Option<&FioStatus>, cur: &FioStatus) -> bool {
    prev.is_none_or(|p| !(0..MIN_INTERVAL_MS).contains(&(cur.timestamp_ms - p.timestamp_ms)))
}

/// Interval figures between `prev` and `cur`; with no `prev`, figures since the start.
#[must_use]
pub fn live(prev: Option<&FioStatus>, cur: &FioStatus) -> FioLive {
    let dt_ms = prev.map_or(0, |p| cur.timestamp_ms - p.timestamp_ms);
    let jobs = cur
        .jobs
        .iter()
        .enumerate()
        .map(|(i, job)| {
            let before = prev
                .and_then(|p| p.jobs.get(i))
                .filter(|p| p.name == job.name && dt_ms > 0);
            match before {
                Some(p) => match (
                    dir_delta(&p.read, &job.read, dt_ms),
                    dir_delta(&p.write, &job.write, dt_ms),
                    dir_delta(&p.sync, &job.sync, dt_ms),
                ) {
                    (Some(read), Some(write), Some(sync)) => JobLive {
                        name: job.name.clone(),
                        since_start: false,
                        read,
                        write,
                        sync,
                    },
                    _ => since_start(job),
                },
                None => since_start(job),
            }
        })
        .collect::<Vec<_>>();
    let interval_ms = if dt_ms > 0 {
        dt_ms as u64
    } else {
        cur.jobs
            .iter()
            .map(|j| j.read.runtime_ms.max(j.write.runtime_ms))
            .max()
            .unwrap_or(0)
    };
    FioLive {
        timestamp_ms: cur.timestamp_ms,
        interval_ms,
        jobs,
    }
}

fn since_start(job: &super::status::JobStatus) -> JobLive {
    JobLive {
        name: job.name.clone(),
        since_start: true,
        read: cumulative(&job.read, job.read.runtime_ms),
        write: cumulative(&job.write, job.write.runtime_ms),
        // fio gives the sync calls no runtime of their own: they are rated over the writes'.
        sync: cumulative(&job.sync, job.write.runtime_ms),
    }
}

fn cumulative(d: &DirCounters, runtime_ms: u64) -> DirLive {
    let s = runtime_ms as f64 / 1000.0;
    let (iops, bw) = if s > 0.0 {
        (d.total_ios as f64 / s, d.io_bytes as f64 / s)
    } else {
        (0.0, 0.0)
    };
    let from_bins = percentile(&d.bins, 99.0);
    DirLive {
        iops,
        bw_bytes_s: bw,
        clat_mean_us: (d.clat_n > 0).then(|| d.clat_mean_ns / 1000.0),
        clat_p99_us: from_bins.or(d.p99_ns).map(|ns| ns as f64 / 1000.0),
        p99_cumulative: false,
    }
}

fn dir_delta(p: &DirCounters, c: &DirCounters, dt_ms: i64) -> Option<DirLive> {
    let bytes = c.io_bytes.checked_sub(p.io_bytes)?;
    let ios = c.total_ios.checked_sub(p.total_ios)?;
    let n = c.clat_n.checked_sub(p.clat_n)?;
    let s = dt_ms as f64 / 1000.0;
    let clat_mean_us = (n > 0).then(|| {
        (c.clat_mean_ns * c.clat_n as f64 - p.clat_mean_ns * p.clat_n as f64) / n as f64 / 1000.0
    });
    let interval_p99 = if c.bins.is_empty() {
        None
    } else {
        bins_delta(&p.bins, &c.bins)
    };
    let (clat_p99_us, p99_cumulative) = match interval_p99 {
        Some(bins) => (percentile(&bins, 99.0).map(|ns| ns as f64 / 1000.0), false),
        None => (c.p99_ns.map(|ns| ns as f64 / 1000.0), c.p99_ns.is_some()),
    };
    Some(DirLive {
        iops: ios as f64 / s,
        bw_bytes_s: bytes as f64 / s,
        clat_mean_us,
        clat_p99_us,
        p99_cumulative,
    })
}

/// The run's figures from its last status, summed over fio jobs. `partial` marks a run killed
/// before fio's final report (the last periodic status). `error` comes from `jobs[].error`.
#[must_use]
pub fn summary(name: &str, last: &FioStatus, partial: bool) -> FioSummary {
    let error = last.jobs.iter().find(|j| j.error != 0).map(|j| {
        format!(
            "fio job {} failed: error {} ({})",
            j.name,
            j.error,
            errno_text(j.error)
        )
    });
    FioSummary {
        name: name.to_string(),
        fio_version: last.fio_version.clone(),
        runtime_ms: last
            .jobs
            .iter()
            .map(|j| j.read.runtime_ms.max(j.write.runtime_ms))
            .max()
            .unwrap_or(0),
        read: dir_summary(last.jobs.iter().map(|j| &j.read)),
        write: dir_summary(last.jobs.iter().map(|j| &j.write)),
        sync: sync_summary(&last.jobs),
        partial,
        error,
    }
}

/// The C library's text for an errno, such as `Invalid argument`.
#[must_use]
pub fn errno_text(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    text.strip_suffix(&format!(" (os error {errno})"))
        .map_or(text.clone(), String::from)
}

fn dir_summary<'a>(dirs: impl Iterator<Item = &'a DirCounters> + Clone) -> FioDir {
    let mut out = FioDir::default();
    let mut lat_sum = 0.0;
    let mut n = 0u64;
    let mut p99_max = None::<u64>;
    for d in dirs.clone() {
        out.io_bytes += d.io_bytes;
        out.ios += d.total_ios;
        if d.runtime_ms > 0 {
            let s = d.runtime_ms as f64 / 1000.0;
            out.iops += d.total_ios as f64 / s;
            out.bw_bytes_s += d.io_bytes as f64 / s;
        }
        lat_sum += d.clat_mean_ns * d.clat_n as f64;
        n += d.clat_n;
        p99_max = p99_max.max(d.p99_ns);
    }
    if n > 0 {
        out.clat_mean_us = lat_sum / n as f64 / 1000.0;
    }
    let merged = bins_merge(dirs.map(|d| d.bins.as_slice()));
    out.clat_p99_us = percentile(&merged, 99.0)
        .or(p99_max)
        .map_or(0.0, |ns| ns as f64 / 1000.0);
    out
}

/// The fsync calls of all jobs: their count, their rate over each job's write runtime, and
/// their latency (mean and p99 of `sync.lat_ns`, merged the same way as completions).
fn sync_summary(jobs: &[super::status::JobStatus]) -> FioDir {
    let mut out = dir_summary(jobs.iter().map(|j| &j.sync));
    out.iops = jobs
        .iter()
        .filter(|j| j.write.runtime_ms > 0)
        .map(|j| j.sync.total_ios as f64 / (j.write.runtime_ms as f64 / 1000.0))
        .sum();
    out
}

/// fio's figures over its last status interval, summed over its jobs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FioFigures {
    /// Read IOPS.
    pub r_iops: f64,
    /// Read bytes per second.
    pub r_bw: f64,
    /// Mean read completion latency over the interval, µs.
    pub r_clat_us: f64,
    /// 99th percentile read completion latency since the start, µs.
    pub r_p99_us: f64,
    /// Write IOPS.
    pub w_iops: f64,
    /// Write bytes per second.
    pub w_bw: f64,
    /// Mean write completion latency over the interval, µs.
    pub w_clat_us: f64,
    /// 99th percentile write completion latency since the start, µs.
    pub w_p99_us: f64,
    /// fsync/fdatasync calls per second (0 for a job that does not sync).
    pub s_iops: f64,
    /// Their mean latency over the interval, µs.
    pub s_mean_us: f64,
    /// Their 99th percentile latency, µs.
    pub s_p99_us: f64,
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
