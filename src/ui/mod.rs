//! Pure view: `fn(&App) → cells`. May read the app; may not change it, do I/O or read the clock.
//!
//! Owns: the screen. Every pane is a `render(app, area, buf)` in `panes/`.

pub mod canvas;
pub mod fleet;
pub mod hit;
pub mod layout;
pub mod panes;
mod screen;
pub mod theme;
mod widgets;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::{App, WhoView};
use canvas::Canvas;
use layout::{MIN, PaneRects};
pub use screen::{Screen, Update};
pub use theme::{Theme, theme};

/// Draws the whole screen into a frame.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    render(app, area, frame.buffer_mut());
}

/// `buf`'s rows as text, as the tests read a screen.
#[cfg(test)]
pub(crate) fn rows_of(buf: &Buffer) -> Vec<String> {
    let a = buf.area;
    (a.top()..a.bottom())
        .map(|y| {
            (a.left()..a.right())
                .map(|x| buf[(x, y)].symbol())
                .collect()
        })
        .collect()
}

/// Draws the whole screen into a buffer (in ASCII only with `--ascii`).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    render_glyphs(app, area, buf);
    if app.look.ascii {
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                if let Some(c) = buf.cell_mut((x, y)) {
                    widgets::ascii_cell(c);
                }
            }
        }
    }
}

fn render_glyphs(app: &App, area: Rect, buf: &mut Buffer) {
    if area.width < MIN.0 || area.height < MIN.1 {
        let msg = format!(
            "pagewatch needs at least {}x{}; this terminal is {}x{}. Enlarge it, or use --batch.",
            MIN.0, MIN.1, area.width, area.height
        );
        Paragraph::new(Line::from(msg))
            .wrap(Wrap { trim: true })
            .render(area, buf);
        return;
    }
    let r = rects(app, area);
    let mut c = Canvas::default();
    panes::header::draw(app, r.header, &mut c);
    if app.ui.detail || app.jobs.detail.is_some() {
        panes::footer::draw(app, r.footer, &mut c);
        c.paint(buf);
        let body = Rect::new(
            area.x,
            r.header.bottom(),
            area.width,
            r.footer.y - r.header.bottom(),
        );
        if app.jobs.detail.is_some() {
            panes::job_detail::render(app, body, buf);
        } else {
            panes::detail::render(app, body, buf);
        }
    } else {
        main_view(app, &r, &mut c);
        c.paint(buf);
    }
    if app.ui.help {
        panes::help::render(app, area, buf);
    }
    panes::phases::render(app, area, buf);
    panes::prompt::render(app, area, buf);
}

/// The screen as a canvas, when it is the main view with nothing over it; `None` for the
/// views painted straight onto a buffer (too small, device or job detail, help, a prompt, a phase
/// table).
#[must_use]
pub fn canvas(app: &App, area: Rect) -> Option<Canvas> {
    if area.width < MIN.0
        || area.height < MIN.1
        || app.ui.detail
        || app.jobs.detail.is_some()
        || app.ui.help
        || app.prompt.is_some()
        || app.phase_table.is_some()
    {
        return None;
    }
    let r = rects(app, area);
    // Room for the operations of a large screen (about 50), so pushing them never regrows.
    let mut c = Canvas {
        ops: Vec::with_capacity(64),
    };
    panes::header::draw(app, r.header, &mut c);
    main_view(app, &r, &mut c);
    Some(c)
}

pub(crate) fn rects(app: &App, area: Rect) -> PaneRects {
    let disk_rows = app.model.as_ref().map_or(0, |m| m.disks.len());
    let job_rows = panes::jobs::rows(app, layout::is_large(area));
    PaneRects::for_area(area, disk_rows, job_rows)
}

/// The panes, the charts and the footer (everything but the header) onto `c`.
fn main_view(app: &App, r: &PaneRects, c: &mut Canvas) {
    let w = layout::who(r, app.ui.who.is_some(), panes::throttled::height(app));
    // In a scope (issue 54) the group's memory and dirty domain take these two panes.
    if !panes::scope::draw(app, r.memory, r.dirty, c) {
        panes::memory::draw(app, r.memory, c);
        panes::dirty::draw(app, r.dirty, c);
    }
    panes::reclaim::draw(app, w.reclaim, c);
    if w.disks.height > 0 {
        panes::disks::draw(app, w.disks, c);
    }
    if w.throttled.height > 0 {
        panes::throttled::draw(app, w.throttled, c);
    }
    match app.ui.who {
        Some(WhoView::Processes) => panes::processes::draw(app, w.who, c),
        Some(WhoView::Cgroups) => panes::cgroups::draw(app, w.who, c),
        None => {}
    }
    if r.jobs.area() > 0 {
        if r.large {
            panes::jobs::draw(app, r.jobs, c);
        } else {
            panes::jobs::draw_lines(app, r.jobs, c);
        }
    }
    if w.charts.height > 0 {
        panes::charts::draw(app, w.charts, c);
    }
    panes::footer::draw(app, r.footer, c);
}
