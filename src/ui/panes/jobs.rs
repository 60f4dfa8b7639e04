//! Jobs pane: every job pagewatch started (eaters, fio) with state, elapsed time, pid and live
//! figures, the fio processes it found running and those that ended (dimmed, with their last
//! figures), the latest notice, and a title saying what `x` does to the selected row.
//!
//! Owns: the jobs rows and title. Must not touch: app state (read only), the clock (time comes from
//! `app.now_ms`).

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::jobs::JobRef;
use crate::app::{App, Focus, ForeignFio, Job, JobKind, JobState};
use crate::fmt;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::frame;

/// Rows the pane wants (content lines, without borders); `large`: the large layout's, where a
/// foreign fio takes two lines.
#[must_use]
pub fn rows(app: &App, large: bool) -> usize {
    let foreign = app.jobs.foreign.len() + app.jobs.ended_foreign.len();
    2 * app.jobs.list.len()
        + foreign * if large { 2 } else { 1 }
        + usize::from(app.notice.is_some())
        + usize::from(app.play.is_some())
}

/// The running playbook's line: its name, phase and current step.
#[must_use]
pub fn play_line(app: &App) -> Option<String> {
    let seq = app.play.as_ref()?;
    let (i, n, what) = seq.step();
    Some(format!(
        "playbook {} · phase {} · step {i}/{n}: {what}",
        seq.book().name,
        seq.phase().unwrap_or("-")
    ))
}

/// The title: what `x` does to the selected row, and how to open its detail.
#[must_use]
pub fn title(app: &App) -> String {
    let x = app.jobs.x_action().title();
    if app.ui.focus == Focus::Jobs {
        format!("Jobs ({x} · Enter: detail)")
    } else {
        format!("Jobs ({x})")
    }
}

/// Draws the pane with a border (large layout).
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let inner = canvas.block(area, frame(app, title(app), app.ui.focus == Focus::Jobs));
    job_rows(app, inner, canvas, true);
}

/// Draws the rows without a border (compact layout): the newest that fit, one line a job.
pub fn draw_lines(app: &App, area: Rect, canvas: &mut Canvas) {
    job_rows(app, area, canvas, false);
}

fn job_rows(app: &App, area: Rect, canvas: &mut Canvas, two_lines: bool) {
    let lines = owned_lines(app, area, two_lines)
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    canvas.lines(area, lines);
}

/// The row (a job, a foreign fio) on row `row` of the pane drawn at `area` (`large`: with its
/// border, two lines a job), as `ui::hit` asks.
#[must_use]
pub fn job_at(app: &App, area: Rect, large: bool, row: u16) -> Option<JobRef> {
    let inner = if large {
        ratatui::widgets::Block::bordered().inner(area)
    } else {
        area
    };
    let i = row.checked_sub(inner.y)?;
    if i >= inner.height {
        return None;
    }
    owned_lines(app, inner, large)
        .get(usize::from(i))
        .and_then(|(_, id)| *id)
}

/// The pane's lines in `area`, top to bottom, each with the row it shows (if any).
fn owned_lines(app: &App, area: Rect, two_lines: bool) -> Vec<(Line<'static>, Option<JobRef>)> {
    let t = theme(app);
    let mut lines: Vec<(Line, Option<JobRef>)> = Vec::new();
    if let Some(p) = play_line(app) {
        lines.push((Line::from(Span::styled(p, t.title)), None));
    }
    if let Some(n) = &app.notice {
        lines.push((Line::from(Span::styled(n.clone(), t.warn)), None));
    }
    let current = app.jobs.current();
    let selected = match current {
        Some(JobRef::Own(id)) => Some(id),
        _ => None,
    };
    let focused = app.ui.focus == Focus::Jobs;
    let width = usize::from(area.width);
    let mut rows: Vec<Vec<(Line, Option<JobRef>)>> = app
        .jobs
        .list
        .iter()
        .map(|j| {
            let style = if focused && Some(j.id) == selected {
                t.selected
            } else if j.state == JobState::Failed {
                t.crit
            } else if j.state.active() {
                t.text
            } else {
                t.dim
            };
            let (mut head, figures) = job_lines(app, j);
            // Large layout: how long ago it ended (compact rows keep their room for figures).
            if let (Some(end), true) = (j.ended_ms, two_lines) {
                head = format!("{head} · ended {} ago", ago(app.now_ms - end));
            }
            let text = if two_lines {
                vec![clip(&head, width), format!("   {figures}")]
            } else if figures.is_empty() {
                // A fio before its first status has no figures yet: no leading separator.
                vec![head]
            } else if j.state == JobState::Failed {
                vec![format!("{head} · {figures}")]
            } else {
                vec![format!("{figures} · {head}")]
            };
            // A failed job's reason is shown whole, wrapped; the large layout's figures too,
            // at their ` | ` seams (a syncing job's fsync latency after its writes'); anything
            // else is cut.
            let last = text.len() - 1;
            text.into_iter()
                .enumerate()
                .flat_map(|(i, l)| {
                    if i == last && j.state == JobState::Failed {
                        wrap(&l, width)
                    } else if i == last && two_lines {
                        wrap_parts(&l, width)
                    } else {
                        vec![clip(&l, width)]
                    }
                })
                .map(|l| (Line::from(Span::styled(l, style)), Some(JobRef::Own(j.id))))
                .collect::<Vec<_>>()
        })
        .collect();
    // A foreign fio: one line; in the large layout two, as our jobs, so that its rates show
    // under its data file (the command line, last, is cut).
    let other = |r: JobRef, f: &ForeignFio, ended: Option<&str>, style| {
        let style = if focused && current == Some(r) {
            t.selected
        } else {
            style
        };
        let text = if two_lines {
            let rest = format!("   {} · {}", foreign_rates(f), f.cmdline);
            vec![foreign_head(f, ended), rest]
        } else {
            vec![foreign_line(f, ended)]
        };
        (text.into_iter())
            .map(|l| (Line::from(Span::styled(clip(&l, width), style)), Some(r)))
            .collect::<Vec<_>>()
    };
    rows.extend((app.jobs.foreign.iter()).map(|f| other(JobRef::Foreign(f.pid), f, None, t.text)));
    rows.extend(app.jobs.ended_foreign.iter().map(|e| {
        let ended = ago(app.now_ms - e.ended_ms);
        other(JobRef::Gone(e.fio.pid), &e.fio, Some(&ended), t.dim)
    }));
    // Newest last; keep the newest jobs that fit under the notice, each from its first line.
    let mut room = usize::from(area.height).saturating_sub(lines.len());
    let mut kept = Vec::new();
    for mut group in rows.into_iter().rev() {
        if room == 0 {
            break;
        }
        group.truncate(room);
        room -= group.len();
        kept.push(group);
    }
    lines.extend(kept.into_iter().rev().flatten());
    lines
}

fn clip(s: &str, width: usize) -> String {
    s.chars().take(width).collect()
}

/// `s` in lines of at most `width` characters, continuation lines indented by three.
fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let chars: Vec<char> = s.chars().collect();
    let mut out = vec![chars.iter().take(width).collect::<String>()];
    let mut rest = chars.get(width..).unwrap_or_default();
    while !rest.is_empty() {
        let n = rest.len().min(width - 3);
        out.push(format!("   {}", rest[..n].iter().collect::<String>()));
        rest = &rest[n..];
    }
    out
}

/// `s` (indented by three) in lines of at most `width` characters, broken only between its
/// ` | `-separated parts, each continuation indented by three; a part too long is cut.
fn wrap_parts(s: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, part) in s.trim_start().split(" | ").enumerate() {
        match out.last_mut() {
            Some(line) if line.chars().count() + 3 + part.chars().count() <= width => {
                line.push_str(" | ");
                line.push_str(part);
            }
            _ => out.push(format!("   {}{part}", if i == 0 { "" } else { "| " })),
        }
    }
    out.into_iter().map(|l| clip(&l, width)).collect()
}

/// How long ago: `12s`, `3m`, `2h`.
#[must_use]
pub fn ago(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        _ => format!("{}h", s / 3600),
    }
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
    let end = j.ended_ms.unwrap_or(app.now_ms).max(j.started_ms);
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

/// A fio job's figures: its result once ended, else its last interval's. A job that syncs
/// (`fsync=N`, `fdatasync=N`) also gets its sync calls' mean and p99 latency: fio's write
/// completion latency leaves out the wait in fsync, which is where such a job's time goes
/// (flood-vs-fsync: writes at 4 µs, their fsyncs at 0.2-3 ms).
#[must_use]
pub fn fio_figures(j: &Job) -> String {
    let sync = |calls: bool, mean: f64, p99: f64| {
        calls.then(|| format!("fsync {} p99 {}", us(mean), us(p99)))
    };
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
            sync(r.sync.ios > 0, r.sync.clat_mean_us, r.sync.clat_p99_us),
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
        sync(f.s_iops > 0.0, f.s_mean_us, f.s_p99_us),
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

/// A fio pagewatch did not start, as a line: its largest data file with residency first (the
/// useful half, kept at 80 columns), then its rates and command line; `ended`: how long ago
/// it ended (its figures are the last ones seen).
#[must_use]
pub fn foreign_line(f: &ForeignFio, ended: Option<&str>) -> String {
    format!(
        "{} · {} · {}",
        foreign_head(f, ended),
        foreign_rates(f),
        f.cmdline
    )
}

/// A foreign fio's pid, state and largest data file with its residency.
fn foreign_head(f: &ForeignFio, ended: Option<&str>) -> String {
    // The largest; the first of equals.
    let files = match f.files.iter().rev().max_by_key(|f| f.size_bytes) {
        None => " no data file seen".to_owned(),
        Some(first) => {
            let more = match f.files.len() {
                1 => String::new(),
                n => format!(" +{} files", n - 1),
            };
            format!(
                " {} {} {:.0}% cached{}{more}",
                first.path,
                fmt::bytes(first.size_bytes as f64),
                first.cached_pct(),
                first.age()
            )
        }
    };
    let state = ended.map_or_else(
        || "(not ours)".to_owned(),
        |a| format!("ended {a} ago, last:"),
    );
    format!("fio {} {state}{files}", f.pid)
}

/// A foreign fio's rates: from storage, then through syscalls.
fn foreign_rates(f: &ForeignFio) -> String {
    let r = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{}/s", fmt::bytes(v)));
    format!(
        "disk rd {} wr {} · syscalls rd {} wr {}",
        r(f.read_bytes_s),
        r(f.write_bytes_s),
        r(f.rchar_s),
        r(f.wchar_s)
    )
}
