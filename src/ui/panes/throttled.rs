//! Throttled writers: the tasks the kernel paces in balance_dirty_pages(), busiest first, with
//! the kernel's own limit and setpoint beside pagewatch's derived T and freerun in the title.
//!
//! Rows come from the tracepoint (root, exact) or, without it, from tasks whose wchan is
//! balance_dirty_pages (labelled approximate). pagewatch itself is flagged when it is among
//! them (a recording on the throttled disk). A writer that works for a fio of the jobs pane (a
//! worker: same process, or its parent or grandparent is the job's pid) is named after it:
//! `fio of #2` for a job pagewatch started, `fio of 4200` for a fio it found.
//! Owns: the throttled-writers table and that label. Must not touch: app state.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::fmt::{self, Bytes, Fit};
use crate::model::throttled::{ThrottleSource, Throttled};
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{frame, pad_to, push_right};

/// Most rows the table shows.
pub const MAX_ROWS: usize = 6;

/// The rows to show (none when nobody is throttled).
#[must_use]
pub fn rows(app: &App) -> &[Throttled] {
    app.model.as_ref().map_or(&[], |m| m.throttled.as_slice())
}

/// Lines the table wants, borders included (0 when nobody is throttled).
#[must_use]
pub fn height(app: &App) -> u16 {
    match rows(app).len() {
        0 => 0,
        n => n.min(MAX_ROWS) as u16 + 3,
    }
}

/// The title: where the rows come from, and the kernel's figures beside ours; each part only
/// when it fits whole in `room` columns (at 80 a figure was cut in its middle: `T 6`).
fn title(app: &App, list: &[Throttled], room: usize) -> String {
    let exact = list.iter().any(|t| t.source == ThrottleSource::Tracepoint);
    let mut s = String::from(if exact {
        "Throttled writers (tracepoint)"
    } else {
        "Throttled writers (approximate: wchan)"
    });
    let Some(m) = &app.model else { return s };
    let page = m.page_size;
    let show = |p: u64| {
        if app.ui.pages {
            p.to_string()
        } else {
            fmt::pages(p, page)
        }
    };
    let mut add = |part: String| {
        if s.chars().count() + part.chars().count() <= room {
            s.push_str(&part);
        }
    };
    if let Some(t) = list.iter().find(|t| t.limit_pages.is_some()) {
        add(format!(
            "  kernel limit {} setpoint {}",
            t.limit_pages.map_or_else(|| "-".into(), show),
            t.setpoint_pages.map_or_else(|| "-".into(), show),
        ));
    }
    if let (Some(thresh), Some(f)) = (m.dirty.thresh_pages, m.dirty.freerun_pages) {
        add(format!("  derived T {} f {}", show(thresh), show(f)));
    }
    s
}

/// The rate the kernel allows a writer, in the screen's units (`249.5M`); `at limit` when it
/// is 0: the domain is at its hard limit and the writer sleeps the longest pause (spec §7).
fn rate(kbps: Option<u64>) -> String {
    match kbps {
        None => "-".to_owned(),
        Some(0) => "at limit".to_owned(),
        Some(k) => Bytes::kb(k).to_string(),
    }
}

/// The job a writer works for, as the jobs pane names it: `#2` (ours, running) or the
/// foreign fio's pid; `None` when it works for none of them.
#[must_use]
pub fn job_label(app: &App, w: &Throttled) -> Option<String> {
    let own = (app.jobs.list.iter())
        .filter(|j| j.state.active())
        .filter_map(|j| Some((j.pid?, format!("#{}", j.id))));
    let foreign = (app.jobs.foreign.iter()).map(|f| (f.pid, f.pid.to_string()));
    own.chain(foreign)
        .find(|(pid, _)| w.works_for(*pid))
        .map(|(_, label)| label)
}

/// The comm column (15 characters): `(self) ` before pagewatch itself, ` of #2` after a
/// job's worker, the comm cut to make room.
fn comm_cell(app: &App, w: &Throttled) -> String {
    let mut comm = w.comm.clone();
    if w.is_self {
        comm.insert_str(0, "(self) ");
    }
    if let Some(label) = job_label(app, w) {
        let tag = format!(" of {label}");
        let room = 15usize.saturating_sub(tag.chars().count());
        comm = comm.chars().take(room).collect::<String>() + &tag;
    }
    comm.chars().take(15).collect()
}

/// Draws the table.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let list = rows(app);
    let room = usize::from(area.width.saturating_sub(2));
    let inner = canvas.block(area, frame(app, title(app, list, room), false));
    let t = theme(app);
    let width = usize::from(inner.width);
    let mut head = String::with_capacity(width);
    head.push_str("    pid comm            ");
    push_right(&mut head, 9, "pause ms/s");
    push_right(&mut head, 11, "rate/s");
    head.push_str("  bdi     cgroup");
    // The paused writers without a row are counted at the header's end, so that the rows
    // and the count add up to the headline's "(13 paused)" (two rows at 80x24 while a
    // playbook runs); rows of 0 ms and pagewatch itself are not in the headline's count.
    let shown = list.len().min(usize::from(inner.height.saturating_sub(1)));
    let hidden = list[shown..]
        .iter()
        .filter(|w| w.paused() && !w.is_self)
        .count();
    if hidden > 0 {
        let more = format!("+{hidden} paused");
        if head.chars().count() + 2 + more.chars().count() <= width {
            pad_to(&mut head, width - more.chars().count());
            head.push_str(&more);
        }
    }
    let mut lines = vec![Line::from(Span::styled(head, t.title))];
    for w in list.iter().take(shown) {
        let mut row = String::with_capacity(width);
        push_right(&mut row, 7, w.pid);
        row.push(' ');
        row.push_str(&comm_cell(app, w));
        pad_to(&mut row, 24);
        push_right(&mut row, 10, Fit(w.pause_ms_per_s, 1, 10));
        push_right(&mut row, 11, rate(w.task_ratelimit_kbps));
        row.push_str("  ");
        row.push_str(w.bdi.as_deref().unwrap_or("-"));
        pad_to(&mut row, 24 + 10 + 11 + 10);
        row.push_str(w.cgroup.as_deref().unwrap_or("-"));
        let style = if w.is_self { t.crit } else { t.warn };
        lines.push(Line::from(Span::styled(row, style)));
    }
    canvas.lines(inner, lines);
}
