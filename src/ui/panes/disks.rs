//! Disk table: the iostat -x columns that fit, sorted busiest first, with the selected row
//! and saturated devices highlighted, and the verdict's saturated device named in the title.
//!
//! Saturation is judged by `model::saturation` (rotational disks by %util, parallel devices
//! by await against their own baseline with a queue).
//! Owns: the disk table. Must not touch: app state.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Focus, SortKey};
use crate::fmt::{Bytes, Fit};
use crate::model::Disk;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{fitting, frame, level, pad_to, push_right};

type Getter = fn(&Disk) -> Option<f64>;

/// Table columns in priority order: (title, width, decimals, value, sort key).
const COLUMNS: [(&str, usize, usize, Getter, Option<SortKey>); 18] = [
    ("r/s", 8, 1, |d| d.cols.r_s, Some(SortKey::Iops)),
    ("w/s", 8, 1, |d| d.cols.w_s, Some(SortKey::Iops)),
    ("rkB/s", 9, 1, |d| d.cols.rkB_s, Some(SortKey::Throughput)),
    ("wkB/s", 9, 1, |d| d.cols.wkB_s, Some(SortKey::Throughput)),
    ("r_await", 8, 2, |d| d.cols.r_await, Some(SortKey::Await)),
    ("w_await", 8, 2, |d| d.cols.w_await, Some(SortKey::Await)),
    ("aqu-sz", 8, 2, |d| d.cols.aqu_sz, Some(SortKey::AquSz)),
    ("%util", 7, 1, |d| d.cols.util_pct, Some(SortKey::Util)),
    // Seconds until its waiting data is written (spec §15.5), from 16 MiB waiting.
    (
        "eta_s",
        7,
        0,
        |d| d.drain.drain_eta_s.filter(|_| d.drain.shown()),
        None,
    ),
    ("rareq-sz", 9, 1, |d| d.cols.rareq_sz, None),
    ("wareq-sz", 9, 1, |d| d.cols.wareq_sz, None),
    ("rrqm/s", 8, 1, |d| d.cols.rrqm_s, None),
    ("wrqm/s", 8, 1, |d| d.cols.wrqm_s, None),
    ("d/s", 7, 1, |d| d.cols.d_s, None),
    ("dkB/s", 8, 1, |d| d.cols.dkB_s, None),
    ("f/s", 7, 1, |d| d.cols.f_s, None),
    ("f_await", 8, 2, |d| d.cols.f_await, None),
    ("inflt", 6, 0, |d| Some(d.in_flight as f64), None),
];

const NAME_W: usize = 12;

/// `text` in `room` columns: whole when it fits, else cut before the last `, ` or ` (` that
/// leaves room for `…`, so that no figure is cut in its middle (at 80 columns the border cut
/// "no calm baseline" to "no calm"; a figure would go the same way).
#[must_use]
pub fn cut_at_clause(text: String, room: usize) -> String {
    if text.chars().count() <= room {
        return text;
    }
    let head: String = text.chars().take(room.saturating_sub(1)).collect();
    let seps = [", ", " ("];
    let whole = seps.iter().any(|sep| text[head.len()..].starts_with(sep));
    let end = if whole {
        head.len()
    } else {
        (seps.iter().filter_map(|sep| head.rfind(sep)).max()).unwrap_or(head.len())
    };
    format!("{}…", &head[..end])
}

/// Draws the disk table.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let title = if app.ui.partitions {
        "Disks + partitions"
    } else {
        "Disks"
    };
    // A diskstats line that could not be read is left out, the other devices stand: say so
    // (the line and why are in the JSON's `diskstats_skipped`).
    let title = match app
        .model
        .as_ref()
        .and_then(|m| m.diskstats_skipped.as_ref())
    {
        Some(_) => format!("{title} (a diskstats line skipped)"),
        None => title.to_owned(),
    };
    // The verdict's saturated device in words, not only the row's colour (a capture, a
    // screen reader or a monochrome terminal shows no colour), or a deep queue it cannot judge
    // yet: what does not fit is cut at the end of a clause.
    let verdict = app.model.as_ref().and_then(|m| m.verdict.as_ref());
    let title = match verdict.map(|v| (v.saturation_line(), v.unjudged.as_deref())) {
        Some((Some(line), _)) => format!("{title} · saturated {line}"),
        Some((None, Some(u))) => format!("{title} · {u}"),
        _ => title,
    };
    let title = cut_at_clause(title, usize::from(area.width.saturating_sub(2)));
    let inner = canvas.block(area, frame(app, title, app.ui.focus == Focus::Disks));
    let t = theme(app);
    let width = usize::from(inner.width);
    let avail = width.saturating_sub(NAME_W);
    let cols = fitting(&COLUMNS, avail, |c| c.1);
    let mut head = String::with_capacity(width);
    head.push_str("device");
    pad_to(&mut head, NAME_W);
    for c in &cols {
        push_right(&mut head, c.1 - 1, c.0);
        head.push(if c.4 == Some(app.ui.sort) { '*' } else { ' ' });
    }
    let disks = app.sorted_disks();
    let shown = disks
        .iter()
        .take(usize::from(inner.height.saturating_sub(1)));
    let mut lines = Vec::with_capacity(1 + shown.len().max(1));
    lines.push(Line::from(Span::styled(head, t.title)));
    let selected = app.selected_in(&disks).map(|d| d.name.as_str());
    for d in shown {
        let mut row = String::with_capacity(width);
        row.push_str(&d.name);
        if let Some(n) = &d.dm_name {
            row.push(' ');
            row.push_str(n);
        } else if d.is_memory() {
            row.push_str(" memory");
        }
        row.truncate(NAME_W - 1);
        pad_to(&mut row, NAME_W);
        for c in &cols {
            push_right(&mut row, c.1 - 1, Fit((c.3)(d), c.2, c.1 - 1));
            row.push(' ');
        }
        let sat = d.saturation.saturation_level;
        let mut style = if sat > 0 { level(app, sat) } else { t.text };
        if selected == Some(d.name.as_str()) && app.ui.focus == Focus::Disks {
            style = style.patch(t.selected);
        }
        lines.push(Line::from(Span::styled(row, style)));
    }
    if disks.is_empty() {
        lines.push(Line::from(Span::styled(
            "no devices with I/O since boot yet",
            t.dim,
        )));
    }
    busiest_processes(app, usize::from(inner.height), &mut lines);
    canvas.lines(inner, lines);
}

/// The busiest processes of the last walk in the table's empty rows (at least two free):
/// who is behind the disks' figures, without opening the processes view (`w`).
fn busiest_processes(app: &App, height: usize, lines: &mut Vec<Line<'static>>) {
    let free = height.saturating_sub(lines.len());
    if free < 2 || app.ui.who.is_some() {
        return;
    }
    let procs = app.sorted_processes();
    let busy: Vec<_> = procs
        .iter()
        .filter(|p| {
            p.dirtied_bytes_per_s.unwrap_or(0.0) + p.read_bytes_per_s.unwrap_or(0.0) > 0.0
                || p.state == 'D'
        })
        .take(free - 1)
        .collect();
    if busy.is_empty() {
        return;
    }
    let t = theme(app);
    lines.push(Line::from(Span::styled(
        "    pid command          dirtied/s    read/s  S wchan (w: all processes)",
        t.dim,
    )));
    let b = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| Bytes(v).to_string());
    for p in busy {
        let mut row = String::new();
        push_right(&mut row, 7, p.pid);
        row.push(' ');
        let mut comm = p.comm.clone();
        comm.truncate(16);
        row.push_str(&comm);
        pad_to(&mut row, 25);
        push_right(&mut row, 10, b(p.dirtied_bytes_per_s));
        push_right(&mut row, 10, b(p.read_bytes_per_s));
        row.push_str("  ");
        row.push(p.state);
        row.push(' ');
        row.push_str(super::processes::wchan(p.wchan.as_deref()));
        let style = if p.state == 'D' { t.warn } else { t.text };
        lines.push(Line::from(Span::styled(row, style)));
    }
}

#[cfg(test)]
mod tests {
    use super::cut_at_clause;

    #[test]
    fn a_long_title_is_cut_at_a_clause() {
        let t = "Disks · saturated vda: queue 32 deep (≥ 32), await 66.69 ms (≥ 1 ms), no calm \
                 baseline yet";
        assert_eq!(cut_at_clause(t.into(), 200), t);
        assert_eq!(
            cut_at_clause(t.into(), 78),
            "Disks · saturated vda: queue 32 deep (≥ 32), await 66.69 ms (≥ 1 ms)…"
        );
        assert_eq!(
            cut_at_clause(t.into(), 60),
            "Disks · saturated vda: queue 32 deep (≥ 32), await 66.69 ms…"
        );
        assert_eq!(cut_at_clause("Disks abcdef".into(), 6), "Disks…");
    }
}
