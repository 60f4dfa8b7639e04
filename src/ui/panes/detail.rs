//! Device detail view: every column of the selected device, its queue settings, its charts,
//! its latency percentiles and heat map (opening the view times its requests, issue 25), wbt
//! and its ext4 journals (`below`), and for devices that serve requests in parallel the note
//! that %util misleads.
//!
//! Owns: the detail view. Must not touch: app state.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::App;
use crate::fmt::{Dash, opt};
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{block, kv, level};

/// Draws the detail view of the selected device.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(d) = app.selected_disk() else { return };
    let t = theme(app);
    let [left, right] =
        Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(area);
    let title = format!("{} (Esc: back)", d.name);
    let b = block(app, title, true);
    let inner = b.inner(left);
    b.render(left, buf);
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
    let in_flight = ("in flight", Some(d.in_flight as f64));
    for (name, v) in d.cols.named().into_iter().chain([in_flight]) {
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<10}"), t.dim),
            Span::raw(format!("{:>12}", opt(v, 2))),
        ]));
    }
    let sat = &d.saturation;
    let baseline = Dash(sat.baseline_await_ms.map(|b| format!("{b:.2} ms")));
    lines.push(Line::from(Vec::from(kv(app, "calm baseline", baseline))));
    let verdict = match &sat.saturation_why {
        Some(why) if sat.saturated => format!("saturated: {why}"),
        Some(why) => format!("warning: {why}"),
        None => "not saturated".to_owned(),
    };
    lines.push(Line::from(Span::styled(
        verdict,
        level(app, sat.saturation_level),
    )));
    if let Some(m) = &app.model {
        for (text, lvl) in super::below::device_lines(m, &d.name) {
            lines.push(Line::from(Span::styled(text, level(app, lvl))));
        }
    }
    if crate::model::saturation::parallel(d) {
        lines.push(Line::from(Span::styled(
            "Serves requests in parallel: %util reaches 100% long before the device is \
             saturated. Watch await against its baseline, and aqu-sz.",
            t.warn,
        )));
    }
    lines.extend(super::latency::percentile_lines(app, d));
    Paragraph::new(lines)
        .wrap(Wrap { trim: true })
        .render(inner, buf);
    // The detail view times the disk's requests: the heat map under the charts.
    let [charts_area, heat_area] =
        Layout::vertical([Constraint::Min(10), Constraint::Percentage(45)]).areas(right);
    let mut charts = Canvas::default();
    super::charts::disk_charts(app, charts_area, &mut charts, Some(&d.name));
    charts.paint(buf);
    super::latency::render(app, d, heat_area, buf);
}
