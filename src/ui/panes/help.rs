//! Help overlay: every key from the keymap table, and what the figures mean.
//!
//! Owns: the overlay. Must not touch: app state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use crate::app::App;
use crate::app::keymap::bindings;
use crate::ui::theme;
use crate::ui::widgets::block;

const NOTES: [&str; 4] = [
    "MemFree is memory nobody uses. MemAvailable is the kernel's estimate of what can be had \
     without swapping: free memory above the reserves plus the page cache and slab that reclaim \
     can drop. Watch MemAvailable; a low MemFree is normal.",
    "Dirty thresholds are a fraction of dirtyable memory (free + file cache), not of MemTotal. \
     b: background writeback starts; f: writers are throttled (the freerun point); T: the threshold (over it, writers are paced hard; the kernel's own hard limit can sit above T for a while). \
     Taking memory shrinks all three.",
    "Reclaim: kswapd reclaims in the background below the low watermark; direct reclaim and \
     allocstall mean the application is reclaiming itself and stalls.",
    "Disks: %util counts time with any request in flight. For NVMe, RAID and cloud volumes \
     watch await against the device's baseline and aqu-sz instead.",
];

/// Draws the overlay centred on `area`.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = theme(app);
    let w = area.width.saturating_sub(4).min(96);
    let h = area.height.saturating_sub(2);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(rect, buf);
    let inner = rect.inner(ratatui::layout::Margin::new(1, 1));
    // One entry per action, its keys joined: "q, Ctrl-C  quit".
    let mut entries: Vec<(String, &str)> = Vec::new();
    for bnd in bindings(app.replay.is_some()) {
        match entries.iter_mut().find(|(_, h)| *h == bnd.help) {
            Some((keys, _)) => {
                keys.push_str(", ");
                keys.push_str(bnd.label);
            }
            None => entries.push((bnd.label.to_owned(), bnd.help)),
        }
    }
    let half = entries.len().div_ceil(2);
    let col = usize::from(inner.width / 2);
    let mut lines = Vec::new();
    for i in 0..half {
        let mut spans = Vec::new();
        for (keys, help) in [entries.get(i), entries.get(i + half)]
            .into_iter()
            .flatten()
        {
            let w = col.saturating_sub(12);
            let text: String = format!("{help:<w$}").chars().take(w).collect();
            spans.push(Span::styled(format!("{keys:>10}  "), t.title));
            spans.push(Span::styled(text, t.text));
        }
        lines.push(Line::from(spans));
    }
    for n in NOTES {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(n, t.dim)));
    }
    let text = Paragraph::new(lines).wrap(Wrap { trim: false });
    // Too tall for the terminal (the notes at 80x24): ↓ shows the end, ↑ the keys again.
    let hidden = u16::try_from(text.line_count(inner.width))
        .unwrap_or(u16::MAX)
        .saturating_sub(inner.height);
    let title = match (hidden, app.ui.help_end) {
        (0, _) => "Help (Esc or ? to close)",
        (_, false) => "Help (↓ more, Esc or ? to close)",
        (_, true) => "Help (↑ keys, Esc or ? to close)",
    };
    block(app, title, true).render(rect, buf);
    let top = if app.ui.help_end { hidden } else { 0 };
    text.scroll((top, 0)).render(inner, buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{Action, Look, Msg};
    use crate::source::HostInfo;

    fn screen(app: &App, w: u16, h: u16) -> String {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        render(app, area, &mut buf);
        crate::ui::rows_of(&buf).join("\n")
    }

    #[test]
    fn at_80x24_the_notes_are_one_key_away_and_at_160x48_all_there() {
        let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
        a.update(Msg::Action(Action::Help));
        let last_words = "cloud volumes";
        let top = screen(&a, 80, 24);
        assert!(top.contains("Help (↓ more, Esc or ? to close)"), "{top}");
        assert!(top.contains("quit") && !top.contains(last_words), "{top}");
        a.update(Msg::Action(Action::Down));
        let end = screen(&a, 80, 24);
        assert!(end.contains("Help (↑ keys, Esc or ? to close)"), "{end}");
        assert!(end.contains(last_words), "{end}");
        let large = screen(&a, 160, 48);
        assert!(large.contains("Help (Esc or ? to close)"), "{large}");
        assert!(
            large.contains("quit") && large.contains(last_words),
            "{large}"
        );
    }
}
