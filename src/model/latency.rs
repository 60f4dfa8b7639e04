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

use std::sync::Arc;

use serde::Serialize;

use crate::parse::blk_lat::{Blk, DevLat, Hist};

/// The latency columns of a disk; all `None` while its requests are not timed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
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
    /// Queue time (insert → issue), reads and writes, median, ms.
    pub queue_p50_ms: Option<f64>,
    /// Queue time, 99th percentile, ms.
    pub queue_p99_ms: Option<f64>,
    /// Block events read for the device this interval.
    pub lat_events: Option<u64>,
    /// Events that could not be timed: completions without their issue, issues without
    /// their completion, and the events the kernel dropped from the ring buffer.
    pub lat_lost: Option<u64>,
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
    /// `armed`, `off`, `not-root`, `no-tracefs`, `no-event`, `no-device`, `error`.
    pub state: String,
    /// Why not armed, or the last read error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The devices asked for.
    pub devices: Vec<String>,
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
        Self {
            lat_read_p50_ms: ms(l.read_dev.quantile(0.5)),
            lat_read_p90_ms: ms(l.read_dev.quantile(0.9)),
            lat_read_p99_ms: ms(l.read_dev.quantile(0.99)),
            lat_write_p50_ms: ms(l.write_dev.quantile(0.5)),
            lat_write_p90_ms: ms(l.write_dev.quantile(0.9)),
            lat_write_p99_ms: ms(l.write_dev.quantile(0.99)),
            lat_max_ms: Some(l.read_dev.max_us.max(l.write_dev.max_us) as f64 / 1000.0),
            queue_p50_ms: ms(q.quantile(0.5)),
            queue_p99_ms: ms(q.quantile(0.99)),
            lat_events: Some(l.events),
            lat_lost: Some(l.unpaired.saturating_add(d.ring_lost)),
        }
    }
}

/// The tracer's state in a snapshot, if it carries one.
#[must_use]
pub fn tracer(blk: Option<&Blk>) -> Option<Tracer> {
    let b = blk?;
    let s = b.status.as_ref()?;
    Some(Tracer {
        state: s.state.clone(),
        why: s.why.clone().or_else(|| b.error.clone()),
        devices: s.devices.clone(),
    })
}

/// Sets each disk's latency from the snapshot's histograms (by name); the others keep none.
pub fn fill(disks: &mut [super::Disk], blk: Option<&Blk>) {
    let Some(l) = blk.and_then(|b| b.latency.as_ref()) else {
        return;
    };
    for d in disks {
        if let Some(dl) = l.devices.iter().find(|x| x.name == d.name) {
            let dl = DiskLatency {
                lat: dl.clone(),
                ring_lost: l.lost,
            };
            d.latency = LatCols::of(&dl);
            d.lat_hist = Some(Arc::new(dl));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::blk_lat::Latency;

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
        assert!(c.queue_p99_ms.unwrap() <= 0.04);
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
        fill(&mut disks, Some(&blk));
        assert_eq!(disks[0].latency.lat_lost, Some(5));
        assert!(disks.iter().skip(1).all(|d| d.latency.lat_events.is_none()));
    }
}
