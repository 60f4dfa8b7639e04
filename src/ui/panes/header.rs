//! Header: host, kernel, uptime, interval and clock; CPU split; PSI; tasks in IO wait; self-cost;
//! and the verdict's who and whom (`who:`), in the third row or, at 80x24, the CPU line's.
//!
//! Owns: the header lines. Must not touch: app state.

use std::fmt::{self, Display, Formatter};

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::fmt::ClockUtc;
use crate::model::Pressure;
use crate::model::cpu::PsiFigures;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::kv;

/// Uptime as `hh:mm`, or `Nd hh:mm` past a day.
struct Uptime(f64);

impl Display for Uptime {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.0 as u64;
        let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
        if d > 0 {
            write!(f, "{d}d {h:02}:{m:02}")
        } else {
            write!(f, "{h:02}:{m:02}")
        }
    }
}

/// PSI `avg10` of some and full tasks as `some/full`, `-` for a missing line, `n/a` without
/// PSI.
struct Psi(Option<Pressure>);

impl Display for Psi {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Some(p) = self.0 else {
            return f.write_str("n/a");
        };
        let avg = |f: &mut Formatter<'_>, l: Option<PsiFigures>| match l {
            Some(l) => write!(f, "{:.1}", l.avg10),
            None => f.write_str("-"),
        };
        avg(f, p.some)?;
        f.write_str("/")?;
        avg(f, p.full)
    }
}

/// Draws the header.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let t = theme(app);
    let mut first = Vec::with_capacity(20);
    first.push(Span::styled("pagewatch ", t.title));
    match &app.caps.remote {
        Some(r) => remote(app, r, &mut first),
        None => first.extend(kv(app, "", &app.host.hostname)),
    }
    if !app.host.kernel.is_empty() {
        first.extend(kv(app, " ", &app.host.kernel));
    }
    if let Some(r) = &app.caps.remote {
        privilege(app, r, &mut first);
    }
    if let Some(up) = app.uptime_s {
        first.extend(kv(app, "  up", Uptime(up)));
    }
    first.extend(kv(app, "  every", format_args!("{}s", app.interval_s)));
    first.push(Span::styled(
        format!("  {} UTC", ClockUtc(app.now_ms)),
        t.text,
    ));
    first.extend(scope_name(app).into_iter().flatten());
    if app.ui.paused {
        first.push(Span::styled("  PAUSED", t.warn));
    }
    self_cost(app, &mut first);
    let mut second = Vec::with_capacity(8);
    if let Some(m) = &app.model {
        // In a scope the CPU, iowait and PSI figures here are the host's (issue 54).
        if scope_how(app).is_some() {
            second.push(Span::styled("host ", t.dim));
        }
        match m.cpu {
            Some(c) => second.extend(kv(
                app,
                "CPU",
                format_args!(
                    "us {} sy {} wa {} st {}",
                    pct1(c.user_pct),
                    pct1(c.system_pct),
                    pct1(c.iowait_pct),
                    pct1(c.steal_pct)
                ),
            )),
            None => second.extend(kv(app, "CPU", "-")),
        }
        // procs_blocked is nr_iowait(): tasks in io_schedule(), throttled writers included,
        // not every D-state task (spec §11).
        let blocked = m.procs_blocked.unwrap_or(0);
        second.push(Span::styled("  iowait ", t.dim));
        second.push(Span::styled(
            blocked.to_string(),
            if blocked > 0 { t.warn } else { t.text },
        ));
        let p = &m.pressure;
        if area.width >= 100 {
            second.extend(kv(
                app,
                "  PSI s/f",
                format_args!("cpu {} mem {} io {}", Psi(p.cpu), Psi(p.memory), Psi(p.io)),
            ));
        } else {
            // 80 columns: memory and IO pressure, the two that explain slow buffered IO.
            second.extend(kv(
                app,
                "  PSI",
                format_args!("mem {} io {}", Psi(p.memory), Psi(p.io)),
            ));
        }
    } else {
        second.push(Span::styled("waiting for the first sample…", t.dim));
    }
    let status = status(app);
    // Who did it and who suffers (the verdict's story, issue 50), where a problem of the
    // sampler's own does not stand.
    let story = app
        .model
        .as_ref()
        .and_then(|m| m.verdict.as_ref()?.story.line())
        .map(|l| Line::from(Span::styled(format!("who: {l}"), t.warn)));
    let how = scope_how(app);
    let mut lines = vec![Line::from(first)];
    if area.height >= 3 {
        lines.push(Line::from(second));
        lines.extend(status.or(story).or(how));
    } else {
        // Compact: a problem, else who and whom, replaces the CPU line.
        lines.push(status.or(story).unwrap_or_else(|| Line::from(second)));
    }
    canvas.lines(area, lines);
}

/// Which scope is shown (issue 54): `scope /box`, or `scope host` when asked (`--host`).
fn scope_name(app: &App) -> Option<[Span<'static>; 3]> {
    let v = app.model.as_ref()?.scope.as_ref()?;
    match &v.path {
        Some(p) => Some(kv(app, "  scope", p)),
        None if v.how == "--host" => Some(kv(app, "  scope", "host")),
        None => None,
    }
}

/// How the scope was chosen, for the third row where nothing more pressing takes it; `None`
/// in the machine view.
fn scope_how(app: &App) -> Option<Line<'static>> {
    let v = app.model.as_ref()?.scope.as_ref()?;
    v.path.as_ref()?;
    Some(Line::from(Span::styled(
        format!("scope: {}", v.how),
        theme(app).dim,
    )))
}

/// pagewatch's own cost: CPU ms/s and the last read's µs.
fn self_cost(app: &App, first: &mut Vec<Span<'static>>) {
    if let Some(c) = app.self_cost {
        match c.cpu_ms_per_s {
            // Connected, a read is the wait for the remote's next sample: only the CPU says
            // what watching costs here.
            Some(ms) if app.caps.remote.is_some() => {
                first.extend(kv(app, "  self", format_args!("{ms:.2}ms/s")));
            }
            None if app.caps.remote.is_some() => {}
            Some(ms) => first.extend(kv(
                app,
                "  self",
                format_args!("{ms:.2}ms/s {}µs", c.sample_us),
            )),
            // The CPU figure needs a few seconds of history; the read time is there at once.
            None => first.extend(kv(app, "  self", format_args!("{}µs", c.sample_us))),
        }
    }
}

/// A connected screen's host: as given to `connect`, with the remote's own name when it
/// differs.
fn remote(app: &App, r: &crate::app::Remote, spans: &mut Vec<Span<'static>>) {
    let t = theme(app);
    spans.push(Span::styled(r.host.clone(), t.title));
    if !app.host.hostname.is_empty() && app.host.hostname != r.host {
        spans.push(Span::styled(format!(" ({})", app.host.hostname), t.dim));
    }
}

/// How the remote side sees throttled writers, and how old its last sample is.
fn privilege(app: &App, r: &crate::app::Remote, spans: &mut Vec<Span<'static>>) {
    let t = theme(app);
    if r.privilege == "tracepoint" {
        spans.extend(kv(app, " ", "tracepoint"));
    } else {
        spans.push(Span::styled(
            format!(" {}: throttled approximate", r.privilege),
            t.warn,
        ));
    }
    if app.model.is_some() {
        let age = (app.now_ms - app.sample_ms).max(0) as f64 / 1000.0;
        spans.extend(kv(app, "  last", format_args!("{age:.0}s ago")));
    }
}

/// A problem of the sampler's own (an error, a stalled read), in one line.
fn status(app: &App) -> Option<Line<'static>> {
    let t = theme(app);
    let stale_ms = app.now_ms - app.sample_ms;
    if let Some(e) = &app.error {
        Some(Line::from(Span::styled(format!("error: {e}"), t.crit)))
    } else if app.model.is_some()
        && !app.caps.captured
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
    }
}

/// A percentage with one decimal, or `-` when it is not known this tick.
fn pct1(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"))
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;

    use super::*;
    use crate::app::{Look, Msg};
    use crate::source::HostInfo;

    /// The header's first row as text.
    fn first_row(app: &App) -> String {
        let area = Rect::new(0, 0, 160, 3);
        let mut canvas = Canvas::default();
        draw(app, area, &mut canvas);
        let mut buf = Buffer::empty(area);
        canvas.paint(&mut buf);
        (0..area.width).map(|x| buf[(x, 0)].symbol()).collect()
    }

    #[test]
    fn self_cost_shows_cpu_only_once_measured() {
        let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
        assert!(!first_row(&app).contains("self"), "nothing before a sample");
        app.update(Msg::SampleTook(118));
        let row = first_row(&app);
        assert!(row.contains("self 118µs"), "{row}");
        assert!(
            !row.contains("ms/s"),
            "no CPU figure before one is measured: {row}"
        );
        app.update(Msg::CpuUse(0.4251));
        let row = first_row(&app);
        assert!(row.contains("self 0.43ms/s 118µs"), "{row}");
    }
}
