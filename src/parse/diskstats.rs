//! `/proc/diskstats` → `DiskCounters` per device (spec §4): 14, 18 or 20 fields per line.
//!
//! Our own reader (procfs-core's `DiskStat::from_line` reported some malformed lines as an
//! "Internal error … please report this procfs bug"): every field is checked and a bad line is
//! named by its number. Pre-2.6.25 7-field partition lines are skipped, as iostat -x does.
//! Owns: parsing. Must not touch: rates (model/disk.rs).

use serde::Serialize;

use super::fast::lines;
use crate::sample::names::DISKSTATS;
use crate::{Error, Result};

/// One device's cumulative counters. Times are milliseconds; sectors are 512 bytes.
/// Discard fields are `None` before 4.18 and flush fields before 5.5.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[allow(missing_docs)]
pub struct DiskCounters {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub write_ms: u64,
    /// I/Os in flight now (a gauge).
    pub in_flight: u64,
    /// Milliseconds with at least one I/O in flight.
    pub io_ticks_ms: u64,
    /// Weighted milliseconds in queue (Σ in-flight × time).
    pub weighted_ms: u64,
    pub discards: Option<u64>,
    pub discards_merged: Option<u64>,
    pub sectors_discarded: Option<u64>,
    pub discard_ms: Option<u64>,
    pub flushes: Option<u64>,
    pub flush_ms: Option<u64>,
}

impl DiskCounters {
    /// Reads + writes + discards + flushes completed since boot.
    #[must_use]
    pub fn total_ios(&self) -> u64 {
        self.reads + self.writes + self.discards.unwrap_or(0) + self.flushes.unwrap_or(0)
    }
}

/// Parses `/proc/diskstats`.
pub fn parse(text: &str) -> Result<Vec<DiskCounters>> {
    let mut out = Vec::new();
    for (i, line) in lines(text).enumerate() {
        out.extend(parse_line(line, i + 1)?);
    }
    Ok(out)
}

/// The largest counter accepted (2^60): sums and sector-to-byte products of counters stay far
/// from u64 overflow, and no real counter gets near it.
pub const MAX_COUNTER: u64 = 1 << 60;

/// Parses line `n` of `/proc/diskstats`: `None` for a blank line or a pre-2.6.25 7-field
/// partition line. The result depends on nothing but `line` and `n`. Lines with more fields
/// than 20 (a newer kernel) are read for the fields pagewatch knows; every counter must be a
/// decimal u64 (checked here, so nothing unexpected reaches a library that might panic).
pub fn parse_line(line: &str, n: usize) -> Result<Option<DiskCounters>> {
    let mut it = line.split_whitespace();
    let (Some(major), Some(minor), Some(name)) = (it.next(), it.next(), it.next()) else {
        return if line.trim().is_empty() {
            Ok(None)
        } else {
            Err(Error::parse(DISKSTATS, n, "expected 14, 18 or 20 fields"))
        };
    };
    let mut v = [0u64; 17];
    let mut count = 0;
    for (k, t) in it.enumerate() {
        let x = (t.parse::<u64>().ok())
            .filter(|x| t.bytes().all(|b| b.is_ascii_digit()) && *x <= MAX_COUNTER);
        let Some(x) = x else {
            return Err(Error::parse(
                DISKSTATS,
                n,
                format!("field {} is not a counter: {t:?}", k + 4),
            ));
        };
        if let Some(slot) = v.get_mut(k) {
            *slot = x;
        }
        count = k + 1;
    }
    let fields = count + 3;
    if fields == 7 {
        return Ok(None);
    }
    if fields < 14 || matches!(fields, 15..=17 | 19) {
        return Err(Error::parse(
            DISKSTATS,
            n,
            format!("expected 14, 18 or 20 fields, got {fields}"),
        ));
    }
    if v[8] > u64::from(u32::MAX) {
        return Err(Error::parse(
            DISKSTATS,
            n,
            format!(
                "I/Os in flight {} is beyond the kernel's 32-bit field",
                v[8]
            ),
        ));
    }
    let id = |t: &str, what: &str| {
        t.parse::<u32>()
            .map_err(|_| Error::parse(DISKSTATS, n, format!("{what} {t:?} is not a number")))
    };
    let opt = |k: usize, from: usize| (fields >= from).then_some(v[k]);
    Ok(Some(DiskCounters {
        major: id(major, "major")?,
        minor: id(minor, "minor")?,
        name: name.to_owned(),
        reads: v[0],
        reads_merged: v[1],
        sectors_read: v[2],
        read_ms: v[3],
        writes: v[4],
        writes_merged: v[5],
        sectors_written: v[6],
        write_ms: v[7],
        in_flight: v[8],
        io_ticks_ms: v[9],
        weighted_ms: v[10],
        discards: opt(11, 18),
        discards_merged: opt(12, 18),
        sectors_discarded: opt(13, 18),
        discard_ms: opt(14, 18),
        flushes: opt(15, 20),
        flush_ms: opt(16, 20),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_formats() {
        let text = " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n\
                     8 1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n\
                     259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n\
                     8 2 sda2 1 2 3 4\n";
        let d = parse(text).unwrap();
        assert_eq!(d.len(), 3);
        assert_eq!(
            (d[0].weighted_ms, d[0].discards, d[0].flushes),
            (11, None, None)
        );
        assert_eq!(
            (d[1].discards, d[1].discard_ms, d[1].flushes),
            (Some(12), Some(15), None)
        );
        assert_eq!((d[2].flushes, d[2].flush_ms), (Some(16), Some(17)));
    }

    #[test]
    fn garbage_names_line() {
        let err = parse(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n 8 1 sdb 1 2 x 4 5 6 7 8 9 10 11\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("proc/diskstats:2:"), "{err}");
        let err = parse("8 0 sda 1 2\n").unwrap_err().to_string();
        assert!(err.starts_with("proc/diskstats:1:"), "{err}");
    }

    #[test]
    fn malformed_lines_are_our_errors_with_the_line() {
        let base = " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11";
        for bad in [
            // A counter past u64 (procfs-core: "Internal error: bug at …diskstats.rs").
            " 8 0 sda 1 2 3 4 5 6 7 8 9 10 99999999999999999999999",
            " 8 0 sda 1 2 3 4 5 6 7 8 -9 10 11",
            " 99999999999 0 sda 1 2 3 4 5 6 7 8 9 10 11",
            " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13",
            " x y sda 1 2 3 4 5 6 7 8 9 10 11",
            " 8 0 sda 1 2 3 4 5 6 7 8 18446744073709551615 10 11",
        ] {
            let e = parse(&format!("{base}\n{bad}\n")).unwrap_err().to_string();
            assert!(e.starts_with("proc/diskstats:2: "), "{bad}: {e}");
            assert!(!e.contains("procfs"), "{e}");
        }
    }

    #[test]
    fn more_fields_than_known_are_read_for_the_known_ones() {
        let line = " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20";
        let d = parse_line(line, 1).unwrap().unwrap();
        assert_eq!((d.weighted_ms, d.flush_ms), (11, Some(17)));
        assert_eq!(d.in_flight, 9);
    }
}
