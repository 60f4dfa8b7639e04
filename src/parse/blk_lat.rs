//! Per-device block latency of one sample interval: log2-µs histograms of device time
//! (`block_rq_issue` → `block_rq_complete`) and queue time (`block_rq_insert` → issue), reads
//! and writes apart, and the pseudo-files (`names::BLK_LATENCY`, `names::BLK_STATUS`) that
//! carry them in samples and recordings.
//!
//! Owns: `Hist` (the buckets and the percentile estimate), `DevLat`, the latency pseudo-file's
//! text both ways, and the block tracer's status text both ways. Must not touch: tracefs (the
//! source reads the events), pairing events (`parse::blk_pair`), per-interval figures
//! (`model::latency`).
//!
//! Why histograms at the edge: at 10k IOPS the three events are ~2 MB/s of records; one
//! interval's histograms are a few hundred bytes, and percentiles, the heat map and the
//! Prometheus histogram need nothing more.
//!
//! Buckets, as bcc's `biolatency`: bucket 0 holds 0 µs (under 1 µs), bucket k ≥ 1 holds
//! [2^(k-1), 2^k) µs; the last bucket (k = `BUCKETS - 1`, from 2^(BUCKETS-2) µs ≈ 67 s) is
//! open-ended.
//!
//! The latency pseudo-file: `lost N` (events the kernel dropped from the ring buffer this
//! interval, all devices), then per device a `dev MAJ:MIN NAME` line followed by `events N`
//! (block events read for it), `sample N` (one request in N is timed: the kernel-side
//! filter on sector bits, `source::blk`; left out when every request is), `queue off` when
//! queue time was not measured (the insert event not armed), `unpaired N` (completions whose issue was never seen, aged out
//! after one more read; issues whose completion never came within `blk_pair::AGE_NS`), and
//! the histograms `rd`, `wd` (read, write device time), `rq`, `wq` (read, write queue time),
//! each `max_us sum_us` then `k:count` for its non-empty buckets. A histogram with no IO is
//! left out.

use std::fmt::Write;

use serde::Serialize;

use crate::sample::names;
use crate::{Error, Result};

/// Number of log2 buckets (the last open-ended).
pub const BUCKETS: usize = 28;

/// The bucket of a latency in µs: 0 for 0, else its bit length (1 µs → 1, 2–3 → 2, 4–7 → 3).
#[must_use]
pub fn bucket(us: u64) -> usize {
    ((64 - us.leading_zeros()) as usize).min(BUCKETS - 1)
}

/// The bounds of bucket `k` in µs: `[lo, hi)`.
#[must_use]
pub fn bounds(k: usize) -> (f64, f64) {
    if k == 0 {
        (0.0, 1.0)
    } else {
        let lo = (1u64 << (k - 1)) as f64;
        (lo, lo * 2.0)
    }
}

/// A log2-µs latency histogram and the largest value put in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Hist {
    /// Count per bucket.
    pub counts: [u64; BUCKETS],
    /// The largest latency, µs.
    pub max_us: u64,
    /// The sum of the latencies, µs (Prometheus' `_sum`).
    pub sum_us: u64,
}

impl Hist {
    /// Adds one latency.
    pub fn add(&mut self, us: u64) {
        let c = &mut self.counts[bucket(us)];
        *c = c.saturating_add(1);
        self.max_us = self.max_us.max(us);
        self.sum_us = self.sum_us.saturating_add(us);
    }

    /// The number of latencies (saturating: the counts may come from a damaged recording).
    #[must_use]
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// Adds `other`'s counts.
    pub fn merge(&mut self, other: &Self) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a = a.saturating_add(b);
        }
        self.max_us = self.max_us.max(other.max_us);
        self.sum_us = self.sum_us.saturating_add(other.sum_us);
    }

    /// The `q` quantile (0–1) in µs, or `None` for an empty histogram. The bucket holding
    /// the rank is found exactly; within it the value is interpolated linearly (as
    /// Prometheus' `histogram_quantile`) and capped at the largest value seen. The true
    /// quantile lies in the same bucket, so the estimate is within a factor of 2 of it.
    #[must_use]
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * total as f64;
        let mut below = 0u64;
        for (k, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            if below.saturating_add(c) as f64 >= rank {
                let (lo, hi) = bounds(k);
                let f = ((rank - below as f64) / c as f64).clamp(0.0, 1.0);
                let v = lo + (hi - lo) * f;
                return Some(v.min(self.max_us as f64).max(lo.min(self.max_us as f64)));
            }
            below = below.saturating_add(c);
        }
        Some(self.max_us as f64)
    }
}

/// One device's latency over an interval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DevLat {
    /// The device number as the block events carry it (`major << 20 | minor`).
    pub dev: u32,
    /// Its kernel name (`vda`).
    pub name: String,
    /// Block events read for it.
    pub events: u64,
    /// Completions without an issue and issues without a completion, aged out.
    pub unpaired: u64,
    /// One request in this many is timed (0 and 1: every one): the tracer's kernel-side
    /// filter keeps the requests whose sector has some bits clear, at the end of the interval.
    pub sample_every: u64,
    /// Queue time was not measured: the insert event was not armed (issue 52: one event
    /// fewer a request unless queue time is asked for, `--queue-time`). A recording from
    /// before it always timed queue time.
    pub queue_off: bool,
    /// Read device time (issue → complete).
    pub read_dev: Hist,
    /// Write device time.
    pub write_dev: Hist,
    /// Read queue time (insert → issue).
    pub read_queue: Hist,
    /// Write queue time.
    pub write_queue: Hist,
}

impl DevLat {
    /// `MAJ:MIN` of the device.
    #[must_use]
    pub fn maj_min(&self) -> String {
        format!("{}:{}", self.dev >> 20, self.dev & ((1 << 20) - 1))
    }

    /// Adds `other`'s counts (same device).
    pub fn merge(&mut self, other: &Self) {
        self.events = self.events.saturating_add(other.events);
        self.sample_every = self.sample_every.max(other.sample_every);
        self.queue_off |= other.queue_off;
        self.unpaired = self.unpaired.saturating_add(other.unpaired);
        self.read_dev.merge(&other.read_dev);
        self.write_dev.merge(&other.write_dev);
        self.read_queue.merge(&other.read_queue);
        self.write_queue.merge(&other.write_queue);
    }

    fn hists(&self) -> [(&'static str, &Hist); 4] {
        [
            ("rd", &self.read_dev),
            ("wd", &self.write_dev),
            ("rq", &self.read_queue),
            ("wq", &self.write_queue),
        ]
    }

    fn hist_mut(&mut self, key: &str) -> Option<&mut Hist> {
        Some(match key {
            "rd" => &mut self.read_dev,
            "wd" => &mut self.write_dev,
            "rq" => &mut self.read_queue,
            "wq" => &mut self.write_queue,
            _ => return None,
        })
    }
}

/// One interval's latency pseudo-file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Latency {
    /// Events the kernel dropped from the ring buffer (every armed device's).
    pub lost: u64,
    /// The armed devices, in the order written.
    pub devices: Vec<DevLat>,
}

/// The pseudo-file's text.
#[must_use]
pub fn render(l: &Latency) -> String {
    let mut s = format!("lost {}\n", l.lost);
    for d in &l.devices {
        let _ = write!(
            s,
            "dev {} {}\nevents {}\nunpaired {}\n",
            d.maj_min(),
            d.name,
            d.events,
            d.unpaired
        );
        if d.sample_every > 1 {
            let _ = writeln!(s, "sample {}", d.sample_every);
        }
        if d.queue_off {
            s.push_str("queue off\n");
        }
        for (key, h) in d.hists() {
            if h.total() == 0 {
                continue;
            }
            let _ = write!(s, "{key} {} {}", h.max_us, h.sum_us);
            for (k, c) in h.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                let _ = write!(s, " {k}:{c}");
            }
            s.push('\n');
        }
    }
    s
}

/// Parses the pseudo-file; unknown keys are skipped (a later pagewatch may add some).
pub fn parse(text: &str) -> Result<Latency> {
    let file = names::BLK_LATENCY;
    let mut out = Latency::default();
    for (i, line) in text.lines().enumerate() {
        let bad = |what: &str| Error::parse(file, i + 1, what.to_owned());
        let num = |v: Option<&str>| -> Result<u64> {
            v.and_then(|v| v.parse().ok())
                .ok_or_else(|| bad("not a number"))
        };
        let mut words = line.split_whitespace();
        let Some(key) = words.next() else { continue };
        match key {
            "lost" => out.lost = num(words.next())?,
            "dev" => {
                let (maj, min) = words
                    .next()
                    .and_then(|d| d.split_once(':'))
                    .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                    .filter(|(a, b)| *a < 1 << 12 && *b < 1 << 20)
                    .ok_or_else(|| bad("dev is not MAJ:MIN"))?;
                out.devices.push(DevLat {
                    dev: maj << 20 | min,
                    name: words.next().unwrap_or("").to_owned(),
                    ..DevLat::default()
                });
            }
            _ => {
                let Some(d) = out.devices.last_mut() else {
                    continue;
                };
                match key {
                    "events" => d.events = num(words.next())?,
                    "unpaired" => d.unpaired = num(words.next())?,
                    "sample" => d.sample_every = num(words.next())?,
                    "queue" => d.queue_off = words.next() == Some("off"),
                    _ => {
                        let Some(h) = d.hist_mut(key) else { continue };
                        h.max_us = num(words.next())?;
                        h.sum_us = num(words.next())?;
                        for w in words {
                            let (k, c) = w
                                .split_once(':')
                                .and_then(|(k, c)| {
                                    Some((k.parse::<usize>().ok()?, c.parse().ok()?))
                                })
                                .filter(|(k, _)| *k < BUCKETS)
                                .ok_or_else(|| bad("not a bucket k:count"))?;
                            h.counts[k] = c;
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The block tracer's state in a sample.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BlkStatus {
    /// `armed`, `off`, `not-root`, `no-tracefs`, `no-event`, `error`.
    pub state: String,
    /// Why not armed, or the last read error.
    pub why: Option<String>,
    /// The devices asked for (names).
    pub devices: Vec<String>,
    /// The names asked for that are no block device here (`--latency nosuch`): the others
    /// are timed without them.
    pub unresolved: Vec<String>,
    /// The ring buffer, KiB per CPU.
    pub buffer_kb: u32,
    /// Bytes read from the ring buffers this interval.
    pub bytes: u64,
    /// Reads of the ring buffers this interval (one at each tick, and one whenever a CPU's
    /// buffer is half full).
    pub reads: u64,
    /// Samples taken since it was armed: 0 in the one that armed it, whose interval it did
    /// not watch (a recording without the key reads 0).
    pub ticks: u64,
}

/// The status pseudo-file's text: `state`, `why` (optional), `devices`, `buffer_kb`,
/// `bytes`, `reads`, `ticks`, one `key value` a line.
#[must_use]
pub fn render_status(s: &BlkStatus) -> String {
    let mut t = format!("state {}\n", s.state);
    if let Some(w) = &s.why {
        let _ = writeln!(t, "why {}", w.replace('\n', " "));
    }
    if !s.unresolved.is_empty() {
        let _ = writeln!(t, "unresolved {}", s.unresolved.join(" "));
    }
    let _ = write!(
        t,
        "devices {}\nbuffer_kb {}\nbytes {}\nreads {}\nticks {}\n",
        s.devices.join(" "),
        s.buffer_kb,
        s.bytes,
        s.reads,
        s.ticks
    );
    t
}

/// Parses the status pseudo-file; a missing `state` is an error.
pub fn parse_status(text: &str) -> Result<BlkStatus> {
    let file = names::BLK_STATUS;
    let mut s = BlkStatus::default();
    for (i, line) in text.lines().enumerate() {
        let (k, v) = line.split_once(' ').unwrap_or((line, ""));
        let num = || -> Result<u64> {
            v.trim()
                .parse()
                .map_err(|_| Error::parse(file, i + 1, format!("{k} is not a number")))
        };
        match k {
            "state" => v.trim().clone_into(&mut s.state),
            "why" => s.why = Some(v.to_owned()),
            "devices" => s.devices = v.split_whitespace().map(str::to_owned).collect(),
            "unresolved" => s.unresolved = v.split_whitespace().map(str::to_owned).collect(),
            "buffer_kb" => s.buffer_kb = u32::try_from(num()?).unwrap_or(u32::MAX),
            "bytes" => s.bytes = num()?,
            "reads" => s.reads = num()?,
            "ticks" => s.ticks = num()?,
            _ => {}
        }
    }
    if s.state.is_empty() {
        return Err(Error::parse(file, 1, "no state"));
    }
    Ok(s)
}

/// The block tracer's texts in a sample: its status, and the latency of the interval while
/// armed. `None` when the sample carries neither.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blk {
    /// The tracer's state.
    pub status: Option<BlkStatus>,
    /// The interval's histograms, while armed.
    pub latency: Option<Latency>,
    /// Why one of the two could not be parsed.
    pub error: Option<String>,
}

/// Both pseudo-files of a sample; a bad one is named in `error`, the other stands.
#[must_use]
pub fn from_sample(sample: &crate::sample::RawSample) -> Option<Blk> {
    let status = sample.file(names::BLK_STATUS);
    let latency = sample.file(names::BLK_LATENCY);
    if status.is_none() && latency.is_none() {
        return None;
    }
    let mut error = None;
    let mut keep = |e: Error| {
        error.get_or_insert_with(|| e.to_string());
    };
    Some(Blk {
        status: status.and_then(|t| parse_status(t).map_err(&mut keep).ok()),
        latency: latency.and_then(|t| parse(t).map_err(&mut keep).ok()),
        error,
    })
}

#[cfg(test)]
#[path = "blk_lat_tests.rs"]
mod tests;
