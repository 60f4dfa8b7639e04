//! A page as scrape text: OpenMetrics 1.0 or the classic Prometheus format 0.0.4.
//!
//! The same families as the export (`families`), without timestamps (the scraper stamps
//! them), then the live-only ones: a StateSet of each dirty domain's state, the counters
//! (`counters`), each device's saturation and baseline, who and whom (the verdict's story,
//! at most `STORY_SERIES` commands a family), and pagewatch's own figures. The two
//! formats differ only in their metadata: OpenMetrics has `# UNIT`, names a counter family
//! without `_total`, types the state set `stateset` and ends with `# EOF`; the classic format
//! names counter families with `_total` and makes the state set a gauge per state (0 or 1).
//! A family without a value at this sample is left out.
//! Owns: the scrape layout. Must not touch: I/O, the clock.

use std::fmt::Write;

use super::families::{DISK, DOMAIN, NODE, STATES, SYSTEM, ZRAM, help, kind, label, state_name};
use super::live::Page;
use super::negotiate::Format;

/// What kind of family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Gauge,
    Counter,
    StateSet,
    Histogram,
}

struct Out {
    fmt: Format,
    text: String,
}

impl Out {
    /// The metadata of family `name` (a counter's without `_total`).
    fn family(&mut self, name: &str, ty: Type, unit: &str, text: &str) {
        let om = self.fmt == Format::OpenMetrics;
        let (type_name, ty) = match (ty, om) {
            (Type::Gauge, _) | (Type::StateSet, false) => (name.to_owned(), "gauge"),
            (Type::Counter, true) => (name.to_owned(), "counter"),
            (Type::Counter, false) => (format!("{name}_total"), "counter"),
            (Type::StateSet, true) => (name.to_owned(), "stateset"),
            (Type::Histogram, _) => (name.to_owned(), "histogram"),
        };
        let t = &mut self.text;
        if om {
            let _ = writeln!(t, "# TYPE {type_name} {ty}");
            if !unit.is_empty() {
                let _ = writeln!(t, "# UNIT {type_name} {unit}");
            }
            let _ = writeln!(t, "# HELP {type_name} {}", help(text));
        } else {
            let _ = writeln!(t, "# HELP {type_name} {}", help(text));
            let _ = writeln!(t, "# TYPE {type_name} {ty}");
        }
    }

    fn sample(&mut self, name: &str, labels: &str, v: f64) {
        if v.is_finite() {
            let _ = writeln!(self.text, "{name}{{{labels}}} {v}");
        }
    }

    /// A whole gauge family whose samples are `(labels, value)`; nothing when it has none.
    fn gauges(&mut self, name: &str, unit: &str, text: &str, samples: &[(String, f64)]) {
        if samples.is_empty() {
            return;
        }
        self.family(name, Type::Gauge, unit, text);
        for (l, v) in samples {
            self.sample(name, l, *v);
        }
    }

    /// A whole counter family (`name` without `_total`).
    fn counters(&mut self, name: &str, unit: &str, text: &str, samples: &[(String, f64)]) {
        if samples.is_empty() {
            return;
        }
        self.family(name, Type::Counter, unit, text);
        let total = format!("{name}_total");
        for (l, v) in samples {
            self.sample(&total, l, *v);
        }
    }
}

/// The scrape text of `page` in `fmt`; `cpu_s` is pagewatch's own CPU time so far, read by
/// the caller at the scrape.
#[must_use]
pub fn render(page: &Page, fmt: Format, cpu_s: Option<f64>) -> String {
    let mut o = Out {
        fmt,
        text: String::with_capacity(16 * 1024),
    };
    let base = format!("host=\"{}\"", label(&page.host));
    if let Some(m) = page.model.as_deref() {
        figures(&mut o, page, m, &base);
    }
    counters(&mut o, page, &base);
    o.counters(
        "pagewatch_samples",
        "",
        "Samples read and parsed since pagewatch started.",
        &[(base.clone(), page.samples as f64)],
    );
    o.counters(
        "pagewatch_sample_errors",
        "",
        "Samples that could not be read or parsed.",
        &[(base.clone(), page.errors as f64)],
    );
    if let Some(s) = page.read_s {
        o.gauges(
            "pagewatch_self_sample_duration_seconds",
            "seconds",
            "How long reading the last sample's kernel files took.",
            &[(base.clone(), s)],
        );
    }
    if let Some(s) = cpu_s {
        o.counters(
            "pagewatch_self_cpu_seconds",
            "seconds",
            "CPU time pagewatch used (user + system, all threads).",
            &[(base, s)],
        );
    }
    if fmt == Format::OpenMetrics {
        o.text.push_str("# EOF\n");
    }
    o.text
}

/// Each zram device's and, with more than one, each NUMA node's families (spec §12, §14).
fn zram_and_nodes(o: &mut Out, m: &crate::model::Model, base: &str) {
    for (name, unit, text, get) in ZRAM {
        let s: Vec<(String, f64)> = m
            .compressed
            .zram
            .iter()
            .filter_map(|z| Some((format!("{base},device=\"{}\"", label(&z.name)), get(z)?)))
            .collect();
        o.gauges(name, unit, text, &s);
    }
    for (name, unit, text, get) in NODE {
        let s: Vec<(String, f64)> = m
            .nodes
            .iter()
            .filter_map(|n| Some((format!("{base},node=\"{}\"", n.node), get(n, m.page_size)?)))
            .collect();
        o.gauges(name, unit, text, &s);
    }
}

/// The figures of the page's record: the export's families, the state set, each device's
/// saturation and baseline, and the sample's time.
fn figures(o: &mut Out, page: &Page, m: &crate::model::Model, base: &str) {
    for (name, unit, text, get) in SYSTEM {
        if let Some(v) = get(m) {
            o.gauges(name, unit, text, &[(base.to_owned(), v)]);
        }
    }
    let dev: Vec<String> = m
        .disks
        .iter()
        .map(|d| format!("{base},device=\"{}\"", label(&d.name)))
        .collect();
    for (name, unit, text, get) in DISK {
        let s: Vec<(String, f64)> = m
            .disks
            .iter()
            .zip(&dev)
            .filter_map(|(d, l)| Some((l.clone(), get(d)?)))
            .collect();
        o.gauges(name, unit, text, &s);
    }
    zram_and_nodes(o, m, base);
    let dom: Vec<String> = m
        .domains
        .iter()
        .map(|d| {
            format!(
                "{base},kind=\"{}\",domain=\"{}\"",
                kind(d.kind),
                label(&d.path)
            )
        })
        .collect();
    for (name, unit, text, get) in DOMAIN {
        let s: Vec<(String, f64)> = m
            .domains
            .iter()
            .zip(&dom)
            .filter_map(|(d, l)| Some((l.clone(), (get(d)? * m.page_size) as f64)))
            .collect();
        o.gauges(name, unit, text, &s);
    }
    stateset(o, m, &dom);
    let s: Vec<(String, f64)> = page
        .disks
        .iter()
        .zip(&dev)
        .map(|(d, l)| (l.clone(), f64::from(d.level)))
        .collect();
    o.gauges(
        "pagewatch_disk_saturation",
        "",
        "0 fine, 1 warning, 2 saturated (the verdict, as the screen colours it): %util on a rotational disk, else a queue with await against the device's calm baseline, or a deep queue without one.",
        &s,
    );
    let s: Vec<(String, f64)> = page
        .disks
        .iter()
        .zip(&dev)
        .filter_map(|(d, l)| Some((l.clone(), d.baseline_await_ms? / 1000.0)))
        .collect();
    o.gauges(
        "pagewatch_disk_baseline_await_seconds",
        "seconds",
        "The device's own baseline: the median await of its busy samples over the last 600.",
        &s,
    );
    let s: Vec<(String, f64)> = page
        .disks
        .iter()
        .zip(&dev)
        .map(|(d, l)| (l.clone(), f64::from(u8::from(d.unjudged))))
        .collect();
    o.gauges(
        "pagewatch_disk_unjudged",
        "",
        "1 while the device is under load (aqu-sz >= 1) and cannot be judged yet: no calm baseline of its own, from this run or a stored one, and no other evidence; pagewatch_disk_saturation 0 then does not mean fine.",
        &s,
    );
    story(o, m, base);
    o.gauges(
        "pagewatch_sample_timestamp_seconds",
        "seconds",
        "Wall-clock time of the sample these figures come from.",
        &[(base.to_owned(), m.time_ms as f64 / 1000.0)],
    );
}

/// Most series a story family has in one scrape: the label values are commands, so the
/// families stay bounded however many processes run.
const STORY_SERIES: usize = 3;

/// Who and whom (`model::story`): the culprits' dirtying rate (and reading rate, while a disk
/// is saturated), the victims' ratio over their calm (those with a calm only) and the memory
/// taker's growth, labelled by command. Two processes of one command are one series, the
/// first (worst) of them.
fn story(o: &mut Out, m: &crate::model::Model, base: &str) {
    let Some(v) = &m.verdict else { return };
    let st = &v.story;
    let series = |items: Vec<(String, f64)>| -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = Vec::new();
        for (l, v) in items {
            if out.len() < STORY_SERIES && !out.iter().any(|(seen, _)| *seen == l) {
                out.push((l, v));
            }
        }
        out
    };
    let comm = |c: &str| format!("{base},comm=\"{}\"", label(c));
    let s = series(
        st.culprits
            .iter()
            .map(|c| (comm(&c.comm), c.dirtied_bytes_per_s))
            .collect(),
    );
    o.gauges(
        "pagewatch_culprit_dirtied_bytes_per_second",
        "",
        "Bytes a second dirtied by each command the verdict names a culprit (while something is wrong: a domain past background, a throttled writer or a saturated disk), exited processes counted in full; at most 3.",
        &s,
    );
    let s = series(
        st.culprits
            .iter()
            .filter_map(|c| Some((comm(&c.comm), c.read_bytes_per_s?)))
            .collect(),
    );
    o.gauges(
        "pagewatch_culprit_read_bytes_per_second",
        "",
        "Bytes a second read from storage by each command the verdict names a culprit while a disk is saturated (its readers count beside its writers then), exited processes counted in full; at most 3.",
        &s,
    );
    let s = series(
        st.victims
            .iter()
            .filter_map(|v| {
                let l = format!("{},figure=\"{}\"", comm(&v.comm), v.figure);
                Some((l, v.ratio?))
            })
            .collect(),
    );
    o.gauges(
        "pagewatch_victim_ratio",
        "",
        "How many times its own calm figure a victim's fsync mean (figure fsync) or IO wait (figure iowait) is, for the victims the verdict names that were seen calm; at most 3.",
        &s,
    );
    let s = series(
        st.memory_taker
            .iter()
            .map(|t| (comm(&t.comm), t.growth_bytes_per_s))
            .collect(),
    );
    o.gauges(
        "pagewatch_memory_taker_growth_bytes_per_second",
        "",
        "How fast the memory taker's resident memory grows, bytes a second: the process growing fastest while MemAvailable fell or reclaim ran.",
        &s,
    );
}

/// The state set of each dirty domain's current state.
fn stateset(o: &mut Out, m: &crate::model::Model, dom: &[String]) {
    let name = "pagewatch_dirty_domain_state";
    if !m.domains.iter().any(|d| d.state.is_some()) {
        return;
    }
    o.family(
        name,
        Type::StateSet,
        "",
        "Where each dirty domain stands now (one of the five states is 1).",
    );
    for (d, l) in m.domains.iter().zip(dom) {
        let Some(now) = d.state else { continue };
        for s in STATES {
            let labels = format!("{l},{name}=\"{}\"", state_name(s));
            o.sample(name, &labels, f64::from(u8::from(s == now)));
        }
    }
}

/// The live counters.
fn counters(o: &mut Out, page: &Page, base: &str) {
    let c = &page.counters;
    let mut s = Vec::new();
    for ((k, path), e) in &c.states {
        for (i, st) in STATES.iter().enumerate() {
            let l = format!(
                "{base},kind=\"{k}\",domain=\"{}\",state=\"{}\"",
                label(path),
                state_name(*st)
            );
            s.push((l, e.value[i]));
        }
    }
    o.counters(
        "pagewatch_dirty_state_seconds",
        "seconds",
        "Seconds each dirty domain spent in each state, every sample's interval credited to the state it found.",
        &s,
    );
    if page.model.is_some() {
        o.counters(
            "pagewatch_direct_reclaim_seconds",
            "seconds",
            "Seconds of sample intervals in which direct reclaim ran (pgscan_direct or allocstall rose).",
            &[(base.to_owned(), c.direct_reclaim_s)],
        );
        o.counters(
            "pagewatch_cgroup_reclaim_stall_seconds",
            "seconds",
            "Seconds of sample intervals in which cgroup limit reclaim ran with memory stalled at least 1% of the interval (the verdict's rule).",
            &[(base.to_owned(), c.limit_stall_s)],
        );
    }
    let s: Vec<(String, f64)> = c
        .saturated_s
        .iter()
        .map(|(d, e)| (format!("{base},device=\"{}\"", label(d)), e.value))
        .collect();
    o.counters(
        "pagewatch_disk_saturated_seconds",
        "seconds",
        "Seconds the device was saturated, as the verdict judged it (pagewatch_disk_saturation = 2).",
        &s,
    );
    latency(o, c, base);
    let s: Vec<(String, f64)> = c
        .paused_s
        .iter()
        .map(|(g, e)| (format!("{base},cgroup=\"{}\"", label(g)), e.value))
        .collect();
    o.counters(
        "pagewatch_writers_paused_seconds",
        "seconds",
        "Seconds throttled writers slept in balance_dirty_pages (tracepoint), by cgroup.",
        &s,
    );
}

/// The block latency histograms (issue 25): cumulative counts per log2 bucket, `le` the
/// bucket's upper bound in seconds (1 µs to 2^26 µs, then +Inf).
fn latency(o: &mut Out, c: &super::counters::Counters, base: &str) {
    use crate::parse::blk_lat::{BUCKETS, bounds};
    let name = "pagewatch_disk_latency_seconds";
    if c.latency.is_empty() {
        return;
    }
    o.family(
        name,
        Type::Histogram,
        "seconds",
        "Block request latency while pagewatch times the device (--latency, the detail view, or saturated): stage device is issue to completion, queue is insert to issue (only with --queue-time).",
    );
    for ((dev, op, stage), e) in &c.latency {
        let l = format!(
            "{base},device=\"{}\",op=\"{op}\",stage=\"{stage}\"",
            label(dev)
        );
        let h = &e.value;
        let mut cum = 0u64;
        for k in 0..BUCKETS {
            cum = cum.saturating_add(h.counts[k]);
            let le = if k + 1 == BUCKETS {
                "+Inf".to_owned()
            } else {
                format!("{}", bounds(k).1 / 1e6)
            };
            o.sample(
                &format!("{name}_bucket"),
                &format!("{l},le=\"{le}\""),
                cum as f64,
            );
        }
        o.sample(&format!("{name}_count"), &l, cum as f64);
        o.sample(&format!("{name}_sum"), &l, h.sum_us as f64 / 1e6);
    }
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
