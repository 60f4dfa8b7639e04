//! The findings sections of the Markdown report: figures (min/avg/p95/max), periods,
//! fio results and how the figures were made.
//!
//! Owns: those tables' layout. Must not touch: I/O, the clock, figure derivation.

use std::fmt::Write;

use super::analysis::{Analysis, Row};
use super::md::{at, cell, secs};
use super::periods::Period;
use crate::event::{EventKind, FioDir};

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

pub(crate) fn figures(o: &mut String, a: &Analysis) {
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

pub(crate) fn periods(o: &mut String, a: &Analysis, started: i64) {
    let _ = writeln!(o, "## Periods\n\n### Writers throttled\n");
    if a.throttled.is_empty() {
        let _ = writeln!(
            o,
            "None: dirty + writeback stayed at or below the freerun ceiling in every record.\n"
        );
    } else {
        period_table(
            o,
            &a.throttled,
            started,
            "peak % of thresh",
            Some("went over thresh"),
        );
    }
    let _ = writeln!(o, "### Direct reclaim\n");
    if a.direct.is_empty() {
        let _ = writeln!(o, "None: no direct scanning and no allocation stalls.\n");
    } else {
        period_table(o, &a.direct, started, "peak direct scan/s", None);
        if let Some(n) = super::reclaimers::named(&a.summary.reclaimers, 5) {
            let _ = writeln!(
                o,
                "Stalled in it, per second of direct reclaim (reclaim tracer): {}\n",
                super::md::cell(&n)
            );
        }
    }
    // Only when it happened (most machines have no memory limits to reclaim at).
    if !a.limit_stall.is_empty() {
        let _ = writeln!(o, "### cgroup limit reclaim stalling tasks\n");
        period_table(o, &a.limit_stall, started, "peak memcg scan/s", None);
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
    // Its own heading: a disk not judged was not called saturated, and is not under that one.
    let mut unjudged = a.disks.iter().filter(|d| !d.unjudged.is_empty()).peekable();
    if unjudged.peek().is_some() {
        let _ = writeln!(o, "### Disks not judged\n");
    }
    for d in unjudged {
        let _ = writeln!(
            o,
            "#### {}\n\nNo calm baseline of its own to tell queueing from service: {}\n",
            cell(&d.name),
            cell(d.unjudged_why.as_deref().unwrap_or("-"))
        );
        period_table(o, &d.unjudged, started, "worst await ms", None);
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

pub(crate) fn fio(o: &mut String, a: &Analysis) {
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

pub(crate) fn method(o: &mut String) {
    use crate::model::saturation::{DEEP_QUEUE, DEEP_QUEUE_AWAIT_MS, HOLD};
    let _ = writeln!(
        o,
        "## How these figures were made\n\n\
- Every record is derived from the recorded raw kernel text by the same code as \
`pagewatch --batch`; a record covers the interval since the previous sample and is \
timed at its read. The first sample only seeds the rates.\n\
- min / avg / p95 / max are over the records in the period that had the figure; \
p95 is the nearest-rank percentile (a measured value).\n\
- Verdict: the summary's first line, from the same records as the periods below: the \
seconds each dirty domain had writers throttled, the tracepoint's pauses summed over the \
writers, and for each saturated disk the evidence of its record with the deepest queue.\n\
- Writers throttled: in any dirty domain (global, a memory cgroup, a capped device), \
nr_dirty + nr_writeback above its freerun ceiling ((thresh + bg_thresh) / 2), where \
balance_dirty_pages() paces writers, or a writer paused in balance_dirty_pages() during the \
record's interval (its tracepoint, or a task seen there by the process walk), which the \
one-second counters can miss; over thresh: at or above the dirty threshold (the kernel's hard \
limit, max(thresh, dirty_limit), is not in /proc). Direct reclaim: any direct scanning or \
allocation stall. cgroup limit reclaim stalling tasks: no direct reclaim, pages scanned at a \
cgroup's memory limit (pgscan_anon + pgscan_file less the global reclaimers) and memory PSI \
some at least 1 % of the record's interval.\n\
- Saturated: rotational disks at ≥ 90 % util; disks that serve requests in parallel \
(non-rotational, multi-queue, or virtual such as virtio vd*, whatever their rotational flag \
says) with aqu-sz ≥ 1 and an await ≥ 3× their own calm baseline for requests of that \
direction and size, reads and writes weighted by their IOs (the await of records with a \
short queue whose mean request was in the same size class: 4K and under, each doubling to \
4M, over 4M; frozen while the queue is long, so a long flood does not become its own \
baseline; a size never calm takes a larger size's baseline, else a smaller size's plus the \
transfer time at the device's peak rate, and a direction never calm the other's; the calm \
baselines of earlier runs on the machine, kept by device identity, count as the device's own \
and are carried in the recording), or, while the direction doing most IOs has no calm record \
of its own, a queue ≥ {DEEP_QUEUE:.0} deep with an await ≥ {DEEP_QUEUE_AWAIT_MS:.0} ms, or \
an await ≥ 3× that of a queue a quarter as deep in the same recording (Little's law); \
short of that, a queue of 1 or more with no calm record is listed as not judged. A saturated disk stays so while its evidence holds at the \
warning level (await ≥ 2× the baseline, 70 % util) and for {HOLD} records after, as the \
screen judges it.\n\
- A period runs from the start of its first record's interval to the read of its last; \
its duration is the sum of those intervals."
    );
}
