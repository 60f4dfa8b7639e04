//! `/proc/buddyinfo` → each zone's free pages (spec §3.1: the allocator judges watermarks per
//! zone against that zone's free pages).
//!
//! A line is `Node N, zone NAME c0 c1 … c10`: free blocks of order 0, 1, …; the zone's free
//! pages are Σ cᵢ·2ⁱ. Owns: parsing it. Must not touch: I/O, judging.

use crate::sample::names::BUDDYINFO;
use crate::{Error, Result};

/// One zone's free pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneFree {
    /// NUMA node.
    pub node: u32,
    /// Zone name as zoneinfo names it (`DMA32`, `Normal`, …).
    pub zone: String,
    /// Free pages: Σ blocks · 2^order.
    pub free_pages: u64,
}

/// Parses the file; each bad line is named.
pub fn parse(text: &str) -> Result<Vec<ZoneFree>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| Error::parse(BUDDYINFO, i + 1, format!("{what}: {line:?}"));
        let rest = line
            .strip_prefix("Node ")
            .ok_or_else(|| bad("expected `Node N, zone`"))?;
        let (node, rest) = rest
            .split_once(',')
            .ok_or_else(|| bad("expected `Node N,`"))?;
        let node = node.trim().parse().map_err(|_| bad("bad node number"))?;
        let mut it = rest.split_whitespace();
        if it.next() != Some("zone") {
            return Err(bad("expected `zone NAME`"));
        }
        let zone = it.next().ok_or_else(|| bad("no zone name"))?.to_owned();
        let mut free: u64 = 0;
        for (order, count) in it.enumerate() {
            let count: u64 = count.parse().map_err(|_| bad("bad block count"))?;
            let pages = u32::try_from(order)
                .ok()
                .and_then(|o| count.checked_mul(1u64.checked_shl(o)?))
                .filter(|p| *p <= 1 << 46)
                .ok_or_else(|| bad("more free pages than any machine has"))?;
            free += pages;
        }
        out.push(ZoneFree {
            node,
            zone,
            free_pages: free,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_pages_are_blocks_times_their_order() {
        let text = "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n\
                    Node 0, zone   Normal  12380   6253   4304   2193   1674   1119    718    387    241    102   4303 \n";
        let z = parse(text).unwrap();
        assert_eq!(z[0].free_pages, 256 + 512 + 3 * 1024);
        assert_eq!(z[1].zone, "Normal");
        let normal = 12380
            + 6253 * 2
            + 4304 * 4
            + 2193 * 8
            + 1674 * 16
            + 1119 * 32
            + 718 * 64
            + 387 * 128
            + 241 * 256
            + 102 * 512
            + 4303 * 1024;
        assert_eq!(z[1].free_pages, normal);
        let e = parse("Node 0, zone DMA 1 x\n").unwrap_err().to_string();
        assert!(e.starts_with("proc/buddyinfo:1:"), "{e}");
    }
}
