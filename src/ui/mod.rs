//! Pure view: `fn(&App) → cells`. May read the app; may not change it, do I/O or read the clock.
//!
//! Owns: the screen. Every pane is a `render(app, area, buf)` in `panes/`.

pub mod layout;
pub mod panes;
pub mod theme;
mod widgets;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::App;
use layout::{MIN, PaneRects};
pub use theme::Theme;

/// Draws the whole screen into a frame.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    render(app, area, frame.buffer_mut());
}

/// Draws the whole screen into a buffer.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
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
    let disk_rows = app.model.as_ref().map_or(0, |m| m.disks.len());
    let r = PaneRects::for_area(area, disk_rows, panes::jobs::rows(app));
    panes::header::render(app, r.header, buf);
    if app.ui.detail {
        let body = Rect::new(
            area.x,
            r.header.bottom(),
            area.width,
            r.footer.y - r.header.bottom(),
        );
        panes::detail::render(app, body, buf);
    } else {
        panes::memory::render(app, r.memory, buf);
        panes::dirty::render(app, r.dirty, buf);
        panes::reclaim::render(app, r.reclaim, buf);
        panes::disks::render(app, r.disks, buf);
        if r.jobs.area() > 0 {
            if r.large {
                panes::jobs::render(app, r.jobs, buf);
            } else {
                panes::jobs::render_lines(app, r.jobs, buf);
            }
        }
        if r.charts.height > 0 {
            panes::charts::render(app, r.charts, buf);
        }
    }
    panes::footer::render(app, r.footer, buf);
    if app.ui.help {
        panes::help::render(app, area, buf);
    }
    panes::prompt::render(app, area, buf);
}

/// The theme in force for this app.
#[must_use]
pub fn theme(app: &App) -> &'static Theme {
    if app.look.mono {
        &theme::MONO
    } else {
        &theme::COLOR
    }
}
