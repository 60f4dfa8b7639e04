//! The batch text format: a compact vmstat/iostat-like table that fits 80 columns.
//!
//! Owns: turning a `Model` into lines of text. Must not touch: I/O.

use std::fmt::Write;

use crate::fmt::{bytes, clock_utc, opt, pages, rate};
use crate::model::Model;

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
        d.state.map_or("-", |st| st.label()),
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
            opt(c.r_s, 1),
            opt(c.w_s, 1),
            opt(c.rkB_s, 1),
            opt(c.wkB_s, 1),
            opt(c.r_await, 2),
            opt(c.w_await, 2),
            opt(c.aqu_sz, 2),
            opt(c.util_pct, 1),
        );
    }
    s
}
