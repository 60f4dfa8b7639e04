//! Pure derivation: `(previous snapshot, current snapshot) → Model`, every figure pagewatch
//! shows. No I/O, no clock, no terminal. Rates divide by the exact elapsed time between the
//! two samples' own timestamps.
//!
//! Owns: the derived figures and their formulas (each file cites its section of
//! `docs/kernel-formulas.md`). Must not touch: files, the clock, ratatui or crossterm.

pub mod answers;
pub mod below;
pub mod cgroups;
pub mod commands;
pub mod compressed;
pub mod cpu;
pub mod dirty;
pub mod dirty_files;
pub mod disk;
pub mod domains;
pub mod drain;
pub mod early;
pub mod exits;
pub mod latency;
pub mod memory;
pub mod nodes;
pub mod proc_row;
pub mod procs;
pub mod procs_memory;
pub mod rate;
pub mod reclaim;
pub mod reclaim_tasks;
pub mod refresh;
pub mod saturation;
pub mod scope;
pub mod story;
pub mod sync;
pub mod task_delays;
pub mod throttled;
pub mod verdict;
pub mod who;
pub mod zones;

use serde::Serialize;

pub use cpu::{Cpu, Pressure};
pub use dirty::Dirty;
pub use disk::Disk;
pub use memory::Memory;
pub use reclaim::Reclaim;

use crate::parse::{Snapshot, VmSysctl};

/// Choices that change which figures are derived.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Include partitions in the disk list.
    pub partitions: bool,
}

/// PSI for the three resources; `None` where the kernel has no PSI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PressureSet {
    /// `/proc/pressure/cpu`.
    pub cpu: Option<Pressure>,
    /// `/proc/pressure/memory`.
    pub memory: Option<Pressure>,
    /// `/proc/pressure/io`.
    pub io: Option<Pressure>,
}

/// Every derived figure of one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    /// Wall-clock time of the current read, ms since the epoch.
    pub time_ms: i64,
    /// The wall-clock time of the boot, ms: the read's wall time less its monotonic time (a
    /// stored figure from before it is another boot's).
    #[serde(skip)]
    pub booted_ms: i64,
    /// Seconds since the previous read; `None` on the first tick.
    pub interval_s: Option<f64>,
    /// Page size, bytes.
    pub page_size: u64,
    /// Memory figures, kB.
    pub memory: Memory,
    /// Dirty thresholds and counts, pages.
    pub dirty: Dirty,
    /// Reclaim rates and watermarks.
    pub reclaim: Reclaim,
    /// Per-device iostat -x figures.
    pub disks: Vec<Disk>,
    /// The `/proc/diskstats` lines skipped this read (fewer than 14 fields, not counters):
    /// the first, named, and how many more. The other devices stand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diskstats_skipped: Option<String>,
    /// CPU split; `None` on the first tick.
    pub cpu: Option<Cpu>,
    /// Tasks blocked on I/O (D state) at the read.
    pub procs_blocked: Option<u32>,
    /// Tasks runnable at the read.
    pub procs_running: Option<u32>,
    /// Pressure stall information.
    pub pressure: PressureSet,
    /// The vm sysctls in force.
    pub sysctl: VmSysctl,
    /// Why /proc/zoneinfo could not be parsed, when it could not: the watermarks, reserves
    /// and derived figures are left out, everything else stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zoneinfo_error: Option<String>,
    /// The most active processes at the last process walk (`procs::TOP`, spec §11); `None`
    /// when no walk ran recently. Filled by `procs::Tracker::fill`, not by `derive`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<Vec<proc_row::ProcRow>>,
    /// `kernel.task_delayacct` at that walk: without it there is no IO-wait figure
    /// (`sysctl kernel.task_delayacct=1` turns it on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_delayacct: Option<bool>,
    /// `/proc`'s `hidepid=` when it hid other users' processes from the last walk (not root):
    /// `processes` holds only what pagewatch may see.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidepid: Option<String>,
    /// pagewatch's own pid, from the last walk (none for a captured tree): the story names
    /// no victim in it (a recording's own fsyncs are slow in a flood too).
    #[serde(skip)]
    pub own_pid: Option<u32>,
    /// pagewatch's own command name, from the last walk that listed its pid: another
    /// process of that name (or `pagewatch`) is another instance, no victim either.
    #[serde(skip)]
    pub own_comm: Option<String>,
    /// Milliseconds between the last walk and the one before it: the interval the process
    /// rates are over (2, 5 or 10 s: `sample::Pace`); `None` before a second walk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walk_interval_ms: Option<u64>,
    /// The processes holding the most resident memory at the last walk, stalled-in-reclaim
    /// first, then by resident bytes (`procs_memory`, at most `source::procs_memory::MEM_TOP` plus
    /// those in D state); `None` when no walk ran recently or it had no memory records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes_by_memory: Option<Vec<procs_memory::MemRow>>,
    /// Who stalled in direct or memcg reclaim in the interval, by process (the reclaim
    /// tracer, spec §3.3); `None` while it is not armed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reclaim_tasks: Option<reclaim_tasks::ReclaimTasks>,
    /// The throttled writers of the interval, most paused first: the tracepoint's rows while
    /// it is armed, else the wchan rows of the process walk (spec §7, §11).
    pub throttled: Vec<throttled::Throttled>,
    /// The `writeback:balance_dirty_pages` tracer: armed, or why not; `None` when the sample
    /// does not say (the tracepoint was never wanted, captured trees, older recordings).
    pub tracer: Option<throttled::Tracer>,
    /// The sync syscalls' tracer and the interval's sync latency by process (the victims);
    /// `None` when the sample does not carry it (never wanted, captured trees).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<sync::Sync>,
    /// The block tracer (per-device latency): armed, or why not; `None` when the sample does
    /// not say (latency was never wanted, older recordings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_tracer: Option<latency::Tracer>,
    /// Dirty domains (spec §1.8, §1.9): the global one first, then each memory cgroup with
    /// dirty or writeback pages of its own, then capped or strictlimit devices.
    pub domains: Vec<domains::Domain>,
    /// The cgroups pane's rows and note; `None` when the sample has no cgroup index.
    pub cgroups: Option<cgroups::Cgroups>,
    /// The scope shown as the machine (issue 54) and its figures; `None` when the sample
    /// does not say (older recordings and trees).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<scope::ScopeView>,
    /// Why a cgroup, BDI or wb_stats file could not be parsed, when one could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domains_error: Option<String>,
    /// The headline answers with their evidence (`verdict`); `None` until the pipeline
    /// judged this model (`Model::derive` alone does not).
    pub verdict: Option<answers::Verdict>,
    /// The last walk's processes rolled up by command (`commands::roll_up`), most active
    /// first; `None` when no walk ran recently. Filled by `procs::Tracker::fill`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<commands::CommandRow>>,
    /// pagewatch saw `kernel.task_delayacct` switch on: tasks started before it have no IO
    /// wait figure (`None`), since the kernel accounts only tasks forked afterwards.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub delayacct_switched_on: bool,
    /// Where exited processes come from: taskstats exit notifications while the listener is
    /// registered (root), else none, and why (`exits::Status`); `None` when the samples do
    /// not say (no walk wanted, captured trees, older recordings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exits: Option<exits::Status>,
    /// The ext4 journals (`/proc/fs/jbd2`): commit rates and times, and whether fsync waits
    /// on them (`below::Journal`).
    pub journals: Vec<below::Journal>,
    /// Why a journal's `info` could not be parsed, when one could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journals_error: Option<String>,
    /// The `-below` tracer: wbt per device, reclaim throttled on writeback; `None` when the
    /// sample does not carry it (never wanted, not live).
    pub below: Option<below::Below>,
    /// Compressed swap: zswap and the zram devices (spec §14).
    pub compressed: compressed::Compressed,
    /// The NUMA nodes (spec §12); empty (left out of JSON) on a single node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<nodes::Node>,
    /// The files holding the dirty and writeback pages (spec §15.4); `None` while no scan
    /// runs (no dirtier, captured trees).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_files: Option<dirty_files::DirtyFiles>,
    /// Delay accounting of the processes queried (spec §13.1): the querier's state and each
    /// process's compaction and direct-reclaim delay; `None` while none is queried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_delays: Option<task_delays::TaskDelays>,
}

impl Model {
    /// Whether a figure pagewatch derives from the rarely re-read files (zoneinfo, the vm
    /// sysctls) differs from the one the kernel reports every tick: the dirty thresholds
    /// (spec §1.2) or MemAvailable (spec §2). After a sysctl write, a watermark change or
    /// memory hotplug they differ until those files are read again.
    #[must_use]
    pub fn derived_differs(&self) -> bool {
        let differs =
            |k: Option<u64>, d: Option<u64>| matches!((k, d), (Some(k), Some(d)) if k != d);
        let (d, m) = (&self.dirty, &self.memory);
        // An RT reader is shown boosted thresholds: they cannot match (spec §1.2).
        (!d.rt_reader
            && (differs(d.thresh_pages, d.derived_thresh_pages)
                || differs(d.bg_thresh_pages, d.derived_bg_thresh_pages)))
            || differs(m.MemAvailable, m.derived_MemAvailable)
    }

    /// Derives every figure. `prev` is the snapshot before `cur`, if any.
    #[must_use]
    pub fn derive(prev: Option<&Snapshot>, cur: &Snapshot, opts: Options) -> Self {
        let dt_s = prev.and_then(|p| rate::elapsed_s(p.mono_ns, cur.mono_ns));
        // A snapshot whose clock did not advance cannot give rates: treat it as a first tick.
        let prev = prev.filter(|_| dt_s.is_some());
        let psi = |pf: fn(&Snapshot) -> Option<&crate::parse::Psi>| {
            pf(cur).map(|c| Pressure::derive(prev.and_then(pf), c, dt_s))
        };
        let tracer = cur.trace.as_ref().map(throttled::Tracer::derive);
        let dirty = Dirty::derive(prev, cur, dt_s);
        let domains = domains::derive(cur, &dirty);
        let cgroups = cgroups::derive(prev, cur, dt_s, &domains);
        let scope = scope::derive(prev, cur, dt_s, &domains);
        let mut disks = disk::derive(prev, cur, dt_s, opts.partitions);
        disk::fill_latency(&mut disks, cur.blk.as_ref());
        disk::fill_drain(&mut disks, cur, dirty.nr_dirty, dirty.nr_writeback);
        let latency_tracer = latency::tracer(
            cur.blk.as_ref(),
            &disk::seen_by_latency_tracer(&disks),
            dt_s,
        );
        Model {
            time_ms: cur.wall_ms,
            booted_ms: cur
                .wall_ms
                .saturating_sub(i64::try_from(cur.mono_ns / 1_000_000).unwrap_or(i64::MAX)),
            interval_s: dt_s,
            page_size: cur.page_size,
            memory: Memory::derive(cur),
            dirty,
            reclaim: Reclaim::derive(prev, cur, dt_s),
            journals: below::journals(prev, cur, dt_s, &disks),
            journals_error: cur.journals_error.clone(),
            below: below::derive(cur, dt_s),
            dirty_files: dirty_files::derive(cur),
            disks,
            diskstats_skipped: disk::skipped_note(&cur.disks_skipped),
            cpu: prev.and_then(|p| Cpu::derive(&p.cpu, &cur.cpu)),
            procs_blocked: cur.cpu.procs_blocked,
            procs_running: cur.cpu.procs_running,
            pressure: PressureSet {
                cpu: psi(|s| s.psi_cpu.as_ref()),
                memory: psi(|s| s.psi_memory.as_ref()),
                io: psi(|s| s.psi_io.as_ref()),
            },
            sysctl: cur.sysctl,
            zoneinfo_error: cur.zones_error.clone(),
            processes: None,
            task_delayacct: None,
            hidepid: None,
            own_pid: None,
            own_comm: None,
            processes_by_memory: None,
            reclaim_tasks: cur
                .reclaim_trace
                .as_ref()
                .and_then(|t| t.records.as_ref())
                .map(reclaim_tasks::pair),
            walk_interval_ms: None,
            throttled: throttled::rows(
                tracer.as_ref(),
                cur.trace
                    .as_ref()
                    .map(|t| throttled::from_trace(t, dt_s))
                    .map(|rows| throttled::with_cgroup_paths(rows, cur.cgroups.as_ref()))
                    .map(|rows| throttled::with_lineage(rows, &cur.lineage))
                    .unwrap_or_default(),
                Vec::new(),
            ),
            tracer,
            sync: cur.sync.as_ref().map(|c| sync::derive(c, dt_s)),
            latency_tracer,
            domains,
            cgroups,
            scope,
            domains_error: cur.domains_error.clone(),
            verdict: None,
            commands: None,
            delayacct_switched_on: false,
            exits: None,
            compressed: compressed::Compressed::derive(prev, cur, dt_s),
            nodes: nodes::derive(prev, cur, dt_s),
            task_delays: task_delays::derive(
                prev.and_then(|p| p.task_delays.as_ref()),
                cur.task_delays.as_ref(),
            ),
        }
    }
}
