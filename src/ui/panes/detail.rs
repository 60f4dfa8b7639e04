//! Device detail view: every column of the selected device, its queue settings, its charts,
//! and for devices that serve requests in parallel the note that %util misleads.
//!
//! Owns: the detail view. Must not touch: app state.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::App;
use crate::fmt::opt;
use crate::model::Disk;
use crate::ui::theme;
use crate::ui::widgets::{block, kv};

fn rows(d: &Disk) -> Vec<(&'static str, Option<f64>, usize)> {
    let c = &d.cols;
    vec![
        ("r/s", c.r_s, 2),
        ("w/s", c.w_s, 2),
        ("d/s", c.d_s, 2),
        ("f/s", c.f_s, 2),
        ("rkB/s", c.rkB_s, 2),
        ("wkB/s", c.wkB_s, 2),
        ("dkB/s", c.dkB_s, 2),
        ("rrqm/s", c.rrqm_s, 2),
        ("wrqm/s", c.wrqm_s, 2),
        ("drqm/s", c.drqm_s, 2),
        ("%rrqm", c.rrqm_pct, 2),
        ("%wrqm", c.wrqm_pct, 2),
        ("%drqm", c.drqm_pct, 2),
        ("r_await", c.r_await, 2),
        ("w_await", c.w_await, 2),
        ("d_await", c.d_await, 2),
        ("f_await", c.f_await, 2),
        ("rareq-sz", c.rareq_sz, 2),
        ("wareq-sz", c.wareq_sz, 2),
        ("dareq-sz", c.dareq_sz, 2),
        ("aqu-sz", c.aqu_sz, 2),
        ("%util", c.util_pct, 2),
        ("in flight", Some(d.in_flight as f64), 0),
    ]
}

/// Draws the detail view of the selected device.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(d) = app.selected_disk() else { return };
    let t = theme(app);
    let [left, right] =
        Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(area);
    let title = format!("{} (Esc: back)", d.name);
    let b = block(app, &title, true);
    let inner = b.inner(left);
    b.render(left, buf);
    let mut lines: Vec<Line> = Vec::new();
    if let Some(n) = &d.dm_name {
        lines.push(Line::from(kv(app, "dm name", n.clone()).to_vec()));
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
    for (name, v, dec) in rows(d) {
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<10}"), t.dim),
            Span::raw(format!("{:>12}", opt(v, dec))),
        ]));
    }
    let baseline = app
        .history
        .disks
        .get(&d.name)
        .and_then(|h| h.baseline_await_ms);
    lines.push(Line::from(
        kv(
            app,
            "await baseline",
            baseline.map_or_else(|| "-".to_owned(), |b| format!("{b:.2} ms")),
        )
        .to_vec(),
    ));
    if q.rotational == Some(false) {
        lines.push(Line::from(Span::styled(
            "Serves requests in parallel: %util reaches 100% long before the device is \
             saturated. Watch await against its baseline, and aqu-sz.",
            t.warn,
        )));
    }
    Paragraph::new(lines)
        .wrap(Wrap { trim: true })
        .render(inner, buf);
    super::charts::disk_charts(app, right, buf, Some(&d.name));
}
