//! Job detail view (`Enter` on a row of the jobs pane): the whole command line, every data
//! file with its size and page-cache residency, and the live figures: fio's own status for a
//! job pagewatch started, the /proc IO rates for a fio it did not.
//!
//! Owns: the job detail view. Must not touch: app state (read only), the clock (`app.now_ms`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::jobs::JobRef;
use crate::app::{App, ForeignFio, Job, JobKind};
use crate::fmt;
use crate::jobs::protocol::JobFile;
use crate::ui::panes::jobs::{ago, fio_figures, job_lines};
use crate::ui::theme;
use crate::ui::widgets::block;

/// The view's title and lines for the open row; `None` when that row is gone.
#[must_use]
pub fn content(app: &App) -> Option<(String, Vec<(String, bool)>)> {
    let r = app.jobs.detail?;
    match r {
        JobRef::Own(id) => app.jobs.get(id).map(|j| own(app, j)),
        JobRef::Foreign(_) | JobRef::Gone(_) => {
            let (f, ended) = app.jobs.foreign_of(r)?;
            Some(foreign(app, f, ended))
        }
    }
}

/// (text, is a heading) lines of a job of ours.
fn own(app: &App, j: &Job) -> (String, Vec<(String, bool)>) {
    let (head, _) = job_lines(app, j);
    let mut lines = vec![(head, false)];
    if let Some(end) = j.ended_ms {
        lines.push((format!("ended {} ago", ago(app.now_ms - end)), false));
    }
    if let Some(n) = &j.note {
        lines.push((n.clone(), false));
    }
    lines.push(("command".to_owned(), true));
    lines.push((cmdline(&j.argv.join(" ")), false));
    match j.kind {
        JobKind::Fio => {
            let live = if j.result.is_some() {
                "fio's result (json+)"
            } else {
                "fio's live figures (status every 1 s)"
            };
            lines.push((live.to_owned(), true));
            let f = fio_figures(j);
            lines.push((if f.is_empty() { "-".to_owned() } else { f }, false));
            files(app, &j.files, &mut lines);
        }
        JobKind::Eat => {
            lines.push(("memory".to_owned(), true));
            let eat = j.eat.map_or_else(
                || "-".to_owned(),
                |(t, n)| {
                    format!(
                        "touched {} of {}",
                        fmt::bytes(t as f64),
                        fmt::bytes(n as f64)
                    )
                },
            );
            lines.push((eat, false));
        }
    }
    (format!("Job #{} (Esc: back)", j.id), lines)
}

/// (text, is a heading) lines of a fio pagewatch did not start.
fn foreign(app: &App, f: &ForeignFio, ended: Option<i64>) -> (String, Vec<(String, bool)>) {
    let r = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{}/s", fmt::bytes(v)));
    let state = match ended {
        Some(t) => format!(
            "ended {} ago (exit status unknown: not pagewatch's child) · last figures below",
            ago(app.now_ms - t)
        ),
        None => match f.workers {
            1 => "running · 1 worker process".to_owned(),
            n => format!("running · {n} worker processes"),
        },
    };
    let mut lines = vec![
        (state, false),
        ("command".to_owned(), true),
        (cmdline(&f.cmdline), false),
        ("IO of all its processes (/proc/PID/io)".to_owned(), true),
        (
            format!(
                "storage rd {} wr {} · syscalls rd {} wr {}",
                r(f.read_bytes_s),
                r(f.write_bytes_s),
                r(f.rchar_s),
                r(f.wchar_s)
            ),
            false,
        ),
    ];
    files(app, &f.files, &mut lines);
    (format!("fio pid {} (not ours; Esc: back)", f.pid), lines)
}

fn cmdline(s: &str) -> String {
    if s.is_empty() {
        "- (not read yet)".to_owned()
    } else {
        s.to_owned()
    }
}

/// The files heading and one line per file: size, cached, %, path.
fn files(app: &App, files: &[JobFile], lines: &mut Vec<(String, bool)>) {
    let how = files.first().map_or("", |f| f.method);
    lines.push((
        format!(
            "data files: {} ({how})   size  cached  %cached",
            files.len()
        ),
        true,
    ));
    if files.is_empty() {
        lines.push(("- (none open or named yet)".to_owned(), false));
    }
    let page = app.model.as_ref().map_or(4096, |m| m.page_size);
    for f in files {
        lines.push((
            format!(
                "{:>7} {:>7} {:>4.0}%  {}{}",
                fmt::bytes(f.size_bytes as f64),
                fmt::bytes((f.cached_pages * page) as f64),
                f.cached_pct(),
                f.path,
                f.age()
            ),
            false,
        ));
    }
}

/// Draws the view over `area` (the screen between header and footer).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = theme(app);
    let (title, lines) = content(app).unwrap_or_else(|| {
        (
            "Job (Esc: back)".to_owned(),
            vec![("this row is no longer listed".to_owned(), false)],
        )
    });
    let b = block(app, title, true);
    let inner = b.inner(area);
    b.render(area, buf);
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|(s, heading)| Line::from(Span::styled(s, if heading { t.title } else { t.text })))
        .collect();
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}
