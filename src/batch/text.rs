//! The batch text format: a compact vmstat/iostat-like table that fits 80 columns.
//!
//! Under the two figure lines come the verdict's lines, only when they say something: each
//! container or capped device whose dirty domain is past background or paced writers, the
//! throttled writers, the early warning (`warning:`), the saturated disks, direct reclaim,
//! and who did it and who suffers (`who:`, the verdict's story).
//! Owns: turning a `Model` into lines of text. Must not touch: I/O.

use std::fmt::Write;

use crate::fmt::{bytes, clock_utc, opt, pages, rate};
use crate::model::Model;
use crate::model::dirty::State;
use crate::model::domains::Kind;
use crate::model::throttled::ThrottleSource;

/// Renders successive records, repeating the column legend every 20 records like vmstat.
#[derive(Debug, Default)]
pub struct TextTable {
    rows: u64,
}

impl TextTable {
    /// One record: a memory/dirty line, a cpu/reclaim line, then one line per device.
    pub fn render(&mut self, m: &Model) -> String {
        let legend = self.rows % 20 == 0;
        self.rows += 1;
        render_text(m, legend)
    }
}

/// Renders one record; `legend` adds the explanatory header first.
#[must_use]
pub fn render_text(m: &Model, legend: bool) -> String {
    let mut s = String::new();
    let ps = m.page_size;
    if legend {
        s.push_str("time     avail    dirty+wb  bg-thresh freerun  thresh   state\n");
        s.push_str(
            "         cpu us/sy/wa/st    psi some% cpu/mem/io  iowait  scan/s k/d  stall/s\n",
        );
    }
    let kb = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| bytes(v as f64 * 1024.0));
    let pg = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| pages(v, ps));
    let d = &m.dirty;
    let _ = writeln!(
        s,
        "{:<8} {:<8} {:<9} {:<9} {:<8} {:<8} {}",
        clock_utc(m.time_ms),
        kb(m.memory.MemAvailable),
        pg(d.dirty_writeback_pages),
        pg(d.bg_thresh_pages.or(d.derived_bg_thresh_pages)),
        pg(d.freerun_pages),
        pg(d.thresh_pages.or(d.derived_thresh_pages)),
        global_state(m),
    );
    let cpu = m.cpu.map_or_else(
        || "-".to_owned(),
        |c| {
            let f = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"));
            format!(
                "{}/{}/{}/{}",
                f(c.user_pct),
                f(c.system_pct),
                f(c.iowait_pct),
                f(c.steal_pct)
            )
        },
    );
    let psi = |p: Option<crate::model::Pressure>| {
        p.and_then(|p| p.some)
            .map_or_else(|| "-".to_owned(), |f| format!("{:.1}", f.avg10))
    };
    let r = &m.reclaim;
    let _ = writeln!(
        s,
        "         {:<14} psi {}/{}/{:<10} iowait {:<3} scan {}/{} stall {}",
        cpu,
        psi(m.pressure.cpu),
        psi(m.pressure.memory),
        psi(m.pressure.io),
        m.procs_blocked
            .map_or_else(|| "-".to_owned(), |b| b.to_string()),
        rate(r.pgscan_kswapd_s),
        rate(r.pgscan_direct_s),
        rate(r.allocstall_s),
    );
    verdict_lines(&mut s, m);
    if !m.disks.is_empty() {
        let _ = writeln!(
            s,
            "  {:<12} {:>7} {:>7} {:>8} {:>8} {:>7} {:>7} {:>6} {:>6}",
            "device", "r/s", "w/s", "rkB/s", "wkB/s", "r_await", "w_await", "aqu-sz", "%util"
        );
    }
    for disk in &m.disks {
        let c = &disk.cols;
        let mut name = disk.name.clone();
        name.truncate(12);
        let _ = writeln!(
            s,
            "  {:<12} {:>7} {:>7} {:>8} {:>8} {:>7} {:>7} {:>6} {:>6}",
            name,
            fit(c.r_s, 1, 7),
            fit(c.w_s, 1, 7),
            fit(c.rkB_s, 1, 8),
            fit(c.wkB_s, 1, 8),
            fit(c.r_await, 2, 7),
            fit(c.w_await, 2, 7),
            fit(c.aqu_sz, 2, 6),
            fit(c.util_pct, 1, 6),
        );
    }
    drain_lines(&mut s, m);
    dirty_files_lines(&mut s, m);
    for disk in m.disks.iter().filter(|d| d.latency.lat_events.is_some()) {
        latency_line(&mut s, disk);
    }
    if let Some(t) = m.latency_tracer.as_ref().filter(|t| t.state == "blind") {
        let _ = writeln!(
            s,
            "  latency tracer blind: {}",
            t.why.as_deref().unwrap_or("")
        );
    }
    s
}

/// Each disk's waiting data and its drain (spec §15.5), from 16 MiB, and why the figures are
/// apportioned when the kernel's are out of reach: `  vda: 2.0G to write, ~67 s at 30.5M/s
/// (apportioned)`, `  apportioned: needs root for the kernel's own per-device figures …`.
fn drain_lines(s: &mut String, m: &Model) {
    for disk in m.disks.iter().filter(|d| d.drain.shown()) {
        if let Some(t) = disk.drain.text() {
            let _ = writeln!(s, "  {}: {t}", disk.name);
        }
    }
    if let Some(note) = crate::model::drain::apportioned_note(m.disks.iter().map(|d| &d.drain)) {
        let _ = writeln!(s, "  {note}");
    }
}

/// The dirty-files table (spec §15.4), five files at most, and its note:
/// `  file vda1 1.9G dirty+wb dd[4242] /mnt/big.iso`.
fn dirty_files_lines(s: &mut String, m: &Model) {
    let Some(t) = &m.dirty_files else { return };
    for f in t.files.iter().take(5) {
        let _ = writeln!(
            s,
            "  file {} {} dirty+wb {}[{}]{} {}",
            f.device,
            crate::fmt::bytes((f.dirty_bytes + f.writeback_bytes) as f64),
            f.comm,
            f.pid,
            if f.exited { " (exited)" } else { "" },
            f.path
        );
    }
    if let Some(note) = &t.note {
        let _ = writeln!(s, "  dirty files: {note}");
    }
}

/// `v` with `decimals`, or fewer when that is wider than its column: 144k reads a second
/// print `144279` in the 7-wide r/s column, not `144279.6` pushing the line out of 80.
fn fit(v: Option<f64>, decimals: usize, width: usize) -> String {
    let mut d = decimals;
    loop {
        let s = opt(v, d);
        if s.len() <= width || d == 0 {
            return s;
        }
        d -= 1;
    }
}

/// A timed disk's latency line: device time p50/p99 for reads and writes, queue p99, max,
/// the events read and lost (issue 25), and the share of requests timed when not all are.
fn latency_line(s: &mut String, d: &crate::model::Disk) {
    let l = &d.latency;
    let sampled = match l.lat_sample_every {
        Some(n) if n > 1 => format!(", 1 in {n} timed"),
        _ => String::new(),
    };
    let _ = writeln!(
        s,
        "  latency {} ms: read p50 {} p99 {}, write p50 {} p99 {}, queue p99 {}, max {}; \
         events {} lost {}{sampled}",
        d.name,
        opt(l.lat_read_p50_ms, 3),
        opt(l.lat_read_p99_ms, 3),
        opt(l.lat_write_p50_ms, 3),
        opt(l.lat_write_p99_ms, 3),
        if l.lat_queue_timed == Some(false) {
            "not timed".to_owned()
        } else {
            opt(l.queue_p99_ms, 3)
        },
        opt(l.lat_max_ms, 3),
        l.lat_events.unwrap_or(0),
        l.lat_lost.unwrap_or(0),
    );
}

/// The global domain's state over the interval, with what raised it when the sampled count
/// read lower (`Domain::raised_by`), or why it reads below background over a dirty+wb column
/// above bg-thresh (`Domain::below_bg_note`).
fn global_state(m: &Model) -> String {
    let Some(st) = m.dirty.state else {
        return "-".to_owned();
    };
    let g = m.domains.first();
    match g
        .and_then(crate::model::domains::Domain::raised_by)
        .or_else(|| g.and_then(|g| g.below_bg_note(m.page_size)))
    {
        Some(why) => format!("{} ({why})", st.label()),
        None => st.label().to_owned(),
    }
}

/// The victims: the processes waiting longest in sync calls over the interval (three at
/// most), while the sync tracer measures (`model::sync`).
fn sync_line(s: &mut String, m: &Model) {
    let Some(sync) = m.sync.as_ref().filter(|x| x.measured()) else {
        return;
    };
    let mut parts: Vec<String> = (sync.rows.iter().take(3))
        .map(|r| {
            let comm = if r.comm.is_empty() { "?" } else { &r.comm };
            let ms = crate::fmt::mean_max_ms(r.mean_ms, r.max_ms);
            format!("{comm}[{}] {:.0}/s {ms} ms", r.pid, r.per_s)
        })
        .collect();
    if parts.is_empty() {
        return;
    }
    if sync.rows.len() > 3 {
        parts.push(format!("+{} more", sync.rows.len() - 3));
    }
    let lost = if sync.lost > 0 {
        format!(" ({} events lost: undercounted)", sync.lost)
    } else {
        String::new()
    };
    let _ = writeln!(s, "  sync (mean/max): {}{lost}", parts.join(", "));
}

/// The verdict's lines: non-global domains past background or pacing writers, the throttled
/// writers (most paused first, three at most), saturated disks, direct reclaim or stalling
/// cgroup limit reclaim (`ReclaimVerdict::stalls`).
fn verdict_lines(s: &mut String, m: &Model) {
    let ps = m.page_size;
    for dom in m.domains.iter().filter(|d| d.kind != Kind::Global) {
        let past = dom.state.is_some_and(|st| st >= State::BackgroundFlushing);
        if !past && dom.throttled_writers == 0 {
            continue;
        }
        let paced = dom.paced().map(|p| format!(", {p}")).unwrap_or_default();
        let _ = writeln!(s, "  {}{paced}", dom.summary(ps));
    }
    let writers: Vec<_> = m.throttled.iter().filter(|r| !r.is_self).collect();
    if !writers.is_empty() {
        let mut parts: Vec<String> = writers
            .iter()
            .take(3)
            .map(|r| {
                let how = match (r.source, r.pause_ms_per_s) {
                    (ThrottleSource::Tracepoint, Some(p)) => format!("{p:.0} ms/s"),
                    (ThrottleSource::Tracepoint, None) => "paused".to_owned(),
                    (ThrottleSource::Wchan, _) => "in balance_dirty_pages".to_owned(),
                };
                let dom = r.domain.as_deref().unwrap_or("/");
                // A thread that exited before its name was read has none.
                let comm = if r.comm.is_empty() { "?" } else { &r.comm };
                format!("{comm}[{}] {dom} {how}", r.pid)
            })
            .collect();
        // Counted as the headline counts (`Throttled::paused`), so the named writers and this
        // add up to its "13 writers paused"; writers at 0 ms are not in it.
        let hidden = writers.iter().skip(3).filter(|r| r.paused()).count();
        if hidden > 0 {
            parts.push(format!("+{hidden} paused"));
        }
        let _ = writeln!(s, "  throttled: {}", parts.join(", "));
    }
    sync_line(s, m);
    if let Some(v) = &m.verdict {
        // Below freerun, trouble coming (issue 50): `warning: python3[4242] fsync 15.9 ms,
        // 40x its calm 0.40 ms, freerun in ≈ 4 s at +520M/s`.
        if let Some(e) = &v.early {
            let _ = writeln!(s, "  warning: {}, {}", e.what, e.when());
        }
        if let Some(line) = v.saturation_line() {
            let _ = writeln!(s, "  saturated: {line}");
        } else if let Some(u) = &v.unjudged {
            let _ = writeln!(s, "  not judged: {u}");
        }
        if v.reclaim.stalls() {
            let _ = writeln!(s, "  reclaim: {}", v.reclaim.why);
        }
        // Who did it and who suffers, in one line (issue 50).
        if let Some(line) = v.story.line() {
            let _ = writeln!(s, "  who: {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn a_figure_too_wide_for_its_column_drops_decimals_not_alignment() {
        assert_eq!(fit(Some(16_913.25), 1, 7), "16913.2");
        // The 64-deep read flood here: 144,279.62 r/s, 577,118.48 rkB/s.
        assert_eq!(fit(Some(144_279.62), 1, 7), "144280");
        assert_eq!(fit(Some(577_118.48), 1, 8), "577118.5");
        // An NVMe array: 1.2M IOPS, 4.9 GB/s.
        assert_eq!(fit(Some(1_234_567.8), 1, 7), "1234568");
        assert_eq!(fit(Some(4_938_271.2), 1, 8), "4938271");
        assert_eq!(fit(Some(144.279), 2, 6), "144.28");
        assert_eq!(fit(Some(1_441.5), 2, 6), "1441.5");
        // Wider than the column even whole: printed whole, never cut.
        assert_eq!(fit(Some(123_456_789.0), 1, 7), "123456789");
        assert_eq!(fit(None, 1, 7), crate::fmt::opt(None, 1));
    }

    #[test]
    fn the_early_warning_is_a_warning_line() {
        let samples = crate::source::test_samples("live-idle");
        let mut m = crate::pipeline::derive_all(&samples, crate::model::Options::default())
            .models
            .remove(0);
        assert!(!super::render_text(&m, false).contains("warning:"));
        if let Some(v) = m.verdict.as_mut() {
            v.early = Some(crate::model::answers::Early {
                what: "python3[10] fsync 16.0 ms, 40x its calm 0.40 ms".into(),
                outrun_bytes_per_s: 520.0 * 1024.0 * 1024.0,
                freerun_in_s: Some(3.9),
            });
        }
        let text = super::render_text(&m, false);
        assert!(
            text.contains(
                "\n  warning: python3[10] fsync 16.0 ms, 40x its calm 0.40 ms, \
                 freerun in ≈ 3.9 s at +520M/s\n"
            ),
            "{text}"
        );
    }
}
