//! `/proc/vmstat` → `VmStat`, the counters pagewatch derives from, with kernel-version
//! differences resolved (spec §3.2 "Name history": per-zone names before 4.8, single
//! `allocstall` before 4.8, one `workingset_refault` before 5.9, `nr_unstable` before 5.8).
//!
//! Owns: turning procfs-core's name → value map into typed, optional counters.
//! Must not touch: rates or thresholds (model/ does that).

use std::collections::HashMap;

use procfs_core::FromBufRead;
use serde::Serialize;

use super::lines;
use crate::Result;
use crate::sample::names::VMSTAT;

/// Zone suffixes from the kernel's `TEXTS_FOR_ZONES()`.
const ZONE_SUFFIXES: [&str; 6] = ["dma", "dma32", "normal", "high", "movable", "device"];

/// The vmstat counters pagewatch uses. Gauges are pages; events are cumulative counts.
/// `None`: this kernel does not export the counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub struct VmStat {
    pub nr_free_pages: Option<u64>,
    pub nr_inactive_file: Option<u64>,
    pub nr_active_file: Option<u64>,
    pub nr_dirty: Option<u64>,
    pub nr_writeback: Option<u64>,
    /// NFS unstable pages: counted with dirty before 5.8, always 0 after.
    pub nr_unstable: Option<u64>,
    pub nr_dirty_threshold: Option<u64>,
    pub nr_dirty_background_threshold: Option<u64>,
    pub nr_dirtied: Option<u64>,
    pub nr_written: Option<u64>,
    pub pgscan_kswapd: Option<u64>,
    pub pgscan_direct: Option<u64>,
    pub pgsteal_kswapd: Option<u64>,
    pub pgsteal_direct: Option<u64>,
    pub pgscan_khugepaged: Option<u64>,
    pub pgsteal_khugepaged: Option<u64>,
    /// Σ `allocstall_<zone>` (4.8+) or the single `allocstall` (before 4.8).
    pub allocstall: Option<u64>,
    pub pgscan_direct_throttle: Option<u64>,
    pub pswpin: Option<u64>,
    pub pswpout: Option<u64>,
    pub pgmajfault: Option<u64>,
    pub workingset_refault_anon: Option<u64>,
    pub workingset_refault_file: Option<u64>,
    /// `workingset_refault` before 5.9 (anon and file together), or anon + file after.
    pub workingset_refault: Option<u64>,
    /// KiB read from block devices (the kernel divides sectors by 2).
    pub pgpgin: Option<u64>,
    /// KiB written to block devices.
    pub pgpgout: Option<u64>,
}

/// Parses `/proc/vmstat`.
pub fn parse(text: &str) -> Result<VmStat> {
    lines::check_space_kv(VMSTAT, text)?;
    let map = procfs_core::VmStat::from_buf_read(text.as_bytes())
        .map_err(|e| lines::procfs_err(VMSTAT, &e))?
        .0;
    Ok(from_map(&map))
}

fn from_map(map: &HashMap<String, i64>) -> VmStat {
    let get = |name: &str| map.get(name).map(|&v| v.max(0) as u64);
    // A counter printed once (4.8+) or once per zone (before 4.8).
    let family = |name: &str| {
        get(name).or_else(|| {
            let mut sum = None;
            for z in ZONE_SUFFIXES {
                if let Some(v) = map.get(&format!("{name}_{z}")) {
                    sum = Some(sum.unwrap_or(0) + v.max(&0).unsigned_abs());
                }
            }
            sum
        })
    };
    let (steal_kswapd, steal_direct) = steal_split(&get, &family);
    let refault_anon = get("workingset_refault_anon");
    let refault_file = get("workingset_refault_file");
    let refault = get("workingset_refault").or(match (refault_anon, refault_file) {
        (Some(a), Some(f)) => Some(a + f),
        _ => None,
    });
    VmStat {
        nr_free_pages: get("nr_free_pages"),
        nr_inactive_file: get("nr_inactive_file"),
        nr_active_file: get("nr_active_file"),
        nr_dirty: get("nr_dirty"),
        nr_writeback: get("nr_writeback"),
        nr_unstable: get("nr_unstable"),
        nr_dirty_threshold: get("nr_dirty_threshold"),
        nr_dirty_background_threshold: get("nr_dirty_background_threshold"),
        nr_dirtied: get("nr_dirtied"),
        nr_written: get("nr_written"),
        pgscan_kswapd: family("pgscan_kswapd"),
        pgscan_direct: family("pgscan_direct"),
        pgsteal_kswapd: steal_kswapd,
        pgsteal_direct: steal_direct,
        pgscan_khugepaged: get("pgscan_khugepaged"),
        pgsteal_khugepaged: get("pgsteal_khugepaged"),
        allocstall: family("allocstall"),
        pgscan_direct_throttle: get("pgscan_direct_throttle"),
        pswpin: get("pswpin"),
        pswpout: get("pswpout"),
        pgmajfault: get("pgmajfault"),
        workingset_refault_anon: refault_anon,
        workingset_refault_file: refault_file,
        workingset_refault: refault,
        pgpgin: get("pgpgin"),
        pgpgout: get("pgpgout"),
    }
}

/// kswapd and direct steal. Before 3.4 the kernel printed the total per zone
/// (`pgsteal_<zone>`) plus `kswapd_steal`; direct is the difference.
fn steal_split(
    get: &impl Fn(&str) -> Option<u64>,
    family: &impl Fn(&str) -> Option<u64>,
) -> (Option<u64>, Option<u64>) {
    let kswapd = family("pgsteal_kswapd");
    let direct = family("pgsteal_direct");
    if kswapd.is_some() || direct.is_some() {
        return (kswapd, direct);
    }
    let total = family("pgsteal");
    let ks = get("kswapd_steal");
    match (total, ks) {
        (Some(t), Some(k)) => (Some(k), Some(t.saturating_sub(k))),
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_pre_4_8_zone_families() {
        let text = "pgscan_kswapd_dma 1\npgscan_kswapd_dma32 10\npgscan_kswapd_normal 100\n\
                    pgscan_kswapd_movable 1000\npgscan_direct_normal 7\npgsteal_kswapd_normal 50\n\
                    pgsteal_direct_dma32 3\nallocstall 9\nworkingset_refault 4\n";
        let v = parse(text).unwrap();
        assert_eq!(v.pgscan_kswapd, Some(1111));
        assert_eq!(v.pgscan_direct, Some(7));
        assert_eq!(v.pgsteal_kswapd, Some(50));
        assert_eq!(v.pgsteal_direct, Some(3));
        assert_eq!(v.allocstall, Some(9));
        assert_eq!(v.workingset_refault, Some(4));
        assert_eq!(v.workingset_refault_anon, None);
    }

    #[test]
    fn node_names_win_and_allocstall_sums_zones() {
        let text = "pgscan_kswapd 5\nallocstall_dma 1\nallocstall_dma32 2\nallocstall_normal 3\n\
                    allocstall_movable 4\nworkingset_refault_anon 6\nworkingset_refault_file 7\n";
        let v = parse(text).unwrap();
        assert_eq!(v.pgscan_kswapd, Some(5));
        assert_eq!(v.allocstall, Some(10));
        assert_eq!(v.workingset_refault, Some(13));
    }

    #[test]
    fn pre_3_4_steal_split() {
        let v = parse("pgsteal_dma32 40\npgsteal_normal 60\nkswapd_steal 70\n").unwrap();
        assert_eq!(v.pgsteal_kswapd, Some(70));
        assert_eq!(v.pgsteal_direct, Some(30));
    }

    #[test]
    fn garbage_names_file_and_line() {
        let err = parse("nr_dirty 5\nnr_writeback x\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("proc/vmstat:2"), "{err}");
    }
}
