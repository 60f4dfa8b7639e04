//! Reclaim figures (spec §3.2): who is reclaiming (kswapd in the background or the
//! allocating task directly), how efficiently, and free memory against the watermarks.
//!
//! Owns: reclaim derivation. Must not touch: I/O.

use serde::Serialize;

use super::rate::per_sec;
use super::zones::{self, Watermarks};
use crate::parse::{Snapshot, VmStat};

/// Reclaim rates per second and the watermark position.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[allow(missing_docs)]
pub struct Reclaim {
    pub pgscan_kswapd_s: Option<f64>,
    pub pgsteal_kswapd_s: Option<f64>,
    pub pgscan_direct_s: Option<f64>,
    pub pgsteal_direct_s: Option<f64>,
    pub pgscan_khugepaged_s: Option<f64>,
    pub pgsteal_khugepaged_s: Option<f64>,
    /// kswapd steal / scan, percent; `None` when nothing was scanned.
    pub kswapd_efficiency_pct: Option<f64>,
    /// direct steal / scan, percent.
    pub direct_efficiency_pct: Option<f64>,
    /// Entries into direct reclaim per second, summed over zones.
    pub allocstall_s: Option<f64>,
    pub pgscan_direct_throttle_s: Option<f64>,
    pub pswpin_s: Option<f64>,
    pub pswpout_s: Option<f64>,
    pub pgmajfault_s: Option<f64>,
    pub refault_anon_s: Option<f64>,
    pub refault_file_s: Option<f64>,
    /// All refaults (the only figure before 5.9).
    pub refault_s: Option<f64>,
    /// Free pages (MemFree, spec §1.7) against Σ min/low/high; `None` without zoneinfo.
    pub watermarks: Option<Watermarks>,
}

fn efficiency(steal: Option<f64>, scan: Option<f64>) -> Option<f64> {
    let scan = scan?;
    (scan > 0.0).then(|| steal.unwrap_or(0.0) / scan * 100.0)
}

impl Reclaim {
    /// Derives reclaim figures.
    #[must_use]
    pub fn derive(prev: Option<&Snapshot>, s: &Snapshot, dt_s: Option<f64>) -> Self {
        let p = prev.map(|p| &p.vmstat);
        let c = &s.vmstat;
        let r = |f: fn(&VmStat) -> Option<u64>| per_sec(p.and_then(f), f(c), dt_s);
        let scan_k = r(|v| v.pgscan_kswapd);
        let steal_k = r(|v| v.pgsteal_kswapd);
        let scan_d = r(|v| v.pgscan_direct);
        let steal_d = r(|v| v.pgsteal_direct);
        Reclaim {
            pgscan_kswapd_s: scan_k,
            pgsteal_kswapd_s: steal_k,
            pgscan_direct_s: scan_d,
            pgsteal_direct_s: steal_d,
            pgscan_khugepaged_s: r(|v| v.pgscan_khugepaged),
            pgsteal_khugepaged_s: r(|v| v.pgsteal_khugepaged),
            kswapd_efficiency_pct: efficiency(steal_k, scan_k),
            direct_efficiency_pct: efficiency(steal_d, scan_d),
            allocstall_s: r(|v| v.allocstall),
            pgscan_direct_throttle_s: r(|v| v.pgscan_direct_throttle),
            pswpin_s: r(|v| v.pswpin),
            pswpout_s: r(|v| v.pswpout),
            pgmajfault_s: r(|v| v.pgmajfault),
            refault_anon_s: r(|v| v.workingset_refault_anon),
            refault_file_s: r(|v| v.workingset_refault_file),
            refault_s: r(|v| v.workingset_refault),
            watermarks: s
                .zones
                .as_deref()
                .map(|z| zones::watermarks(z, zones::free_pages(s))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficiency_is_steal_over_scan() {
        assert_eq!(efficiency(Some(50.0), Some(200.0)), Some(25.0));
        assert_eq!(efficiency(Some(0.0), Some(0.0)), None);
        assert_eq!(efficiency(None, None), None);
    }

    #[test]
    fn watermark_free_is_memfree_not_zone_free() {
        // Spec §1.6/§1.7 (dev VM): MemFree 23 931 740 kB = 5 982 935 pages, while the zones'
        // `pages free` sum to 1 473 418. Watermarks: DMA 39/48/57, DMA32 9 000/11 250/13 500.
        let zone = |free, min, low, high| crate::parse::Zone {
            free,
            min,
            low,
            high,
            ..crate::parse::Zone::default()
        };
        let mut s = Snapshot {
            page_size: 4096,
            zones: Some(
                [
                    zone(3_840, 39, 48, 57),
                    zone(1_469_578, 9_000, 11_250, 13_500),
                ]
                .into(),
            ),
            ..Snapshot::default()
        };
        s.meminfo.mem_free = 23_931_740;
        let w = Reclaim::derive(None, &s, None).watermarks.unwrap();
        assert_eq!(
            (w.free_pages, w.min_pages, w.low_pages, w.high_pages),
            (5_982_935, 9_039, 11_298, 13_557)
        );
        s.zones = None;
        assert_eq!(Reclaim::derive(None, &s, None).watermarks, None);
    }
}
