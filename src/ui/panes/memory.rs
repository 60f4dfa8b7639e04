//! Memory pane: MemAvailable first, a stacked bar of where memory is, and the figures behind it;
//! then compressed swap while it holds anything (spec §14): zswap's pool against what it
//! stores and its writeback to disk, each zram device's sizes against its limit. Cost budget:
//! zswap comes from meminfo and vmstat, read already; zram from `source::zram` (nothing read
//! without a zram device); a line drawn per shown item.
//!
//! Owns: the memory pane. Must not touch: app state.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Focus};
use crate::fmt::{Bytes, Dash};
use crate::model::Memory;
use crate::model::compressed::Compressed;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{frame, kv, level, stacked_bar};

/// kB as a human size, or `-`.
fn kb(v: Option<u64>) -> Dash<Bytes> {
    Dash(v.map(Bytes::kb))
}

/// Bar segments in kB: anon, clean file cache, dirty, writeback, shmem, reclaimable slab, free.
/// `Writeback` also counts anon pages being written to swap, which sit in the swap cache, not
/// on the file LRU: only the part above `SwapCached` is taken out of the file cache, so swap-out
/// does not shrink "clean file".
#[must_use]
pub fn segments(m: &Memory) -> [(u64, char); 7] {
    let z = |v: Option<u64>| v.unwrap_or(0);
    let dirty = z(m.Dirty);
    let wb = z(m.Writeback);
    let file_wb = wb.saturating_sub(z(m.SwapCached));
    let file = (z(m.Active_file) + z(m.Inactive_file)).saturating_sub(dirty + file_wb);
    [
        (z(m.AnonPages), 'a'),
        (file, 'f'),
        (dirty, 'd'),
        (wb, 'w'),
        (z(m.Shmem), 's'),
        (z(m.KReclaimable), 'k'),
        (m.MemFree, '.'),
    ]
}

/// Severity of MemAvailable as a share of MemTotal: under 10 % crit, under 20 % warn.
#[must_use]
pub fn available_level(m: &Memory) -> u8 {
    let avail = m.MemAvailable.or(m.derived_MemAvailable).unwrap_or(0) as f64;
    let share = avail / (m.MemTotal.max(1) as f64);
    if share < 0.10 {
        2
    } else {
        u8::from(share < 0.20)
    }
}

/// Draws the memory pane.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let inner = canvas.block(area, frame(app, "Memory", app.ui.focus == Focus::Memory));
    let Some(model) = &app.model else { return };
    let m = &model.memory;
    let t = theme(app);
    let avail = m.MemAvailable.or(m.derived_MemAvailable);
    let pct = avail.map_or(0.0, |a| a as f64 * 100.0 / m.MemTotal.max(1) as f64);
    let seg = segments(m);
    let mut lines = Vec::with_capacity(8);
    lines.push(Line::from(vec![
        Span::styled("Available ", t.dim),
        Span::styled(kb(avail).to_string(), level(app, available_level(m))),
        Span::styled(format!(" {pct:.0}% of {}", Bytes::kb(m.MemTotal)), t.dim),
    ]));
    lines.push(stacked_bar(app, inner.width, m.MemTotal, &seg));
    let names = ["anon", "file", "dirty", "wb", "shmem", "slab", "free"];
    let key = |i: usize, c: char| match (t.color, app.look.ascii) {
        (true, false) => Span::styled("█", t.segments[i]),
        (true, true) => Span::styled("#", t.segments[i]),
        (false, _) => Span::styled(format!("{c}="), t.text),
    };
    // The legend over two lines: four segments, then three.
    let mut legend = [Vec::with_capacity(8), Vec::with_capacity(6)];
    for (i, (&(v, c), n)) in seg.iter().zip(names).enumerate() {
        legend[i / 4].extend([
            key(i, c),
            Span::styled(format!("{n} {} ", Bytes::kb(v)), t.dim),
        ]);
    }
    lines.extend(legend.map(Line::from));
    let mut free = Vec::with_capacity(9);
    free.extend(kv(app, "MemFree", Bytes::kb(m.MemFree)));
    free.extend(kv(app, " Cached", kb(m.Cached)));
    free.extend(kv(app, " Buf", kb(m.Buffers)));
    lines.push(Line::from(free));
    let swap_used = m
        .SwapTotal
        .zip(m.SwapFree)
        .map(|(t, f)| t.saturating_sub(f));
    let mut swap = Vec::with_capacity(6);
    swap.extend(kv(
        app,
        "Swap used",
        format_args!("{} of {}", kb(swap_used), kb(m.SwapTotal)),
    ));
    swap.extend(kv(app, " SwapCached", kb(m.SwapCached)));
    lines.push(Line::from(swap));
    compressed_lines(app, &model.compressed, &mut lines);
    if inner.height > 6 {
        let label = "Derived MemAvailable";
        let check = match (m.MemAvailable, m.derived_MemAvailable) {
            (Some(k), Some(d)) => kv(
                app,
                label,
                format_args!(
                    "{} (kernel {}, Δ {} kB)",
                    Bytes::kb(d),
                    Bytes::kb(k),
                    i128::from(d) - i128::from(k)
                ),
            ),
            (_, d) => kv(app, label, kb(d)),
        };
        lines.push(Line::from(Vec::from(check)));
        lines.push(Line::from(Span::styled(
            "MemFree: unused. MemAvailable: + reclaimable (?)",
            t.dim,
        )));
    }
    canvas.lines(inner, lines);
}

/// `x4.0`, or `-` without a ratio.
fn times(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_owned(), |r| format!("x{r:.1}"))
}

/// zswap while in use, then each zram device: `zswap pool 100M stored 400M x4.0 wb 1.0M/s`,
/// `zram0 orig 1.0G compr 256M used 260M of 300M x4.0` (red at its limit).
fn compressed_lines(app: &App, c: &Compressed, lines: &mut Vec<Line<'static>>) {
    if let Some(z) = c.zswap.filter(crate::model::compressed::Zswap::in_use) {
        let mut l = Vec::with_capacity(8);
        l.extend(kv(app, "zswap pool", Bytes(z.pool_bytes as f64)));
        l.extend(kv(app, " stored", Bytes(z.stored_bytes as f64)));
        l.push(Span::styled(
            format!(" {}", times(z.ratio)),
            theme(app).text,
        ));
        if let Some(wb) = z.writeback_bytes_per_s {
            l.extend(kv(app, " wb", format_args!("{}/s", Bytes(wb))));
        }
        lines.push(Line::from(l));
    }
    for d in &c.zram {
        let mut l = Vec::with_capacity(8);
        let b = |v: u64| Bytes(v as f64);
        l.push(Span::styled(d.name.clone(), theme(app).dim));
        l.extend(kv(app, " orig", b(d.orig_bytes)));
        l.extend(kv(app, " compr", b(d.compr_bytes)));
        let used = match d.limit_bytes {
            Some(limit) => format!("{} of {}", b(d.mem_used_bytes), b(limit)),
            None => b(d.mem_used_bytes).to_string(),
        };
        let lvl = if d.at_limit { 2 } else { 0 };
        l.push(Span::styled(" used ", theme(app).dim));
        l.push(Span::styled(used, level(app, lvl)));
        l.push(Span::styled(
            format!(" {}", times(d.ratio)),
            theme(app).text,
        ));
        lines.push(Line::from(l));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_writeback_is_not_taken_from_the_clean_file_cache() {
        let m = Memory {
            AnonPages: Some(1000),
            Active_file: Some(600),
            Inactive_file: Some(400),
            Dirty: Some(100),
            // 300 kB in writeback, 250 of them anon pages going to swap (in the swap cache).
            Writeback: Some(300),
            SwapCached: Some(250),
            ..Memory::default()
        };
        let seg = segments(&m);
        assert_eq!(
            seg[1],
            (1000 - 100 - 50, 'f'),
            "clean file: only file writeback out"
        );
        assert_eq!(seg[3], (300, 'w'));
        // Without swap, all writeback is file writeback.
        let m = Memory {
            SwapCached: Some(0),
            ..m
        };
        assert_eq!(segments(&m)[1], (1000 - 100 - 300, 'f'));
    }
}
