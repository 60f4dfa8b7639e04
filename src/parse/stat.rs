//! `/proc/stat` → aggregate CPU ticks and runnable/blocked task counts, via procfs-core.
//!
//! Owns: parsing. Must not touch: percentages (model/cpu.rs).

use procfs_core::{FromBufReadSI, KernelStats, SystemInfoInterface};
use serde::Serialize;

use super::lines::procfs_err;
use crate::sample::names::STAT;
use crate::{Error, Result};

/// Aggregate CPU time in clock ticks (`cpu` line), plus task counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub struct CpuStat {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    /// Tasks runnable now.
    pub procs_running: Option<u32>,
    /// Tasks blocked on I/O now (uninterruptible sleep).
    pub procs_blocked: Option<u32>,
}

impl CpuStat {
    /// Sum of every state, the denominator for percentages (guest is inside user).
    #[must_use]
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// procfs-core wants system facts; only tick counts are used, and they stay in ticks.
struct Ticks;

impl SystemInfoInterface for Ticks {
    fn boot_time_secs(&self) -> procfs_core::ProcResult<u64> {
        Ok(0)
    }
    fn ticks_per_second(&self) -> u64 {
        100
    }
    fn page_size(&self) -> u64 {
        4096
    }
    fn is_little_endian(&self) -> bool {
        cfg!(target_endian = "little")
    }
}

const NUMERIC_LINES: [&str; 6] = [
    "cpu",
    "ctxt",
    "btime",
    "processes",
    "procs_running",
    "procs_blocked",
];

/// Parses `/proc/stat`.
pub fn parse(text: &str) -> Result<CpuStat> {
    let mut has_total = false;
    for (i, line) in text.lines().enumerate() {
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        if !NUMERIC_LINES.iter().any(|p| key.starts_with(p)) {
            continue;
        }
        let mut n = 0;
        if !it.all(|t| {
            n += 1;
            t.parse::<u64>().is_ok()
        }) {
            return Err(Error::parse(
                STAT,
                i + 1,
                format!("non-numeric field in {line:?}"),
            ));
        }
        // user nice system idle are present on every kernel; the rest came later.
        if key.starts_with("cpu") && n < 4 {
            return Err(Error::parse(
                STAT,
                i + 1,
                format!("cpu line with {n} fields, expected 4 or more"),
            ));
        }
        if n == 0 {
            return Err(Error::parse(STAT, i + 1, format!("{key} has no value")));
        }
        has_total |= key == "cpu";
    }
    if !has_total {
        return Err(Error::parse(STAT, 0, "no aggregate `cpu` line"));
    }
    let ks =
        KernelStats::from_buf_read(text.as_bytes(), &Ticks).map_err(|e| procfs_err(STAT, &e))?;
    let t = ks.total;
    Ok(CpuStat {
        user: t.user,
        nice: t.nice,
        system: t.system,
        idle: t.idle,
        iowait: t.iowait.unwrap_or(0),
        irq: t.irq.unwrap_or(0),
        softirq: t.softirq.unwrap_or(0),
        steal: t.steal.unwrap_or(0),
        procs_running: ks.procs_running,
        procs_blocked: ks.procs_blocked,
    })
}
