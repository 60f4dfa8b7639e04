//! Device detail view: every column of the selected device, its queue settings, its charts,
//! its latency percentiles and heat map (opening the view times its requests, issue 25), wbt
//! and its ext4 journals (`below`), and for devices that serve requests in parallel the note
//! that %util misleads.
//!
//! The left column puts the judgement first (the calm baseline, the verdict, whole where
//! every column still fits, else cut at a clause to `VERDICT_ROWS` rows, and the `below`
//! lines), then the columns. Where the columns
//! do not all fit (80x24), a direction that moved nothing (reads during a write flood,
//! discards, flushes) is left out and named in one line, so the queue and %util stay on
//! screen. The percentile table heads the latency box on the right, above the heat map, so
//! no verdict, however long, pushes it off the screen (issue 50).
//!
//! Owns: the detail view. Must not touch: app state.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::App;
use crate::fmt::{Dash, opt};
use crate::model::Disk;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{block, kv, level};

/// The most rows the verdict's text takes in the left column; what does not fit is cut at
/// the end of a clause.
const VERDICT_ROWS: usize = 4;

/// The rows of every iostat column and the requests in flight.
const COLUMNS: usize = 23;

/// The iostat columns by direction, as `Columns::named` orders them: reads, writes, discards,
/// flushes, then the device's queue and %util.
const GROUPS: [(&str, std::ops::Range<usize>); 4] = [
    ("reads", 0..6),
    ("writes", 6..12),
    ("discards", 12..18),
    ("flushes", 18..20),
];

/// Draws the detail view of the selected device.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(d) = app.selected_disk() else { return };
    let [left, right] =
        Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(area);
    let b = block(app, format!("{} (Esc: back)", d.name), true);
    let inner = b.inner(left);
    b.render(left, buf);
    // The verdict whole where it leaves every column room, else cut.
    let whole = Paragraph::new(head_lines(app, d, None)).wrap(Wrap { trim: true });
    let fits = whole.line_count(inner.width) + COLUMNS <= usize::from(inner.height);
    let head = if fits {
        whole
    } else {
        // Wrapped text loses a little to word breaks: a row's worth of slack.
        let room = usize::from(inner.width) * (VERDICT_ROWS - 1);
        Paragraph::new(head_lines(app, d, Some(room))).wrap(Wrap { trim: true })
    };
    let rows = u16::try_from(head.line_count(inner.width)).unwrap_or(u16::MAX);
    let [judged, columns] =
        Layout::vertical([Constraint::Length(rows), Constraint::Min(0)]).areas(inner);
    head.render(judged, buf);
    Paragraph::new(column_lines(app, d, usize::from(columns.height))).render(columns, buf);
    // The detail view times the disk's requests: the percentiles and the heat map under the
    // charts.
    let [charts_area, heat_area] =
        Layout::vertical([Constraint::Min(10), Constraint::Percentage(45)]).areas(right);
    let mut charts = Canvas::default();
    super::charts::disk_charts(app, charts_area, &mut charts, Some(&d.name));
    charts.paint(buf);
    super::latency::render(app, d, heat_area, buf);
}

/// The queue settings, the calm baseline, the verdict (cut at a clause to `room` characters
/// when given), the `below` lines and the parallel note.
fn head_lines(app: &App, d: &Disk, room: Option<usize>) -> Vec<Line<'static>> {
    let t = theme(app);
    let mut lines: Vec<Line> = Vec::new();
    if let Some(n) = &d.dm_name {
        lines.push(Line::from(Vec::from(kv(app, "dm name", n))));
    }
    let q = d.queue.clone().unwrap_or_default();
    let rotational = match q.rotational {
        Some(true) => "rotational",
        Some(false) => "non-rotational",
        None => "rotational: unknown",
    };
    lines.push(Line::from(Span::styled(
        format!(
            "{rotational}, {} nr_requests {} {}",
            q.scheduler.as_deref().unwrap_or("-"),
            q.nr_requests
                .map_or_else(|| "-".to_owned(), |n| n.to_string()),
            q.write_cache.as_deref().unwrap_or("")
        ),
        t.dim,
    )));
    let sat = &d.saturation;
    let baseline = Dash(sat.baseline_await_ms.map(|b| format!("{b:.2} ms")));
    lines.push(Line::from(Vec::from(kv(app, "calm baseline", baseline))));
    let verdict = match &sat.saturation_why {
        Some(why) if sat.saturated => format!("saturated: {why}"),
        Some(why) if sat.saturation_level > 0 => format!("warning: {why}"),
        Some(why) => why.clone(),
        None => "not saturated".to_owned(),
    };
    let verdict = match room {
        Some(room) => super::disks::cut_at_clause(verdict, room),
        None => verdict,
    };
    lines.push(Line::from(Span::styled(
        verdict,
        level(app, sat.saturation_level),
    )));
    // What waits to be written to it and when it will be (spec §15.5), from 16 MiB, where
    // the columns leave room (not when the verdict is cut); the kernel's write bandwidth
    // beside the measured wkB/s when debugfs gives it.
    if room.is_none()
        && d.drain.shown()
        && let Some(text) = d.drain.text()
    {
        lines.push(Line::from(Span::styled(text, t.text)));
        if let Some((note, _)) = crate::model::drain::screen_note([&d.drain]) {
            lines.push(Line::from(Span::styled(note, t.dim)));
        }
        if let Some(k) = d.drain.kernel_write_bytes_per_s {
            let measured = Dash(d.cols.wkB_s.map(|w| crate::fmt::bytes(w * 1024.0)));
            lines.push(Line::from(Span::styled(
                format!("kernel bw {}/s, written {measured}/s", crate::fmt::bytes(k)),
                t.dim,
            )));
        }
    }
    if let Some(m) = &app.model {
        for (text, lvl) in super::below::device_lines(m, &d.name) {
            lines.push(Line::from(Span::styled(text, level(app, lvl))));
        }
    }
    if crate::model::saturation::parallel(d) {
        lines.push(Line::from(Span::styled(
            "Serves requests in parallel: %util misleads. Watch await against its baseline, \
             and aqu-sz.",
            t.warn,
        )));
    }
    lines
}

/// The iostat columns and the requests in flight, one a line, in `rows` rows: all of them
/// when they fit, else without the directions that moved nothing, named in one line.
fn column_lines(app: &App, d: &Disk, rows: usize) -> Vec<Line<'static>> {
    let t = theme(app);
    let named = d.cols.named();
    let line = |(name, v): (&str, Option<f64>)| {
        Line::from(vec![
            Span::styled(format!("{name:<10}"), t.dim),
            Span::raw(format!("{:>12}", opt(v, 2))),
        ])
    };
    let in_flight = ("in flight", Some(d.in_flight as f64));
    if COLUMNS <= rows {
        return named.into_iter().chain([in_flight]).map(line).collect();
    }
    let idle = |r: &std::ops::Range<usize>| {
        named[r.clone()]
            .iter()
            .all(|(_, v)| v.is_none_or(|v| v == 0.0))
    };
    let mut out = Vec::with_capacity(rows);
    let mut none = Vec::new();
    for (what, r) in &GROUPS {
        if idle(r) {
            none.push(*what);
        } else {
            out.extend(named[r.clone()].iter().copied().map(line));
        }
    }
    out.extend(named[20..].iter().copied().chain([in_flight]).map(line));
    if !none.is_empty() {
        out.push(Line::from(Span::styled(
            format!("no {}", none.join(", ")),
            t.dim,
        )));
    }
    out
}
