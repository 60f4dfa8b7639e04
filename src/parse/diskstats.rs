//! `/proc/diskstats` → `DiskCounters` per device (spec §4): 14, 18 or 20 fields per line.
//!
//! Our own reader (procfs-core's `DiskStat::from_line` reported some malformed lines as an
//! "Internal error … please report this procfs bug"): every field is checked. As sysstat's
//! iostat reads the file (`read_diskstats_stat_work()`, spec §5.1), a line is read for the
//! fields it has: the 11 classic counters from 14 fields on, the discard counters from 18,
//! the flush counters from 20 (a 17-field line gives the classic 11). One odd line never
//! costs the other devices their figures: a line of fewer than 14 fields, or one that is not
//! all counters, is skipped and named (`Skipped`). Pre-2.6.25 7-field partition lines are
//! left out, as iostat -x does.
//! Owns: parsing. Must not touch: rates (model/disk.rs).

use serde::Serialize;

use super::fast::lines;
use crate::Error;
use crate::sample::names::DISKSTATS;

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

    /// This device's counters when it was created: all 0, with the same fields present. What
    /// iostat counts a new or re-inserted device from.
    #[must_use]
    pub fn zeroed(&self) -> Self {
        let zero = |v: Option<u64>| v.map(|_| 0);
        Self {
            major: self.major,
            minor: self.minor,
            name: self.name.clone(),
            discards: zero(self.discards),
            discards_merged: zero(self.discards_merged),
            sectors_discarded: zero(self.sectors_discarded),
            discard_ms: zero(self.discard_ms),
            flushes: zero(self.flushes),
            flush_ms: zero(self.flush_ms),
            ..Self::default()
        }
    }
}

/// A line of `/proc/diskstats` that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// 1-based line number.
    pub line: usize,
    /// The device name (third field), when the line has one.
    pub name: Option<String>,
    /// `proc/diskstats:LINE: NAME: problem`.
    pub error: String,
}

/// The devices of `/proc/diskstats`, in file order, and the lines left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diskstats {
    /// One entry per device line read.
    pub disks: Vec<DiskCounters>,
    /// The lines skipped (too few fields, not counters), in file order.
    pub skipped: Vec<Skipped>,
}

/// Parses `/proc/diskstats`: every line that can be read is; the others are named.
#[must_use]
pub fn parse(text: &str) -> Diskstats {
    let mut out = Diskstats::default();
    for (i, line) in lines(text).enumerate() {
        match parse_line(line, i + 1) {
            Ok(Some(d)) => out.disks.push(d),
            Ok(None) => {}
            Err(s) => out.skipped.push(s),
        }
    }
    out
}

/// The largest counter accepted (2^60): sums and sector-to-byte products of counters stay far
/// from u64 overflow, and no real counter gets near it.
pub const MAX_COUNTER: u64 = 1 << 60;

/// The fewest fields a line is read with: major, minor, name and the 11 classic counters
/// (the ≤ 4.17 form; iostat's `i >= 14`).
pub const MIN_FIELDS: usize = 14;

/// `names::DISKSTATS_CARRIED`: each carried line's device and the monotonic time it was read
/// (`source::disk_lines`). A line that is not `name<TAB>ns` is left out: its device's rates
/// are then taken over the sample's interval, as before carried lines existed.
#[must_use]
pub fn carried(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let (name, ns) = l.split_once('\t')?;
            Some((name.to_owned(), ns.trim().parse().ok()?))
        })
        .collect()
}

/// Parses line `n` of `/proc/diskstats`: `Ok(None)` for a blank line or a pre-2.6.25 7-field
/// partition line; `Err` (the line skipped, named) when it has fewer than 14 fields or a field
/// that is not a counter. The result depends on nothing but `line` and `n`. A line is read for
/// the fields it has (15–17 fields: the classic 11; 18 or 19: and the discards; 20 or more:
/// and the flushes), as iostat reads it; every counter must be a decimal u64 (checked here,
/// so nothing unexpected reaches a library that might panic).
pub fn parse_line(line: &str, n: usize) -> Result<Option<DiskCounters>, Skipped> {
    let mut it = line.split_whitespace();
    let (Some(major), Some(minor), Some(name)) = (it.next(), it.next(), it.next()) else {
        return if line.trim().is_empty() {
            Ok(None)
        } else {
            Err(skipped(n, None, "expected at least 14 fields".to_owned()))
        };
    };
    let skip = |msg: String| skipped(n, Some(name), msg);
    let mut v = [0u64; 17];
    let mut count = 0;
    for (k, t) in it.enumerate() {
        let x = (t.parse::<u64>().ok())
            .filter(|x| t.bytes().all(|b| b.is_ascii_digit()) && *x <= MAX_COUNTER);
        let Some(x) = x else {
            return Err(skip(format!("field {} is not a counter: {t:?}", k + 4)));
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
    if fields < MIN_FIELDS {
        return Err(skip(format!(
            "expected at least {MIN_FIELDS} fields, got {fields}"
        )));
    }
    if v[8] > u64::from(u32::MAX) {
        return Err(skip(format!(
            "I/Os in flight {} is beyond the kernel's 32-bit field",
            v[8]
        )));
    }
    let id = |t: &str, what: &str| {
        t.parse::<u32>()
            .map_err(|_| skip(format!("{what} {t:?} is not a number")))
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

/// Line `n` skipped: the error names the file, the line and the device (escaped: a name is
/// text from a file).
fn skipped(n: usize, name: Option<&str>, msg: String) -> Skipped {
    let msg = match name {
        Some(name) => format!("{name:?}: {msg}"),
        None => msg,
    };
    Skipped {
        line: n,
        name: name.map(str::to_owned),
        error: Error::parse(DISKSTATS, n, msg).to_string(),
    }
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
        let p = parse(text);
        let d = p.disks;
        assert_eq!((d.len(), p.skipped.len()), (3, 0));
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
    fn odd_field_counts_are_read_for_the_fields_they_have() {
        // 17 fields (sysstat's own vector has one): the 11 classic counters, as iostat's
        // sscanf gives 14 conversions and it takes the `i >= 14` branch only.
        let d = parse_line(" 65 32 sds 1 2 3 4 5 6 7 8 9 10 11 12 13 14", 1)
            .unwrap()
            .unwrap();
        assert_eq!((d.reads, d.weighted_ms), (1, 11));
        assert_eq!((d.discards, d.discard_ms, d.flushes), (None, None, None));
        // 15 and 16: classic only; 19: and the discards (the flush pair is incomplete).
        for (line, discards) in [
            (" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12", None),
            (" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13", None),
            (" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", Some(12)),
        ] {
            let d = parse_line(line, 1).unwrap().unwrap();
            assert_eq!((d.weighted_ms, d.discards, d.flushes), (11, discards, None));
        }
    }

    #[test]
    fn a_bad_line_is_skipped_and_named_and_the_others_stand() {
        let p = parse(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n 8 16 sdb 1 2 x 4 5 6 7 8 9 10 11\n");
        assert_eq!(p.disks.len(), 1);
        assert_eq!(p.disks[0].name, "sda");
        let s = &p.skipped[0];
        assert_eq!((s.line, s.name.as_deref()), (2, Some("sdb")));
        assert!(
            s.error.starts_with("proc/diskstats:2: \"sdb\": field 6"),
            "{}",
            s.error
        );
        let p = parse("8 0 sda 1 2\n");
        assert!(p.disks.is_empty());
        assert!(p.skipped[0].error.starts_with("proc/diskstats:1:"), "{p:?}");
        // A line without a name.
        let s = parse_line("8 0", 4).unwrap_err();
        assert_eq!((s.line, s.name), (4, None));
    }

    #[test]
    fn malformed_lines_are_our_errors_with_the_line() {
        let base = " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11";
        for bad in [
            // A counter past u64 (procfs-core: "Internal error: bug at …diskstats.rs").
            " 8 16 sdb 1 2 3 4 5 6 7 8 9 10 99999999999999999999999",
            " 8 16 sdb 1 2 3 4 5 6 7 8 -9 10 11",
            " 99999999999 0 sdb 1 2 3 4 5 6 7 8 9 10 11",
            " 8 16 sdb 1 2 3 4 5 6 7 8 9 10",
            " x y sdb 1 2 3 4 5 6 7 8 9 10 11",
            " 8 16 sdb 1 2 3 4 5 6 7 8 18446744073709551615 10 11",
            " 8 16 sdb 1 2 3 4 5 6 7 8 4294967296 10 11",
            " 8 16 sdb 1 2 3 4 5 6 7 8 9 10 11 12 x",
        ] {
            let p = parse(&format!("{base}\n{bad}\n"));
            assert_eq!(p.disks.len(), 1, "{bad}: sda stands");
            let e = &p.skipped[0].error;
            assert!(e.starts_with("proc/diskstats:2: \"sdb\": "), "{bad}: {e}");
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

    #[test]
    fn zeroed_keeps_the_fields_present() {
        let d = parse_line(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", 1)
            .unwrap()
            .unwrap();
        let z = d.zeroed();
        assert_eq!((z.major, z.minor, z.name.as_str()), (8, 0, "sda"));
        assert_eq!((z.reads, z.weighted_ms, z.total_ios()), (0, 0, 0));
        assert_eq!(
            (z.discards, z.discard_ms, z.flushes),
            (Some(0), Some(0), None)
        );
    }
}
