//! Pure parsing: `RawSample` → `Snapshot` of typed counters. No I/O, no clock, no derivation.
//!
//! Owns: one parser per kernel file. Fields that differ between kernels are `Option`.
//! procfs-core does the parsing where it has a parser (meminfo, vmstat, diskstats, stat,
//! pressure); zoneinfo and the sysfs/sysctl files have small parsers here. Every file's text
//! is checked line by line first, so bad input is reported as `file:line: problem`.

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
pub use pressure::{Psi, PsiLine};
pub use queue::QueueSettings;
pub use stat::CpuStat;
pub use sysctl::VmSysctl;
pub use vmstat::VmStat;
pub use zoneinfo::Zone;

use crate::sample::{RawSample, names};
use crate::{Error, Result};

/// Every parsed input of one sample.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Monotonic read time, nanoseconds.
    pub mono_ns: u64,
    /// Wall-clock read time, milliseconds since the epoch.
    pub wall_ms: i64,
    /// Page size in bytes.
    pub page_size: u64,
    /// `/proc/meminfo`, values in bytes (procfs-core's convention).
    pub meminfo: procfs_core::Meminfo,
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
    /// Names under `/sys/block` (whole disks), sorted; `None` when /sys was not read.
    pub whole_disks: Option<Vec<String>>,
    /// Queue settings of whole disks, by device name.
    pub queues: BTreeMap<String, QueueSettings>,
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
        let whole_disks: Option<Vec<String>> = sample.file(names::SYS_BLOCK_LIST).map(|s| {
            let mut v: Vec<String> = s
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect();
            v.sort();
            v
        });
        let queues = whole_disks
            .iter()
            .flatten()
            .map(|d| (d.clone(), queue::parse(sample, d)))
            .collect();
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
            whole_disks,
            queues,
        })
    }

    /// A meminfo value in kB (procfs-core stores bytes).
    #[must_use]
    pub fn kb(bytes: u64) -> u64 {
        bytes / 1024
    }
}
