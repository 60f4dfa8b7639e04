//! Jobs pane: every job pagewatch started (eaters, fio) with state, elapsed time, pid and live
//! figures, the fio processes it found running, and the latest notice.
//!
//! Owns: the jobs rows. Must not touch: app state (read only), the clock (time comes from
//! `app.now_ms`).

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Focus, ForeignFio, Job, JobKind, JobState};
use crate::fmt;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::frame;

/// Rows the pane wants (content lines, without borders).
#[must_use]
pub fn rows(app: &App) -> usize {
    2 * app.jobs.list.len() + app.jobs.foreign.len() + usize::from(app.notice.is_some())
}

/// Draws the pane with a border (large layout).
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let inner = canvas.block(
        area,
        frame(app, "Jobs (x stops)", app.ui.focus == Focus::Jobs),
    );
    job_rows(app, inner, canvas, true);
}

/// Draws the rows without a border (compact layout): the newest that fit, one line a job.
pub fn draw_lines(app: &App, area: Rect, canvas: &mut Canvas) {
    job_rows(app, area, canvas, false);
}

fn job_rows(app: &App, area: Rect, canvas: &mut Canvas, two_lines: bool) {
    let t = theme(app);
    let mut lines: Vec<Line> = Vec::new();
    if let Some(n) = &app.notice {
        lines.push(Line::from(Span::styled(n.clone(), t.warn)));
    }
    let selected = app.jobs.selected().map(|j| j.id);
    let focused = app.ui.focus == Focus::Jobs;
    let width = usize::from(area.width);
    let mut rows: Vec<Line> = app
        .jobs
        .list
        .iter()
        .flat_map(|j| {
            let style = if focused && Some(j.id) == selected {
                t.selected
            } else if j.state == JobState::Failed {
                t.crit
            } else if j.state.active() {
                t.text
            } else {
                t.dim
            };
            let (head, figures) = job_lines(app, j);
            if two_lines {
                vec![
                    Line::from(Span::styled(clip(&head, width), style)),
                    Line::from(Span::styled(clip(&format!("   {figures}"), width), style)),
                ]
            } else {
                vec![Line::from(Span::styled(
                    clip(&format!("{figures} · {head}"), width),
                    style,
                ))]
            }
        })
        .collect();
    rows.extend(
        app.jobs
            .foreign
            .iter()
            .map(|f| Line::from(Span::styled(clip(&foreign_line(f), width), t.text))),
    );
    // Newest last; keep the newest rows that fit under the notice.
    let room = usize::from(area.height).saturating_sub(lines.len());
    let skip = rows.len().saturating_sub(room);
    lines.extend(rows.into_iter().skip(skip));
    canvas.lines(area, lines);
}

fn clip(s: &str, width: usize) -> String {
    s.chars().take(width).collect()
}

/// `m:ss` or `h:mm:ss`.
fn elapsed(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// One job as two lines: who and when, then its figures.
#[must_use]
pub fn job_lines(app: &App, j: &Job) -> (String, String) {
    let end = j.ended_ms.unwrap_or(app.now_ms);
    let pid = j.pid.map_or_else(|| "-".to_owned(), |p| p.to_string());
    let head = format!(
        "#{} {:<9} {}",
        j.id,
        j.state.label(),
        elapsed(end - j.started_ms),
    );
    let figures = match j.kind {
        JobKind::Eat => j.eat.map_or_else(String::new, |(touched, target)| {
            format!(
                "{}/{}",
                fmt::bytes(touched as f64),
                fmt::bytes(target as f64)
            )
        }),
        JobKind::Fio => fio_figures(j),
    };
    let note = j
        .note
        .as_ref()
        .map_or_else(String::new, |n| format!("  {n}"));
    (
        format!("{head} {} · pid {pid}", j.label),
        format!("{figures}{note}"),
    )
}

fn fio_figures(j: &Job) -> String {
    let dir = |name: &str, iops: f64, bw: f64, clat: f64, p99: f64| {
        if iops <= 0.0 && bw <= 0.0 {
            return None;
        }
        Some(format!(
            "{name} {} IOPS {}/s clat {} p99 {}",
            fmt::rate(Some(iops)),
            fmt::bytes(bw),
            us(clat),
            us(p99)
        ))
    };
    if let Some(r) = &j.result {
        let parts: Vec<String> = [
            dir(
                "R",
                r.read.iops,
                r.read.bw_bytes_s,
                r.read.clat_mean_us,
                r.read.clat_p99_us,
            ),
            dir(
                "W",
                r.write.iops,
                r.write.bw_bytes_s,
                r.write.clat_mean_us,
                r.write.clat_p99_us,
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        let tag = if r.partial { "partial" } else { "result" };
        return format!("{tag}: {}", parts.join(" | "));
    }
    let Some(f) = &j.fio else {
        return String::new();
    };
    let parts: Vec<String> = [
        dir("R", f.r_iops, f.r_bw, f.r_clat_us, f.r_p99_us),
        dir("W", f.w_iops, f.w_bw, f.w_clat_us, f.w_p99_us),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        "idle".to_owned()
    } else {
        parts.join(" | ")
    }
}

/// Microseconds as `812µs`, `2.1ms` or `1.3s`.
fn us(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}s", v / 1e6)
    } else if v >= 1000.0 {
        format!("{:.1}ms", v / 1000.0)
    } else {
        format!("{v:.0}µs")
    }
}

/// A fio pagewatch did not start, as a line.
#[must_use]
pub fn foreign_line(f: &ForeignFio) -> String {
    let r = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{}/s", fmt::bytes(v)));
    let cache = f
        .cache
        .as_ref()
        .map_or_else(String::new, |(path, cached, total, how)| {
            let pct = if *total > 0 {
                *cached as f64 * 100.0 / *total as f64
            } else {
                0.0
            };
            format!(" {path} {pct:.0}% cached ({how})")
        });
    format!(
        "fio pid {} (not ours): disk rd {} wr {} · syscalls rd {} wr {}{cache} · {}",
        f.pid,
        r(f.read_bytes_s),
        r(f.write_bytes_s),
        r(f.rchar_s),
        r(f.wchar_s),
        f.cmdline
    )
}
