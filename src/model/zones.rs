//! Zone arithmetic: `totalreserve_pages` and summed watermarks (spec §1.3, §3.1).
//!
//! Owns: reserve and watermark sums from parsed zones. Must not touch: I/O.

use serde::Serialize;

use crate::parse::Zone;

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
    /// Σ `pages free` over zones.
    pub free_pages: u64,
    /// Σ min: below it the allocating task reclaims directly.
    pub min_pages: u64,
    /// Σ low: below it kswapd wakes.
    pub low_pages: u64,
    /// Σ high: kswapd reclaims until free is above it.
    pub high_pages: u64,
}

/// Sums free pages and watermarks (boost included, as the kernel compares them).
#[must_use]
pub fn watermarks(zones: &[Zone]) -> Watermarks {
    zones.iter().fold(Watermarks::default(), |w, z| Watermarks {
        free_pages: w.free_pages + z.free,
        min_pages: w.min_pages + z.min,
        low_pages: w.low_pages + z.low,
        high_pages: w.high_pages + z.high,
    })
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
    fn boost_is_removed_from_high() {
        let z = Zone {
            boost: Some(100),
            ..zone("Normal", 1_100, 1_000_000, &[0, 50])
        };
        assert_eq!(totalreserve(&[z]), 1_050);
    }
}
