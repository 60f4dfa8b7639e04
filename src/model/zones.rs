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

/// Free pages against the watermarks, summed over all zones (spec §3.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Watermarks {
    /// NR_FREE_PAGES, taken from `MemFree` (see [`free_pages`]), not Σ zone `pages free`.
    pub free_pages: u64,
    /// Σ min: below it the allocating task reclaims directly.
    pub min_pages: u64,
    /// Σ low: below it kswapd wakes.
    pub low_pages: u64,
    /// Σ high: kswapd reclaims until free is above it.
    pub high_pages: u64,
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
            }
        );
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
