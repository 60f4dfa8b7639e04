//! Small drawing helpers shared by the panes: bordered blocks, bars, gauges, sparklines.
//! (`paint_lines`, a cheaper `Paragraph` for lines of plain text, lives in `canvas`, which
//! paints with it.)
//!
//! Owns: glyph choice for `--ascii` (no braille, block or box-drawing characters).
//! Must not touch: app state.

use std::borrow::Cow;
use std::fmt::{self, Display, Write};

use ratatui::buffer::Cell;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::symbols::border;
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

pub(super) use super::canvas::single_cell;
use super::canvas::{Frame, Part, ticks};
use super::theme;
use crate::app::App;

const ASCII_BORDER: border::Set = border::Set {
    top_left: "+",
    top_right: "+",
    bottom_left: "+",
    bottom_right: "+",
    vertical_left: "|",
    vertical_right: "|",
    horizontal_top: "-",
    horizontal_bottom: "-",
};

/// The leading columns of a table that fit side by side in `avail` cells, each `width(c)`
/// wide: columns are listed in priority order, and the first that does not fit ends the row.
pub fn fitting<T>(cols: &[T], avail: usize, width: impl Fn(&T) -> usize) -> Vec<&T> {
    let mut left = avail;
    cols.iter()
        .take_while(|c| {
            let w = width(c);
            let fits = w <= left;
            left = left.saturating_sub(w);
            fits
        })
        .collect()
}

/// A bordered pane with a title; the focused pane's border is highlighted.
pub fn block(app: &App, title: impl Into<Cow<'static, str>>, focused: bool) -> Block<'static> {
    frame(app, title, focused).block()
}

/// What `block` draws, as data for a canvas.
pub fn frame(app: &App, title: impl Into<Cow<'static, str>>, focused: bool) -> Frame {
    let t = super::theme(app);
    Frame {
        title: title.into(),
        border: if focused { t.focus } else { t.dim },
        title_style: t.title,
        ascii: app.look.ascii,
    }
}

impl Frame {
    /// The ratatui block.
    #[must_use]
    pub fn block(&self) -> Block<'static> {
        Block::bordered()
            .border_set(self.border_set())
            .border_style(self.border)
            .title(Span::styled(self.title.clone(), self.title_style))
    }

    fn border_set(&self) -> border::Set<'static> {
        if self.ascii {
            ASCII_BORDER
        } else {
            border::PLAIN
        }
    }

    /// The cells of the block's top row when it is `width` wide, left to right: a corner,
    /// the title cut where the border ends, the border, a corner. They are what `block` draws
    /// there (its sides, then its corners, then the title over them), without laying the title
    /// out; so only for a title of single-cell characters (`single_cell`), at least 3 wide.
    #[must_use]
    pub fn top_row(&self, width: u16) -> Option<impl Iterator<Item = Cell> + '_> {
        if width < 3 || !self.title.chars().all(single_cell) {
            return None;
        }
        let set = self.border_set();
        let last = usize::from(width) - 1;
        let mut title = self.title.chars().take(last - 1);
        Some((0..=last).map(move |k| {
            let mut cell = Cell::EMPTY;
            let edge = match k {
                0 => set.top_left,
                k if k == last => set.top_right,
                _ => set.horizontal_top,
            };
            cell.set_symbol(edge).set_style(self.border);
            // The title takes the cells between the corners, as many as it has characters.
            if let Some(c) = (k > 0).then(|| title.next()).flatten() {
                cell.set_char(c).set_style(self.title_style);
            }
            cell
        }))
    }
}

/// A one-line bar of `width` cells made of segments `(amount, letter)` out of `total`.
/// With colour each segment is a run of solid cells in its own colour; without colour
/// (NO_COLOR) each segment is a run of its letter so the bar stays readable.
pub fn stacked_bar(app: &App, width: u16, total: u64, parts: &[(u64, char)]) -> Line<'static> {
    let t = super::theme(app);
    let w = u64::from(width);
    let mut spans = Vec::with_capacity(parts.len() + 1);
    let mut used = 0u64;
    let mut acc = 0u64;
    for (i, &(amount, letter)) in parts.iter().enumerate() {
        acc += amount;
        // Cumulative rounding keeps the total width exact.
        let end = (acc.min(total) * w + total / 2)
            .checked_div(total)
            .unwrap_or(0);
        let cells = end.saturating_sub(used) as usize;
        used = used.max(end);
        if cells == 0 {
            continue;
        }
        let style = t.segments.get(i).copied().unwrap_or(t.text);
        let glyph = match (t.color, app.look.ascii) {
            (true, false) => run('█', cells),
            (true, true) => run('#', cells),
            (false, _) => run(letter, cells),
        };
        spans.push(Span::styled(glyph, style));
    }
    if used < w {
        spans.push(Span::styled(run(' ', (w - used) as usize), t.dim));
    }
    Line::from(spans)
}

/// Runs of the glyphs bars are made of, to borrow from.
const RUNS: [&str; 3] = [
    "████████████████████████████████████████████████████████████████",
    "################################################################",
    "                                                                ",
];

/// `n` copies of `glyph`: borrowed from `RUNS` when one is long enough, else owned.
fn run(glyph: char, n: usize) -> Cow<'static, str> {
    let bytes = glyph.len_utf8() * n;
    RUNS.iter()
        .find(|r| r.starts_with(glyph))
        .and_then(|r| r.get(..bytes))
        .map_or_else(|| Cow::Owned(glyph.to_string().repeat(n)), Cow::Borrowed)
}

/// A gauge: `value` filled against `max`, with marker letters at given positions.
pub fn gauge(
    app: &App,
    width: u16,
    value: u64,
    max: u64,
    marks: &[(u64, char)],
    style: Style,
) -> Line<'static> {
    let w = usize::from(width);
    if w == 0 || max == 0 {
        return Line::default();
    }
    // In u64 unless the product overflows it: 128-bit division is a call into code that no
    // other part of a frame needs.
    let pos = |v: u64| {
        let cell = v.checked_mul(w as u64).map_or_else(
            || (u128::from(v) * w as u128 / u128::from(max)) as usize,
            |p| (p / max) as usize,
        );
        cell.min(w - 1)
    };
    let filled_cells = if value == 0 { 0 } else { pos(value) + 1 };
    let (full, empty) = if app.look.ascii {
        ('#', '.')
    } else {
        ('█', '·')
    };
    // Each mark's cell; a later mark at the same cell wins.
    let marks: Vec<(usize, char)> = marks.iter().map(|&(at, c)| (pos(at), c)).collect();
    let cell = |i: usize| {
        marks
            .iter()
            .rev()
            .find(|m| m.0 == i)
            .map_or(if i < filled_cells { full } else { empty }, |m| m.1)
    };
    let text = |cells: std::ops::Range<usize>| {
        let mut s = String::with_capacity(cells.len() * full.len_utf8().max(empty.len_utf8()));
        s.extend(cells.map(cell));
        s
    };
    Line::from(vec![
        Span::styled(text(0..filled_cells), style),
        Span::styled(text(filled_cells..w), super::theme(app).dim),
    ])
}

/// A sparkline of the last `area.width` values, newest at the right, scaled to `max`.
pub fn sparkline(app: &App, area: Rect, values: &[Option<f64>], max: f64, style: Style) -> Part {
    Part::Spark {
        area,
        ticks: ticks(values, area.width, area.height, max),
        style,
        ascii: app.look.ascii,
    }
}

/// A label followed by a value, as spans.
pub fn kv(app: &App, label: &'static str, value: impl Display) -> [Span<'static>; 3] {
    let t = super::theme(app);
    // The label and its space as borrowed spans: no allocation for text that never changes.
    [
        Span::styled(label, t.dim),
        Span::styled(" ", t.dim),
        Span::styled(text(format_args!("{value}")), t.text),
    ]
}

/// `format!` into a string with room for a pane's usual text, so that writing the pieces does
/// not grow it step by step.
pub fn text(args: fmt::Arguments<'_>) -> String {
    let mut s = String::with_capacity(48);
    let _ = s.write_fmt(args);
    s
}

/// Appends `value` right-aligned in `width` characters, as `{value:>width$}` writes a text,
/// without the formatter's padding pass (which writes the spaces one call at a time).
pub fn push_right(out: &mut String, width: usize, value: impl Display) {
    let start = out.len();
    let _ = write!(out, "{value}");
    for _ in out[start..].chars().count()..width {
        out.insert(start, ' ');
    }
}

/// Pads `out` with spaces to `width` characters, as `{out:<width$}` would.
pub fn pad_to(out: &mut String, width: usize) {
    for _ in out.chars().count()..width {
        out.push(' ');
    }
}

/// The theme's style for a level: 0 ok, 1 warn, 2 crit.
pub fn level(app: &App, lvl: u8) -> Style {
    let t: &theme::Theme = super::theme(app);
    match lvl {
        0 => t.ok,
        1 => t.warn,
        _ => t.crit,
    }
}

/// `--ascii`: a cell whose symbol is not ASCII gets an ASCII stand-in (`µ` → `u`, `→` → `>`,
/// `Δ` → `d`, `–` → `-`, …; anything else → `?`). Applied to every cell drawn, so no pane can
/// slip a glyph through.
pub fn ascii_cell(cell: &mut ratatui::buffer::Cell) {
    let sym = cell.symbol();
    if sym.is_ascii() {
        return;
    }
    let plain = match sym {
        "µ" => "u",
        "→" => ">",
        "←" => "<",
        "↑" => "^",
        "↓" => "v",
        "Δ" => "d",
        "–" | "—" | "─" => "-",
        "…" | "·" => ".",
        "│" | "┊" => "|",
        "█" | "▉" | "▊" | "▋" | "▌" | "▍" | "▎" | "▏" => "#",
        _ => "?",
    };
    cell.set_symbol(plain);
}
