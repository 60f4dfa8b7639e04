//! One fio JSON status document, reduced to the cumulative counters pagewatch uses.
//!
//! Parsed through `serde_json::Value` so duplicate keys ("job options" repeats an option) and
//! missing optional fields never fail a snapshot. Field paths are fio 3.x's (`stat.c`
//! `show_thread_status_json`): `jobs[i].read|write.{io_bytes,total_ios,runtime,clat_ns{mean,N,
//! percentile,bins}}`, and `jobs[i].sync.{total_ios,lat_ns{…}}` for fsync/fdatasync calls. Owns: that reduction. Must not touch: framing, deltas, processes.

use serde_json::Value;

/// One status document: every figure in it is cumulative since the job started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioStatus {
    /// fio's wall clock when it printed this, ms since the epoch.
    pub timestamp_ms: i64,
    /// `"fio version"`, such as `fio-3.33`.
    pub fio_version: String,
    /// One entry per fio job (numjobs gives several), in fio's order.
    pub jobs: Vec<JobStatus>,
}

/// One fio job in a status document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobStatus {
    /// `jobname`.
    pub name: String,
    /// `error` (an errno; 0 = fine).
    pub error: i32,
    /// `elapsed`, seconds since the job started (0 while the file is laid out).
    pub elapsed_s: u64,
    /// Reads.
    pub read: DirCounters,
    /// Writes.
    pub write: DirCounters,
    /// fsync/fdatasync calls (`sync`: `total_ios` and `lat_ns`; no bytes, no runtime).
    pub sync: DirCounters,
}

/// Cumulative counters of one direction of one job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirCounters {
    /// `io_bytes`.
    pub io_bytes: u64,
    /// `total_ios`.
    pub total_ios: u64,
    /// `runtime`, ms spent doing this direction's IO.
    pub runtime_ms: u64,
    /// `clat_ns.mean`.
    pub clat_mean_ns: f64,
    /// `clat_ns.N`, the number of completions the mean is over.
    pub clat_n: u64,
    /// `clat_ns.percentile["99.000000"]`, cumulative; absent when N is 0.
    pub p99_ns: Option<u64>,
    /// `clat_ns.bins` (json+ only): (latency ns, count), sorted by latency, cumulative.
    pub bins: Vec<(u64, u64)>,
}

impl FioStatus {
    /// Parses one framed document. Fails only when it is not JSON or has no `jobs` array.
    pub fn parse(text: &str) -> Result<FioStatus, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("fio status is not JSON: {e}"))?;
        let jobs = v
            .get("jobs")
            .and_then(Value::as_array)
            .ok_or_else(|| "fio status has no \"jobs\" array".to_string())?;
        Ok(FioStatus {
            timestamp_ms: v.get("timestamp_ms").and_then(Value::as_i64).unwrap_or(0),
            fio_version: v
                .get("fio version")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            jobs: jobs.iter().map(job).collect(),
        })
    }
}

fn job(v: &Value) -> JobStatus {
    JobStatus {
        name: v
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        error: v
            .get("error")
            .and_then(Value::as_i64)
            .and_then(|e| i32::try_from(e).ok())
            .unwrap_or(0),
        elapsed_s: u64_at(v, "elapsed"),
        read: v.get("read").map(dir).unwrap_or_default(),
        write: v.get("write").map(dir).unwrap_or_default(),
        sync: v.get("sync").map(sync).unwrap_or_default(),
    }
}

fn dir(v: &Value) -> DirCounters {
    // fio < 3.0 printed `clat` in µs.
    match v.get("clat_ns") {
        Some(clat) => latency(v, Some(clat), 1),
        None => latency(v, v.get("clat"), 1000),
    }
}

/// `sync`: fio prints the fsync latency as `lat_ns` (there is no completion stage).
fn sync(v: &Value) -> DirCounters {
    match v.get("lat_ns") {
        Some(lat) => latency(v, Some(lat), 1),
        None => latency(v, v.get("lat"), 1000),
    }
}

fn latency(v: &Value, clat: Option<&Value>, scale: u64) -> DirCounters {
    let clat_f = |k: &str| clat.and_then(|c| c.get(k));
    let mut bins: Vec<(u64, u64)> = clat_f("bins")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, c)| {
                    Some((k.parse::<u64>().ok()?.saturating_mul(scale), c.as_u64()?))
                })
                .collect()
        })
        .unwrap_or_default();
    bins.sort_unstable();
    DirCounters {
        io_bytes: u64_at(v, "io_bytes"),
        total_ios: u64_at(v, "total_ios"),
        runtime_ms: u64_at(v, "runtime"),
        clat_mean_ns: clat_f("mean").and_then(Value::as_f64).unwrap_or(0.0) * scale as f64,
        clat_n: clat_f("N").and_then(Value::as_u64).unwrap_or(0),
        p99_ns: clat_f("percentile")
            .and_then(|p| p.get("99.000000"))
            .and_then(Value::as_u64)
            .map(|n| n.saturating_mul(scale)),
        bins,
    }
}

fn u64_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The `pct` percentile of a (latency, count) histogram the way fio computes it
/// (`stat.c` `calc_clat_percentiles`): the first bin where the running count reaches
/// `pct/100 · total`. `None` for an empty histogram.
#[must_use]
pub fn percentile(bins: &[(u64, u64)], pct: f64) -> Option<u64> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    let want = pct / 100.0 * total as f64;
    let mut sum = 0u64;
    bins.iter().find_map(|&(ns, count)| {
        sum += count;
        (sum as f64 >= want).then_some(ns)
    })
}

/// `cur − prev` of two cumulative histograms (both sorted). `None` when a count went down
/// (not the same job, or fio restarted).
#[must_use]
pub fn bins_delta(prev: &[(u64, u64)], cur: &[(u64, u64)]) -> Option<Vec<(u64, u64)>> {
    let mut out = Vec::with_capacity(cur.len());
    let mut p = prev.iter().peekable();
    for &(ns, count) in cur {
        let mut before = 0;
        while let Some(&&(pns, pc)) = p.peek() {
            if pns > ns {
                break;
            }
            p.next();
            if pns == ns {
                before = pc;
            } else if pc > 0 {
                return None;
            }
        }
        let d = count.checked_sub(before)?;
        if d > 0 {
            out.push((ns, d));
        }
    }
    if p.any(|&(_, c)| c > 0) {
        return None;
    }
    Some(out)
}

/// Merges histograms of several jobs into one (sorted).
#[must_use]
pub fn bins_merge<'a>(all: impl Iterator<Item = &'a [(u64, u64)]>) -> Vec<(u64, u64)> {
    let mut m = std::collections::BTreeMap::new();
    for bins in all {
        for &(ns, c) in bins {
            *m.entry(ns).or_insert(0u64) += c;
        }
    }
    m.into_iter().collect()
}
