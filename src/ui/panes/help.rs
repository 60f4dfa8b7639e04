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
    let b = block(app, "Help (Esc or ? to close)", true);
    let inner = b.inner(rect);
    b.render(rect, buf);
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
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}
