//! OpenMetrics text export: every record's key figures as gauges named `pagewatch_*`, for
//! `promtool tsdb create-blocks-from openmetrics` (then Prometheus / Grafana).
//!
//! Layout rules OpenMetrics imposes and this follows: each family's `# TYPE`, `# UNIT` (when
//! the name ends in a base unit: bytes, seconds, ratio) and `# HELP` lines come first, then
//! all its samples, one series after another, timestamps (seconds since the epoch) increasing
//! within a series; the text ends with `# EOF`. Units are converted to base units: kB and
//! pages to bytes, ms to seconds, percentages to ratios. Labels: `host` (the recording's host
//! name) on every series, `device` on disk series. A record without a figure has no sample.
//! The families themselves (names, units, help, conversions) are `metrics::families`, shared
//! with the live endpoint. Owns: the export's layout (timestamps, one family after another).
//! Must not touch: I/O beyond `out`.

use std::io::Write;

use crate::metrics::families::{DISK, DOMAIN, SYSTEM, ZRAM, help, kind, label, paused_seconds};
use crate::model::Model;

/// Seconds since the epoch with millisecond precision.
fn ts(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

fn meta(out: &mut dyn Write, name: &str, unit: &str, text: &str) -> std::io::Result<()> {
    writeln!(out, "# TYPE {name} gauge")?;
    if !unit.is_empty() {
        writeln!(out, "# UNIT {name} {unit}")?;
    }
    writeln!(out, "# HELP {name} {}", help(text))
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
    // A family with no sample in the whole recording (a tracer never armed, a file the
    // kernel lacks) is left out, metadata and all, as the live endpoint leaves it out.
    for (name, unit, help, get) in SYSTEM {
        if !models.iter().any(|m| get(m).is_some()) {
            continue;
        }
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
        if !models
            .iter()
            .any(|m| m.disks.iter().any(|d| get(d).is_some()))
        {
            continue;
        }
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
    zram(&base, models, out)?;
    domains(&base, models, out)?;
    paused(&base, models, out)?;
    writeln!(out, "# EOF")?;
    Ok(())
}

/// The zram families, per device (spec §14.2); none when no record has a zram device.
fn zram(base: &str, models: &[Model], out: &mut dyn Write) -> std::io::Result<()> {
    let mut devices: Vec<&str> = models
        .iter()
        .flat_map(|m| m.compressed.zram.iter().map(|z| z.name.as_str()))
        .collect();
    devices.sort_unstable();
    devices.dedup();
    for (name, unit, help, get) in ZRAM {
        let has = |m: &Model| m.compressed.zram.iter().any(|z| get(z).is_some());
        if !models.iter().any(has) {
            continue;
        }
        meta(out, name, unit, help)?;
        for dev in &devices {
            let labels = format!("{base},device=\"{}\"", label(dev));
            for m in models {
                let z = m.compressed.zram.iter().find(|z| z.name == *dev);
                if let Some(v) = z.and_then(get) {
                    sample(out, name, &labels, v, m.time_ms)?;
                }
            }
        }
    }
    Ok(())
}

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
            total += paused_seconds(m)
                .iter()
                .filter(|(c, _)| *c == g)
                .map(|(_, s)| s)
                .sum::<f64>();
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
            cgroup: Some(cg.into()),
            pause_ms_per_s: Some(ms),
            ..Throttled::new(pid, "dd", ThrottleSource::Tracepoint)
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
}
