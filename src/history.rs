//! A bounded history of derived figures for the charts. (Each disk's calm baseline, which
//! judges saturation, is kept by `model::saturation::Judge`.)
//!
//! Owns: `History`, filled from `Model`s. Capacity is fixed at construction, so memory use is
//! bounded however long pagewatch runs. Must not touch: I/O, the clock, drawing.

use std::collections::{HashMap, VecDeque};

use crate::model::Model;

/// Figures of one tick kept for the charts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Point {
    /// Wall time of the sample, ms.
    pub time_ms: i64,
    /// MemAvailable, kB.
    pub mem_available_kb: Option<u64>,
    /// MemTotal, kB.
    pub mem_total_kb: u64,
    /// nr_dirty + nr_writeback, pages.
    pub dirty_wb: Option<u64>,
    /// Background threshold, pages.
    pub bg_thresh: Option<u64>,
    /// Freerun ceiling, pages.
    pub freerun: Option<u64>,
    /// Threshold, pages.
    pub thresh: Option<u64>,
    /// kswapd scan, pages/s.
    pub scan_kswapd: Option<f64>,
    /// Direct-reclaim scan, pages/s.
    pub scan_direct: Option<f64>,
    /// allocstall/s.
    pub allocstall: Option<f64>,
}

/// One disk's figures at one tick.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskPoint {
    /// The tick this point belongs to.
    pub tick: u64,
    /// r/s + w/s + d/s.
    pub iops: f64,
    /// Average await over reads, writes and discards, ms (0 without I/O).
    pub await_ms: f64,
    /// aqu-sz.
    pub aqu_sz: f64,
    /// %util.
    pub util_pct: f64,
}

/// A disk's recent points, kept as runs: consecutive ticks with the same figures are one
/// entry. An idle device (100 loop devices on one machine, each 600 ticks of zeros) costs
/// one run rather than 600 points (24 KB; 2.4 MB for the hundred).
#[derive(Debug, Clone, Default)]
pub struct DiskHistory {
    /// Runs, oldest first.
    runs: VecDeque<Run>,
    /// Points in all the runs.
    len: usize,
    /// Device-time histograms (reads and writes) of the ticks its requests were timed,
    /// oldest first, with their tick: the heat map's columns.
    pub latency: VecDeque<(u64, crate::parse::blk_lat::Hist)>,
}

/// `len` points at ticks `first.tick`, `first.tick + 1`, … with `first`'s figures.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: DiskPoint,
    len: u64,
}

impl Run {
    fn point(&self, i: u64) -> DiskPoint {
        DiskPoint {
            tick: self.first.tick + i,
            ..self.first
        }
    }
}

impl DiskHistory {
    /// How many points it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The last `n` points (all when fewer), oldest first.
    #[must_use]
    pub fn last(&self, n: usize) -> Vec<DiskPoint> {
        let mut out = Vec::with_capacity(n.min(self.len));
        let mut skip = self.len.saturating_sub(n) as u64;
        for r in &self.runs {
            if skip >= r.len {
                skip -= r.len;
                continue;
            }
            out.extend((skip..r.len).map(|i| r.point(i)));
            skip = 0;
        }
        out
    }

    /// The newest point.
    #[must_use]
    pub fn back(&self) -> Option<DiskPoint> {
        self.runs.back().map(|r| r.point(r.len - 1))
    }

    /// The tick of the newest point with any I/O (IOPS or %util above 0), `None` when every
    /// point held is idle. Runs are searched newest first, so an idle device costs one run.
    #[must_use]
    pub fn last_busy(&self) -> Option<u64> {
        self.runs
            .iter()
            .rev()
            .find(|r| r.first.iops > 0.0 || r.first.util_pct > 0.0)
            .map(|r| r.first.tick + r.len - 1)
    }

    /// The oldest point.
    #[must_use]
    pub fn front(&self) -> Option<DiskPoint> {
        self.runs.front().map(|r| r.first)
    }

    fn push(&mut self, p: DiskPoint) {
        self.len += 1;
        if let Some(r) = self.runs.back_mut()
            && r.first.tick + r.len == p.tick
            && (DiskPoint {
                tick: p.tick,
                ..r.first
            }) == p
        {
            r.len += 1;
            return;
        }
        self.runs.push_back(Run { first: p, len: 1 });
    }

    /// Drops the points at or before tick `oldest`.
    fn drop_through(&mut self, oldest: u64) {
        while let Some(r) = self.runs.front_mut()
            && r.first.tick <= oldest
        {
            let gone = (oldest + 1 - r.first.tick).min(r.len);
            self.len -= gone as usize;
            if gone == r.len {
                self.runs.pop_front();
            } else {
                r.first.tick += gone;
                r.len -= gone;
            }
        }
        // A busy device's runs shrink back once it is calm again.
        if self.runs.capacity() > 2 * self.runs.len() + 8 {
            self.runs.shrink_to_fit();
        }
    }
}

/// Bounded history of the last `capacity` ticks.
#[derive(Debug, Clone)]
pub struct History {
    capacity: usize,
    tick: u64,
    /// System-wide points, oldest first.
    pub points: VecDeque<Point>,
    /// Per-disk points by device name (hashed: every device is looked up at every tick, and
    /// again for the disk table's order).
    pub disks: HashMap<String, DiskHistory>,
}

impl History {
    /// How many ticks it holds at most.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// An empty history holding at most `capacity` ticks.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(2),
            tick: 0,
            points: VecDeque::with_capacity(capacity),
            disks: HashMap::new(),
        }
    }

    /// Ticks recorded so far (including ones that fell out of the window).
    #[must_use]
    pub fn ticks(&self) -> u64 {
        self.tick
    }

    /// Records one derived sample.
    pub fn push(&mut self, m: &Model) {
        self.tick += 1;
        if self.points.len() == self.capacity {
            self.points.pop_front();
        }
        let d = &m.dirty;
        self.points.push_back(Point {
            time_ms: m.time_ms,
            mem_available_kb: m.memory.MemAvailable.or(m.memory.derived_MemAvailable),
            mem_total_kb: m.memory.MemTotal,
            dirty_wb: d.dirty_writeback_pages,
            bg_thresh: d.bg_thresh_pages.or(d.derived_bg_thresh_pages),
            freerun: d.freerun_pages,
            thresh: d.thresh_pages.or(d.derived_thresh_pages),
            scan_kswapd: m.reclaim.pgscan_kswapd_s,
            scan_direct: m.reclaim.pgscan_direct_s,
            allocstall: m.reclaim.allocstall_s,
        });
        let oldest = self.tick.saturating_sub(self.capacity as u64);
        let mut kept = 0;
        for disk in &m.disks {
            let c = &disk.cols;
            let (Some(r), Some(w)) = (c.r_s, c.w_s) else {
                continue;
            };
            let ds = c.d_s.unwrap_or(0.0);
            let iops = r + w + ds;
            let await_ms = if iops > 0.0 {
                (r * c.r_await.unwrap_or(0.0)
                    + w * c.w_await.unwrap_or(0.0)
                    + ds * c.d_await.unwrap_or(0.0))
                    / iops
            } else {
                0.0
            };
            // Look the name up before cloning it: the disk is known on every tick but its first.
            let h = match self.disks.get_mut(&disk.name) {
                Some(h) => h,
                None => self.disks.entry(disk.name.clone()).or_default(),
            };
            let p = DiskPoint {
                tick: self.tick,
                iops,
                await_ms,
                aqu_sz: c.aqu_sz.unwrap_or(0.0),
                util_pct: c.util_pct.unwrap_or(0.0),
            };
            h.push(p);
            if let Some(l) = &disk.lat_hist {
                // Sized up front for the whole window: grown by doubling, a timed disk's
                // 600 columns (248 B each) took 1,024 slots, 254 KB, in steps (issue 52).
                if h.latency.capacity() == 0 {
                    // One more than the window: a tick is pushed before the oldest goes.
                    h.latency.reserve_exact(self.capacity + 1);
                }
                h.latency.push_back((self.tick, l.device()));
            }
            // Aged here, while its history is at hand: a pass over every history after the
            // loop touched each again (100 idle loop devices, issue 52).
            h.age(oldest);
            kept += 1;
        }
        // Only when a history had no point this tick (a device gone, or without figures).
        if kept < self.disks.len() {
            self.disks.retain(|_, h| {
                h.age(oldest);
                !h.is_empty()
            });
        }
    }
}

impl DiskHistory {
    /// Drops the points and heat-map columns at or before tick `oldest`.
    fn age(&mut self, oldest: u64) {
        self.drop_through(oldest);
        while self.latency.front().is_some_and(|(t, _)| *t <= oldest) {
            self.latency.pop_front();
        }
        // No longer timed: its heat map's window is given back.
        if self.latency.is_empty() && self.latency.capacity() > 0 {
            self.latency = VecDeque::new();
        }
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
