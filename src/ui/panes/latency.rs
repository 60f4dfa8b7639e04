//! The disk detail view's latency: a heat map of device time (time across, log2 buckets up,
//! block shading by the share of each interval's requests), and the interval's percentiles,
//! reads and writes apart, queue and device time apart (issue 25).
//!
//! Owns: drawing them. Must not touch: app state, the figures (`model::latency`).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::app::App;
use crate::model::Disk;
use crate::model::latency::{bucket_label, heat};
use crate::ui::theme;
use crate::ui::widgets::block;

/// Shades for the share of a column's requests in a bucket: none, under 5%, under 25%, under
/// 50%, and more.
const SHADES: [&str; 5] = [" ", "░", "▒", "▓", "█"];
const ASCII_SHADES: [&str; 5] = [" ", ".", ":", "*", "#"];

/// Columns of the bucket labels left of the map.
const LABEL: u16 = 6;

/// The shade index of a share (0–1).
#[must_use]
pub fn shade(share: f64) -> usize {
    match share {
        s if s <= 0.0 => 0,
        s if s < 0.05 => 1,
        s if s < 0.25 => 2,
        s if s < 0.5 => 3,
        _ => 4,
    }
}

/// The percentile table that heads the detail view's latency box (empty while not timed).
#[must_use]
pub fn percentile_lines(app: &App, d: &Disk) -> Vec<Line<'static>> {
    let t = theme(app);
    let l = &d.latency;
    let Some(events) = l.lat_events else {
        return Vec::new();
    };
    let f = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
    let row = |label: &'static str, a: Option<f64>, b: Option<f64>, c: Option<f64>| {
        Line::from(vec![
            Span::styled(format!("{label:<8}"), t.dim),
            Span::raw(format!("{:>8}{:>8}{:>8}", f(a), f(b), f(c))),
        ])
    };
    let lost = l.lat_lost.unwrap_or(0);
    let sampled = match l.lat_sample_every {
        Some(n) if n > 1 => format!(" 1/{n}"),
        _ => String::new(),
    };
    vec![
        Line::from(Span::styled("lat ms       p50     p90     p99", t.dim)),
        row(
            "read",
            l.lat_read_p50_ms,
            l.lat_read_p90_ms,
            l.lat_read_p99_ms,
        ),
        row(
            "write",
            l.lat_write_p50_ms,
            l.lat_write_p90_ms,
            l.lat_write_p99_ms,
        ),
        if l.lat_queue_timed == Some(false) {
            Line::from(vec![
                Span::styled(format!("{:<8}", "queue"), t.dim),
                Span::styled("  not timed (--queue-time)", t.dim),
            ])
        } else {
            row("queue", l.queue_p50_ms, l.queue_p90_ms, l.queue_p99_ms)
        },
        Line::from(vec![
            Span::styled("max ", t.dim),
            Span::raw(f(l.lat_max_ms)),
            Span::styled(format!("  events {events} lost "), t.dim),
            Span::styled(lost.to_string(), if lost > 0 { t.warn } else { t.text }),
            Span::styled(sampled, t.dim),
        ]),
    ]
}

/// Draws `d`'s latency in `area`: the percentile table on top, whole (it is the figure the
/// view is opened for), then the heat map of its device time in the rows left, or why there
/// is none.
pub fn render(app: &App, d: &Disk, area: Rect, buf: &mut Buffer) {
    let t = theme(app);
    let b = block(
        app,
        format!("{} latency, device time (heat map)", d.name),
        false,
    );
    let table = percentile_lines(app, d);
    let timed = !table.is_empty();
    let inner = b.inner(area);
    b.render(area, buf);
    let rows = u16::try_from(table.len())
        .unwrap_or(u16::MAX)
        .min(inner.height);
    let [table_area, inner] =
        Layout::vertical([Constraint::Length(rows), Constraint::Min(0)]).areas(inner);
    Paragraph::new(table).render(table_area, buf);
    if inner.width < 10 || inner.height < 2 {
        return;
    }
    let width = usize::from(inner.width - LABEL);
    let cols: Vec<_> = app
        .history()
        .disks
        .get(&d.name)
        .map(|h| {
            // The latest tick in the right-most column, as the charts above.
            let last = h.back().map_or(0, |p| p.tick);
            let mut c = vec![None; width];
            for (tick, hist) in &h.latency {
                let age = usize::try_from(last.saturating_sub(*tick)).unwrap_or(usize::MAX);
                if age < width {
                    c[width - 1 - age] = Some(*hist);
                }
            }
            c
        })
        .unwrap_or_default();
    let Some(h) = heat(&cols, usize::from(inner.height)) else {
        let why = match &app.model.as_ref().and_then(|m| m.latency_tracer.clone()) {
            Some(tr) if tr.state != "armed" && tr.state != "off" => format!(
                "not timed: {}{}",
                tr.state,
                tr.why
                    .as_deref()
                    .map_or(String::new(), |w| format!(" ({w})"))
            ),
            _ if timed => "the map fills as intervals are timed".to_owned(),
            _ if app.replay.is_some() || app.caps.captured || !app.caps.experiments => {
                "not timed in this recording (record with --latency DEV, or open this view \
                 while recording from the screen)"
                    .to_owned()
            }
            _ => "timing its requests: the map fills from the next interval".to_owned(),
        };
        Paragraph::new(Line::from(Span::styled(why, t.dim)))
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(inner, buf);
        return;
    };
    let shades = if app.look.ascii {
        &ASCII_SHADES
    } else {
        &SHADES
    };
    let rows = h.hi - h.lo + 1;
    let top = inner.y + inner.height - rows as u16;
    for (r, k) in (h.lo..=h.hi).rev().enumerate() {
        let y = top + r as u16;
        let label = if r == 0 || k == h.lo || r % 2 == 0 {
            bucket_label(k)
        } else {
            String::new()
        };
        buf.set_string(inner.x, y, format!("{label:>5} "), t.dim);
        for (x, col) in h.cells.iter().enumerate() {
            let Some(col) = col else { continue };
            let s = shades[shade(col[k - h.lo])];
            buf.set_string(inner.x + LABEL + x as u16, y, s, t.segments[2]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shades_by_share() {
        let got: Vec<usize> = [0.0, 0.01, 0.1, 0.3, 0.9]
            .iter()
            .map(|&s| shade(s))
            .collect();
        assert_eq!(got, [0, 1, 2, 3, 4]);
    }
}
