//! Footer: the most used keys, from the keymap table.
//!
//! Owns: the footer line. Must not touch: app state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::app::keymap::{Action, KEYMAP};
use crate::ui::theme;
use crate::ui::widgets::paint_lines;

/// The actions the footer shows, with a short name each; keys come from the keymap.
const SHOWN: [(Action, &str); 9] = [
    (Action::Help, "help"),
    (Action::Quit, "quit"),
    (Action::Pause, "pause"),
    (Action::Slower, "slower"),
    (Action::Faster, "faster"),
    (Action::Sort, "sort"),
    (Action::Partitions, "partitions"),
    (Action::Detail, "detail"),
    (Action::Units, "pages/bytes"),
];

/// Draws the footer.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = theme(app);
    let mut spans = Vec::new();
    for (a, name) in SHOWN {
        if let Some(b) = KEYMAP.iter().find(|b| b.action == a) {
            spans.push(Span::styled(format!("{} ", b.label), t.title));
            spans.push(Span::styled(format!("{name} "), t.dim));
        }
    }
    spans.push(Span::styled(
        format!("[sort {}]", app.ui.sort.label()),
        t.dim,
    ));
    paint_lines(&[Line::from(spans)], area, buf);
}
