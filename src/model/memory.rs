//! Memory figures: the meminfo fields a performance engineer reads, and our own
//! reconstruction of MemAvailable (spec §2) as a cross-check of the kernel's.
//!
//! Owns: memory derivation. Must not touch: I/O.

use serde::Serialize;

use super::zones;
use crate::parse::Snapshot;

/// Meminfo values in kB, keyed by their meminfo names in JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs, non_snake_case)]
pub struct Memory {
    pub MemTotal: u64,
    pub MemFree: u64,
    /// The kernel's estimate; `None` before 3.14.
    pub MemAvailable: Option<u64>,
    pub Buffers: Option<u64>,
    pub Cached: Option<u64>,
    #[serde(rename = "Active(file)")]
    pub Active_file: Option<u64>,
    #[serde(rename = "Inactive(file)")]
    pub Inactive_file: Option<u64>,
    pub AnonPages: Option<u64>,
    pub Shmem: Option<u64>,
    /// `KReclaimable` (4.20+), else `SReclaimable`.
    pub KReclaimable: Option<u64>,
    pub Dirty: Option<u64>,
    pub Writeback: Option<u64>,
    pub Mapped: Option<u64>,
    pub SwapTotal: Option<u64>,
    pub SwapFree: Option<u64>,
    pub SwapCached: Option<u64>,
    /// Our reconstruction of MemAvailable from §2; `None` without zoneinfo.
    pub derived_MemAvailable: Option<u64>,
}

/// Inputs of `si_mem_available()`, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvailableInputs {
    /// NR_FREE_PAGES (taken from MemFree, spec §1.7).
    pub free: u64,
    /// Σ zone reserves.
    pub totalreserve: u64,
    /// Active(file) + Inactive(file).
    pub pagecache: u64,
    /// KReclaimable.
    pub reclaimable: u64,
    /// Σ low watermarks over all zones, empty ones included.
    pub wmark_low: u64,
}

/// `si_mem_available()` (spec §2), in pages.
#[must_use]
pub fn mem_available_pages(i: AvailableInputs) -> u64 {
    let mut avail = i128::from(i.free) - i128::from(i.totalreserve);
    avail += i128::from(i.pagecache - (i.pagecache / 2).min(i.wmark_low));
    avail += i128::from(i.reclaimable - (i.reclaimable / 2).min(i.wmark_low));
    avail.max(0) as u64
}

impl Memory {
    /// Derives memory figures from one snapshot.
    #[must_use]
    pub fn derive(s: &Snapshot) -> Self {
        let m = &s.meminfo;
        let kreclaimable = m.k_reclaimable.or(m.s_reclaimable);
        let derived = s.zones.as_deref().and_then(|z| {
            let pages = |kb: u64| kb * 1024 / s.page_size;
            let free = zones::free_pages(s);
            let inputs = AvailableInputs {
                free,
                totalreserve: zones::totalreserve(z),
                pagecache: pages(m.active_file? + m.inactive_file?),
                reclaimable: pages(kreclaimable.unwrap_or(0)),
                wmark_low: zones::watermarks(z, free).low_pages,
            };
            Some(mem_available_pages(inputs) * s.page_size / 1024)
        });
        Memory {
            MemTotal: m.mem_total,
            MemFree: m.mem_free,
            MemAvailable: m.mem_available,
            Buffers: m.buffers,
            Cached: m.cached,
            Active_file: m.active_file,
            Inactive_file: m.inactive_file,
            AnonPages: m.anon_pages,
            Shmem: m.shmem,
            KReclaimable: kreclaimable,
            Dirty: m.dirty,
            Writeback: m.writeback,
            Mapped: m.mapped,
            SwapTotal: m.swap_total,
            SwapFree: m.swap_free,
            SwapCached: m.swap_cached,
            derived_MemAvailable: derived,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_2_by_hand() {
        // free 6 045 422, reserve 29 637, pagecache 104 405, KReclaimable 3 078, Σlow 21 148:
        // 6 015 785 + (104 405 − 21 148) + (3 078 − 1 539) = 6 100 581 pages = 24 402 324 kB,
        // the MemAvailable this machine's kernel printed for those inputs.
        let i = AvailableInputs {
            free: 6_045_422,
            totalreserve: 29_637,
            pagecache: 104_405,
            reclaimable: 3_078,
            wmark_low: 21_148,
        };
        assert_eq!(mem_available_pages(i), 6_100_581);
        assert_eq!(mem_available_pages(i) * 4, 24_402_324);
    }

    #[test]
    fn clamps_at_zero_when_reserve_exceeds_free() {
        let i = AvailableInputs {
            free: 10,
            totalreserve: 1_000,
            pagecache: 20,
            reclaimable: 0,
            wmark_low: 5,
        };
        assert_eq!(mem_available_pages(i), 0);
    }
}
