//! Per-device block latency of the interval (issue 25): p50, p90, p99 and max of device time
//! (issue → complete) and queue time (insert → issue), reads and writes apart, from the
//! log2-µs histograms the block tracer carries (`parse::blk_lat`).
//!
//! Owns: the figures each disk row carries (`LatCols`, the batch JSON's `lat_*` and
//! `queue_*` keys), the interval's histograms kept for the heat map, the report and
//! `/metrics` (`DiskLatency`), and the tracer's state for the screen (`Tracer`). Must not
//! touch: I/O, pairing the events (`parse::blk_pair`).
//!
//! Percentiles from log2 buckets: the bucket holding the rank is exact; inside it the value
//! is interpolated linearly and capped at the interval's max (`Hist::quantile`). The true
//! percentile lies in the same bucket, so the figure is within a factor of 2 of it (and
//! usually much closer: the error is at most the bucket's width, half its upper bound).

use serde::Serialize;

use crate::parse::blk_lat::{Blk, DevLat, Hist};

/// The latency columns of a disk; all `None` while its requests are not timed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatCols {
    /// Read device time, median, ms.
    pub lat_read_p50_ms: Option<f64>,
    /// Read device time, 90th percentile, ms.
    pub lat_read_p90_ms: Option<f64>,
    /// Read device time, 99th percentile, ms.
    pub lat_read_p99_ms: Option<f64>,
    /// Write device time, median, ms.
    pub lat_write_p50_ms: Option<f64>,
    /// Write device time, 90th percentile, ms.
    pub lat_write_p90_ms: Option<f64>,
    /// Write device time, 99th percentile, ms.
    pub lat_write_p99_ms: Option<f64>,
    /// The longest device time of the interval, reads or writes, ms.
    pub lat_max_ms: Option<f64>,
    /// Whether queue time was measured (`--queue-time` arms the insert event); the `queue_*`
    /// figures are `None` when it was not.
    pub lat_queue_timed: Option<bool>,
    /// Queue time (insert → issue), reads and writes, median, ms.
    pub queue_p50_ms: Option<f64>,
    /// Queue time, 90th percentile, ms.
    pub queue_p90_ms: Option<f64>,
    /// Queue time, 99th percentile, ms.
    pub queue_p99_ms: Option<f64>,
    /// Block events read for the device this interval.
    pub lat_events: Option<u64>,
    /// Events that could not be timed: completions without their issue, issues without
    /// their completion, and the events the kernel dropped from the ring buffer.
    pub lat_lost: Option<u64>,
    /// One request in this many is timed (1: every one): at high rates the tracer's kernel
    /// filter keeps only the requests whose sector has some bits clear (`source::blk`). The
    /// percentiles are of those; the counts (`lat_events`, the histograms) are not scaled.
    pub lat_sample_every: Option<u64>,
    /// Read device time, requests per log2 bucket: index 0 is under 1 µs, index k ≥ 1 is
    /// [2^(k-1), 2^k) µs; cut after the last non-empty bucket. Summed over intervals they give
    /// a whole run's distribution.
    pub lat_read_hist: Option<Vec<u64>>,
    /// Write device time, the same buckets.
    pub lat_write_hist: Option<Vec<u64>>,
    /// Queue time (reads and writes), the same buckets.
    pub queue_hist: Option<Vec<u64>>,
}

/// A disk row's latency columns: boxed while its requests are timed, and otherwise the shared
/// all-`None` columns, which it reads and serializes as (every `lat_*` and `queue_*` key, as
/// `null`). A `Disk` row is built for every device every tick, and most devices are not timed:
/// unboxed, the 288 bytes of `None`s were a third of each row (100 idle loop devices: 29 KB
/// written and dropped a tick).
#[derive(Debug, Clone, Default)]
pub struct Timed(Option<Box<LatCols>>);

/// Equal when the columns are, boxed or not.
impl PartialEq for Timed {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

/// The columns of a device whose requests are not timed.
static UNTIMED: std::sync::LazyLock<LatCols> = std::sync::LazyLock::new(LatCols::default);

impl From<LatCols> for Timed {
    fn from(cols: LatCols) -> Self {
        Self(Some(Box::new(cols)))
    }
}

impl std::ops::Deref for Timed {
    type Target = LatCols;
    fn deref(&self) -> &LatCols {
        self.0.as_deref().unwrap_or(&UNTIMED)
    }
}

/// Setting a column gives the row columns of its own.
impl std::ops::DerefMut for Timed {
    fn deref_mut(&mut self) -> &mut LatCols {
        self.0.get_or_insert_with(Box::default)
    }
}

impl Serialize for Timed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// A histogram's counts cut after the last non-empty bucket.
fn counts(h: &Hist) -> Vec<u64> {
    let n = h.counts.iter().rposition(|&c| c > 0).map_or(0, |i| i + 1);
    h.counts[..n].to_vec()
}

/// A disk's histograms of the interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskLatency {
    /// As the tracer carried them.
    pub lat: DevLat,
    /// Events the kernel dropped from the ring buffer (every armed device's).
    pub ring_lost: u64,
}

impl DiskLatency {
    /// Device time, reads and writes together (the heat map's).
    #[must_use]
    pub fn device(&self) -> Hist {
        let mut h = self.lat.read_dev;
        h.merge(&self.lat.write_dev);
        h
    }

    /// Queue time, reads and writes together.
    #[must_use]
    pub fn queue(&self) -> Hist {
        let mut h = self.lat.read_queue;
        h.merge(&self.lat.write_queue);
        h
    }
}

/// The block tracer's state, for the screen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tracer {
    /// `armed`, `blind` (armed, but a timed device read no event in an interval in which
    /// diskstats counted `BLIND_MIN` completions or more for it), `off`, `not-root`,
    /// `no-tracefs`, `no-event`, `no-device`, `error`.
    pub state: String,
    /// Why not armed, or the last read error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The devices asked for.
    pub devices: Vec<String>,
    /// Those asked for that are no block device here: the others are timed without them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<String>,
}

fn ms(us: Option<f64>) -> Option<f64> {
    us.map(|u| u / 1000.0)
}

impl LatCols {
    /// The columns of one device's histograms.
    #[must_use]
    pub fn of(d: &DiskLatency) -> Self {
        let l = &d.lat;
        let q = d.queue();
        let queue = |v: Option<f64>| v.filter(|_| !l.queue_off);
        Self {
            lat_read_p50_ms: ms(l.read_dev.quantile(0.5)),
            lat_read_p90_ms: ms(l.read_dev.quantile(0.9)),
            lat_read_p99_ms: ms(l.read_dev.quantile(0.99)),
            lat_write_p50_ms: ms(l.write_dev.quantile(0.5)),
            lat_write_p90_ms: ms(l.write_dev.quantile(0.9)),
            lat_write_p99_ms: ms(l.write_dev.quantile(0.99)),
            lat_max_ms: Some(l.read_dev.max_us.max(l.write_dev.max_us) as f64 / 1000.0),
            lat_queue_timed: Some(!l.queue_off),
            queue_p50_ms: queue(ms(q.quantile(0.5))),
            queue_p90_ms: queue(ms(q.quantile(0.9))),
            queue_p99_ms: queue(ms(q.quantile(0.99))),
            lat_events: Some(l.events),
            lat_lost: Some(l.unpaired.saturating_add(d.ring_lost)),
            lat_sample_every: Some(l.sample_every.max(1)),
            lat_read_hist: Some(counts(&l.read_dev)),
            lat_write_hist: Some(counts(&l.write_dev)),
            queue_hist: (!l.queue_off).then(|| counts(&q)),
        }
    }
}

/// A latency heat map: time runs across the columns, the log2 buckets up the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Heat {
    /// The bucket of the bottom row (it also holds the faster buckets cut off below it).
    pub lo: usize,
    /// The bucket of the top row.
    pub hi: usize,
    /// Per column (`None`: not timed then), per row from `lo` up: the share of the column's
    /// requests in that bucket, 0–1.
    pub cells: Vec<Option<Vec<f64>>>,
}

/// The heat map of `cols` (oldest first) in at most `rows` rows: from the slowest bucket
/// seen down; faster buckets that do not fit are folded into the bottom row. `None` when no
/// column holds a request.
#[must_use]
pub fn heat(cols: &[Option<Hist>], rows: usize) -> Option<Heat> {
    let seen = |f: fn(&mut dyn Iterator<Item = usize>) -> Option<usize>| {
        let mut it = cols.iter().flatten().flat_map(|h| {
            h.counts
                .iter()
                .enumerate()
                .filter(|c| *c.1 > 0)
                .map(|c| c.0)
        });
        f(&mut it)
    };
    let (lo, hi) = (seen(|i| i.min())?, seen(|i| i.max())?);
    let lo = lo.max((hi + 1).saturating_sub(rows.max(1)));
    let cells = cols
        .iter()
        .map(|c| {
            let h = c.as_ref()?;
            let total = h.total();
            (total > 0).then(|| {
                (lo..=hi)
                    .map(|k| {
                        let n: u64 = if k == lo {
                            h.counts[..=lo]
                                .iter()
                                .fold(0u64, |a, &c| a.saturating_add(c))
                        } else {
                            h.counts[k]
                        };
                        n as f64 / total as f64
                    })
                    .collect()
            })
        })
        .collect();
    Some(Heat { lo, hi, cells })
}

/// A bucket's lower bound as a short label: `<1us` for bucket 0, else `512us`, `1ms`, `2s`.
#[must_use]
pub fn bucket_label(k: usize) -> String {
    let (lo, _) = crate::parse::blk_lat::bounds(k);
    if k == 0 {
        "0us".to_owned()
    } else if lo < 1000.0 {
        format!("{lo:.0}us")
    } else if lo < 1e6 {
        format!("{:.0}ms", lo / 1000.0)
    } else {
        format!("{:.0}s", lo / 1e6)
    }
}

/// A timed device with no event in an interval in which diskstats counted at least this many
/// completions (times the sampling's N, `LatCols::lat_sample_every`) makes the armed tracer
/// `blind`.
pub const BLIND_MIN: f64 = 10.0;

/// What `tracer` reads of a timed disk (`disk::seen_by_latency_tracer`): its events, whether
/// its diskstats line was carried from an earlier read, its completions a second (reads,
/// writes, discards, flushes) and the sampling's N.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// Device name.
    pub name: &'a str,
    /// Block events read for it this interval (`LatCols::lat_events`).
    pub events: Option<u64>,
    /// Its diskstats line was not read this tick (`Disk::span_s`).
    pub carried: bool,
    /// Completions a second, from diskstats.
    pub completions_per_s: f64,
    /// One request in N timed (`LatCols::lat_sample_every`).
    pub sample_every: Option<u64>,
}

/// The tracer's state in a snapshot, if it carries one: `blind` in place of `armed` when a
/// timed disk (`fill` first) read no event over an interval it watched whole (not the one
/// that armed it: `BlkStatus::ticks`) while its diskstats line, read this tick (not carried),
/// counted `BLIND_MIN` completions or more over `dt_s`. The events come from the kernel's
/// ring buffer and the completions from its counters: a tracer armed but blind (issue 51: an
/// instance disabled under it) must not read as a quiet disk.
#[must_use]
pub fn tracer(blk: Option<&Blk>, disks: &[Seen<'_>], dt_s: Option<f64>) -> Option<Tracer> {
    let b = blk?;
    let s = b.status.as_ref()?;
    let mut t = Tracer {
        state: s.state.clone(),
        why: s.why.clone().or_else(|| b.error.clone()),
        devices: s.devices.clone(),
        unresolved: s.unresolved.clone(),
    };
    let dt = dt_s.unwrap_or(0.0);
    let blind: Vec<String> = disks
        .iter()
        .filter(|d| d.events == Some(0) && !d.carried)
        .filter_map(|d| {
            let done = d.completions_per_s * dt;
            // Sampled one in N: N times as many completions for as many expected events.
            let every = d.sample_every.unwrap_or(1).max(1) as f64;
            (done >= BLIND_MIN * every).then(|| format!("{} {done:.0}", d.name))
        })
        .collect();
    if s.state == "armed" && s.ticks > 0 && !blind.is_empty() {
        t.state = "blind".into();
        let why = format!(
            "0 events this interval where diskstats counted completions: {}",
            blind.join(", ")
        );
        t.why = Some(t.why.map_or(why.clone(), |w| format!("{why}; {w}")));
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::blk_lat::Latency;

    /// An untimed row holds no columns of its own, yet reads, compares and serializes as the
    /// all-`None` columns (every key, as `null`); setting a column gives it its own.
    #[test]
    fn an_untimed_row_is_the_all_none_columns() {
        let untimed = Timed::default();
        let boxed = Timed::from(LatCols::default());
        assert!(untimed.0.is_none());
        assert_eq!(untimed, boxed);
        let json = serde_json::to_value(&untimed).unwrap();
        assert_eq!(json, serde_json::to_value(&boxed).unwrap());
        assert_eq!(json, serde_json::to_value(LatCols::default()).unwrap());
        let keys = json.as_object().unwrap();
        assert_eq!(keys.len(), 17);
        assert!(keys.values().all(serde_json::Value::is_null));
        let mut set = untimed.clone();
        set.lat_events = Some(3);
        assert!(set.0.is_some());
        assert_ne!(set, untimed);
        assert_eq!(UNTIMED.lat_events, None, "the shared columns untouched");
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "shares of whole counts are exact")]
    fn the_heat_map_keeps_the_slow_end_and_folds_the_fast_one() {
        let mut a = Hist::default();
        for us in [3, 3, 100, 100] {
            a.add(us);
        }
        let mut b = Hist::default();
        b.add(2000);
        let h = heat(&[Some(a), None, Some(b), Some(Hist::default())], 16).unwrap();
        assert_eq!((h.lo, h.hi), (2, 11));
        let col = h.cells[0].as_ref().unwrap();
        assert_eq!(col.len(), 10);
        assert_eq!((col[0], col[7 - 2]), (0.5, 0.5));
        assert_eq!(h.cells[1], None);
        assert_eq!(h.cells[2].as_ref().unwrap()[11 - 2], 1.0);
        assert_eq!(h.cells[3], None, "a column without requests");
        // Four rows: 3 µs folds into the bottom row (bucket 8).
        let h = heat(&[Some(a), Some(b)], 4).unwrap();
        assert_eq!((h.lo, h.hi), (8, 11));
        assert_eq!(h.cells[0].as_ref().unwrap()[0], 1.0);
        assert_eq!(heat(&[None], 4), None);
        assert_eq!(
            (
                bucket_label(0),
                bucket_label(10),
                bucket_label(11),
                bucket_label(21)
            ),
            ("0us".into(), "512us".into(), "1ms".into(), "1s".into())
        );
    }

    #[test]
    fn columns_from_the_histograms_and_none_while_not_timed() {
        let mut l = DevLat {
            dev: 254 << 20,
            name: "vda".into(),
            events: 300,
            unpaired: 2,
            ..DevLat::default()
        };
        for _ in 0..99 {
            l.read_dev.add(200);
        }
        l.read_dev.add(5000);
        l.write_queue.add(40);
        for _ in 0..9 {
            l.write_queue.add(3000);
        }
        let dl = DiskLatency {
            lat: l,
            ring_lost: 3,
        };
        let c = LatCols::of(&dl);
        let p50 = c.lat_read_p50_ms.unwrap();
        assert!((0.128..=0.2).contains(&p50), "{p50}");
        let p99 = c.lat_read_p99_ms.unwrap();
        assert!((0.128..=0.256).contains(&p99), "99 of 100 at 200 µs: {p99}");
        assert_eq!(c.lat_max_ms, Some(5.0));
        assert_eq!(c.lat_write_p50_ms, None, "no writes");
        assert_eq!((c.lat_events, c.lat_lost), (Some(300), Some(5)));
        let mut want = vec![0; 14];
        want[8] = 99;
        want[13] = 1;
        assert_eq!(
            c.lat_read_hist,
            Some(want),
            "200 µs in bucket 8, 5 ms in 13"
        );
        assert_eq!(c.lat_write_hist, Some(Vec::new()));
        // Queue: 1 request at 40 µs, 9 at 3 ms; every percentile the screen's header names
        // is there (the detail view read `queue 0.00 - 0.00`).
        let q = [c.queue_p50_ms, c.queue_p90_ms, c.queue_p99_ms].map(Option::unwrap);
        assert!(q.iter().all(|v| (2.048..=4.096).contains(v)), "{q:?}");
        assert!(q[0] <= q[1] && q[1] <= q[2], "{q:?}");
        // JSON: null while not timed.
        let none = serde_json::to_value(LatCols::default()).unwrap();
        assert!(none["lat_read_p50_ms"].is_null() && none["lat_lost"].is_null());
        let blk = Blk {
            latency: Some(Latency {
                lost: 3,
                devices: vec![dl.lat.clone()],
            }),
            ..Blk::default()
        };
        let m = crate::model::Model::derive(
            None,
            &crate::parse::Snapshot::parse(&crate::source::test_samples("live-idle")[0]).unwrap(),
            crate::model::Options::default(),
        );
        let mut disks = m.disks;
        let Some(first) = disks.first().map(|d| d.name.clone()) else {
            return;
        };
        let mut blk = blk;
        blk.latency.as_mut().unwrap().devices[0]
            .name
            .clone_from(&first);
        super::super::disk::fill_latency(&mut disks, Some(&blk));
        assert_eq!(disks[0].latency.lat_lost, Some(5));
        assert!(disks.iter().skip(1).all(|d| d.latency.lat_events.is_none()));
    }

    #[test]
    fn queue_time_not_measured_is_said_not_zero() {
        let mut lat = DevLat {
            events: 20,
            queue_off: true,
            ..DevLat::default()
        };
        lat.read_dev.add(100);
        let c = LatCols::of(&DiskLatency { lat, ring_lost: 0 });
        assert_eq!(c.lat_queue_timed, Some(false));
        assert_eq!(
            (c.queue_p50_ms, c.queue_p99_ms, c.queue_hist),
            (None, None, None)
        );
        assert!(c.lat_read_p50_ms.is_some(), "device time is");
        let timed = LatCols::of(&DiskLatency {
            lat: DevLat::default(),
            ring_lost: 0,
        });
        assert_eq!(timed.lat_queue_timed, Some(true));
        assert_eq!(timed.queue_hist, Some(Vec::new()));
        assert_eq!(LatCols::default().lat_queue_timed, None, "not timed at all");
    }

    #[test]
    fn an_armed_tracer_that_reads_nothing_where_diskstats_counts_says_blind() {
        let snap =
            crate::parse::Snapshot::parse(&crate::source::test_samples("live-idle")[0]).unwrap();
        let m = crate::model::Model::derive(None, &snap, crate::model::Options::default());
        let Some(mut d) = m.disks.into_iter().next() else {
            return;
        };
        d.cols = crate::model::disk::Columns {
            w_s: Some(400.0),
            ..d.cols
        };
        d.span_s = None;
        d.latency.lat_events = Some(0);
        let status = |state: &str, ticks| crate::parse::blk_lat::BlkStatus {
            state: state.into(),
            devices: vec![d.name.clone()],
            ticks,
            ..Default::default()
        };
        let blk = |s| Blk {
            status: Some(s),
            ..Blk::default()
        };
        let state = |b: &Blk, disks: &[crate::model::Disk], dt| {
            let seen = crate::model::disk::seen_by_latency_tracer(disks);
            let t = tracer(Some(b), &seen, dt).unwrap();
            (t.state, t.why.unwrap_or_default())
        };
        let armed = blk(status("armed", 3));
        let (st, why) = state(&armed, std::slice::from_ref(&d), Some(1.0));
        assert_eq!(st, "blind");
        assert!(why.contains(&format!("{} 400", d.name)), "{why}");
        // Not in the interval that armed it (it watched none of it).
        let (st, _) = state(
            &blk(status("armed", 0)),
            std::slice::from_ref(&d),
            Some(1.0),
        );
        assert_eq!(st, "armed");
        // Under BLIND_MIN completions: a quiet disk.
        let (st, _) = state(&armed, std::slice::from_ref(&d), Some(0.02));
        assert_eq!(st, "armed");
        // Sampled one in 64: 400 completions are ~6 expected events, 0 can be chance.
        let mut sparse = d.clone();
        sparse.latency.lat_sample_every = Some(64);
        assert_eq!(state(&armed, &[sparse], Some(1.0)).0, "armed");
        let mut seen = d.clone();
        seen.latency.lat_events = Some(800);
        assert_eq!(state(&armed, &[seen], Some(1.0)).0, "armed");
        // A line carried from an earlier read: its rates cover more than the interval.
        let mut carried = d.clone();
        carried.span_s = Some(4.0);
        assert_eq!(state(&armed, &[carried], Some(1.0)).0, "armed");
        // Not timed at all (no events figure), or the tracer off: nothing to say.
        let mut untimed = d.clone();
        untimed.latency.lat_events = None;
        assert_eq!(state(&armed, &[untimed], Some(1.0)).0, "armed");
        assert_eq!(state(&blk(status("off", 3)), &[d], Some(1.0)).0, "off");
    }
}
