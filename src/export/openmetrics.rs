//! OpenMetrics text export: every record's key figures as gauges named `pagewatch_*`, for
//! `promtool tsdb create-blocks-from openmetrics` (then Prometheus / Grafana).
//!
//! Layout rules OpenMetrics imposes and this follows: each family's `# TYPE`, `# UNIT` (when
//! the name ends in a base unit: bytes, seconds, ratio) and `# HELP` lines come first, then
//! all its samples, one series after another, timestamps (seconds since the epoch) increasing
//! within a series; the text ends with `# EOF`. Units are converted to base units: kB and
//! pages to bytes, ms to seconds, percentages to ratios. Labels: `host` (the recording's host
//! name) on every series, `device` on disk series. A record without a figure has no sample.
//! Owns: metric names and conversions. Must not touch: I/O beyond `out`.

use std::io::Write;

use crate::model::dirty::State;
use crate::model::{Disk, Model, domains};

type Get = fn(&Model) -> Option<f64>;
type DiskGet = fn(&Disk) -> Option<f64>;

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
fn state(s: Option<State>) -> Option<f64> {
    s.map(|s| match s {
        State::BelowBackground => 0.0,
        State::BackgroundFlushing => 1.0,
        State::WritersThrottled => 2.0,
        State::OverThresh => 3.0,
        State::AtHardLimit => 4.0,
    })
}

/// System families: (name, unit, help, value).
#[rustfmt::skip]
const SYSTEM: [(&str, &str, &str, Get); 30] = [
    ("pagewatch_memory_total_bytes", "bytes", "MemTotal.", |m| kb(Some(m.memory.MemTotal))),
    ("pagewatch_memory_free_bytes", "bytes", "MemFree.", |m| kb(Some(m.memory.MemFree))),
    ("pagewatch_memory_available_bytes", "bytes", "MemAvailable (the kernel's estimate).", |m| kb(m.memory.MemAvailable)),
    ("pagewatch_memory_cached_bytes", "bytes", "Cached (page cache).", |m| kb(m.memory.Cached)),
    ("pagewatch_memory_anon_bytes", "bytes", "AnonPages.", |m| kb(m.memory.AnonPages)),
    ("pagewatch_dirty_bytes", "bytes", "nr_dirty: dirty page-cache pages.", |m| pages(m, m.dirty.nr_dirty)),
    ("pagewatch_writeback_bytes", "bytes", "nr_writeback: pages under writeback.", |m| pages(m, m.dirty.nr_writeback)),
    ("pagewatch_dirty_writeback_bytes", "bytes", "nr_dirty + nr_writeback, the count compared with the thresholds.", |m| pages(m, m.dirty.dirty_writeback_pages)),
    ("pagewatch_dirty_threshold_bytes", "bytes", "Dirty threshold (hard limit): the kernel's nr_dirty_threshold, else derived.", |m| pages(m, m.dirty.thresh_pages.or(m.dirty.derived_thresh_pages))),
    ("pagewatch_dirty_background_threshold_bytes", "bytes", "Background writeback threshold: nr_dirty_background_threshold, else derived.", |m| pages(m, m.dirty.bg_thresh_pages.or(m.dirty.derived_bg_thresh_pages))),
    ("pagewatch_dirty_freerun_bytes", "bytes", "Freerun ceiling (thresh + bg_thresh) / 2: writers are throttled above it.", |m| pages(m, m.dirty.freerun_pages)),
    ("pagewatch_dirty_state", "", "Dirty state: 0 below background, 1 background flushing, 2 writers throttled, 3 over the threshold T, 4 at the kernel's hard limit (tracepoint).", |m| state(m.dirty.state)),
    ("pagewatch_dirtied_bytes_per_second", "", "Pages dirtied per second, in bytes.", |m| m.dirty.dirtied_per_s.map(|p| p * m.page_size as f64)),
    ("pagewatch_written_back_bytes_per_second", "", "Pages whose writeback completed per second, in bytes.", |m| m.dirty.written_per_s.map(|p| p * m.page_size as f64)),
    ("pagewatch_pgscan_kswapd_pages_per_second", "", "Pages scanned by kswapd per second.", |m| m.reclaim.pgscan_kswapd_s),
    ("pagewatch_pgsteal_kswapd_pages_per_second", "", "Pages reclaimed by kswapd per second.", |m| m.reclaim.pgsteal_kswapd_s),
    ("pagewatch_pgscan_direct_pages_per_second", "", "Pages scanned in direct reclaim per second.", |m| m.reclaim.pgscan_direct_s),
    ("pagewatch_pgsteal_direct_pages_per_second", "", "Pages reclaimed in direct reclaim per second.", |m| m.reclaim.pgsteal_direct_s),
    ("pagewatch_allocstall_per_second", "", "Entries into direct reclaim per second.", |m| m.reclaim.allocstall_s),
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
];

/// Disk families (label `device`): (name, unit, help, value).
#[rustfmt::skip]
const DISK: [(&str, &str, &str, DiskGet); 9] = [
    ("pagewatch_disk_reads_per_second", "", "iostat r/s.", |d| d.cols.r_s),
    ("pagewatch_disk_writes_per_second", "", "iostat w/s.", |d| d.cols.w_s),
    ("pagewatch_disk_read_bytes_per_second", "", "iostat rkB/s, in bytes.", |d| d.cols.rkB_s.map(|v| v * 1024.0)),
    ("pagewatch_disk_write_bytes_per_second", "", "iostat wkB/s, in bytes.", |d| d.cols.wkB_s.map(|v| v * 1024.0)),
    ("pagewatch_disk_read_await_seconds", "seconds", "iostat r_await.", |d| d.cols.r_await.map(|v| v / 1000.0)),
    ("pagewatch_disk_write_await_seconds", "seconds", "iostat w_await.", |d| d.cols.w_await.map(|v| v / 1000.0)),
    ("pagewatch_disk_queue_size", "", "iostat aqu-sz: average requests in flight.", |d| d.cols.aqu_sz),
    ("pagewatch_disk_util_ratio", "ratio", "iostat %util.", |d| ratio(d.cols.util_pct)),
    ("pagewatch_disk_in_flight", "", "I/Os in flight at the read.", |d| Some(d.in_flight as f64)),
];

/// A label value with `\`, `"` and newlines escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Seconds since the epoch with millisecond precision.
fn ts(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

fn meta(out: &mut dyn Write, name: &str, unit: &str, help: &str) -> std::io::Result<()> {
    writeln!(out, "# TYPE {name} gauge")?;
    if !unit.is_empty() {
        writeln!(out, "# UNIT {name} {unit}")?;
    }
    writeln!(
        out,
        "# HELP {name} {}",
        help.replace('\\', "\\\\").replace('\n', "\\n")
    )
}

fn sample(out: &mut dyn Write, name: &str, labels: &str, v: f64, ms: i64) -> std::io::Result<()> {
    if v.is_finite() {
        writeln!(out, "{name}{{{labels}}} {v} {}", ts(ms))?;
    }
    Ok(())
}

/// Writes every family for `models` (oldest first) from host `host`.
pub fn write(host: &str, models: &[Model], out: &mut dyn Write) -> anyhow::Result<()> {
    let host = if host.is_empty() { "unknown" } else { host };
    let base = format!("host=\"{}\"", label(host));
    for (name, unit, help, get) in SYSTEM {
        meta(out, name, unit, help)?;
        for m in models {
            if let Some(v) = get(m) {
                sample(out, name, &base, v, m.time_ms)?;
            }
        }
    }
    let mut devices: Vec<&str> = models
        .iter()
        .flat_map(|m| m.disks.iter().map(|d| d.name.as_str()))
        .collect();
    devices.sort_unstable();
    devices.dedup();
    for (name, unit, help, get) in DISK {
        meta(out, name, unit, help)?;
        for dev in &devices {
            let labels = format!("{base},device=\"{}\"", label(dev));
            for m in models {
                if let Some(v) = m.disks.iter().find(|d| d.name == *dev).and_then(get) {
                    sample(out, name, &labels, v, m.time_ms)?;
                }
            }
        }
    }
    domains(&base, models, out)?;
    paused(&base, models, out)?;
    writeln!(out, "# EOF")?;
    Ok(())
}

/// Per-domain families (labels `kind` and `domain`): each dirty domain's threshold, freerun
/// point, dirty + writeback count and, where the kernel reports it (wb_stats, 6.10+), its own
/// threshold beside ours (spec §1.8, §1.9).
#[rustfmt::skip]
const DOMAIN: [(&str, &str, &str, DomainGet); 4] = [
    ("pagewatch_domain_threshold_bytes", "bytes", "A dirty domain's threshold T (global: the kernel's; memcg: derived, spec 1.8; bdi: its cap, spec 1.9).", |d| d.thresh_pages),
    ("pagewatch_domain_freerun_bytes", "bytes", "A dirty domain's freerun point (T + bg) / 2: its writers are throttled above it.", |d| d.freerun_pages),
    ("pagewatch_domain_dirty_writeback_bytes", "bytes", "A dirty domain's dirty + writeback pages, the count compared with its freerun point.", domains::Domain::dirty_writeback),
    ("pagewatch_domain_kernel_threshold_bytes", "bytes", "The kernel's own threshold for the domain (debugfs wb_stats WbDirtyThresh, 6.10+), beside the derived one.", |d| d.kernel_thresh_pages),
];

type DomainGet = fn(&domains::Domain) -> Option<u64>;

fn domains(base: &str, models: &[Model], out: &mut dyn Write) -> std::io::Result<()> {
    let mut keys: Vec<(&'static str, &str)> = models
        .iter()
        .flat_map(|m| m.domains.iter().map(|d| (kind(d.kind), d.path.as_str())))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    for (name, unit, help, get) in DOMAIN {
        // A family no record has (the kernel's own threshold before 6.10) is left out.
        if !models
            .iter()
            .any(|m| m.domains.iter().any(|d| get(d).is_some()))
        {
            continue;
        }
        meta(out, name, unit, help)?;
        for (k, path) in &keys {
            let labels = format!("{base},kind=\"{k}\",domain=\"{}\"", label(path));
            for m in models {
                let d = m
                    .domains
                    .iter()
                    .find(|d| kind(d.kind) == *k && d.path == *path);
                if let Some(v) = d.and_then(get) {
                    sample(out, name, &labels, (v * m.page_size) as f64, m.time_ms)?;
                }
            }
        }
    }
    Ok(())
}

fn kind(k: domains::Kind) -> &'static str {
    match k {
        domains::Kind::Global => "global",
        domains::Kind::Memcg => "memcg",
        domains::Kind::Bdi => "bdi",
    }
}

/// `pagewatch_writers_paused_seconds_total{cgroup}`: seconds throttled writers slept in
/// balance_dirty_pages(), summed over the writers of each cgroup from the start of the
/// recording (the tracepoint's pauses; spec §7). A counter: a 3-second throttle episode stays
/// in it whatever the scrape interval. Per cgroup, never per process.
fn paused(base: &str, models: &[Model], out: &mut dyn Write) -> std::io::Result<()> {
    let name = "pagewatch_writers_paused_seconds";
    let mut groups: Vec<&str> = models
        .iter()
        .flat_map(|m| {
            m.throttled
                .iter()
                .map(|t| t.cgroup.as_deref().unwrap_or(""))
        })
        .collect();
    groups.sort_unstable();
    groups.dedup();
    if groups.is_empty() {
        return Ok(());
    }
    writeln!(out, "# TYPE {name} counter")?;
    writeln!(out, "# UNIT {name} seconds")?;
    writeln!(
        out,
        "# HELP {name} Seconds throttled writers slept in balance_dirty_pages (tracepoint), by cgroup."
    )?;
    for g in groups {
        let labels = format!("{base},cgroup=\"{}\"", label(g));
        let mut total = 0.0;
        for m in models {
            let dt = m.interval_s.unwrap_or(0.0);
            total += m
                .throttled
                .iter()
                .filter(|t| t.cgroup.as_deref().unwrap_or("") == g)
                .filter_map(|t| t.pause_ms_per_s)
                .sum::<f64>()
                * dt
                / 1000.0;
            if total.is_finite() {
                writeln!(out, "{name}_total{{{labels}}} {total} {}", ts(m.time_ms))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_timestamps() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(ts(1_795_331_354_180), "1795331354.180");
        assert_eq!(ts(5), "0.005");
        let mut v = Vec::new();
        sample(&mut v, "x", "host=\"h\"", 1.5, 2_000).unwrap();
        sample(&mut v, "x", "host=\"h\"", f64::NAN, 3_000).unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), "x{host=\"h\"} 1.5 2.000\n");
    }

    #[test]
    fn paused_seconds_accumulate_per_cgroup() {
        use crate::model::throttled::{ThrottleSource, Throttled};
        let s = crate::source::test_samples("live-idle");
        let snaps: Vec<_> = s
            .iter()
            .map(|r| crate::parse::Snapshot::parse(r).unwrap())
            .collect();
        let row = |pid, cg: &str, ms| Throttled {
            pid,
            comm: "dd".into(),
            cgroup: Some(cg.into()),
            cgroup_ino: None,
            bdi: None,
            pause_ms_per_s: Some(ms),
            task_ratelimit_kbps: None,
            limit_pages: None,
            setpoint_pages: None,
            source: ThrottleSource::Tracepoint,
            is_self: false,
        };
        let mut models: Vec<Model> = (1..3)
            .map(|i| {
                Model::derive(
                    Some(&snaps[i - 1]),
                    &snaps[i],
                    crate::model::Options::default(),
                )
            })
            .collect();
        for m in &mut models {
            m.interval_s = Some(2.0);
        }
        // Two writers of /box pause 250 + 150 ms/s, then one pauses 100 ms/s; 2 s records.
        models[0].throttled = vec![row(1, "/box", 250.0), row(2, "/box", 150.0)];
        models[1].throttled = vec![row(1, "/box", 100.0)];
        let mut v = Vec::new();
        paused("host=\"h\"", &models, &mut v).unwrap();
        let text = String::from_utf8(v).unwrap();
        let totals: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split(' ').nth(1).unwrap())
            .collect();
        // 0.4 s × 2 = 0.8 s, then + 0.1 s × 2 = 1.0 s.
        assert_eq!(totals, ["0.8", "1"]);
        assert!(
            text.contains("pagewatch_writers_paused_seconds_total{host=\"h\",cgroup=\"/box\"}")
        );
        assert!(text.starts_with("# TYPE pagewatch_writers_paused_seconds counter\n"));
    }

    #[test]
    fn names_end_in_their_units() {
        let names = SYSTEM.iter().map(|f| (f.0, f.1));
        let domain = DOMAIN.iter().map(|f| (f.0, f.1));
        for (name, unit) in names.chain(DISK.iter().map(|f| (f.0, f.1))).chain(domain) {
            assert!(
                unit.is_empty() || name.ends_with(&format!("_{unit}")),
                "{name}"
            );
        }
    }
}
