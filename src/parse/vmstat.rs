//! `/proc/vmstat` → `VmStat`, the counters pagewatch derives from, with kernel-version
//! differences resolved (spec §3.2 "Name history": per-zone names before 4.8, single
//! `allocstall` before 4.8, one `workingset_refault` before 5.9, `nr_unstable` before 5.8).
//!
//! Owns: turning the counter lines into typed, optional counters.
//! Must not touch: rates or thresholds (model/ does that).

use serde::Serialize;

use super::fast::{digits, token_end};
use crate::sample::names::VMSTAT;
use crate::{Error, Result};

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
    /// `memory.reclaim`-driven (≈6.15+).
    pub pgscan_proactive: Option<u64>,
    pub pgsteal_proactive: Option<u64>,
    /// By LRU type, counted for all reclaim including memcg limit reclaim (5.8+).
    pub pgscan_anon: Option<u64>,
    pub pgscan_file: Option<u64>,
    pub pgsteal_anon: Option<u64>,
    pub pgsteal_file: Option<u64>,
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
    /// Entries into direct compaction, and how they ended (spec §13; `CONFIG_COMPACTION`).
    pub compact_stall: Option<u64>,
    pub compact_fail: Option<u64>,
    pub compact_success: Option<u64>,
    /// Anonymous faults served by a huge page, and those that fell back to small pages
    /// (spec §13; `CONFIG_TRANSPARENT_HUGEPAGE`).
    pub thp_fault_alloc: Option<u64>,
    pub thp_fault_fallback: Option<u64>,
    /// Pages stored into / loaded from zswap (5.19+) and written back from it to the swap
    /// device (6.8+), spec §14.1.
    pub zswpin: Option<u64>,
    pub zswpout: Option<u64>,
    pub zswpwb: Option<u64>,
}

/// Families printed once per zone before 4.8 (`pgscan_kswapd_normal`, …) and, for
/// `pgsteal`, before 3.4. Summed into one figure when the node-level name is absent.
const FAMILIES: [&str; 6] = [
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "allocstall",
    "pgsteal",
];

/// Parses `/proc/vmstat` in one pass with no allocation. Every line must be `name number`.
///
/// Not procfs-core's `VmStat`: it builds a `HashMap<String, i64>` of ~190 counters per read,
/// which measured 110 µs here against a 70 µs budget for the whole sample. Lines in the
/// kernel's exact form (`name digits`) take a byte-level fast path; anything else (extra
/// blanks, a sign, garbage) goes through `line_fields`, which also words the errors.
pub fn parse(text: &str) -> Result<VmStat> {
    let mut v = VmStat::default();
    let mut zone_sums: [Option<u64>; 6] = [None; 6];
    let mut kswapd_steal = None;
    let (mut start, mut n) = (0, 0);
    while start < text.len() {
        n += 1;
        // One pass over the bytes for the usual line; `str::lines` plus a split cost as much
        // again as the rest of the parse.
        let (fields, end) = if let Some((name, val, end)) = fast_line(text, start) {
            (Some((name, val)), end)
        } else {
            slow_line(text, start, n)?
        };
        start = end + 1;
        let Some((name, val)) = fields else { continue };
        if val > MAX_COUNTER {
            return Err(Error::parse(
                VMSTAT,
                n,
                format!("{name} {val} is beyond any kernel counter (2^60)"),
            ));
        }
        if let Some(slot) = slot(&mut v, name) {
            *slot = Some(val);
        } else if name == "kswapd_steal" {
            kswapd_steal = Some(val);
        } else if (name.starts_with("pgs") || name.starts_with("allocstall_"))
            && let Some((stem, zone)) = name.rsplit_once('_')
            && ZONE_SUFFIXES.contains(&zone)
            && let Some(k) = FAMILIES.iter().position(|f| *f == stem)
        {
            zone_sums[k] = Some(zone_sums[k].unwrap_or(0) + val);
        }
    }
    if text.trim().is_empty() {
        return Err(Error::parse(VMSTAT, 0, "empty file"));
    }
    let [scan_k, scan_d, steal_k, steal_d, stall, steal_total] = zone_sums;
    v.pgscan_kswapd = v.pgscan_kswapd.or(scan_k);
    v.pgscan_direct = v.pgscan_direct.or(scan_d);
    v.allocstall = v.allocstall.or(stall);
    v.pgsteal_kswapd = v.pgsteal_kswapd.or(steal_k);
    v.pgsteal_direct = v.pgsteal_direct.or(steal_d);
    if v.pgsteal_kswapd.is_none()
        && v.pgsteal_direct.is_none()
        && let (Some(t), Some(k)) = (steal_total, kswapd_steal)
    {
        // Before 3.4: per-zone totals plus kswapd's share; direct is the difference.
        v.pgsteal_kswapd = Some(k);
        v.pgsteal_direct = Some(t.saturating_sub(k));
    }
    if v.workingset_refault.is_none()
        && let (Some(a), Some(f)) = (v.workingset_refault_anon, v.workingset_refault_file)
    {
        v.workingset_refault = Some(a + f);
    }
    Ok(v)
}

/// The largest vmstat value accepted: a page counter growing by 10^9 a second takes 36 years to
/// reach it, and sums of a few such values stay far from u64 overflow.
pub const MAX_COUNTER: u64 = 1 << 60;

/// The line at byte `start` when it is `name digits\n` exactly as the kernel prints it (one
/// space, at most 19 digits, so no overflow): the name, the value and where the line ends
/// (its `\n`, or the end of the text). `None` for any other shape, which `line_fields` judges.
fn fast_line(text: &str, start: usize) -> Option<(&str, u64, usize)> {
    let b = text.as_bytes();
    // The first blank or control byte must be the one space.
    let sp = token_end(b, start);
    if sp == start || b.get(sp) != Some(&b' ') {
        return None;
    }
    let (val, end) = digits(b, sp + 1)?;
    if end < b.len() && b[end] != b'\n' {
        return None;
    }
    Some((&text[start..sp], val, end))
}

/// The line at byte `start`, number `n`, that `fast_line` did not take: its fields (see
/// `line_fields`) and where it ends. Kept out of line, away from the loop it almost never runs
/// in, so that the loop's code stays small.
#[cold]
#[inline(never)]
fn slow_line(text: &str, start: usize, n: usize) -> Result<(Option<(&str, u64)>, usize)> {
    let end = text[start..].find('\n').map_or(text.len(), |k| start + k);
    let line = &text[start..end];
    Ok((
        line_fields(line.strip_suffix('\r').unwrap_or(line), n)?,
        end,
    ))
}

/// Any line: `None` when blank, else `name value` split on blanks, or the error for line `n`.
fn line_fields(line: &str, n: usize) -> Result<Option<(&str, u64)>> {
    let mut it = line.split_ascii_whitespace();
    let Some(name) = it.next() else {
        return Ok(None);
    };
    let (Some(value), None) = (it.next(), it.next()) else {
        return Err(Error::parse(
            VMSTAT,
            n,
            format!("expected `name value`, got {line:?}"),
        ));
    };
    let val = number(value).ok_or_else(|| {
        Error::parse(VMSTAT, n, format!("{name} value {value:?} is not a number"))
    })?;
    Ok(Some((name, val)))
}

/// A vmstat value. The kernel prints unsigned longs; a negative one (per-cpu drift seen on
/// some kernels) reads as 0.
fn number(s: &str) -> Option<u64> {
    s.parse::<u64>()
        .ok()
        .or_else(|| s.parse::<i64>().ok().map(|v| v.max(0).unsigned_abs()))
}

/// The field a node-level (or version-independent) counter name fills.
fn slot<'a>(v: &'a mut VmStat, name: &str) -> Option<&'a mut Option<u64>> {
    Some(match name {
        "nr_free_pages" => &mut v.nr_free_pages,
        "nr_inactive_file" => &mut v.nr_inactive_file,
        "nr_active_file" => &mut v.nr_active_file,
        "nr_dirty" => &mut v.nr_dirty,
        "nr_writeback" => &mut v.nr_writeback,
        "nr_unstable" => &mut v.nr_unstable,
        "nr_dirty_threshold" => &mut v.nr_dirty_threshold,
        "nr_dirty_background_threshold" => &mut v.nr_dirty_background_threshold,
        "nr_dirtied" => &mut v.nr_dirtied,
        "nr_written" => &mut v.nr_written,
        "pgscan_kswapd" => &mut v.pgscan_kswapd,
        "pgscan_direct" => &mut v.pgscan_direct,
        "pgsteal_kswapd" => &mut v.pgsteal_kswapd,
        "pgsteal_direct" => &mut v.pgsteal_direct,
        "pgscan_khugepaged" => &mut v.pgscan_khugepaged,
        "pgsteal_khugepaged" => &mut v.pgsteal_khugepaged,
        "pgscan_proactive" => &mut v.pgscan_proactive,
        "pgsteal_proactive" => &mut v.pgsteal_proactive,
        "pgscan_anon" => &mut v.pgscan_anon,
        "pgscan_file" => &mut v.pgscan_file,
        "pgsteal_anon" => &mut v.pgsteal_anon,
        "pgsteal_file" => &mut v.pgsteal_file,
        "allocstall" => &mut v.allocstall,
        "pgscan_direct_throttle" => &mut v.pgscan_direct_throttle,
        "pswpin" => &mut v.pswpin,
        "pswpout" => &mut v.pswpout,
        "pgmajfault" => &mut v.pgmajfault,
        "workingset_refault_anon" => &mut v.workingset_refault_anon,
        "workingset_refault_file" => &mut v.workingset_refault_file,
        "workingset_refault" => &mut v.workingset_refault,
        "pgpgin" => &mut v.pgpgin,
        "pgpgout" => &mut v.pgpgout,
        "compact_stall" => &mut v.compact_stall,
        "compact_fail" => &mut v.compact_fail,
        "compact_success" => &mut v.compact_success,
        "thp_fault_alloc" => &mut v.thp_fault_alloc,
        "thp_fault_fallback" => &mut v.thp_fault_fallback,
        "zswpin" => &mut v.zswpin,
        "zswpout" => &mut v.zswpout,
        "zswpwb" => &mut v.zswpwb,
        _ => return None,
    })
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
    fn compaction_thp_and_zswap_counters_or_absent() {
        // A 6.18 excerpt: the family's neighbours (`compact_daemon_wake`,
        // `thp_fault_fallback_charge`) are not taken for them.
        let text = "compact_stall 44032\ncompact_fail 12505\ncompact_success 31527\n\
                    compact_daemon_wake 9699\nthp_fault_alloc 12419\nthp_fault_fallback 3\n\
                    thp_fault_fallback_charge 2\nzswpin 5\nzswpout 7\nzswpwb 1\n";
        let v = parse(text).unwrap();
        assert_eq!(
            (v.compact_stall, v.compact_fail, v.compact_success),
            (Some(44_032), Some(12_505), Some(31_527))
        );
        assert_eq!(
            (v.thp_fault_alloc, v.thp_fault_fallback),
            (Some(12_419), Some(3))
        );
        assert_eq!((v.zswpin, v.zswpout, v.zswpwb), (Some(5), Some(7), Some(1)));
        // 6.1 has no zswpwb; a kernel without CONFIG_COMPACTION prints no compact_*.
        let v = parse("zswpin 5\nzswpout 7\nnr_dirty 1\n").unwrap();
        assert_eq!(
            (v.zswpwb, v.compact_stall, v.thp_fault_fallback),
            (None, None, None)
        );
    }

    #[test]
    fn pre_3_4_steal_split() {
        let v = parse("pgsteal_dma32 40\npgsteal_normal 60\nkswapd_steal 70\n").unwrap();
        assert_eq!(v.pgsteal_kswapd, Some(70));
        assert_eq!(v.pgsteal_direct, Some(30));
    }

    #[test]
    fn fast_path_agrees_with_the_general_one() {
        let lines = [
            "nr_dirty 5",
            "nr_dirty 5\n",
            "nr_dirty 5\r\n",
            "nr_dirty  5\n",
            " nr_dirty 5\n",
            "nr_dirty\t5\n",
            "nr_dirty 5 \n",
            "nr_dirty -5\n",
            "nr_dirty 5x\n",
            "nr_dirty \n",
            "nr_dirty\n",
            "nr\tdirty 5\n",
            "nr_dirty 9999999999999999999\n",
            "nr_dirty 18446744073709551615\n",
            "nr_dirty 18446744073709551616\n",
            "nr_dirty 0000000000000000000000000007\n",
            "\n",
        ];
        for text in lines {
            let general = line_fields(text.trim_end_matches('\n').trim_end_matches('\r'), 1)
                .map_err(|e| e.to_string());
            if let Some((name, val, end)) = fast_line(text, 0) {
                assert_eq!(general, Ok(Some((name, val))), "{text:?}");
                assert_eq!(end, text.trim_end_matches('\n').len(), "{text:?}");
            }
            // And the whole parse takes either path to the same figure or error.
            let whole = parse(text).map(|v| v.nr_dirty).map_err(|e| e.to_string());
            match general {
                Ok(Some((_, v))) if v > MAX_COUNTER => {
                    assert!(whole.unwrap_err().contains("beyond any kernel counter"));
                }
                Ok(Some((_, v))) => assert_eq!(whole, Ok(Some(v)), "{text:?}"),
                Ok(None) => assert!(whole.is_err(), "blank file: {text:?}"),
                Err(e) => assert_eq!(whole, Err(e), "{text:?}"),
            }
        }
        assert_eq!(fast_line("a 1\nb 22\n", 4), Some(("b", 22, 8)));
        let max19 = "nr_dirty 9999999999999999999\n";
        assert_eq!(
            fast_line(max19, 0),
            Some(("nr_dirty", 9_999_999_999_999_999_999, 28))
        );
        assert!(parse("nr_dirty 18446744073709551615").is_err());
        assert_eq!(
            parse(&format!("nr_dirty {MAX_COUNTER}")).unwrap().nr_dirty,
            Some(MAX_COUNTER)
        );
        assert_eq!(parse("nr_dirty -3\n").unwrap().nr_dirty, Some(0));
    }

    #[test]
    fn garbage_names_file_and_line() {
        let err = parse("nr_dirty 5\nnr_writeback x\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("proc/vmstat:2"), "{err}");
    }
}
