//! Header: host, kernel, uptime, interval and clock; CPU split; PSI; D-state tasks; self-cost.
//!
//! Owns: the header lines. Must not touch: app state.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::fmt::clock_utc;
use crate::model::Pressure;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::kv;

fn uptime(s: f64) -> String {
    let s = s as u64;
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    if d > 0 {
        format!("{d}d {h:02}:{m:02}")
    } else {
        format!("{h:02}:{m:02}")
    }
}

fn psi(p: Option<Pressure>) -> String {
    let Some(p) = p else { return "n/a".to_owned() };
    let f = |l: Option<crate::model::cpu::PsiFigures>| {
        l.map_or_else(|| "-".to_owned(), |l| format!("{:.1}", l.avg10))
    };
    format!("{}/{}", f(p.some), f(p.full))
}

/// Draws the header.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let t = theme(app);
    let mut first = vec![Span::styled("pagewatch ", t.title)];
    first.extend(kv(app, "", app.host.hostname.clone()));
    if !app.host.kernel.is_empty() {
        first.extend(kv(app, " ", app.host.kernel.clone()));
    }
    if let Some(up) = app.uptime_s {
        first.extend(kv(app, "  up", uptime(up)));
    }
    first.extend(kv(app, "  every", format!("{}s", app.interval_s)));
    first.push(Span::styled(
        format!("  {} UTC", clock_utc(app.now_ms)),
        t.text,
    ));
    if app.ui.paused {
        first.push(Span::styled("  PAUSED", t.warn));
    }
    if let Some(c) = app.self_cost {
        first.extend(kv(
            app,
            "  self",
            format!("{:.2}ms/s {}µs", c.cpu_ms_per_s, c.sample_us),
        ));
    }
    let mut second = Vec::new();
    if let Some(m) = &app.model {
        match m.cpu {
            Some(c) => second.extend(kv(
                app,
                "CPU",
                format!(
                    "us {:.1} sy {:.1} wa {:.1} st {:.1}",
                    c.user_pct, c.system_pct, c.iowait_pct, c.steal_pct
                ),
            )),
            None => second.extend(kv(app, "CPU", "-".to_owned())),
        }
        let p = &m.pressure;
        second.extend(kv(
            app,
            "  PSI s/f",
            format!("cpu {} mem {} io {}", psi(p.cpu), psi(p.memory), psi(p.io)),
        ));
        let blocked = m.procs_blocked.unwrap_or(0);
        second.push(Span::styled("  D ", t.dim));
        second.push(Span::styled(
            blocked.to_string(),
            if blocked > 0 { t.warn } else { t.text },
        ));
    } else {
        second.push(Span::styled("waiting for the first sample…", t.dim));
    }
    let stale_ms = app.now_ms - app.sample_ms;
    let status = if let Some(e) = &app.error {
        Some(Line::from(Span::styled(format!("error: {e}"), t.crit)))
    } else if app.model.is_some()
        && !app.ui.paused
        && stale_ms as f64 > 3000.0 * app.interval_s.max(1.0)
    {
        Some(Line::from(Span::styled(
            format!(
                "sampling stalled: no sample for {}s (a /proc read is blocked)",
                stale_ms / 1000
            ),
            t.crit,
        )))
    } else {
        None
    };
    let mut lines = vec![Line::from(first)];
    if area.height >= 3 {
        lines.push(Line::from(second));
        lines.extend(status);
    } else {
        // Compact: a problem replaces the CPU line.
        lines.push(status.unwrap_or_else(|| Line::from(second)));
    }
    canvas.lines(area, lines);
}
