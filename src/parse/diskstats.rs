//! `/proc/diskstats` → `DiskCounters` per device (spec §4): 14, 18 or 20 fields per line.
//!
//! Each line goes through procfs-core's `DiskStat::from_line` after a check that names the
//! line on bad input. Pre-2.6.25 7-field partition lines are skipped, as iostat -x does.
//! Owns: parsing. Must not touch: rates (model/disk.rs).

use procfs_core::DiskStat;
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

/// Parses line `n` of `/proc/diskstats`: `None` for a blank line or a pre-2.6.25 7-field
/// partition line. The result depends on nothing but `line` and `n`.
pub fn parse_line(line: &str, n: usize) -> Result<Option<DiskCounters>> {
    let (mut fields, mut numeric) = (0, true);
    for (k, t) in line.split_whitespace().enumerate() {
        fields += 1;
        numeric &= k == 2 || t.bytes().all(|b| b.is_ascii_digit());
    }
    if fields == 0 || fields == 7 {
        return Ok(None);
    }
    if !matches!(fields, 14 | 18 | 20) {
        return Err(Error::parse(
            DISKSTATS,
            n,
            format!("expected 14, 18 or 20 fields, got {fields}"),
        ));
    }
    if !numeric {
        return Err(Error::parse(
            DISKSTATS,
            n,
            format!("non-numeric counter in {line:?}"),
        ));
    }
    let d = DiskStat::from_line(line).map_err(|e| Error::parse(DISKSTATS, n, e.to_string()))?;
    Ok(Some(DiskCounters {
        major: u32::try_from(d.major).unwrap_or(0),
        minor: u32::try_from(d.minor).unwrap_or(0),
        name: d.name,
        reads: d.reads,
        reads_merged: d.merged,
        sectors_read: d.sectors_read,
        read_ms: d.time_reading,
        writes: d.writes,
        writes_merged: d.writes_merged,
        sectors_written: d.sectors_written,
        write_ms: d.time_writing,
        in_flight: d.in_progress,
        io_ticks_ms: d.time_in_progress,
        weighted_ms: d.weighted_time_in_progress,
        discards: d.discards,
        discards_merged: d.discards_merged,
        sectors_discarded: d.sectors_discarded,
        discard_ms: d.time_discarding,
        flushes: d.flushes,
        flush_ms: d.time_flushing,
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
}
