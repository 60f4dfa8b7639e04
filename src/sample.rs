//! The one raw type at the boundary: the text of each kernel file plus when it was read.
//!
//! Owns: `RawSample` and the names of the files it carries. Must not touch: the filesystem,
//! the clock or any parsing; live reads, captured trees and recordings all produce this type.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Sample-relative names of the files a sample carries.
pub mod names {
    /// `/proc/meminfo`.
    pub const MEMINFO: &str = "proc/meminfo";
    /// `/proc/vmstat`.
    pub const VMSTAT: &str = "proc/vmstat";
    /// `/proc/diskstats`.
    pub const DISKSTATS: &str = "proc/diskstats";
    /// Pseudo-file: the `/proc/diskstats` lines of this sample carried from an earlier read
    /// rather than read now (`source::disk_lines`: with many block devices only the moving
    /// ones are read every tick), one a line: the device name, a tab, and the monotonic time
    /// of that read in nanoseconds. Absent when every line was read with the sample.
    pub const DISKSTATS_CARRIED: &str = "proc/diskstats.carried";
    /// `/proc/zoneinfo` (re-read by the live source every few ticks, see `source::fs`).
    pub const ZONEINFO: &str = "proc/zoneinfo";
    /// `/proc/buddyinfo`: each zone's free blocks by order, read every tick for the zones'
    /// free pages (the watermarks come from zoneinfo, read on slow refresh).
    pub const BUDDYINFO: &str = "proc/buddyinfo";
    /// `/proc/stat`.
    pub const STAT: &str = "proc/stat";
    /// `/proc/uptime`.
    pub const UPTIME: &str = "proc/uptime";
    /// `/proc/pressure/cpu` (optional: kernel 4.20+ with PSI).
    pub const PSI_CPU: &str = "proc/pressure/cpu";
    /// `/proc/pressure/memory` (optional).
    pub const PSI_MEMORY: &str = "proc/pressure/memory";
    /// `/proc/pressure/io` (optional).
    pub const PSI_IO: &str = "proc/pressure/io";
    /// Pseudo-file: one line per entry of `/sys/block` (whole disks, named as in diskstats:
    /// sysfs's `cciss!c0d0` is `cciss/c0d0`), tab-separated:
    /// `name, rotational, scheduler, nr_requests, write_cache, dm/name, hardware queues,
    /// wbt_lat_usec`, each the trimmed text of `/sys/block/<name>/queue/<file>` (or
    /// `dm/name`, or the count of `mq/`), empty when unreadable; then the device's identity
    /// columns (`source::block_id`: wwid, serial, model, dm uuid, md uuid, loop backing file,
    /// its `dev:inode`, loop offset, size, logical block size), absent in older recordings.
    /// These change rarely, so the source re-reads them only when the device set changes
    /// and once a minute.
    pub const BLOCK_DEVICES: &str = "sys/block/";
    /// Pseudo-file: the disks' calm baselines kept across runs, as the state file read at the
    /// start held them (`source::baselines`; `parse::baselines` has the format), carried in
    /// every sample so that a recording judges its disks as the live run did. Absent when
    /// there was none (or it was refused), in older recordings and in trees.
    pub const BASELINES: &str = "pagewatch/baselines";
    /// The reading thread's own `stat`: its scheduling policy decides whether the kernel
    /// boosts the dirty thresholds it reports (spec §1.2, RT/DL boost). Read on slow refresh.
    pub const READER_STAT: &str = "proc/thread-self/stat";
    /// Pseudo-file: one process walk (spec §11), present only in the samples a walk was done
    /// in (every 2, 5 or 10 s, `Pace`, while `Wants::procs` asks). Header lines (`walk`,
    /// `prev`, `period`, `clk_tck`, `task_delayacct`, `scope`), then one record per process
    /// that was active since the previous walk, with its raw `stat` line, `io` text, `wchan`
    /// and cgroup; the format and which processes it holds are documented in `source::procs`.
    pub const PROCS: &str = "proc/pids";
    /// Pseudo-file: the dirty-files scan (`source::dirty_files`, spec §15.4): cachestat(2) on
    /// the files of `WRITER_FILES` (by path), the regular files open for writing of the
    /// processes `Wants::dirty_files` names, and again on the
    /// files that held dirty pages in the last minute (their writer may have exited), at
    /// most `MAX_FILES` every 5 s. Lines: `state ok|no-cachestat|error TEXT`, `scan NS` (the
    /// monotonic time of the scan the records come from; carried between scans), `denied N`
    /// (files it could not open or measure), then one record per file with dirty or
    /// writeback pages: `f PID MAJ:MIN INO CACHE DIRTY WRITEBACK COMM<TAB>PATH` (pages; `x`
    /// in place of `f` when the file was measured by its path after its owner exited). A
    /// tab or newline in a comm or path is written as `?`. Present while the scan runs.
    pub const DIRTY_FILES: &str = "proc/dirty-files";
    /// Pseudo-file: the regular files held open for writing by the processes whose
    /// `write_bytes` rose since the previous walk (`source::writer_files`, spec §15.4), one
    /// `PID<TAB>COMM<TAB>PATH` line each, at most 20; present in the samples of the walks
    /// that found some. The dirty-files scan measures them by path (`DIRTY_FILES`).
    pub const WRITER_FILES: &str = "proc/writer-files";
    /// The `/proc/sys/vm` knobs the derived figures depend on.
    pub const VM_SYSCTLS: [&str; 9] = [
        "dirty_ratio",
        "dirty_background_ratio",
        "dirty_bytes",
        "dirty_background_bytes",
        "dirty_expire_centisecs",
        "dirty_writeback_centisecs",
        "min_free_kbytes",
        "watermark_scale_factor",
        "swappiness",
    ];
    /// The `writeback:balance_dirty_pages` events as the kernel printed them to `trace_pipe`
    /// (recordings made before the binary read; replay still reads them, spec §7).
    pub const TRACE_EVENTS: &str = "sys/kernel/tracing/instances/pagewatch/trace_pipe";
    /// Pseudo-file: the throttled writers since the last sample, one line per task, reduced
    /// from the events of pagewatch's tracefs instance (`parse::trace_writers` has the
    /// format). Present only while the tracepoint is armed (spec §7).
    pub const TRACE_WRITERS: &str = "sys/kernel/tracing/instances/pagewatch/writers";
    /// Pseudo-file: the thread group and parents of each task in `TRACE_WRITERS`, one line
    /// per task, `tid tgid ppid gppid …` (at most three parents; `source::lineage`). Links a
    /// throttled fio worker to the fio it belongs to. Present while a writer is throttled.
    pub const THROTTLED_LINEAGE: &str = "proc/throttled-lineage";
    /// tracefs's `events/header_page`: the layout of a ring-buffer page (read by the source
    /// to decode `trace_pipe_raw`; not carried in samples).
    pub const TRACE_HEADER_PAGE: &str = "sys/kernel/tracing/events/header_page";
    /// The event's `format` file (field names differ between kernels, spec §7); read once per
    /// arming and carried while armed.
    pub const TRACE_FORMAT: &str = "sys/kernel/tracing/events/writeback/balance_dirty_pages/format";
    /// Pseudo-file: the tracer's status, one `key value` a line: `state` (`armed`, `off`,
    /// `not-root`, `no-tracefs`, `no-event`, `error`), `why` (free text, optional), `pid`
    /// (pagewatch's own), `tasks` (pagewatch's thread ids, when events were read), `bytes`
    /// (read this sample) and `capped` (1: the read stopped at the cap, more is waiting).
    /// Present from the first time the tracepoint is wanted.
    pub const TRACE_STATUS: &str = "sys/kernel/tracing/instances/pagewatch/status";
    /// Pseudo-file: the tasks that exited since the last sample, from taskstats exit
    /// notifications (generic netlink, root or CAP_NET_ADMIN), one line per task, and the
    /// listener's state; `parse::taskstats` has the format. Present in every sample while the
    /// process walk is wanted (`Wants::procs`), with the state saying why there are no exits
    /// when the listener could not register.
    pub const EXITS: &str = "netlink/taskstats";
    /// Pseudo-file: delay accounting of a few live processes (`source::task_delays`, spec
    /// §13.1), read by tgid with taskstats `GET`: the querier's state, the read's monotonic
    /// time and one `g` line per process, in `EXITS`' format (`parse::taskstats`). Present
    /// while `Wants::delays` names processes.
    pub const TASK_DELAYS: &str = "netlink/taskstats-tgid";
    /// Pseudo-file: the sync syscalls' tracer (`source::sync_trace`): its state and where the
    /// figures come from, then one line per process with its fsync, fdatasync,
    /// sync_file_range and msync(MS_SYNC) calls since the last sample (count, summed and
    /// longest latency, the longest still waiting); `parse::sync_calls` has the format.
    /// Present from the first time the sync latency is wanted (`Wants::sync`).
    pub const SYNC_CALLS: &str = "sys/kernel/tracing/instances/pagewatch-sync/calls";
    /// Pseudo-file: the block tracer's status (`parse::blk_lat::render_status`): `state`,
    /// `why`, `devices`, `buffer_kb`, `bytes`, `reads`. Present from the first time a
    /// device's latency is wanted (`Wants::latency`).
    pub const BLK_STATUS: &str = "sys/kernel/tracing/instances/pagewatch-blk/status";
    /// Pseudo-file: the interval's per-device latency histograms, reduced from the block
    /// events of pagewatch's `-blk` tracefs instance (`parse::blk_lat` has the format).
    /// Present only while armed.
    pub const BLK_LATENCY: &str = "sys/kernel/tracing/instances/pagewatch-blk/latency";
    /// Per-device files under `/sys/block/<dev>/queue/`, in `BLOCK_DEVICES` column order.
    pub const QUEUE_FILES: [&str; 4] = ["rotational", "scheduler", "nr_requests", "write_cache"];

    /// Pseudo-file: the cgroup v2 tree as read this tick (see `source::cgroups`). Line 1
    /// `status\t<ok|v1_memory|no_memory_io|no_cgroup2>`, line 2 `walk\t<full|active>`, then
    /// one line per group read: `<inode>\t<flags>\t<path>` (flags: `m` memory.stat and `i`
    /// io.stat read, `-` neither; path `/` for the root, `/box` below it). Each group's files
    /// are under `cgroup_file`; with the cgroups pane closed, groups without dirty or
    /// writeback pages carry only memory.stat.
    pub const CGROUP_INDEX: &str = "sys/fs/cgroup/";
    /// The files read in each cgroup v2 group.
    pub const CGROUP_FILES: [&str; 8] = [
        "memory.current",
        "memory.max",
        "memory.high",
        "memory.stat",
        "memory.events",
        "memory.pressure",
        "io.pressure",
        "io.stat",
    ];
    /// Pseudo-file: how the scope is chosen (`parse::scope`), written on each slow refresh,
    /// tab-separated lines: `choice\t<auto|host|cgroup\tPATH>`, `mount\t<root>\t<point>`
    /// (the cgroup2 mount's mountinfo root field and point), `root_group\t<yes|no>` (the
    /// mount's root directory is a non-root group), `found\t<group>` (the group listing
    /// pagewatch's pid, searched when the mount's root is above the cgroup namespace).
    pub const SCOPE: &str = "pagewatch/scope";
    /// `/proc/self/cgroup`: pagewatch's own cgroup (`0::/…`).
    pub const SELF_CGROUP: &str = "proc/self/cgroup";
    /// `/proc/1/cgroup`: pid 1's cgroup as this namespace sees it.
    pub const INIT_CGROUP: &str = "proc/1/cgroup";
    /// Pseudo-file: one line per `/sys/class/bdi/<name>`, tab-separated:
    /// `name, min_ratio, max_ratio, max_ratio_fine, max_bytes, strict_limit`, each the trimmed
    /// text of the file, empty when absent (`*_fine`, `*_bytes`, `strict_limit` since 6.2).
    pub const BDI_LIMITS: &str = "sys/class/bdi/";
    /// Files of each BDI in `BDI_LIMITS` column order.
    pub const BDI_FILES: [&str; 5] = [
        "min_ratio",
        "max_ratio",
        "max_ratio_fine",
        "max_bytes",
        "strict_limit",
    ];

    /// `sys/fs/cgroup<group>/<file>` for a group path (`/` or `/box`) relative to the
    /// cgroup2 mount.
    #[must_use]
    pub fn cgroup_file(group: &str, file: &str) -> String {
        let group = group.trim_end_matches('/');
        format!("sys/fs/cgroup{group}/{file}")
    }

    /// `sys/kernel/debug/bdi/<bdi>/wb_stats` (debugfs, root, 6.10+): the kernel's per-cgroup
    /// writeback figures, `WbDirtyThresh` among them.
    #[must_use]
    pub fn wb_stats(bdi: &str) -> String {
        format!("sys/kernel/debug/bdi/{bdi}/wb_stats")
    }

    /// The BDI name of a `wb_stats` sample name.
    #[must_use]
    pub fn wb_stats_bdi(name: &str) -> Option<&str> {
        name.strip_prefix("sys/kernel/debug/bdi/")?
            .strip_suffix("/wb_stats")
    }

    /// Pseudo-file: why the BDIs' debugfs `stats` (`bdi_stats`) cannot be read
    /// (`source::bdi_stats`), one line `denied|absent|error TEXT` (TEXT: the listing's
    /// error, as the OS gave it): `denied` without root (debugfs is root's), `absent` when
    /// debugfs is not mounted. Put in every sample while the last listing failed; the disks'
    /// dirty and writeback bytes are then apportioned (`model::drain`).
    pub const BDI_STATS_STATUS: &str = "pagewatch/bdi-stats";

    /// `sys/kernel/debug/bdi/<bdi>/stats` (debugfs, root): a BDI's dirty and writeback
    /// pages and the kernel's write-bandwidth estimate (spec §15.1), read while pages wait
    /// to be written (`source::bdi_stats`).
    #[must_use]
    pub fn bdi_stats(bdi: &str) -> String {
        format!("sys/kernel/debug/bdi/{bdi}/stats")
    }

    /// The BDI name of a debugfs `stats` sample name.
    #[must_use]
    pub fn bdi_stats_bdi(name: &str) -> Option<&str> {
        name.strip_prefix("sys/kernel/debug/bdi/")?
            .strip_suffix("/stats")
            .filter(|b| !b.contains('/'))
    }

    /// `proc/sys/vm/<knob>`.
    #[must_use]
    pub fn vm_sysctl(knob: &str) -> String {
        format!("proc/sys/vm/{knob}")
    }
}

/// One read of every file pagewatch samples, exactly as the kernel printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawSample {
    /// Monotonic time of the read, in nanoseconds, from the source's clock.
    /// Only differences matter; rates divide by the difference between two samples.
    pub mono_ns: u64,
    /// Wall-clock time of the read, milliseconds since the Unix epoch (for display only).
    pub wall_ms: i64,
    /// Page size of the machine the sample came from, in bytes.
    pub page_size: u64,
    /// File text keyed by sample-relative path (`proc/meminfo`, `sys/block/sda/queue/rotational`).
    /// A file that does not exist on that machine is absent.
    pub files: BTreeMap<String, String>,
}

impl RawSample {
    /// The text of a file, if the sample has it.
    #[must_use]
    pub fn file(&self, name: &str) -> Option<&str> {
        self.files.get(name).map(String::as_str)
    }
}

/// What a source collects beyond the files it reads every tick: the "who" data, whose reads
/// cost too much to run always (spec §11). Decided by `model::who::Gate` from the figures of
/// the latest sample and what the screen shows; the source only obeys (`Source::want`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
// Independent switches, one per source the model can ask for, not the states of one thing.
#[allow(clippy::struct_excessive_bools)]
pub struct Wants {
    /// Walk the processes (`proc/<pid>/…`) every few seconds; `None`: no walk.
    pub procs: Option<ProcScope>,
    /// Arm the `writeback:balance_dirty_pages` tracepoint in pagewatch's own tracefs instance
    /// (root only; the source falls back to nothing and says why when it cannot).
    pub trace: bool,
    /// Time the sync syscalls (fsync, fdatasync, sync_file_range, msync) per process in
    /// pagewatch's `-sync` tracefs instance (root; the source says why when it cannot).
    pub sync: bool,
    /// Read the whole cgroup v2 tree every tick (the cgroups pane is open), not only on the
    /// slow refresh.
    pub cgroups_every_tick: bool,
    /// Time the block requests of these devices (kernel names, sorted) in pagewatch's `-blk`
    /// tracefs instance (root only; empty: nothing armed).
    pub latency: Vec<String>,
    /// Time the queue (insert → issue) as well: arms `block_rq_insert`, a third event a
    /// request (`--queue-time`).
    pub latency_queue: bool,
    /// Arm the `-below` tracer (wbt and reclaim throttling: `parse::below`), root only.
    pub below: bool,
    /// Time direct and memcg reclaim per task in pagewatch's `-reclaim` tracefs instance
    /// (`parse::reclaim_trace`), root only.
    pub reclaim: bool,
    /// Measure the open files of these processes (the top dirtiers, fastest first) with
    /// cachestat(2) for the dirty-files table (`source::dirty_files`); empty: none.
    pub dirty_files: Vec<u32>,
    /// Read the delay accounting (compaction, direct reclaim) of these processes by tgid
    /// (`source::task_delays`, spec §13.1; at most `MAX_DELAY_PIDS`); empty:
    /// none, as while `kernel.task_delayacct` is off.
    pub delays: Vec<u32>,
}

/// Processes whose delay accounting is read a sample at most (`Wants::delays`).
pub const MAX_DELAY_PIDS: usize = 10;

/// Which processes a walk covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcScope {
    /// Only the processes of this cgroup v2 group and its descendants (a path relative to the
    /// cgroup2 mount, `/system.slice/db.service`); `None`: every process.
    pub cgroup: Option<String>,
    /// How often to walk (`source::procs` holds the periods).
    pub pace: Pace,
}

/// How often a walk runs, decided by `model::who::Gate` from what is shown and how busy the
/// machine is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pace {
    /// Every 5 s: while there is something to attribute, in every mode and view, and while
    /// the processes pane is shown on a machine that is not quiet. One pace, so that the pane,
    /// the disk table's spare rows, the JSON, the report and recordings rate the same
    /// processes over the same seconds in every instance (the pane once walked every 2 s: its
    /// culprits were rated over other intervals than batch's in the same second).
    #[default]
    Attribute,
    /// Every 10 s: the processes pane is shown and the machine is quiet (no reason to walk
    /// besides the pane, the CPUs under 5 % busy, for 10 s). Its rows are sleeping processes;
    /// a walk then is half of what the pane costs (issue 27), and any reason turns the pace
    /// back to `Attribute` at the next sample.
    Quiet,
}
