//! Pure parsing: `RawSample` → `Snapshot` of typed counters. No I/O, no clock, no derivation.
//!
//! Owns: one parser per kernel file. Fields that differ between kernels are `Option`.
//! procfs-core parses diskstats, stat and pressure; zoneinfo (which it lacks), meminfo and
//! vmstat (whose procfs-core parsers allocate a map per read, over the time budget) and the
//! sysfs/sysctl files have small parsers here. Bad input is reported as `file:line: problem`.

pub mod baselines;
pub mod bdi;
pub mod below;
pub mod below_reduce;
pub mod blk_lat;
pub mod blk_pair;
pub mod buddyinfo;
pub mod cgroup;
pub mod dirty_files;
pub mod diskstats;
mod fast;
pub mod jbd2;
pub mod lineage;
mod lines;
pub mod meminfo;
mod memo;
pub mod node;
pub mod pressure;
pub mod procs;
pub mod queue;
pub mod reclaim_trace;
pub mod scope;
pub mod stat;
pub mod sync_calls;
pub mod sysctl;
pub mod taskstats;
pub mod trace;
pub mod trace_raw;
pub mod trace_sync;
pub mod trace_writers;
pub mod vmstat;
pub mod zoneinfo;
pub mod zram;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use diskstats::DiskCounters;
pub use meminfo::Meminfo;
pub use memo::Parser;
pub use pressure::{Psi, PsiLine};
pub use queue::{BlockDevices, QueueSettings};
pub use stat::CpuStat;
pub use sysctl::VmSysctl;
pub use vmstat::VmStat;
pub use zoneinfo::Zone;

use crate::sample::{RawSample, names};
use crate::{Error, Result};

/// Every parsed input of one sample.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// `/proc/zoneinfo`; `None` when the file was not readable. Shared: successive
    /// snapshots usually carry the same zones (see `Parser`).
    pub zones: Option<Arc<[Zone]>>,
    /// Why `/proc/zoneinfo` could not be parsed (`file:line: problem`). Only the figures that
    /// need it are left out (watermarks, totalreserve, the derived thresholds and
    /// MemAvailable); the rest of the sample stands.
    pub zones_error: Option<String>,
    /// Whether the thread that read `/proc/vmstat` ran SCHED_FIFO, SCHED_RR or SCHED_DEADLINE
    /// (`proc/thread-self/stat`): the kernel then reports boosted thresholds to it (spec §1.2).
    /// `None` when not read (captured trees, older recordings).
    pub reader_rt: Option<bool>,
    /// Each zone's free pages (`/proc/buddyinfo`); `None` when not read or not parsable (then
    /// the watermarks are judged on MemFree against their sums, and `zones_error` says why).
    pub zone_free: Option<Vec<buddyinfo::ZoneFree>>,
    /// `/proc/diskstats`, in file order. Each device's counters are shared: `Parser` hands
    /// the same ones to successive snapshots while the device's line does not change.
    pub disks: Vec<Arc<DiskCounters>>,
    /// The `/proc/diskstats` lines left out (fewer than 14 fields, not counters), named; the
    /// other devices stand.
    pub disks_skipped: Vec<diskstats::Skipped>,
    /// The devices whose line was carried from an earlier read, with that read's monotonic
    /// time (`names::DISKSTATS_CARRIED`); empty when every line was read with the sample.
    /// Shared: `Parser` hands the same list on while the text does not change.
    pub disks_carried: Arc<[(String, u64)]>,
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
    /// `None` when /sys was not read. Shared, like `zones`.
    pub block: Option<Arc<BlockDevices>>,
    /// The process walk (`names::PROCS`), in the samples that carry one (spec §11).
    /// Shared: the tracker keeps the last one.
    pub procs: Option<Arc<procs::Walk>>,
    /// Why the walk could not be parsed (`proc/pids:LINE: problem`); the rest stands.
    pub procs_error: Option<String>,
    /// The taskstats exits since the last sample and the listener's state
    /// (`names::EXITS`); `None` when the sample does not carry them.
    pub exits: Option<taskstats::Exits>,
    /// Why the exits could not be parsed (`netlink/taskstats:LINE: problem`).
    pub exits_error: Option<String>,
    /// Delay accounting of a few live processes (`names::TASK_DELAYS`, spec §13.1), in
    /// `exits`' format; `None` when the sample does not carry it. A text that does not parse
    /// is reported in `exits_error`.
    pub task_delays: Option<taskstats::Exits>,
    /// The `writeback:balance_dirty_pages` tracepoint: tracer state, format and the events
    /// since the last sample (spec §7); `None` when the sample does not carry it.
    pub trace: Option<trace::Trace>,
    /// The sync syscalls' latencies by process since the last sample, and the tracer's state
    /// (`names::SYNC_CALLS`); `None` when the sample does not carry them.
    pub sync: Option<sync_calls::SyncCalls>,
    /// The block tracer: its status and the interval's per-device latency histograms;
    /// `None` when the sample carries neither (latency was never wanted).
    pub blk: Option<blk_lat::Blk>,
    /// The cgroup v2 tree as read this tick (spec §1.8, §11); `None` when the sample has no
    /// cgroup index (older recordings and trees) or `domains_error` says why.
    pub cgroups: Option<cgroup::Cgroups>,
    /// Per-device dirty limits (`sys/class/bdi/`, spec §1.9); `None` when not read.
    /// Shared: `Parser` hands the same list to successive snapshots while the text (re-read
    /// once a minute) is the same.
    pub bdis: Option<Arc<[bdi::BdiLimits]>>,
    /// debugfs `wb_stats` per BDI (root, 6.10+), the kernel's own per-cgroup thresholds.
    pub wb_stats: Vec<(String, Vec<bdi::WbStat>)>,
    /// debugfs `stats` per BDI (root, read while pages wait to be written, spec §15.1): its
    /// dirty and writeback pages and the kernel's write bandwidth; empty when not read.
    pub bdi_stats: Vec<(String, bdi::BdiStat)>,
    /// Why the debugfs `stats` could not be listed (`names::BDI_STATS_STATUS`: no root, no
    /// debugfs); `None` when the sample does not say (listed, or an older recording).
    pub bdi_stats_unread: Option<bdi::StatsUnread>,
    /// The dirty-files scan (`names::DIRTY_FILES`, spec §15.4); `None` when the sample does
    /// not carry it (not scanning) or it did not parse (`domains_error` says why).
    pub dirty_files: Option<dirty_files::Scan>,
    /// Why a cgroup, BDI or wb_stats file could not be parsed (`file:line: problem`): those
    /// are left out, the rest of the sample stands (a container's odd file must not stop the
    /// monitor).
    pub domains_error: Option<String>,
    /// The scope shown (`names::SCOPE`, issue 54); `None` when the sample does not say
    /// (older recordings and trees) or its text is bad (`domains_error` says why).
    pub scope: Option<scope::Scope>,
    /// The throttled tasks' thread groups and parents (`names::THROTTLED_LINEAGE`), by task
    /// id; empty when the sample has none.
    pub lineage: BTreeMap<u32, lineage::Task>,
    /// The ext4 journals (`proc/fs/jbd2/*/info`), by name; empty when none is mounted or
    /// the sample does not carry them (older recordings, trees).
    pub journals: Vec<jbd2::Journal>,
    /// Why a journal's `info` could not be parsed (that journal is left out).
    pub journals_error: Option<String>,
    /// The `-below` tracer (wbt, reclaim throttling): its state and the interval's per-device
    /// and per-reason lines; `None` when the sample does not carry it.
    pub below: Option<below::Below>,
    /// The direct-reclaim tracer: its state and the read's begin/end records (spec §3.3);
    /// `None` when the sample does not carry it.
    pub reclaim_trace: Option<reclaim_trace::ReclaimTrace>,
    /// The zram devices (`sys/block/zramN/mm_stat`, `bd_stat`, spec §14.2), by name; empty
    /// when there is none or the sample does not carry them (older recordings, trees).
    pub zram: Vec<zram::Zram>,
    /// Why a zram device's files could not be parsed (that device is left out).
    pub zram_error: Option<String>,
    /// The NUMA nodes (`nodeN/vmstat`, `numastat`, spec §12), read only on machines with more
    /// than one node; empty otherwise.
    pub nodes: Vec<node::NodeStat>,
    /// Why a node's files could not be parsed (that node is left out).
    pub nodes_error: Option<String>,
}

/// The exit records (`names::EXITS`) and the live processes' delays (`names::TASK_DELAYS`),
/// with the first error of the two.
fn task_records(
    sample: &RawSample,
) -> (
    Option<taskstats::Exits>,
    Option<taskstats::Exits>,
    Option<String>,
) {
    let (exits, error) = match sample.file(names::EXITS).map(taskstats::parse) {
        None => (None, None),
        Some(Ok(e)) => (Some(e), None),
        Some(Err(e)) => (None, Some(e.to_string())),
    };
    match sample.file(names::TASK_DELAYS).map(taskstats::parse) {
        None => (exits, None, error),
        Some(Ok(d)) => (exits, Some(d), error),
        Some(Err(e)) => (exits, None, error.or_else(|| Some(e.to_string()))),
    }
}

/// The journals a sample carries, and the first error among them.
fn journals(sample: &RawSample) -> (Vec<jbd2::Journal>, Option<String>) {
    let mut error = None;
    let list = sample
        .files
        .range::<String, _>(jbd2::PREFIX.to_owned()..)
        .take_while(|(k, _)| k.starts_with(jbd2::PREFIX))
        .filter_map(|(k, t)| {
            let name = jbd2::journal_of(k)?;
            jbd2::parse(name, t)
                .map_err(|e| {
                    error.get_or_insert_with(|| e.to_string());
                })
                .ok()
        })
        .collect();
    (list, error)
}

/// The cgroup, BDI and wb_stats part of a snapshot, and the first error among them.
type DomainsPart = (
    Option<cgroup::Cgroups>,
    Option<Arc<[bdi::BdiLimits]>>,
    Vec<(String, Vec<bdi::WbStat>)>,
    Option<String>,
);

fn domains(sample: &RawSample, r: &mut impl Repeats) -> DomainsPart {
    let mut error = None;
    let mut keep = |e: Error| {
        error.get_or_insert_with(|| e.to_string());
    };
    let cgroups = cgroup::parse(sample).unwrap_or_else(|e| {
        keep(e);
        None
    });
    let bdis = sample
        .file(names::BDI_LIMITS)
        .and_then(|t| r.bdis(t).map_err(&mut keep).ok());
    let wb_stats = sample
        .files
        .range::<String, _>("sys/kernel/debug/bdi/".to_owned()..)
        .take_while(|(k, _)| k.starts_with("sys/kernel/debug/bdi/"))
        .filter_map(|(k, t)| {
            let bdi = names::wb_stats_bdi(k)?;
            let w = bdi::parse_wb_stats(k, t).map_err(&mut keep).ok()?;
            Some((bdi.to_owned(), w))
        })
        .collect();
    (cgroups, bdis, wb_stats, error)
}

/// The debugfs `stats` a sample carries, by BDI; the first error, when `error` holds none
/// yet, goes there (that BDI is left out).
fn bdi_stats(sample: &RawSample, error: &mut Option<String>) -> Vec<(String, bdi::BdiStat)> {
    sample
        .files
        .range::<String, _>("sys/kernel/debug/bdi/".to_owned()..)
        .take_while(|(k, _)| k.starts_with("sys/kernel/debug/bdi/"))
        .filter_map(|(k, t)| {
            let name = names::bdi_stats_bdi(k)?;
            match bdi::parse_bdi_stats(k, t) {
                Ok(s) => Some((name.to_owned(), s)),
                Err(e) => {
                    error.get_or_insert_with(|| e.to_string());
                    None
                }
            }
        })
        .collect()
}

fn required<'a>(sample: &'a RawSample, name: &str) -> Result<&'a str> {
    sample.file(name).ok_or_else(|| Error::Missing {
        file: name.to_owned(),
    })
}

/// `/proc/diskstats` as a snapshot holds it: the devices and the lines skipped.
type DiskLines = (Vec<Arc<DiskCounters>>, Vec<diskstats::Skipped>);

/// The PSI files, in `Repeats::pressure` index order.
const PSI_FILES: [&str; 3] = [names::PSI_CPU, names::PSI_MEMORY, names::PSI_IO];

/// How `Snapshot::parse_with` parses the files that often repeat from one sample to the next:
/// afresh (`Snapshot::parse`), or through `Parser`'s memo of the last text and result.
trait Repeats {
    fn zoneinfo(&mut self, text: &str) -> Result<Arc<[Zone]>>;
    /// The devices read and the lines skipped (never an error: one odd line must not cost
    /// every device its figures).
    fn diskstats(&mut self, text: &str) -> DiskLines;
    /// `names::DISKSTATS_CARRIED`.
    fn carried(&mut self, text: &str) -> Arc<[(String, u64)]>;
    fn block(&mut self, text: &str) -> Arc<BlockDevices>;
    /// PSI file `PSI_FILES[i]`.
    fn pressure(&mut self, i: usize, text: &str) -> Result<Psi>;
    /// The BDI limits (`names::BDI_LIMITS`).
    fn bdis(&mut self, text: &str) -> Result<Arc<[bdi::BdiLimits]>>;
    /// The vm sysctls, as `sysctl::texts` gives them.
    fn sysctl(&mut self, texts: [Option<&str>; 9]) -> Result<VmSysctl>;
}

/// Every file parsed afresh.
struct Afresh;

impl Repeats for Afresh {
    fn zoneinfo(&mut self, text: &str) -> Result<Arc<[Zone]>> {
        zoneinfo::parse(text).map(Arc::from)
    }
    fn diskstats(&mut self, text: &str) -> DiskLines {
        let d = diskstats::parse(text);
        (d.disks.into_iter().map(Arc::new).collect(), d.skipped)
    }
    fn carried(&mut self, text: &str) -> Arc<[(String, u64)]> {
        diskstats::carried(text).into()
    }
    fn block(&mut self, text: &str) -> Arc<BlockDevices> {
        Arc::new(queue::parse(text))
    }
    fn pressure(&mut self, i: usize, text: &str) -> Result<Psi> {
        pressure::parse(PSI_FILES[i], text)
    }
    fn bdis(&mut self, text: &str) -> Result<Arc<[bdi::BdiLimits]>> {
        bdi::parse_limits(text).map(Arc::from)
    }
    fn sysctl(&mut self, texts: [Option<&str>; 9]) -> Result<VmSysctl> {
        sysctl::parse_texts(texts)
    }
}

fn psi(sample: &RawSample, r: &mut impl Repeats, i: usize) -> Result<Option<Psi>> {
    sample
        .file(PSI_FILES[i])
        .map(|t| r.pressure(i, t))
        .transpose()
}

/// Field 41 of a task's `stat` (its scheduling policy): 1 SCHED_FIFO, 2 SCHED_RR and
/// 6 SCHED_DEADLINE are the real-time classes. `None` when the line is not readable.
fn reader_rt(text: &str) -> Option<bool> {
    let after_comm = &text[text.rfind(')')? + 1..];
    let policy: u32 = after_comm.split_whitespace().nth(41 - 3)?.parse().ok()?;
    Some(matches!(policy, 1 | 2 | 6))
}

impl Snapshot {
    /// Parses every file of a raw sample. The reference: `Parser::parse` must equal it.
    pub fn parse(sample: &RawSample) -> Result<Self> {
        Self::parse_with(sample, &mut Afresh)
    }

    /// Parses every file, the often-repeating ones through `r`. Files are taken in the same
    /// order whatever `r` is, so a bad sample gives the same error.
    fn parse_with(sample: &RawSample, r: &mut impl Repeats) -> Result<Self> {
        let block = sample.file(names::BLOCK_DEVICES).map(|t| r.block(t));
        let meminfo = meminfo::parse(required(sample, names::MEMINFO)?)?;
        let vmstat = vmstat::parse(required(sample, names::VMSTAT)?)?;
        let (zones, mut zones_error) = match sample.file(names::ZONEINFO).map(|t| r.zoneinfo(t)) {
            None => (None, None),
            Some(Ok(z)) => (Some(z), None),
            Some(Err(e)) => (None, Some(e.to_string())),
        };
        let zone_free = match sample.file(names::BUDDYINFO).map(buddyinfo::parse) {
            None => None,
            Some(Ok(f)) => Some(f),
            Some(Err(e)) => {
                zones_error.get_or_insert_with(|| e.to_string());
                None
            }
        };
        let (procs, procs_error) = match sample.file(names::PROCS).map(procs::parse) {
            None => (None, None),
            Some(Ok(w)) => (Some(Arc::new(w)), None),
            Some(Err(e)) => (None, Some(e.to_string())),
        };
        let (cgroups, bdis, wb_stats, mut domains_error) = domains(sample, r);
        let scope = scope::parse(sample).unwrap_or_else(|e| {
            domains_error.get_or_insert_with(|| e.to_string());
            None
        });
        let bdi_stats = bdi_stats(sample, &mut domains_error);
        let dirty_files = sample.file(names::DIRTY_FILES).and_then(|t| {
            dirty_files::parse(t)
                .map_err(|e| domains_error.get_or_insert_with(|| e.to_string()))
                .ok()
        });
        let (exits, task_delays, exits_error) = task_records(sample);
        let (disks, disks_skipped) = r.diskstats(required(sample, names::DISKSTATS)?);
        let (journals, journals_error) = journals(sample);
        let (zram, zram_error) = zram::from_sample(sample);
        let (nodes, nodes_error) = node::from_sample(sample);
        Ok(Self {
            mono_ns: sample.mono_ns,
            wall_ms: sample.wall_ms,
            page_size: if sample.page_size == 0 {
                4096
            } else {
                sample.page_size
            },
            meminfo,
            vmstat,
            zones,
            zones_error,
            reader_rt: sample.file(names::READER_STAT).and_then(reader_rt),
            zone_free,
            disks,
            disks_skipped,
            disks_carried: sample
                .file(names::DISKSTATS_CARRIED)
                .map(|t| r.carried(t))
                .unwrap_or_default(),
            cpu: stat::parse(required(sample, names::STAT)?)?,
            psi_cpu: psi(sample, r, 0)?,
            psi_memory: psi(sample, r, 1)?,
            psi_io: psi(sample, r, 2)?,
            sysctl: r.sysctl(sysctl::texts(sample))?,
            block,
            procs,
            procs_error,
            exits,
            exits_error,
            task_delays,
            trace: trace::parse(sample)?,
            sync: sync_calls::from_sample(sample),
            blk: blk_lat::from_sample(sample),
            cgroups,
            bdis,
            wb_stats,
            bdi_stats,
            bdi_stats_unread: sample
                .file(names::BDI_STATS_STATUS)
                .and_then(bdi::parse_stats_unread),
            dirty_files,
            domains_error,
            scope,
            lineage: lineage::parse(sample),
            journals,
            journals_error,
            below: below::parse(sample),
            reclaim_trace: reclaim_trace::parse(sample),
            zram,
            zram_error,
            nodes,
            nodes_error,
        })
    }
}
