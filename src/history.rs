//! A bounded history of derived figures for the charts, and each disk's await baseline.
//!
//! Owns: `History`, filled from `Model`s. Capacity is fixed at construction, so memory use is
//! bounded however long pagewatch runs. Must not touch: I/O, the clock, drawing.

use std::collections::{BTreeMap, VecDeque};

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

/// A disk's recent points and its await baseline.
#[derive(Debug, Clone, Default)]
pub struct DiskHistory {
    /// Points, oldest first.
    pub points: VecDeque<DiskPoint>,
    /// Median await of the ticks that had I/O in the window: the device's own baseline.
    pub baseline_await_ms: Option<f64>,
    /// The awaits of the points with I/O, sorted (`f64::total_cmp`), kept as points come and
    /// go so that the median is read, not recomputed over the whole window each tick.
    busy_awaits: Vec<f64>,
}

impl DiskHistory {
    /// Takes in a point's await if it had I/O (`add`), or lets it go (`!add`).
    fn track(&mut self, p: &DiskPoint, add: bool) {
        let busy = p.iops > 0.0;
        if !busy {
            return;
        }
        let at = self
            .busy_awaits
            .partition_point(|a| a.total_cmp(&p.await_ms).is_lt());
        if add {
            self.busy_awaits.insert(at, p.await_ms);
        } else if self
            .busy_awaits
            .get(at)
            .is_some_and(|a| a.total_cmp(&p.await_ms).is_eq())
        {
            self.busy_awaits.remove(at);
        }
    }

    /// The median of the busy awaits: the one at the middle of the sorted list (upper middle
    /// for an even count).
    fn median(&self) -> Option<f64> {
        self.busy_awaits.get(self.busy_awaits.len() / 2).copied()
    }
}

/// Bounded history of the last `capacity` ticks.
#[derive(Debug, Clone)]
pub struct History {
    capacity: usize,
    tick: u64,
    /// System-wide points, oldest first.
    pub points: VecDeque<Point>,
    /// Per-disk points by device name.
    pub disks: BTreeMap<String, DiskHistory>,
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
            disks: BTreeMap::new(),
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
            h.track(&p, true);
            h.points.push_back(p);
        }
        let oldest = self.tick.saturating_sub(self.capacity as u64);
        self.disks.retain(|_, h| {
            while let Some(p) = h.points.front().filter(|p| p.tick <= oldest).copied() {
                h.track(&p, false);
                h.points.pop_front();
            }
            h.baseline_await_ms = h.median();
            !h.points.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_ignores_idle_ticks_and_follows_points_leaving() {
        let pt = |iops, await_ms| DiskPoint {
            iops,
            await_ms,
            ..DiskPoint::default()
        };
        let mut h = DiskHistory::default();
        for (iops, a) in [
            (0.0, 0.0),
            (10.0, 1.0),
            (10.0, 3.0),
            (10.0, 2.0),
            (0.0, 0.0),
        ] {
            h.track(&pt(iops, a), true);
        }
        assert_eq!(h.median(), Some(2.0));
        h.track(&pt(10.0, 4.0), true);
        assert_eq!(h.median(), Some(3.0), "upper middle of 1 2 3 4");
        h.track(&pt(10.0, 3.0), false);
        h.track(&pt(0.0, 9.0), false);
        assert_eq!(h.median(), Some(2.0), "1 2 4");
        h.track(&pt(f64::NAN, 5.0), true);
        assert_eq!(h.busy_awaits, [1.0, 2.0, 4.0], "NaN iops is not I/O");
        for a in [1.0, 2.0, 4.0] {
            h.track(&pt(10.0, a), false);
        }
        assert_eq!(h.median(), None);
    }

    /// A model whose only disks are `(name, iops, await)`, all reads.
    fn model(disks: &[(&str, f64, f64)]) -> Model {
        use crate::model::{Disk, Options, disk::Columns};
        let snap = crate::parse::Snapshot {
            page_size: 4096,
            ..crate::parse::Snapshot::default()
        };
        let mut m = Model::derive(None, &snap, Options::default());
        m.disks = disks
            .iter()
            .map(|&(name, iops, await_ms)| Disk {
                name: name.to_owned(),
                dm_name: None,
                partition: false,
                in_flight: 0,
                queue: None,
                cols: Columns {
                    r_s: Some(iops),
                    w_s: Some(0.0),
                    r_await: Some(await_ms),
                    ..Columns::default()
                },
            })
            .collect();
        m
    }

    #[test]
    fn baseline_is_the_median_of_the_busy_ticks_in_the_window() {
        // Idle stretches, busy stretches, a disk that comes and goes; window of 5 ticks.
        let mut h = History::new(5);
        let mut seen: Vec<Vec<(&str, f64, f64)>> = Vec::new();
        let awaits = [
            0.0, 4.0, 0.0, 0.0, 9.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 3.0, 3.0, 0.0,
        ];
        for (t, &a) in awaits.iter().enumerate() {
            let iops = if a > 0.0 { 10.0 } else { 0.0 };
            let mut disks = vec![("vda", iops, a)];
            if (3..9).contains(&t) {
                disks.push(("sdb", 5.0, t as f64));
            }
            h.push(&model(&disks));
            seen.push(disks);
            for name in ["vda", "sdb"] {
                let window = &seen[seen.len().saturating_sub(5)..];
                let mut busy: Vec<f64> = window
                    .iter()
                    .flatten()
                    .filter(|d| d.0 == name && d.1 > 0.0)
                    .map(|d| d.2)
                    .collect();
                busy.sort_by(f64::total_cmp);
                let want = busy.get(busy.len() / 2).copied();
                let present = window.iter().flatten().any(|d| d.0 == name);
                let got = h.disks.get(name).map(|d| d.baseline_await_ms);
                assert_eq!(got, present.then_some(want), "tick {t} {name}");
            }
        }
        assert_eq!(h.disks["vda"].baseline_await_ms, Some(3.0));
        assert!(!h.disks.contains_key("sdb"));
    }

    #[test]
    fn baseline_matches_a_full_recount_over_a_long_run() {
        let cap = 37;
        let mut h = History::new(cap);
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut awaits: Vec<Option<f64>> = Vec::new();
        for t in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Idle a third of the time; otherwise one of a few awaits, so values repeat.
            let a = (seed % 3 != 0).then(|| (seed >> 8) as f64 % 7.0 * 0.5);
            h.push(&model(&[(
                "vda",
                if a.is_some() { 3.0 } else { 0.0 },
                a.unwrap_or(0.0),
            )]));
            awaits.push(a);
            let mut busy: Vec<f64> = awaits[awaits.len().saturating_sub(cap)..]
                .iter()
                .flatten()
                .copied()
                .collect();
            busy.sort_by(f64::total_cmp);
            let want = busy.get(busy.len() / 2).copied();
            assert_eq!(h.disks["vda"].baseline_await_ms, want, "tick {t}");
        }
    }
}
