//! The report as Markdown, ready to paste into a bug tracker: headline, system and
//! provenance, timeline, figures, periods, fio results, charts and how the figures were made.
//!
//! Owns: the text layout. Must not touch: I/O, the clock (every time comes from the
//! recording), figure derivation (that is `analysis`).

use std::fmt::Write;

use super::analysis::{Analysis, Row};
use super::periods::Period;
use super::range::{datetime_utc, offset};
use crate::event::{EventKind, FioDir};
use crate::record::Recording;

/// Table cells must not break the table: pipes escaped, newlines flattened.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn at(ms: i64, started: i64) -> String {
    format!("{} ({} UTC)", offset(ms - started), crate::fmt::clock_utc(ms))
}

fn secs(s: f64) -> String {
    format!("{s:.1} s")
}

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
    fio(&mut o, a);
    let _ = writeln!(o, "## Charts\n");
    let _ = writeln!(
        o,
        "Dashed vertical lines mark the timeline's events (E1, E2, …).\n"
    );
    let _ = writeln!(o, "![Memory](memory.svg)\n");
    let _ = writeln!(o, "![Dirty against the thresholds](dirty.svg)\n");
    let _ = writeln!(o, "![Reclaim](reclaim.svg)\n");
    for d in &a.disks {
        let _ = writeln!(o, "![{}]({})\n", cell(&d.name), d.chart);
    }
    method(&mut o);
    o
}

fn headline(o: &mut String, a: &Analysis, started: i64) {
    let s = &a.summary;
    let _ = writeln!(o, "## Summary\n");
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
        "- Writers throttled: **{}** in {} period(s). Direct reclaim: **{}** in {} period(s).",
        secs(s.throttled_s),
        a.throttled.len(),
        secs(s.direct_reclaim_s),
        a.direct.len()
    );
    if let Some(w) = &s.worst_await {
        let _ = writeln!(
            o,
            "- Worst disk latency: **{} {} {:.2} ms** at {}.",
            cell(&w.disk),
            w.column,
            w.at.value,
            at(w.at.time_ms, started)
        );
    }
    if s.saturated_s.is_empty() {
        let _ = writeln!(o, "- No disk was saturated.");
    } else {
        let list: Vec<String> = s
            .saturated_s
            .iter()
            .map(|(d, t)| format!("{} {}", cell(d), secs(*t)))
            .collect();
        let _ = writeln!(o, "- Saturated disks: **{}**.", list.join(", "));
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
        ("Recorded by", format!("pagewatch {}, format {}", h.pagewatch, h.format)),
        ("Provenance", h.provenance.clone()),
        ("Recording start", format!("{} UTC", datetime_utc(h.started_ms))),
        ("Recording end", format!("{} UTC (last sample)", datetime_utc(end))),
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

fn rows(o: &mut String, rows: &[Row]) {
    let _ = writeln!(
        o,
        "| series | unit | min | avg | p95 | max | records |\n|---|---|---:|---:|---:|---:|---:|"
    );
    for r in rows {
        let d = r.decimals;
        match r.stats {
            Some(s) => {
                let _ = writeln!(
                    o,
                    "| {} | {} | {:.d$} | {:.d$} | {:.d$} | {:.d$} | {} |",
                    r.name, r.unit, s.min, s.avg, s.p95, s.max, s.n
                );
            }
            None => {
                let _ = writeln!(o, "| {} | {} | – | – | – | – | 0 |", r.name, r.unit);
            }
        }
    }
    let _ = writeln!(o);
}

fn figures(o: &mut String, a: &Analysis) {
    let _ = writeln!(o, "## Figures\n\n### System\n");
    rows(o, &a.system);
    for d in &a.disks {
        let _ = writeln!(o, "### Disk {}\n", cell(&d.name));
        rows(o, &d.rows);
    }
    if !a.idle_disks.is_empty() {
        let _ = writeln!(
            o,
            "No I/O in this period: {}.\n",
            cell(&a.idle_disks.join(", "))
        );
    }
}

fn period_table(o: &mut String, ps: &[Period], started: i64, peak: &str, severe: Option<&str>) {
    let (head, rule) = severe.map_or((String::new(), ""), |s| (format!(" {s} |"), "---|"));
    let _ = writeln!(
        o,
        "| start | end | duration | records | {peak} |{head}\n|---|---|---:|---:|---:|{rule}"
    );
    for p in ps {
        let flag = match (severe, p.severe) {
            (None, _) => "",
            (Some(_), true) => " yes |",
            (Some(_), false) => " no |",
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.1} |{flag}",
            at(p.start_ms, started),
            at(p.end_ms, started),
            secs(p.seconds),
            p.records,
            p.peak,
        );
    }
    let _ = writeln!(o);
}

fn periods(o: &mut String, a: &Analysis, started: i64) {
    let _ = writeln!(o, "## Periods\n\n### Writers throttled\n");
    if a.throttled.is_empty() {
        let _ = writeln!(
            o,
            "None: dirty + writeback stayed at or below the freerun ceiling in every record.\n"
        );
    } else {
        period_table(o, &a.throttled, started, "peak % of thresh", Some("hit hard limit"));
    }
    let _ = writeln!(o, "### Direct reclaim\n");
    if a.direct.is_empty() {
        let _ = writeln!(o, "None: no direct scanning and no allocation stalls.\n");
    } else {
        period_table(o, &a.direct, started, "peak direct scan/s", None);
    }
    let _ = writeln!(o, "### Saturated disks\n");
    let mut any = false;
    for d in a.disks.iter().filter(|d| !d.saturated.is_empty()) {
        any = true;
        let _ = writeln!(o, "#### {}\n", cell(&d.name));
        period_table(o, &d.saturated, started, "worst await ms", Some("critical"));
    }
    if !any {
        let _ = writeln!(o, "None.\n");
    }
}

fn dir(d: &FioDir) -> String {
    if d.ios == 0 {
        return "–".to_owned();
    }
    format!(
        "{:.0} IOPS, {:.1} MiB/s, clat mean {:.0} µs, p99 {:.0} µs",
        d.iops,
        d.bw_bytes_s / (1024.0 * 1024.0),
        d.clat_mean_us,
        d.clat_p99_us
    )
}

fn fio(o: &mut String, a: &Analysis) {
    let results: Vec<_> = a
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::FioResult { job, result } => Some((job, result)),
            _ => None,
        })
        .collect();
    if results.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "## fio results\n\n| job | name | fio | runtime | read | write | note |\n|---|---|---|---:|---|---|---|"
    );
    for (job, r) in results {
        let mut note = Vec::new();
        if r.partial {
            note.push("partial: stopped before fio's final report".to_owned());
        }
        if let Some(e) = &r.error {
            note.push(format!("error: {e}"));
        }
        let _ = writeln!(
            o,
            "| #{job} | {} | {} | {:.1} s | {} | {} | {} |",
            cell(&r.name),
            cell(&r.fio_version),
            r.runtime_ms as f64 / 1000.0,
            dir(&r.read),
            dir(&r.write),
            cell(&note.join("; "))
        );
    }
    let _ = writeln!(o);
}

fn method(o: &mut String) {
    let _ = writeln!(
        o,
        "## How these figures were made\n\n\
- Every record is derived from the recorded raw kernel text by the same code as \
`pagewatch --batch`; a record covers the interval since the previous sample and is \
timed at its read. The first sample only seeds the rates.\n\
- min / avg / p95 / max are over the records in the period that had the figure; \
p95 is the nearest-rank percentile (a measured value).\n\
- Writers throttled: nr_dirty + nr_writeback above the freerun ceiling \
((thresh + bg_thresh) / 2), where balance_dirty_pages() paces writers; hard limit: at or \
above the dirty threshold. Direct reclaim: any direct scanning or allocation stall.\n\
- Saturated: rotational disks at ≥ 70 % util (critical ≥ 90 %); other disks with \
aqu-sz ≥ 1 and await ≥ 2× their own median await (critical ≥ 3×), as the screen judges them.\n\
- A period runs from the start of its first record's interval to the read of its last; \
its duration is the sum of those intervals."
    );
}
