//! Reclaim figures (spec §3.2): who is reclaiming (kswapd in the background or the
//! allocating task directly), how efficiently, and free memory against the watermarks; and
//! the allocating task's other stall, direct compaction, with the huge-page faults that fell
//! back to small pages (spec §13). Cost: eight more names matched in the `/proc/vmstat` read
//! pagewatch already does, no file of its own.
//!
//! Owns: reclaim derivation. Must not touch: I/O.

use serde::Serialize;

use super::rate::per_sec;
use super::zones::{self, Watermarks};
use crate::parse::{Snapshot, VmStat};

/// Reclaim rates per second and the watermark position.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[allow(missing_docs)]
pub struct Reclaim {
    pub pgscan_kswapd_s: Option<f64>,
    pub pgsteal_kswapd_s: Option<f64>,
    pub pgscan_direct_s: Option<f64>,
    pub pgsteal_direct_s: Option<f64>,
    pub pgscan_khugepaged_s: Option<f64>,
    pub pgsteal_khugepaged_s: Option<f64>,
    /// Reclaim asked for through `memory.reclaim` (≈6.15+).
    pub pgscan_proactive_s: Option<f64>,
    pub pgsteal_proactive_s: Option<f64>,
    /// cgroup limit reclaim (memory.high/max): the anon + file totals (5.8+), which count
    /// every reclaimer, less the global reclaimers (kswapd, direct, khugepaged, proactive),
    /// which count only global reclaim (spec §3.2).
    pub pgscan_memcg_s: Option<f64>,
    pub pgsteal_memcg_s: Option<f64>,
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
    /// Entries into direct compaction per second (spec §13): a stall of the allocating task
    /// that allocstall does not count. `None` without `CONFIG_COMPACTION`.
    pub compact_stall_s: Option<f64>,
    /// Direct compactions that ended without the page / with it, per second.
    pub compact_fail_s: Option<f64>,
    pub compact_success_s: Option<f64>,
    /// Anonymous faults served by a huge page / that fell back to small pages, per second
    /// (spec §13). `None` without `CONFIG_TRANSPARENT_HUGEPAGE`.
    pub thp_fault_alloc_s: Option<f64>,
    pub thp_fault_fallback_s: Option<f64>,
    /// Free pages (MemFree, spec §1.7) against Σ min/low/high; `None` without zoneinfo.
    pub watermarks: Option<Watermarks>,
}

fn efficiency(steal: Option<f64>, scan: Option<f64>) -> Option<f64> {
    let scan = scan?;
    (scan > 0.0).then(|| steal.unwrap_or(0.0) / scan * 100.0)
}

impl Reclaim {
    /// Direct reclaim ran in the interval: allocating tasks scanned in global reclaim, or
    /// entered it (allocstall). The verdict's, the screen's and `/metrics`' one rule.
    #[must_use]
    pub fn direct_ran(&self) -> bool {
        self.pgscan_direct_s.unwrap_or(0.0) > 0.0 || self.allocstall_s.unwrap_or(0.0) > 0.0
    }

    /// Allocating tasks entered direct compaction in the interval (spec §13).
    #[must_use]
    pub fn compaction_ran(&self) -> bool {
        self.compact_stall_s.unwrap_or(0.0) > 0.0
    }

    /// cgroup limit reclaim ran in the interval (`pgscan_memcg_s`: 5.8+, spec §3.2).
    #[must_use]
    pub fn limit_ran(&self) -> bool {
        self.pgscan_memcg_s.unwrap_or(0.0) > 0.0
    }

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
        let memcg = |all: [fn(&VmStat) -> Option<u64>; 2],
                     global: [fn(&VmStat) -> Option<u64>; 4]| {
            let total: Option<f64> = all.iter().map(|f| r(*f)).sum();
            // The global reclaimers a kernel lacks count as none.
            let global: f64 = global.iter().filter_map(|f| r(*f)).sum();
            total.map(|t| (t - global).max(0.0))
        };
        Reclaim {
            pgscan_proactive_s: r(|v| v.pgscan_proactive),
            pgsteal_proactive_s: r(|v| v.pgsteal_proactive),
            pgscan_memcg_s: memcg(
                [|v| v.pgscan_anon, |v| v.pgscan_file],
                [
                    |v| v.pgscan_kswapd,
                    |v| v.pgscan_direct,
                    |v| v.pgscan_khugepaged,
                    |v| v.pgscan_proactive,
                ],
            ),
            pgsteal_memcg_s: memcg(
                [|v| v.pgsteal_anon, |v| v.pgsteal_file],
                [
                    |v| v.pgsteal_kswapd,
                    |v| v.pgsteal_direct,
                    |v| v.pgsteal_khugepaged,
                    |v| v.pgsteal_proactive,
                ],
            ),
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
            compact_stall_s: r(|v| v.compact_stall),
            compact_fail_s: r(|v| v.compact_fail),
            compact_success_s: r(|v| v.compact_success),
            thp_fault_alloc_s: r(|v| v.thp_fault_alloc),
            thp_fault_fallback_s: r(|v| v.thp_fault_fallback),
            watermarks: s.zones.as_deref().map(|z| {
                s.zone_free
                    .as_deref()
                    .and_then(|f| zones::worst_zone(z, f))
                    .unwrap_or_else(|| zones::watermarks(z, zones::free_pages(s)))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcg_and_proactive_reclaim_are_their_own_figures() {
        let vm = |k: u64, d: u64, h: u64, p: u64, a: u64, f: u64| VmStat {
            pgscan_kswapd: Some(k),
            pgscan_direct: Some(d),
            pgscan_khugepaged: Some(h),
            pgscan_proactive: Some(p),
            pgscan_anon: Some(a),
            pgscan_file: Some(f),
            pgsteal_kswapd: Some(k / 2),
            pgsteal_direct: Some(d / 2),
            pgsteal_khugepaged: Some(h / 2),
            pgsteal_proactive: Some(p / 2),
            pgsteal_anon: Some(a / 2),
            pgsteal_file: Some(f / 2),
            ..VmStat::default()
        };
        let snap = |v: VmStat| Snapshot {
            vmstat: v,
            page_size: 4096,
            ..Snapshot::default()
        };
        // In 2 s: kswapd 100, direct 50, proactive 30 scanned; anon + file 600 in all, so
        // memcg limit reclaim scanned 600 − 180 = 420 (210/s).
        let (a, b) = (
            vm(1000, 500, 0, 0, 4000, 6000),
            vm(1100, 550, 0, 30, 4200, 6400),
        );
        let r = Reclaim::derive(Some(&snap(a)), &snap(b), Some(2.0));
        assert_eq!(r.pgscan_memcg_s, Some(210.0));
        assert_eq!(r.pgsteal_memcg_s, Some(105.0));
        assert_eq!(r.pgscan_proactive_s, Some(15.0));
        assert_eq!(r.pgscan_kswapd_s, Some(50.0), "global reclaim as before");
        // Before 5.8 (no anon/file split): no memcg figure.
        let old = |v: VmStat| VmStat {
            pgscan_anon: None,
            pgscan_file: None,
            ..v
        };
        let r = Reclaim::derive(Some(&snap(old(a))), &snap(old(b)), Some(2.0));
        assert_eq!(r.pgscan_memcg_s, None);
    }

    #[test]
    fn compaction_and_thp_fallback_rates_are_vmstat_deltas() {
        let vm = |stall, fail, ok, alloc, fallback| VmStat {
            compact_stall: Some(stall),
            compact_fail: Some(fail),
            compact_success: Some(ok),
            thp_fault_alloc: Some(alloc),
            thp_fault_fallback: Some(fallback),
            ..VmStat::default()
        };
        let snap = |v: VmStat| Snapshot {
            vmstat: v,
            page_size: 4096,
            ..Snapshot::default()
        };
        // In 4 s: 44 032 → 44 112 stalls (80: 20/s), 12 505 → 12 525 failed (5/s), 31 527 →
        // 31 587 succeeded (15/s); 12 419 → 12 439 huge faults (5/s), 0 → 36 fell back (9/s).
        let a = snap(vm(44_032, 12_505, 31_527, 12_419, 0));
        let b = snap(vm(44_112, 12_525, 31_587, 12_439, 36));
        let r = Reclaim::derive(Some(&a), &b, Some(4.0));
        assert_eq!(r.compact_stall_s, Some(20.0));
        assert_eq!(r.compact_fail_s, Some(5.0));
        assert_eq!(r.compact_success_s, Some(15.0));
        assert_eq!(r.thp_fault_alloc_s, Some(5.0));
        assert_eq!(r.thp_fault_fallback_s, Some(9.0));
        assert!(r.compaction_ran());
        assert!(!r.direct_ran(), "compaction is not direct reclaim");
        // No stall in the interval; and a kernel without CONFIG_COMPACTION has no figure.
        assert!(!Reclaim::derive(Some(&b), &b, Some(4.0)).compaction_ran());
        let bare = snap(VmStat::default());
        let r = Reclaim::derive(Some(&bare), &bare, Some(4.0));
        assert_eq!((r.compact_stall_s, r.thp_fault_fallback_s), (None, None));
    }

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
