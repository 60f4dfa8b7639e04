//! `/proc/meminfo` → `Meminfo` (kB), in one pass with no allocation.
//!
//! Not procfs-core's `Meminfo`: it builds a `HashMap<String, u64>` of every line per read,
//! which measured 25 µs here against a 70 µs budget for the whole sample (README, Performance).
//! Owns: parsing and checking meminfo. Must not touch: derivation.

use serde::Serialize;

use crate::sample::names::MEMINFO;
use crate::{Error, Result};

/// The meminfo fields pagewatch uses, in kB. `None`: not printed by this kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub struct Meminfo {
    pub mem_total: u64,
    pub mem_free: u64,
    pub mem_available: Option<u64>,
    pub buffers: Option<u64>,
    pub cached: Option<u64>,
    pub swap_cached: Option<u64>,
    pub active_file: Option<u64>,
    pub inactive_file: Option<u64>,
    pub anon_pages: Option<u64>,
    pub shmem: Option<u64>,
    pub k_reclaimable: Option<u64>,
    pub s_reclaimable: Option<u64>,
    pub dirty: Option<u64>,
    pub writeback: Option<u64>,
    pub mapped: Option<u64>,
    pub swap_total: Option<u64>,
    pub swap_free: Option<u64>,
}

/// Parses `/proc/meminfo`. Every line must be `Name: number [kB]`; unknown names are skipped.
pub fn parse(text: &str) -> Result<Meminfo> {
    let mut m = Meminfo::default();
    let (mut total, mut free) = (None, None);
    for (i, line) in text.lines().enumerate() {
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        let bad = |msg: String| Error::parse(MEMINFO, i + 1, msg);
        let Some(name) = key.strip_suffix(':') else {
            return Err(bad(format!("expected `Name: value`, got {line:?}")));
        };
        let value = it.next().unwrap_or("");
        let v: u64 = value
            .parse()
            .map_err(|_| bad(format!("{name} value {value:?} is not a number")))?;
        if let Some(unit) = it.next().filter(|u| *u != "kB") {
            return Err(bad(format!("{name} has unknown unit {unit:?}")));
        }
        let slot = match name {
            "MemTotal" => &mut total,
            "MemFree" => &mut free,
            "MemAvailable" => &mut m.mem_available,
            "Buffers" => &mut m.buffers,
            "Cached" => &mut m.cached,
            "SwapCached" => &mut m.swap_cached,
            "Active(file)" => &mut m.active_file,
            "Inactive(file)" => &mut m.inactive_file,
            "AnonPages" => &mut m.anon_pages,
            "Shmem" => &mut m.shmem,
            "KReclaimable" => &mut m.k_reclaimable,
            "SReclaimable" => &mut m.s_reclaimable,
            "Dirty" => &mut m.dirty,
            "Writeback" => &mut m.writeback,
            "Mapped" => &mut m.mapped,
            "SwapTotal" => &mut m.swap_total,
            "SwapFree" => &mut m.swap_free,
            _ => continue,
        };
        *slot = Some(v);
    }
    let missing = |f: &str| Error::parse(MEMINFO, 0, format!("no {f} line"));
    m.mem_total = total.ok_or_else(|| missing("MemTotal"))?;
    m.mem_free = free.ok_or_else(|| missing("MemFree"))?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_names_bad_lines() {
        let m =
            parse("MemTotal: 100 kB\nMemFree:  40 kB\nActive(file): 7 kB\nHugePages_Total: 0\n")
                .unwrap();
        assert_eq!(
            (m.mem_total, m.mem_free, m.active_file, m.mem_available),
            (100, 40, Some(7), None)
        );
        let e = parse("MemTotal: 100 kB\nMemFree: x kB\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("proc/meminfo:2:"), "{e}");
        let e = parse("MemTotal: 100 kB\n\u{e9}\u{e9}\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("proc/meminfo:2:"), "{e}");
        let e = parse("MemTotal: 100 MB\n").unwrap_err().to_string();
        assert!(e.contains("unit"), "{e}");
        assert!(
            parse("MemTotal: 100 kB\n")
                .unwrap_err()
                .to_string()
                .contains("MemFree")
        );
    }
}
