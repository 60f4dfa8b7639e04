//! `/proc/zoneinfo` → one `Zone` per `Node N, zone NAME` block (spec §1.3).
//!
//! procfs-core has no zoneinfo parser, so this is ours. Watermark lines are matched by their
//! exact first word (`min`, `low`, `high`, …); per-cpu pageset lines such as `high:` carry a
//! colon and are ignored. Older kernels lack `boost`, `promo`, `cma` and (before 3.8)
//! `managed`: those are `None`.
//! Owns: parsing. Must not touch: the reserve and watermark arithmetic (model/zones.rs).

use serde::Serialize;

use super::fast::lines;
use crate::sample::names::ZONEINFO;
use crate::{Error, Result};

/// One memory zone's free pages, watermarks and reserves, in pages.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Zone {
    /// NUMA node number.
    pub node: u32,
    /// Zone name (`DMA`, `DMA32`, `Normal`, `Movable`, …).
    pub name: String,
    /// `pages free`.
    pub free: u64,
    /// `boost` (5.0+; already included in min/low/high).
    pub boost: Option<u64>,
    /// `min` watermark (boost included).
    pub min: u64,
    /// `low` watermark (boost included).
    pub low: u64,
    /// `high` watermark (boost included).
    pub high: u64,
    /// `managed` pages (falls back to `present` on kernels before 3.8).
    pub managed: u64,
    /// `protection:` tuple, the zone's lowmem_reserve.
    pub protection: Vec<u64>,
}

#[derive(Default)]
struct Partial {
    zone: Zone,
    line: usize,
    min: Option<u64>,
    low: Option<u64>,
    high: Option<u64>,
    managed: Option<u64>,
    present: Option<u64>,
}

impl Partial {
    fn finish(self) -> Result<Zone> {
        let (line, name) = (self.line, self.zone.name.clone());
        let missing =
            |what: &str| Error::parse(ZONEINFO, line, format!("zone {name} has no `{what}` line"));
        let mut z = self.zone;
        z.min = self.min.ok_or_else(|| missing("min"))?;
        z.low = self.low.ok_or_else(|| missing("low"))?;
        z.high = self.high.ok_or_else(|| missing("high"))?;
        z.managed = self
            .managed
            .or(self.present)
            .ok_or_else(|| missing("managed"))?;
        Ok(z)
    }
}

/// Parses `/proc/zoneinfo`.
pub fn parse(text: &str) -> Result<Vec<Zone>> {
    let mut zones = Vec::new();
    let mut cur: Option<Partial> = None;
    for (i, line) in lines(text).enumerate() {
        let n = i + 1;
        if let Some(rest) = line.strip_prefix("Node ") {
            if let Some(p) = cur.take() {
                zones.push(p.finish()?);
            }
            cur = Some(zone_header(rest, n)?);
            continue;
        }
        let Some(p) = cur.as_mut() else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(Error::parse(
                ZONEINFO,
                n,
                "text before the first `Node N, zone X` line",
            ));
        };
        let t = line.trim_ascii_start();
        // Most lines are per-zone counters (`nr_…`, `numa_…`): skip them without splitting.
        if t.starts_with("nr_") || t.starts_with("numa_") {
            continue;
        }
        let mut it = t.split_ascii_whitespace();
        let key = it.next().unwrap_or("");
        let slot = match key {
            "pages" if it.next() == Some("free") => Some(&mut p.zone.free),
            "protection:" => {
                p.zone.protection = protection(line, n)?;
                None
            }
            _ => None,
        };
        if let Some(slot) = slot {
            *slot = number(it.next(), n)?;
            continue;
        }
        let opt = match key {
            "min" => &mut p.min,
            "low" => &mut p.low,
            "high" => &mut p.high,
            "managed" => &mut p.managed,
            "present" => &mut p.present,
            "boost" => &mut p.zone.boost,
            _ => continue,
        };
        // Only the first occurrence in a block is the zone's own figure.
        if opt.is_none() {
            *opt = Some(number(it.next(), n)?);
        }
    }
    if let Some(p) = cur {
        zones.push(p.finish()?);
    }
    if zones.is_empty() {
        return Err(Error::parse(ZONEINFO, 0, "no zones found"));
    }
    Ok(zones)
}

fn zone_header(rest: &str, n: usize) -> Result<Partial> {
    // "0, zone      DMA"
    let bad = || {
        Error::parse(
            ZONEINFO,
            n,
            format!("bad zone header {:?}", format!("Node {rest}")),
        )
    };
    let (node, zone) = rest.split_once(',').ok_or_else(bad)?;
    let node = node.trim().parse().map_err(|_| bad())?;
    let name = zone.trim().strip_prefix("zone").ok_or_else(bad)?.trim();
    if name.is_empty() {
        return Err(bad());
    }
    Ok(Partial {
        zone: Zone {
            node,
            name: name.to_owned(),
            ..Zone::default()
        },
        line: n,
        ..Partial::default()
    })
}

/// More pages than any machine has (2^46 pages is 256 TiB at 4 KiB): a zone figure beyond it is
/// garbage, and bounding it keeps the reserve and watermark sums far from overflow.
pub const MAX_PAGES: u64 = 1 << 46;

fn number(tok: Option<&str>, n: usize) -> Result<u64> {
    let tok = tok.unwrap_or("");
    tok.parse()
        .ok()
        .filter(|v| *v <= MAX_PAGES)
        .ok_or_else(|| Error::parse(ZONEINFO, n, format!("expected a page count, got {tok:?}")))
}

fn protection(line: &str, n: usize) -> Result<Vec<u64>> {
    let inner = line
        .split_once('(')
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(inner, _)| inner)
        .ok_or_else(|| Error::parse(ZONEINFO, n, "protection: expected `(a, b, …)`"))?;
    inner
        .split(',')
        .map(|t| {
            t.trim()
                .parse()
                .ok()
                .filter(|v| *v <= MAX_PAGES)
                .ok_or_else(|| {
                    Error::parse(ZONEINFO, n, format!("bad protection entry {:?}", t.trim()))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 100
  pages free     3840
        boost    0
        min      68
        low      85
        high     102
        promo    119
        spanned  4095
        present  3998
        managed  3840
        cma      0
        protection: (0, 3019, 3659, 3659, 3659)
      nr_free_pages 3840
  pagesets
    cpu: 0
              count: 0
              high:  0
              high_min: 42
  node_unreclaimable:  0
Node 0, zone  Movable
  pages free     0
        min      32
        low      32
        high     32
        spanned  0
        present  0
        managed  0
        protection: (0, 0, 0, 0, 0)
";

    #[test]
    fn parses_watermarks_not_pageset_high() {
        let z = parse(SAMPLE).unwrap();
        assert_eq!(z.len(), 2);
        assert_eq!(
            (z[0].free, z[0].min, z[0].low, z[0].high, z[0].managed),
            (3840, 68, 85, 102, 3840)
        );
        assert_eq!(z[0].boost, Some(0));
        assert_eq!(z[0].protection, vec![0, 3019, 3659, 3659, 3659]);
        assert_eq!(z[1].name, "Movable");
        assert_eq!(z[1].boost, None);
        assert_eq!(z[1].low, 32);
    }

    #[test]
    fn garbage_names_line() {
        let bad = SAMPLE.replace("low      85", "low      eighty");
        let err = parse(&bad).unwrap_err().to_string();
        assert!(err.starts_with("proc/zoneinfo:7:"), "{err}");
        let err = parse("hello\n").unwrap_err().to_string();
        assert!(err.starts_with("proc/zoneinfo:1:"), "{err}");
    }
}
