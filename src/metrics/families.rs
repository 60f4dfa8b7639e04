//! The metric families pagewatch exposes, defined once for both the OpenMetrics export of a
//! recording (`export::openmetrics`) and the live `/metrics` endpoint (`metrics::render`):
//! names, units, help texts, label values and the conversions to base units (kB and pages to
//! bytes, ms to seconds, percentages to ratios), so dashboards work on both.
//!
//! Owns: the family tables and label escaping. Must not touch: I/O, output layout
//! (timestamps, `# EOF`, negotiation belong to the writers).

use crate::model::compressed::ZramDevice;
use crate::model::dirty::State;
use crate::model::nodes::Node;
use crate::model::{Disk, Model, domains};

/// How a system family reads its value from a record.
pub type Get = fn(&Model) -> Option<f64>;
/// How a disk family reads its value from a device.
pub type DiskGet = fn(&Disk) -> Option<f64>;
/// How a node family reads its value from a NUMA node.
pub type NodeGet = fn(&Node, u64) -> Option<f64>;
/// How a zram family reads its value from a device.
pub type ZramGet = fn(&ZramDevice) -> Option<f64>;
/// How a domain family reads its value (pages) from a dirty domain.
pub type DomainGet = fn(&domains::Domain) -> Option<u64>;

fn pages(m: &Model, p: Option<u64>) -> Option<f64> {
    p.map(|p| p as f64 * m.page_size as f64)
}
fn kb(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64 * 1024.0)
}
fn ratio(pct: Option<f64>) -> Option<f64> {
    pct.map(|p| p / 100.0)
}
fn psi(p: Option<crate::model::Pressure>, full: bool) -> Option<f64> {
    let p = p?;
    ratio(if full { p.full } else { p.some }?.total_pct)
}
/// The `pagewatch_dirty_state` gauge's number for a state.
#[must_use]
pub fn state(s: Option<State>) -> Option<f64> {
    s.map(|s| match s {
        State::BelowBackground => 0.0,
        State::BackgroundFlushing => 1.0,
        State::WritersThrottled => 2.0,
        State::OverThresh => 3.0,
        State::AtHardLimit => 4.0,
    })
}

/// The `pagewatch_early_warning` gauge: 1 while the verdict warns early, 0 otherwise;
/// `None` before a verdict.
fn early_warning(m: &Model) -> Option<f64> {
    m.verdict
        .as_ref()
        .map(|v| f64::from(u8::from(v.early.is_some())))
}

/// System families: (name, unit, help, value).
#[rustfmt::skip]
pub const SYSTEM: [(&str, &str, &str, Get); 45] = [
    ("pagewatch_memory_total_bytes", "bytes", "MemTotal.", |m| kb(Some(m.memory.MemTotal))),
    ("pagewatch_memory_free_bytes", "bytes", "MemFree.", |m| kb(Some(m.memory.MemFree))),
    ("pagewatch_memory_available_bytes", "bytes", "MemAvailable (the kernel's estimate).", |m| kb(m.memory.MemAvailable)),
    ("pagewatch_memory_available_derived_bytes", "bytes", "pagewatch's own derivation of MemAvailable (spec 2), beside the kernel's.", |m| kb(m.memory.derived_MemAvailable)),
    ("pagewatch_memory_cached_bytes", "bytes", "Cached (page cache).", |m| kb(m.memory.Cached)),
    ("pagewatch_memory_anon_bytes", "bytes", "AnonPages.", |m| kb(m.memory.AnonPages)),
    ("pagewatch_dirty_bytes", "bytes", "nr_dirty: dirty page-cache pages.", |m| pages(m, m.dirty.nr_dirty)),
    ("pagewatch_writeback_bytes", "bytes", "nr_writeback: pages under writeback.", |m| pages(m, m.dirty.nr_writeback)),
    ("pagewatch_dirty_writeback_bytes", "bytes", "nr_dirty + nr_writeback, the count compared with the thresholds.", |m| pages(m, m.dirty.dirty_writeback_pages)),
    ("pagewatch_dirty_threshold_bytes", "bytes", "Dirty threshold (hard limit): the kernel's nr_dirty_threshold, else derived.", |m| pages(m, m.dirty.thresh_pages.or(m.dirty.derived_thresh_pages))),
    ("pagewatch_dirty_background_threshold_bytes", "bytes", "Background writeback threshold: nr_dirty_background_threshold, else derived.", |m| pages(m, m.dirty.bg_thresh_pages.or(m.dirty.derived_bg_thresh_pages))),
    ("pagewatch_dirty_threshold_derived_bytes", "bytes", "pagewatch's own derivation of the dirty threshold from dirtyable memory (spec 1.1-1.2), beside the kernel's.", |m| pages(m, m.dirty.derived_thresh_pages)),
    ("pagewatch_dirty_background_threshold_derived_bytes", "bytes", "pagewatch's own derivation of the background threshold (spec 1.2), beside the kernel's.", |m| pages(m, m.dirty.derived_bg_thresh_pages)),
    ("pagewatch_dirty_freerun_bytes", "bytes", "Freerun ceiling (thresh + bg_thresh) / 2: writers are throttled above it.", |m| pages(m, m.dirty.freerun_pages)),
    ("pagewatch_dirty_state", "", "Dirty state: 0 below background, 1 background flushing, 2 writers throttled, 3 over the threshold T, 4 at the kernel's hard limit (tracepoint).", |m| state(m.dirty.state)),
    ("pagewatch_early_warning", "", "1 below freerun while dirtying outruns writeback and a victim's fsync is 10x its calm or a disk's await 3x its baseline (the verdict's early warning), else 0.", early_warning),
    ("pagewatch_dirtied_bytes_per_second", "", "Pages dirtied per second, in bytes.", |m| m.dirty.dirtied_per_s.map(|p| p * m.page_size as f64)),
    ("pagewatch_written_back_bytes_per_second", "", "Pages whose writeback completed per second, in bytes.", |m| m.dirty.written_per_s.map(|p| p * m.page_size as f64)),
    ("pagewatch_pgscan_kswapd_pages_per_second", "", "Pages scanned by kswapd per second.", |m| m.reclaim.pgscan_kswapd_s),
    ("pagewatch_pgsteal_kswapd_pages_per_second", "", "Pages reclaimed by kswapd per second.", |m| m.reclaim.pgsteal_kswapd_s),
    ("pagewatch_pgscan_direct_pages_per_second", "", "Pages scanned in direct reclaim per second.", |m| m.reclaim.pgscan_direct_s),
    ("pagewatch_pgsteal_direct_pages_per_second", "", "Pages reclaimed in direct reclaim per second.", |m| m.reclaim.pgsteal_direct_s),
    ("pagewatch_pgscan_memcg_pages_per_second", "", "Pages scanned in cgroup limit reclaim (memory.high/max) per second: pgscan_anon + pgscan_file less the global reclaimers (5.8+).", |m| m.reclaim.pgscan_memcg_s),
    ("pagewatch_pgsteal_memcg_pages_per_second", "", "Pages reclaimed in cgroup limit reclaim per second.", |m| m.reclaim.pgsteal_memcg_s),
    ("pagewatch_allocstall_per_second", "", "Entries into direct reclaim per second.", |m| m.reclaim.allocstall_s),
    ("pagewatch_compact_stall_per_second", "", "Entries into direct compaction per second (compact_stall): a stall of the allocating task that allocstall does not count (spec 13).", |m| m.reclaim.compact_stall_s),
    ("pagewatch_compact_fail_per_second", "", "Direct compactions per second that ended without the page (compact_fail).", |m| m.reclaim.compact_fail_s),
    ("pagewatch_compact_success_per_second", "", "Direct compactions per second that got the page (compact_success).", |m| m.reclaim.compact_success_s),
    ("pagewatch_thp_fault_fallback_per_second", "", "Anonymous faults per second that tried a huge page and fell back to small pages (thp_fault_fallback).", |m| m.reclaim.thp_fault_fallback_s),
    ("pagewatch_zswap_pool_bytes", "bytes", "zswap's compressed pool (meminfo Zswap, 5.19+; spec 14.1).", |m| m.compressed.zswap.map(|z| z.pool_bytes as f64)),
    ("pagewatch_zswap_stored_bytes", "bytes", "The original size of the pages zswap stores (meminfo Zswapped).", |m| m.compressed.zswap.map(|z| z.stored_bytes as f64)),
    ("pagewatch_zswap_writeback_bytes_per_second", "", "Bytes zswap wrote back to the swap device per second (vmstat zswpwb, 6.8+): disk writes no application asked for.", |m| m.compressed.zswap?.writeback_bytes_per_s),
    ("pagewatch_major_faults_per_second", "", "Major page faults per second.", |m| m.reclaim.pgmajfault_s),
    ("pagewatch_cpu_user_ratio", "ratio", "CPU time in user + nice, all CPUs.", |m| ratio(m.cpu.and_then(|c| c.user_pct))),
    ("pagewatch_cpu_system_ratio", "ratio", "CPU time in system + irq + softirq.", |m| ratio(m.cpu.and_then(|c| c.system_pct))),
    ("pagewatch_cpu_iowait_ratio", "ratio", "CPU time idle waiting for I/O.", |m| ratio(m.cpu.and_then(|c| c.iowait_pct))),
    ("pagewatch_cpu_steal_ratio", "ratio", "CPU time stolen by the hypervisor.", |m| ratio(m.cpu.and_then(|c| c.steal_pct))),
    ("pagewatch_procs_blocked", "", "Tasks blocked on I/O (D state).", |m| m.procs_blocked.map(f64::from)),
    ("pagewatch_procs_running", "", "Runnable tasks.", |m| m.procs_running.map(f64::from)),
    ("pagewatch_pressure_cpu_some_ratio", "ratio", "PSI cpu some: share of the interval some task waited for CPU.", |m| psi(m.pressure.cpu, false)),
    ("pagewatch_pressure_memory_some_ratio", "ratio", "PSI memory some over the interval.", |m| psi(m.pressure.memory, false)),
    ("pagewatch_pressure_io_some_ratio", "ratio", "PSI io some over the interval.", |m| psi(m.pressure.io, false)),
    ("pagewatch_pressure_io_full_ratio", "ratio", "PSI io full over the interval.", |m| psi(m.pressure.io, true)),
    ("pagewatch_reclaim_writeback_sleep_ratio", "ratio", "Time reclaim slept waiting on writeback, per second of the interval (vmscan:mm_vmscan_throttled, reason writeback; while the -below tracer is armed).", reclaim_writeback_sleep),
    ("pagewatch_reclaim_written_file_pages_per_second", "", "Dirty file pages reclaim wrote itself per second (vmscan:mm_vmscan_write_folio; while the -below tracer is armed).", |m| m.below.as_ref()?.reclaim_wrote_file_per_s),
];

/// Reclaim's sleep on writeback, seconds per second; 0 while armed without any.
fn reclaim_writeback_sleep(m: &Model) -> Option<f64> {
    let b = m.below.as_ref()?;
    b.reclaim_wrote_file_per_s?;
    let ms: f64 = b
        .reclaim_throttled
        .iter()
        .filter(|t| t.reason == "writeback")
        .map(|t| t.sleep_ms_per_s)
        .sum();
    Some(ms / 1000.0)
}

/// Disk families (label `device`): (name, unit, help, value).
#[rustfmt::skip]
pub const DISK: [(&str, &str, &str, DiskGet); 15] = [
    ("pagewatch_disk_reads_per_second", "", "iostat r/s.", |d| d.cols.r_s),
    ("pagewatch_disk_writes_per_second", "", "iostat w/s.", |d| d.cols.w_s),
    ("pagewatch_disk_read_bytes_per_second", "", "iostat rkB/s, in bytes.", |d| d.cols.rkB_s.map(|v| v * 1024.0)),
    ("pagewatch_disk_write_bytes_per_second", "", "iostat wkB/s, in bytes.", |d| d.cols.wkB_s.map(|v| v * 1024.0)),
    ("pagewatch_disk_read_await_seconds", "seconds", "iostat r_await.", |d| d.cols.r_await.map(|v| v / 1000.0)),
    ("pagewatch_disk_write_await_seconds", "seconds", "iostat w_await.", |d| d.cols.w_await.map(|v| v / 1000.0)),
    ("pagewatch_disk_queue_size", "", "iostat aqu-sz: average requests in flight.", |d| d.cols.aqu_sz),
    ("pagewatch_disk_util_ratio", "ratio", "iostat %util.", |d| ratio(d.cols.util_pct)),
    ("pagewatch_disk_in_flight", "", "I/Os in flight at the read.", |d| Some(d.in_flight as f64)),
    ("pagewatch_disk_wbt_target_seconds", "seconds", "queue/wbt_lat_usec: writeback throttling's read-latency target (0: off).", |d| d.queue.as_ref()?.wbt_lat_usec.map(|u| u as f64 / 1e6)),
    ("pagewatch_disk_latency_sample_every", "", "While the device is timed: one request in this many goes into pagewatch_disk_latency_seconds (1: every one; the tracer samples by sector bits at high rates).", |d| d.latency.lat_sample_every.map(|n| n as f64)),
    ("pagewatch_disk_dirty_bytes", "bytes", "Dirty page-cache bytes waiting for the device: debugfs BdiReclaimable (root), else the machine's Dirty apportioned by the device's share of the writes (spec §15.5).", |d| d.drain.dirty_bytes.map(|b| b as f64)),
    ("pagewatch_disk_writeback_bytes", "bytes", "Bytes under writeback to the device (BdiWriteback, or apportioned as dirty_bytes).", |d| d.drain.writeback_bytes.map(|b| b as f64)),
    ("pagewatch_disk_drain_bytes_per_second", "", "The rate the dirty and writeback bytes drain at: the kernel's BdiWriteBandwidth when known, else the measured write rate.", |d| d.drain.drain_bytes_per_s),
    ("pagewatch_disk_drain_eta_seconds", "seconds", "(dirty + writeback) / drain rate: when the device's waiting data will be written, if nothing more is dirtied.", |d| d.drain.drain_eta_s),
];

/// zram families (label `device`): each device's sizes against its limit (spec §14.2).
#[rustfmt::skip]
pub const ZRAM: [(&str, &str, &str, ZramGet); 4] = [
    ("pagewatch_zram_original_bytes", "bytes", "Uncompressed bytes a zram device holds (mm_stat orig_data_size).", |z| Some(z.orig_bytes as f64)),
    ("pagewatch_zram_compressed_bytes", "bytes", "Those bytes compressed (mm_stat compr_data_size).", |z| Some(z.compr_bytes as f64)),
    ("pagewatch_zram_memory_used_bytes", "bytes", "Memory the zram device uses, allocator overhead included (mm_stat mem_used_total).", |z| Some(z.mem_used_bytes as f64)),
    ("pagewatch_zram_memory_limit_bytes", "bytes", "The zram device's mem_limit; absent when it has none.", |z| z.limit_bytes.map(|l| l as f64)),
];

/// NUMA node families (label `node`; only with more than one node, spec §12): value from
/// the node and the page size.
#[rustfmt::skip]
pub const NODE: [(&str, &str, &str, NodeGet); 6] = [
    ("pagewatch_node_free_bytes", "bytes", "A NUMA node's free pages (nodeN/vmstat nr_free_pages).", |n, p| Some((n.free_pages * p) as f64)),
    ("pagewatch_node_low_watermark_bytes", "bytes", "The sum of the node's zones' low watermarks: kswapd of the node wakes below it.", |n, p| Some((n.low_pages * p) as f64)),
    ("pagewatch_node_dirty_writeback_bytes", "bytes", "The node's nr_dirty + nr_writeback, what node_dirty_ok() compares (spec 12.1).", |n, p| Some((n.dirty_writeback_pages * p) as f64)),
    ("pagewatch_node_dirty_limit_bytes", "bytes", "node_dirty_limit(): the node's dirty share; past it, page-cache allocations go to other nodes (spec 12.2).", |n, p| n.dirty_limit_pages.map(|l| (l * p) as f64)),
    ("pagewatch_node_numa_miss_per_second", "", "Allocations per second placed on the node although another was preferred (numa_miss).", |n, _| n.numa_miss_s),
    ("pagewatch_node_numa_foreign_per_second", "", "Allocations per second that preferred the node and went elsewhere (numa_foreign).", |n, _| n.numa_foreign_s),
];

/// Per-domain families (labels `kind` and `domain`): each dirty domain's threshold, freerun
/// point, dirty + writeback count and, where the kernel reports it (wb_stats, 6.10+), its own
/// threshold beside ours (spec §1.8, §1.9).
#[rustfmt::skip]
pub const DOMAIN: [(&str, &str, &str, DomainGet); 4] = [
    ("pagewatch_domain_threshold_bytes", "bytes", "A dirty domain's threshold T (global: the kernel's; memcg: derived, spec 1.8; bdi: its cap, spec 1.9).", |d| d.thresh_pages),
    ("pagewatch_domain_freerun_bytes", "bytes", "A dirty domain's freerun point (T + bg) / 2: its writers are throttled above it.", |d| d.freerun_pages),
    ("pagewatch_domain_dirty_writeback_bytes", "bytes", "A dirty domain's dirty + writeback pages, the count compared with its freerun point.", domains::Domain::dirty_writeback),
    ("pagewatch_domain_kernel_threshold_bytes", "bytes", "The kernel's own threshold for the domain (debugfs wb_stats WbDirtyThresh, 6.10+), beside the derived one.", |d| d.kernel_thresh_pages),
];

/// The `kind` label of a domain.
#[must_use]
pub fn kind(k: domains::Kind) -> &'static str {
    match k {
        domains::Kind::Global => "global",
        domains::Kind::Memcg => "memcg",
        domains::Kind::Bdi => "bdi",
    }
}

/// The label value of a state (the batch JSON's name): `below_background`,
/// `background_flushing`, `writers_throttled`, `over_thresh`, `at_hard_limit`.
#[must_use]
pub fn state_name(s: State) -> &'static str {
    match s {
        State::BelowBackground => "below_background",
        State::BackgroundFlushing => "background_flushing",
        State::WritersThrottled => "writers_throttled",
        State::OverThresh => "over_thresh",
        State::AtHardLimit => "at_hard_limit",
    }
}

/// Every state, in the order of the `pagewatch_dirty_state` gauge (0 to 4).
pub const STATES: [State; 5] = [
    State::BelowBackground,
    State::BackgroundFlushing,
    State::WritersThrottled,
    State::OverThresh,
    State::AtHardLimit,
];

/// A label value with `\`, `"` and newlines escaped.
#[must_use]
pub fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Help text with `\` and newlines escaped.
#[must_use]
pub fn help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Seconds throttled writers slept in balance_dirty_pages() over record `m`, by cgroup (`""`
/// for a writer without one): each writer's pause ms/s times the interval (spec §7).
#[must_use]
pub fn paused_seconds(m: &Model) -> Vec<(&str, f64)> {
    let dt = m.interval_s.unwrap_or(0.0);
    let mut out: Vec<(&str, f64)> = Vec::new();
    for t in &m.throttled {
        let g = t.cgroup.as_deref().unwrap_or("");
        let s = t.pause_ms_per_s.unwrap_or(0.0) * dt / 1000.0;
        match out.iter_mut().find(|(c, _)| *c == g) {
            Some((_, v)) => *v += s,
            None => out.push((g, s)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(help("x\\y\nz"), "x\\\\y\\nz");
    }

    #[test]
    fn names_end_in_their_units_and_are_unique() {
        let names = SYSTEM.iter().map(|f| (f.0, f.1));
        let domain = DOMAIN.iter().map(|f| (f.0, f.1));
        let mut seen = std::collections::BTreeSet::new();
        let zram = ZRAM.iter().map(|f| (f.0, f.1));
        let zram = zram.chain(NODE.iter().map(|f| (f.0, f.1)));
        for (name, unit) in names
            .chain(DISK.iter().map(|f| (f.0, f.1)))
            .chain(domain)
            .chain(zram)
        {
            assert!(
                unit.is_empty() || name.ends_with(&format!("_{unit}")),
                "{name}"
            );
            assert!(seen.insert(name), "{name} twice");
        }
    }

    #[test]
    fn reclaim_sleep_is_the_writeback_reasons_seconds_per_second_only_while_armed() {
        use crate::model::below::{Below, ThrottleRow};
        let samples = crate::source::test_samples("live-idle");
        let p = crate::parse::Snapshot::parse(&samples[0]).unwrap();
        let c = crate::parse::Snapshot::parse(&samples[1]).unwrap();
        let mut m = Model::derive(Some(&p), &c, crate::model::Options::default());
        assert_eq!(reclaim_writeback_sleep(&m), None, "not armed: no figure");
        let row = |reason: &str, ms| ThrottleRow {
            reason: reason.into(),
            per_s: 1.0,
            sleep_ms_per_s: ms,
            max_ms: ms,
        };
        m.below = Some(Below {
            state: crate::parse::trace::TraceState::Armed,
            why: None,
            lost: 0,
            wbt: Vec::new(),
            reclaim_throttled: vec![row("writeback", 250.0), row("noprogress", 100.0)],
            reclaim_wrote_file_per_s: Some(0.0),
            reclaim_wrote_anon_per_s: Some(0.0),
        });
        assert_eq!(reclaim_writeback_sleep(&m), Some(0.25));
    }

    #[test]
    fn states_number_in_order() {
        for (i, s) in STATES.iter().enumerate() {
            assert_eq!(state(Some(*s)), Some(i as f64));
        }
        assert_eq!(state_name(State::WritersThrottled), "writers_throttled");
    }

    #[test]
    fn the_early_warning_gauge_is_one_only_while_the_verdict_warns() {
        let samples = crate::source::test_samples("live-idle");
        let mut m = crate::pipeline::derive_all(&samples, crate::model::Options::default())
            .models
            .remove(0);
        assert_eq!(early_warning(&m), Some(0.0));
        if let Some(v) = m.verdict.as_mut() {
            v.early = Some(crate::model::answers::Early {
                what: "vda await 7.00 ms, 14x its calm 0.50 ms".into(),
                outrun_bytes_per_s: 520.0 * 1024.0 * 1024.0,
                freerun_in_s: Some(3.9),
            });
        }
        assert_eq!(early_warning(&m), Some(1.0));
        m.verdict = None;
        assert_eq!(early_warning(&m), None);
    }
}
