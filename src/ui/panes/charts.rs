//! History charts: MemAvailable, dirty against its thresholds, reclaim rates, and the selected
//! device's IOPS, await, aqu-sz and %util. Newest at the right, one column per sample.
//!
//! Owns: the chart area. Must not touch: app state.

use std::collections::{VecDeque, vec_deque};

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Block;

use crate::app::App;
use crate::event::EventKind;
use crate::fmt::{Bytes, Dash, Rate};
use crate::history::DiskPoint;
use crate::ui::canvas::{Canvas, Part};
use crate::ui::layout::{columns, rows};
use crate::ui::theme;
use crate::ui::widgets::{frame, sparkline};

/// Draws the four charts in a 2×2 grid.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let [top, bottom] = rows(area);
    let [mem, dirty] = columns(top);
    let [reclaim, disk] = columns(bottom);
    let mut values = Vec::with_capacity(usize::from(area.width));
    memory_chart(app, mem, canvas, &mut values);
    dirty_chart(app, dirty, canvas, &mut values);
    reclaim_chart(app, reclaim, canvas, &mut values);
    let name = app.selected_disk().map(|d| d.name.as_str());
    draw_disk_charts(app, disk, canvas, name, &mut values);
}

/// `values` refilled with one series: a chart's sparklines are scaled one after the other,
/// so they share one buffer rather than each collecting its own.
fn series(
    values: &mut Vec<Option<f64>>,
    points: impl Iterator<Item = Option<f64>>,
) -> &[Option<f64>] {
    values.clear();
    values.extend(points);
    values
}

/// A chart's parts inside its block's `inner` area, followed by the event markers.
fn chart(app: &App, inner: Rect, canvas: &mut Canvas, mut parts: Vec<Part>) {
    markers(app, inner, &mut parts);
    canvas.chart(inner, parts);
}

/// The points a chart of `inner`'s width shows: the newest, one per column. Scales are taken
/// over these, so a spike that has scrolled out of view no longer flattens the chart.
fn shown<T>(points: &VecDeque<T>, inner: Rect) -> vec_deque::Iter<'_, T> {
    points.range(points.len().saturating_sub(usize::from(inner.width))..)
}

/// The letter that marks an event on the charts: S job start, E job end, D cache drop,
/// M the user's marker, P a playbook's phase, T a tuned setting.
#[must_use]
pub fn marker_letter(kind: &EventKind) -> Option<char> {
    match kind {
        EventKind::JobStart { .. } => Some('S'),
        EventKind::JobStop { .. } => Some('E'),
        EventKind::DropCaches { .. } => Some('D'),
        EventKind::Marker { .. } => Some('M'),
        EventKind::Phase { .. } => Some('P'),
        EventKind::Tune { .. } => Some('T'),
        EventKind::FioResult { .. } => None,
    }
}

/// Marks events on a chart: a letter in the top row and a dotted line down the column of the
/// sample the event happened before, where the chart is empty.
fn markers(app: &App, area: Rect, parts: &mut Vec<Part>) {
    let pts = &app.history().points;
    let (Some(first), true) = (pts.front(), area.width > 0 && area.height > 0) else {
        return;
    };
    let t = theme(app);
    let shown = pts.len().min(usize::from(area.width));
    let oldest = pts[pts.len() - shown].time_ms.max(first.time_ms);
    let line = if app.look.ascii { ':' } else { '┊' };
    // A playbook's tunings, then its phases, are drawn last, so a job start or a tuning in
    // the same column does not hide a phase.
    let rank = |k: &EventKind| match k {
        EventKind::Phase { .. } => 2,
        EventKind::Tune { .. } => 1,
        _ => 0,
    };
    let order = (0..3).flat_map(|r| app.events.iter().filter(move |e| rank(&e.kind) == r));
    for ev in order {
        let Some(letter) = marker_letter(&ev.kind) else {
            continue;
        };
        if ev.wall_ms < oldest {
            continue;
        }
        // Columns count back from the newest sample at the right edge.
        let newer = pts
            .iter()
            .rev()
            .take_while(|p| p.time_ms > ev.wall_ms)
            .count();
        if newer >= shown && newer > 0 {
            continue;
        }
        let x = area.right() - 1 - (newer.saturating_sub(1) as u16).min(area.width - 1);
        parts.push(Part::Marker {
            area,
            x,
            letter: (letter, t.warn),
            line: (line, t.dim),
        });
    }
}

/// `host ` before a machine-wide chart's title in a scope (issue 54), else nothing.
fn host_prefix(app: &App) -> &'static str {
    let scoped = app
        .model
        .as_ref()
        .and_then(|m| m.scope.as_ref())
        .is_some_and(|v| v.path.is_some());
    if scoped { "host " } else { "" }
}

fn memory_chart(app: &App, area: Rect, canvas: &mut Canvas, values: &mut Vec<Option<f64>>) {
    let h = &app.history().points;
    let total = h.back().map_or(0, |p| p.mem_total_kb);
    let now = h.back().and_then(|p| p.mem_available_kb);
    let title = format!(
        "{}MemAvailable {} (scale 0–{})",
        host_prefix(app),
        Dash(now.map(Bytes::kb)),
        Bytes::kb(total)
    );
    let inner = canvas.block(area, frame(app, title, false));
    let v = series(
        values,
        shown(h, inner).map(|p| p.mem_available_kb.map(|v| v as f64)),
    );
    let spark = sparkline(app, inner, v, total as f64, theme(app).segments[1]);
    chart(app, inner, canvas, vec![spark]);
}

fn dirty_chart(app: &App, area: Rect, canvas: &mut Canvas, values: &mut Vec<Option<f64>>) {
    let h = &app.history().points;
    let ps = app.model.as_ref().map_or(4096, |m| m.page_size);
    let last = h.back().copied().unwrap_or_default();
    let thresh = last.thresh.unwrap_or(0);
    let title = format!(
        "{}dirty+wb {} vs T {} (top) f b",
        host_prefix(app),
        Dash(last.dirty_wb.map(|p| Bytes::pages(p, ps))),
        Bytes::pages(thresh, ps)
    );
    let inner = canvas.block(area, frame(app, title, false));
    let v = series(
        values,
        shown(h, inner).map(|p| p.dirty_wb.map(|v| v as f64)),
    );
    let t = theme(app);
    let mut parts = Vec::with_capacity(3);
    parts.push(sparkline(app, inner, v, thresh as f64, t.segments[2]));
    // Threshold lines where the chart is empty: b (background) and f (freerun).
    for (mark, c) in [(last.bg_thresh, 'b'), (last.freerun, 'f')] {
        let (Some(mark), true) = (mark, thresh > 0 && inner.height > 0) else {
            continue;
        };
        let frac = mark as f64 / thresh as f64;
        let row =
            inner.bottom() - 1 - ((frac * f64::from(inner.height)) as u16).min(inner.height - 1);
        parts.push(Part::HLine {
            area: inner,
            row,
            first: c,
            style: t.dim,
        });
    }
    chart(app, inner, canvas, parts);
}

fn reclaim_chart(app: &App, area: Rect, canvas: &mut Canvas, values: &mut Vec<Option<f64>>) {
    let h = &app.history().points;
    let last = h.back().copied().unwrap_or_default();
    let title = format!(
        "scan/s kswapd {} (top) direct {} (bottom)",
        Rate(last.scan_kswapd),
        Rate(last.scan_direct)
    );
    let inner = canvas.block(area, frame(app, title, false));
    // One shared scale, over what is shown, so the two are comparable.
    let max = shown(h, inner)
        .flat_map(|p| [p.scan_kswapd, p.scan_direct])
        .flatten()
        .fold(1.0_f64, f64::max);
    let [top, bottom] = rows(inner);
    let t = theme(app);
    let ks = series(values, shown(h, inner).map(|p| p.scan_kswapd));
    let mut parts = Vec::with_capacity(2);
    parts.push(sparkline(app, top, ks, max, t.ok));
    let dr = series(values, shown(h, inner).map(|p| p.scan_direct));
    parts.push(sparkline(app, bottom, dr, max, t.crit));
    chart(app, inner, canvas, parts);
}

/// One of a device's charts: a point's value, the fixed top of the scale (else the largest
/// value shown), the style and the label.
type DiskSeries = (fn(&DiskPoint) -> f64, Option<f64>, Style, &'static str);

/// Four stacked sparklines for one device: IOPS, await, aqu-sz, %util.
pub fn disk_charts(app: &App, area: Rect, canvas: &mut Canvas, name: Option<&str>) {
    draw_disk_charts(app, area, canvas, name, &mut Vec::new());
}

/// `disk_charts`, with a buffer for the series.
fn draw_disk_charts(
    app: &App,
    area: Rect,
    canvas: &mut Canvas,
    name: Option<&str>,
    values: &mut Vec<Option<f64>>,
) {
    let hist = name.and_then(|n| app.history().disks.get(n));
    // The inside of the chart's block (`canvas.block` gives the same once the title is known).
    let inner = Block::bordered().inner(area);
    let pts = hist.map_or_else(Vec::new, |h| h.last(usize::from(inner.width)));
    let last = pts.last().copied().unwrap_or_default();
    let title = format!(
        "{} IOPS {} await {:.2}ms aqu {:.2} util {:.0}%",
        name.unwrap_or("-"),
        Rate(Some(last.iops)),
        last.await_ms,
        last.aqu_sz,
        last.util_pct
    );
    let inner = canvas.block(area, frame(app, title, false));
    let rows = rows::<4>(inner);
    let t = theme(app);
    let series_of: [DiskSeries; 4] = [
        (|p| p.iops, None, t.segments[1], "IOPS"),
        (|p| p.await_ms, None, t.segments[2], "await"),
        (|p| p.aqu_sz, None, t.segments[4], "aqu-sz"),
        (|p| p.util_pct, Some(100.0), t.segments[3], "%util"),
    ];
    let mut parts = Vec::with_capacity(8);
    for (row, (get, max, style, label)) in rows.into_iter().zip(series_of) {
        let v = series(values, pts.iter().map(|p| Some(get(p))));
        let max = max.unwrap_or_else(|| v.iter().flatten().fold(0.0_f64, |a, &b| a.max(b)));
        parts.push(sparkline(app, row, v, max, style));
        if row.height > 0 {
            parts.push(Part::Label {
                x: row.x,
                y: row.y,
                text: label,
                style: t.dim,
            });
        }
    }
    chart(app, inner, canvas, parts);
}
