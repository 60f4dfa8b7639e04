//! Zone arithmetic: `totalreserve_pages` and summed watermarks (spec §1.3, §3.1).
//!
//! Owns: reserve and watermark sums from parsed zones. Must not touch: I/O.

use serde::Serialize;

use crate::parse::{Snapshot, Zone};

/// `calculate_totalreserve_pages()` rebuilt from zoneinfo (spec §1.3):
/// Σ over every zone, populated or not, of `min(managed, (high − boost) + max(protection))`.
#[must_use]
pub fn totalreserve(zones: &[Zone]) -> u64 {
    zones
        .iter()
        .map(|z| {
            let high = z.high.saturating_sub(z.boost.unwrap_or(0));
            let prot = z.protection.iter().copied().max().unwrap_or(0);
            z.managed.min(high + prot)
        })
        .sum()
}

/// Free pages against the watermarks (spec §3.1). The allocator judges each zone on its own:
/// with each zone's free pages (`/proc/buddyinfo`, every tick) these are the figures of the
/// worst zone of any node (`zone` names it: one zone below low wakes its node's kswapd);
/// without them (captured trees, old recordings), free pages from MemFree against the sums.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Watermarks {
    /// The zone's free pages; or NR_FREE_PAGES from `MemFree` (see [`free_pages`]).
    pub free_pages: u64,
    /// min: below it the allocating task reclaims directly.
    pub min_pages: u64,
    /// low: below it kswapd wakes.
    pub low_pages: u64,
    /// high: kswapd reclaims until free is above it.
    pub high_pages: u64,
    /// The zone judged, as `node N Name`; `None` for the global sums.
    pub zone: Option<String>,
}

/// NR_FREE_PAGES in pages, from `/proc/meminfo MemFree` (spec §1.7 recommends it: on mainline
/// it is the same global counter as Σ zone `pages free` and `nr_free_pages`; on the development
/// VM only MemFree agrees with the kernel's own thresholds and MemAvailable). meminfo is read
/// every tick, while zoneinfo, which only has to supply the watermarks and reserves, is not.
/// (The allocator's own watermark checks are per zone; on that VM Σ zone `pages free` is the
/// smaller figure, so "free against the watermarks" reads higher there than the zones see.)
#[must_use]
pub fn free_pages(s: &Snapshot) -> u64 {
    s.meminfo.mem_free * 1024 / s.page_size
}

/// The worst zone's free pages against its own watermarks: the zone in the most severe state
/// (below min, below low, below high), and among those the one closest to its next lower
/// mark. Zones with no managed pages are left out. `None` when no zone has free figures.
#[must_use]
pub fn worst_zone(
    zones: &[Zone],
    free: &[crate::parse::buddyinfo::ZoneFree],
) -> Option<Watermarks> {
    let severity = |f: u64, z: &Zone| {
        if f < z.min {
            3
        } else if f < z.low {
            2
        } else {
            u8::from(f < z.high)
        }
    };
    zones
        .iter()
        .filter(|z| z.managed > 0)
        .filter_map(|z| {
            let f = free.iter().find(|f| f.node == z.node && f.zone == z.name)?;
            Some((z, f.free_pages))
        })
        .max_by(|(a, fa), (b, fb)| {
            // Most severe first; then the least room above low, as a share of low.
            let room = |f: u64, z: &Zone| (f as f64 - z.low as f64) / z.low.max(1) as f64;
            severity(*fa, a)
                .cmp(&severity(*fb, b))
                .then(room(*fb, b).total_cmp(&room(*fa, a)))
        })
        .map(|(z, f)| Watermarks {
            free_pages: f,
            min_pages: z.min,
            low_pages: z.low,
            high_pages: z.high,
            zone: Some(format!("node {} {}", z.node, z.name)),
        })
}

/// Sums the watermarks (boost included, as the kernel compares them) and pairs them with
/// `free_pages` (see [`free_pages`]).
#[must_use]
pub fn watermarks(zones: &[Zone], free_pages: u64) -> Watermarks {
    zones.iter().fold(
        Watermarks {
            free_pages,
            ..Watermarks::default()
        },
        |w, z| Watermarks {
            min_pages: w.min_pages + z.min,
            low_pages: w.low_pages + z.low,
            high_pages: w.high_pages + z.high,
            ..w
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str, high: u64, managed: u64, prot: &[u64]) -> Zone {
        Zone {
            name: name.into(),
            high,
            managed,
            protection: prot.to_vec(),
            ..Zone::default()
        }
    }

    #[test]
    fn spec_1_6_dev_vm_totalreserve() {
        // Spec §1.6: DMA 3 840, DMA32 15 243, Normal 13 495, Movable 0, Device 0 → 32 578.
        let zones = [
            zone("DMA", 57, 3_840, &[0, 6_475]),
            zone("DMA32", 11_787, 772_918, &[0, 0, 3_456]),
            zone("Normal", 13_495, 884_736, &[0, 0, 0]),
            Zone {
                low: 32,
                high: 32,
                ..zone("Movable", 32, 0, &[0])
            },
            zone("Device", 0, 0, &[0]),
        ];
        assert_eq!(totalreserve(&zones), 32_578);
    }

    #[test]
    fn watermarks_sum_zones_and_take_free_as_given() {
        let zones = [
            Zone {
                free: 3_000,
                min: 39,
                low: 48,
                high: 57,
                ..Zone::default()
            },
            Zone {
                free: 400_000,
                min: 9_000,
                low: 11_250,
                high: 13_500,
                ..Zone::default()
            },
        ];
        // Zone `pages free` (403 000 in all) is ignored: free is MemFree's figure.
        let w = watermarks(&zones, 1_234_567);
        assert_eq!(
            w,
            Watermarks {
                free_pages: 1_234_567,
                min_pages: 9_039,
                low_pages: 11_298,
                high_pages: 13_557,
                zone: None,
            }
        );
    }

    #[test]
    fn the_worst_zone_is_judged_on_its_own_free_pages() {
        use crate::parse::buddyinfo::ZoneFree;
        let z = |node, name: &str, min, low, high, managed| Zone {
            node,
            name: name.into(),
            min,
            low,
            high,
            managed,
            ..Zone::default()
        };
        let zones = [
            z(0, "DMA32", 3_000, 3_750, 4_500, 700_000),
            z(0, "Normal", 9_000, 11_250, 13_500, 5_000_000),
            z(1, "Normal", 9_000, 11_250, 13_500, 5_000_000),
            z(1, "Movable", 10, 20, 30, 0),
        ];
        let f = |node, zone: &str, free_pages| ZoneFree {
            node,
            zone: zone.into(),
            free_pages,
        };
        // Node 1's Normal zone is below low while the machine has 2 M pages free in all:
        // its kswapd is awake, which the global sums (2 M vs Σ low 26 k) would hide.
        let free = [
            f(0, "DMA32", 400_000),
            f(0, "Normal", 1_600_000),
            f(1, "Normal", 10_000),
            f(1, "Movable", 0),
        ];
        let w = worst_zone(&zones, &free).unwrap();
        assert_eq!(w.zone.as_deref(), Some("node 1 Normal"));
        assert_eq!((w.free_pages, w.low_pages), (10_000, 11_250));
        assert!(w.free_pages < w.low_pages && w.free_pages >= w.min_pages);
        // All above high: the one closest to its low mark (DMA32: 400 k over 3 750).
        let free = [
            f(0, "DMA32", 5_000),
            f(0, "Normal", 1_600_000),
            f(1, "Normal", 900_000),
        ];
        assert_eq!(
            worst_zone(&zones, &free).unwrap().zone.as_deref(),
            Some("node 0 DMA32")
        );
        assert_eq!(worst_zone(&zones, &[]), None);
    }

    #[test]
    fn free_pages_is_memfree_in_pages() {
        let mut s = Snapshot {
            page_size: 4096,
            ..Snapshot::default()
        };
        s.meminfo.mem_free = 23_931_740; // kB, spec §1.6: MemFree/4 = 5 982 935
        assert_eq!(free_pages(&s), 5_982_935);
        s.page_size = 65_536;
        assert_eq!(free_pages(&s), 373_933); // 23 931 740 / 64, rounded down
    }

    #[test]
    fn boost_is_removed_from_high() {
        let z = Zone {
            boost: Some(100),
            ..zone("Normal", 1_100, 1_000_000, &[0, 50])
        };
        assert_eq!(totalreserve(&[z]), 1_050);
    }
}
