//! The report as Markdown, ready to paste into a bug tracker: headline, system and
//! provenance, timeline, then the findings (`findings.rs`) and the charts.
//!
//! Owns: the text layout. Must not touch: I/O, the clock (every time comes from the
//! recording), figure derivation (that is `analysis`).

use std::fmt::Write;

use super::analysis::Analysis;
use super::findings::{figures, fio, method, periods};
use super::md::{at, cell, secs};
use super::range::{datetime_utc, offset};
use crate::record::Recording;

/// Renders the report.
#[must_use]
pub fn render(rec: &Recording, a: &Analysis) -> String {
    let mut o = String::new();
    let h = &rec.header;
    let started = h.started_ms;
    let first = a.models.first().map_or(started, |m| {
        m.time_ms - (m.interval_s.unwrap_or(0.0) * 1000.0).round() as i64
    });
    let last = a.models.last().map_or(started, |m| m.time_ms);
    let _ = writeln!(
        o,
        "# pagewatch report: {}, {} – {} UTC\n",
        cell(&h.host.hostname),
        datetime_utc(first),
        crate::fmt::clock_utc(last)
    );
    headline(&mut o, a, started);
    system(&mut o, rec, a, first, last);
    timeline(&mut o, a, started);
    figures(&mut o, a);
    periods(&mut o, a, started);
    super::who::render(&mut o, &a.models, started);
    fio(&mut o, a);
    phases(&mut o, a, last);
    let _ = writeln!(o, "## Charts\n");
    let _ = writeln!(
        o,
        "Dashed vertical lines mark the timeline's events (E1, E2, …). Shaded: the periods \
         with writers throttled on the dirty chart, each disk's saturated periods on its \
         chart.\n"
    );
    let _ = writeln!(o, "![Memory](memory.svg)\n");
    let _ = writeln!(o, "![Dirty against the thresholds](dirty.svg)\n");
    let _ = writeln!(o, "![Reclaim](reclaim.svg)\n");
    if super::series::has_psi(&a.models) {
        let _ = writeln!(o, "![Pressure stall (PSI)]({})\n", super::charts::PSI);
    } else {
        let _ = writeln!(
            o,
            "No pressure stall information (PSI) in this recording: the kernel has no \
             /proc/pressure (CONFIG_PSI off, or booted with psi=0).\n"
        );
    }
    for d in &a.disks {
        let _ = writeln!(o, "![{}]({})\n", cell(&d.name), d.chart);
    }
    for dev in super::heatmap::timed_devices(&a.models) {
        let file = super::heatmap::file_name(&dev);
        let _ = writeln!(o, "![{} device time (heat map)]({file})\n", cell(&dev));
    }
    method(&mut o);
    o
}

/// The playbook's phase table (`play::table`), when the recording has phases; the device is
/// the one the first phase names.
fn phases(o: &mut String, a: &Analysis, last: i64) {
    let device = a.events.iter().find_map(|e| match &e.kind {
        crate::event::EventKind::Phase { device, .. } => device.clone(),
        _ => None,
    });
    let rows = crate::play::table::phases(&a.models, &a.events, device.as_deref(), last);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "## Phases\n");
    let _ = writeln!(
        o,
        "Each playbook phase runs until the next one; the charts mark where each starts.\n"
    );
    let _ = writeln!(
        o,
        "```text\n{}```\n",
        crate::play::table::render_text(&rows)
    );
}

fn headline(o: &mut String, a: &Analysis, started: i64) {
    let s = &a.summary;
    let _ = writeln!(o, "## Summary\n");
    // The verdict and who did it, to whom, in the first paragraph (issue 50).
    match s.story.paragraph(started) {
        Some(who) => {
            let _ = writeln!(o, "**{}.** {who}\n", cell(&s.verdict));
        }
        None => {
            let _ = writeln!(o, "**{}.**\n", cell(&s.verdict));
        }
    }
    if let Some(m) = s.min_mem_available_mib {
        let _ = writeln!(
            o,
            "- Lowest MemAvailable: **{:.1} MiB** at {}.",
            m.value,
            at(m.time_ms, started)
        );
    }
    if let Some(d) = s.max_dirty_pct_of_thresh {
        let _ = writeln!(
            o,
            "- Highest dirty + writeback: **{:.1} %** of the dirty threshold at {}.",
            d.value,
            at(d.time_ms, started)
        );
    }
    let _ = writeln!(
        o,
        "- Writers throttled (any dirty domain, by its counts or by writers paused in it): \
         **{}** in {} period(s). Direct reclaim: **{}** in {} period(s).",
        secs(s.throttled_s),
        a.throttled.len(),
        secs(s.direct_reclaim_s),
        a.direct.len()
    );
    if !a.limit_stall.is_empty() {
        let _ = writeln!(
            o,
            "- cgroup limit reclaim stalling tasks (memory PSI some at least 1 % of the \
             interval): **{}** in {} period(s).",
            secs(s.limit_stall_s),
            a.limit_stall.len()
        );
    }
    if let Some(w) = &s.worst_await {
        let _ = writeln!(
            o,
            "- Worst disk latency under load: **{} {} {:.2} ms**, weighted by IOs over {} of \
             load at {:.0} IOs/s, {} to {}.",
            cell(&w.disk),
            w.column,
            w.at.value,
            secs(w.seconds),
            w.ops_per_s,
            at(w.at.time_ms, started),
            at(w.end_ms, started)
        );
    }
    if s.saturated_s.is_empty() && s.unjudged_s.is_empty() {
        let _ = writeln!(o, "- No disk was saturated.");
    } else if s.saturated_s.is_empty() {
        let _ = writeln!(o, "- No disk was judged saturated.");
    } else {
        let _ = writeln!(o, "- Saturated disks: **{}**.", glance(&s.saturated_s));
    }
    if !s.unjudged_s.is_empty() {
        let _ = writeln!(
            o,
            "- Disks not judged under load (no calm baseline of their own): **{}**.",
            glance(&s.unjudged_s)
        );
    }
    let _ = writeln!(o);
}

fn system(o: &mut String, rec: &Recording, a: &Analysis, first: i64, last: i64) {
    let h = &rec.header;
    let end = rec.samples.last().map_or(h.started_ms, |s| s.wall_ms);
    let _ = writeln!(o, "## System and recording\n\n| | |\n|---|---|");
    let rows = [
        ("Host", h.host.hostname.clone()),
        ("Kernel", h.host.kernel.clone()),
        ("CPUs", h.host.cpus.to_string()),
        ("Page size", format!("{} B", h.page_size)),
        (
            "Recorded by",
            format!("pagewatch {}, format {}", h.pagewatch, h.format),
        ),
        ("Provenance", h.provenance.clone()),
        (
            "Recording start",
            format!("{} UTC", datetime_utc(h.started_ms)),
        ),
        (
            "Recording end",
            format!("{} UTC (last sample)", datetime_utc(end)),
        ),
        (
            "Samples",
            format!("{} at {} s intervals", rec.samples.len(), h.interval_s),
        ),
        (
            "Report period",
            format!(
                "{} – {} UTC, {} records",
                datetime_utc(first),
                crate::fmt::clock_utc(last),
                a.models.len()
            ),
        ),
        ("Samples skipped (unparsable)", a.failures.len().to_string()),
    ];
    for (k, v) in rows {
        let _ = writeln!(o, "| {k} | {} |", cell(&v));
    }
    for w in &rec.warnings {
        let _ = writeln!(o, "| Reading the recording | {} |", cell(w));
    }
    for (i, why) in &a.failures {
        let _ = writeln!(o, "| Sample {i} skipped | {} |", cell(why));
    }
    let _ = writeln!(o, "\n### vm sysctls at the start\n");
    if h.sysctls.is_empty() {
        let _ = writeln!(o, "Not recorded.");
    } else {
        let _ = writeln!(o, "| sysctl | value |\n|---|---|");
        for (k, v) in &h.sysctls {
            let _ = writeln!(o, "| vm.{} | {} |", cell(k), cell(v));
        }
    }
    let _ = writeln!(o, "\n### Block devices at the start\n");
    if h.devices.is_empty() {
        let _ = writeln!(o, "Not recorded.\n");
        return;
    }
    let _ = writeln!(
        o,
        "| device | rotational | scheduler | nr_requests | write cache | dm name |\n|---|---|---|---|---|---|"
    );
    for d in &h.devices {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&d.name),
            cell(&d.rotational),
            cell(&d.scheduler),
            cell(&d.nr_requests),
            cell(&d.write_cache),
            cell(&d.dm_name)
        );
    }
    let _ = writeln!(o);
}

fn timeline(o: &mut String, a: &Analysis, started: i64) {
    let _ = writeln!(o, "## Timeline\n");
    if a.events.is_empty() {
        let _ = writeln!(o, "No events in this period.\n");
        return;
    }
    let _ = writeln!(o, "| # | since start | UTC | event |\n|---|---|---|---|");
    for (i, e) in a.events.iter().enumerate() {
        let _ = writeln!(
            o,
            "| E{} | {} | {} | {} |",
            i + 1,
            offset(e.wall_ms - started),
            crate::fmt::clock_utc(e.wall_ms),
            cell(&e.label())
        );
    }
    let _ = writeln!(o);
}

/// `vda 13.0 s, sdb 2.0 s`: disks with the seconds they spent in a state.
fn glance(disks: &[(String, f64)]) -> String {
    let list: Vec<String> = disks
        .iter()
        .map(|(d, t)| format!("{} {}", cell(d), secs(*t)))
        .collect();
    list.join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cell_keeps_the_table_and_the_terminal_whole() {
        assert_eq!(
            super::cell("a|b\n\u{1b}]0;x\u{7}c"),
            "a\\|b \\x1b]0;x\\x07c"
        );
    }
}
