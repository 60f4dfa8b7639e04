//! Pure parsing: `RawSample` → `Snapshot` of typed counters. No I/O, no clock, no derivation.
//!
//! Owns: one parser per kernel file. Fields that differ between kernels are `Option`.
//! procfs-core parses diskstats, stat and pressure; zoneinfo (which it lacks), meminfo and
//! vmstat (whose procfs-core parsers allocate a map per read, over the time budget) and the
//! sysfs/sysctl files have small parsers here. Bad input is reported as `file:line: problem`.

pub mod diskstats;
mod lines;
pub mod meminfo;
pub mod pressure;
pub mod queue;
pub mod stat;
pub mod sysctl;
pub mod vmstat;
pub mod zoneinfo;

use std::collections::BTreeMap;

pub use diskstats::DiskCounters;
pub use meminfo::Meminfo;
pub use pressure::{Psi, PsiLine};
pub use queue::QueueSettings;
pub use stat::CpuStat;
pub use sysctl::VmSysctl;
pub use vmstat::VmStat;
pub use zoneinfo::Zone;

use crate::sample::{RawSample, names};
use crate::{Error, Result};

/// Every parsed input of one sample.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Monotonic read time, nanoseconds.
    pub mono_ns: u64,
    /// Wall-clock read time, milliseconds since the epoch.
    pub wall_ms: i64,
    /// Page size in bytes.
    pub page_size: u64,
    /// `/proc/meminfo`, kB.
    pub meminfo: Meminfo,
    /// `/proc/vmstat`.
    pub vmstat: VmStat,
    /// `/proc/zoneinfo`; `None` when the file was not readable.
    pub zones: Option<Vec<Zone>>,
    /// `/proc/diskstats`, in file order.
    pub disks: Vec<DiskCounters>,
    /// `/proc/stat`.
    pub cpu: CpuStat,
    /// `/proc/pressure/cpu` (4.20+).
    pub psi_cpu: Option<Psi>,
    /// `/proc/pressure/memory` (4.20+).
    pub psi_memory: Option<Psi>,
    /// `/proc/pressure/io` (4.20+).
    pub psi_io: Option<Psi>,
    /// `/proc/sys/vm` knobs.
    pub sysctl: VmSysctl,
    /// Whole disks (the entries of `/sys/block`) and their queue settings;
    /// `None` when /sys was not read.
    pub block: Option<BTreeMap<String, QueueSettings>>,
}

fn required<'a>(sample: &'a RawSample, name: &str) -> Result<&'a str> {
    sample.file(name).ok_or_else(|| Error::Missing {
        file: name.to_owned(),
    })
}

fn psi(sample: &RawSample, name: &str) -> Result<Option<Psi>> {
    sample
        .file(name)
        .map(|t| pressure::parse(name, t))
        .transpose()
}

impl Snapshot {
    /// Parses every file of a raw sample.
    pub fn parse(sample: &RawSample) -> Result<Self> {
        let block = sample.file(names::BLOCK_DEVICES).map(queue::parse);
        Ok(Self {
            mono_ns: sample.mono_ns,
            wall_ms: sample.wall_ms,
            page_size: if sample.page_size == 0 {
                4096
            } else {
                sample.page_size
            },
            meminfo: meminfo::parse(required(sample, names::MEMINFO)?)?,
            vmstat: vmstat::parse(required(sample, names::VMSTAT)?)?,
            zones: sample
                .file(names::ZONEINFO)
                .map(zoneinfo::parse)
                .transpose()?,
            disks: diskstats::parse(required(sample, names::DISKSTATS)?)?,
            cpu: stat::parse(required(sample, names::STAT)?)?,
            psi_cpu: psi(sample, names::PSI_CPU)?,
            psi_memory: psi(sample, names::PSI_MEMORY)?,
            psi_io: psi(sample, names::PSI_IO)?,
            sysctl: sysctl::parse(sample)?,
            block,
        })
    }
}
