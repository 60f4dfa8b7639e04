//! The phase table overlay: a finished playbook's table (`app.phase_table`) in a box over
//! the screen, as wide and tall as the terminal allows, from the scroll position the app
//! keeps; a last line says how to scroll and close.
//!
//! Owns: the overlay. Must not touch: app state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use crate::app::App;
use crate::ui::theme;
use crate::ui::widgets::block;

/// Draws the table centred on `area`, if there is one.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(t) = &app.phase_table else { return };
    let th = theme(app);
    let content_w = u16::try_from(t.width()).unwrap_or(u16::MAX);
    let content_h = u16::try_from(t.lines.len()).unwrap_or(u16::MAX);
    // The borders, the lines and the hint line, within a one-cell margin.
    let w = content_w
        .saturating_add(2)
        .clamp(40, 200)
        .min(area.width.saturating_sub(2));
    let h = content_h
        .saturating_add(3)
        .min(area.height.saturating_sub(2));
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(rect, buf);
    let b = block(app, format!("Phase table: {}", t.title), true);
    let inner = b.inner(rect);
    b.render(rect, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let view_h = usize::from(inner.height - 1);
    let view_w = usize::from(inner.width);
    // The app bounds the scroll by the text; here it stops where the last page is full.
    let top = t.top.min(t.lines.len().saturating_sub(view_h));
    let left = t.left.min(t.width().saturating_sub(view_w));
    let mut lines: Vec<Line> = (t.lines.iter().skip(top).take(view_h))
        .map(|l| {
            let s: String = l.chars().skip(left).take(view_w).collect();
            Line::from(Span::styled(s, th.text))
        })
        .collect();
    lines.resize(view_h, Line::default());
    let more_down = top + view_h < t.lines.len();
    let more_right = left + view_w < t.width();
    let hint = match (top > 0 || more_down, left > 0 || more_right) {
        (false, false) => "Esc or Enter: close".to_owned(),
        (v, s) => format!(
            "{}{} scroll{} · Esc or Enter: close",
            if v { "↑↓" } else { "" },
            if s { "←→" } else { "" },
            if more_right { " (more →)" } else { "" }
        ),
    };
    lines.push(Line::from(Span::styled(hint, th.dim)));
    Paragraph::new(lines).render(inner, buf);
}
