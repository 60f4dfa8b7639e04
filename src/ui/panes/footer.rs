//! Footer: the most used keys, from the keymap table; with the jobs pane focused or a job's
//! detail open, the jobs keys first and what `x` does to the selected row (the compact layout
//! has no pane title to say it).
//!
//! Owns: the footer line. Must not touch: app state.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::keymap::{Action, bindings};
use crate::app::{App, Focus, WhoView};
use crate::ui::canvas::Canvas;
use crate::ui::theme;

/// The actions the footer shows, with a short name each (and the space after it); keys come
/// from the keymap.
const SHOWN: [(Action, &str); 11] = [
    (Action::Help, "help "),
    (Action::Quit, "quit "),
    (Action::Processes, "who "),
    (Action::Cgroups, "cgroups "),
    (Action::Pause, "pause "),
    (Action::Slower, "slower "),
    (Action::Faster, "faster "),
    (Action::Sort, "sort "),
    (Action::Partitions, "partitions "),
    (Action::Detail, "detail "),
    (Action::Units, "pages/bytes "),
];

/// In replay, the actions shown instead.
const SHOWN_REPLAY: [(Action, &str); 9] = [
    (Action::Help, "help "),
    (Action::Quit, "quit "),
    (Action::Pause, "play/pause "),
    (Action::StepBack, "-1 "),
    (Action::StepForward, "+1 "),
    (Action::MinuteBack, "-1m "),
    (Action::MinuteForward, "+1m "),
    (Action::End, "end "),
    (Action::Faster, "faster "),
];

/// Draws the footer.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let t = theme(app);
    // Every span but the replay state borrows its text.
    let mut spans = Vec::with_capacity(4 + 3 * SHOWN.len());
    let shown: &[(Action, &str)] = if let Some(r) = &app.replay {
        let state = if r.playing { "playing" } else { "paused" };
        spans.push(Span::styled(
            format!(
                "REPLAY {state} {}x {}/{} ",
                r.speed,
                r.cursor + 1,
                r.samples.len()
            ),
            t.warn,
        ));
        &SHOWN_REPLAY
    } else {
        &SHOWN
    };
    if app.replay.is_none() {
        let jobs = if app.jobs.detail.is_some() {
            Some("Esc/q back ")
        } else if app.ui.focus == Focus::Jobs && app.jobs.has_rows() {
            Some("↑↓ select Enter detail ")
        } else {
            None
        };
        if let Some(keys) = jobs {
            spans.push(Span::styled(keys, t.title));
            spans.push(Span::styled(app.jobs.x_action().title(), t.title));
            spans.push(Span::styled(" · ", t.dim));
        }
    }
    for &(a, name) in shown {
        if let Some(b) = bindings(app.replay.is_some()).find(|b| b.action == a) {
            spans.push(Span::styled(b.label, t.title));
            spans.push(Span::styled(" ", t.title));
            spans.push(Span::styled(name, t.dim));
        }
    }
    spans.push(Span::styled("[sort ", t.dim));
    spans.push(Span::styled(
        match app.ui.who {
            Some(WhoView::Processes) => app.ui.proc_sort.label(),
            Some(WhoView::Cgroups) => app.ui.cgroup_sort.label(),
            None => app.ui.sort.label(),
        },
        t.dim,
    ));
    spans.push(Span::styled("]", t.dim));
    canvas.lines(area, vec![Line::from(spans)]);
}
