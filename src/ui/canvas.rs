//! A view as a list of drawing operations (a bordered block, one line of text, a chart), each
//! with everything that decides its cells. Painting the list onto a blank buffer is the
//! view; two equal operations paint the same cells, so `Screen` repaints only the operations
//! that changed since the last frame.
//!
//! The operations of one canvas own disjoint cells (`regions`): a block owns its border ring,
//! a line its row, a chart the inside of its block. So any operation can be repainted alone,
//! on its own cleared cells, and the result is what a whole repaint would give.
//! Owns: `Canvas`, `Op`, `Part` and how each paints. Must not touch: app state, layout.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::symbols::bar;
use ratatui::text::Line;
use ratatui::widgets::{Block, Sparkline, Widget};

/// `--ascii` sparkline levels.
const ASCII_BARS: bar::Set = bar::Set {
    full: "#",
    seven_eighths: "#",
    three_quarters: "*",
    five_eighths: "+",
    half: "=",
    three_eighths: "-",
    one_quarter: ":",
    one_eighth: ".",
    empty: " ",
};

/// One drawing operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A bordered block: its border and title (the inside belongs to other operations).
    Block {
        /// The block's outer area.
        area: Rect,
        /// The block, titles included (boxed: it is much larger than the other operations).
        block: Box<Block<'static>>,
    },
    /// One line of text in a one-row area, cut at its width (`widgets::paint_lines`).
    Line {
        /// The row.
        area: Rect,
        /// The text.
        line: Line<'static>,
    },
    /// A chart: its parts painted in order inside `area`.
    Chart {
        /// The chart's area (the inside of its block).
        area: Rect,
        /// Sparklines, labels and marks, painted in order.
        parts: Vec<Part>,
    },
}

/// A piece of a chart.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// A sparkline already scaled to its cells: `ticks[i]` eighths of a cell high in column
    /// `i` (0 ..= 8 × height), so equal ticks draw equal cells.
    Spark {
        /// Where the sparkline goes.
        area: Rect,
        /// Eighths of a cell per column, left to right.
        ticks: Vec<u64>,
        /// The bars' style.
        style: Style,
        /// `--ascii` glyphs.
        ascii: bool,
    },
    /// A label written at a position.
    Label {
        /// Column.
        x: u16,
        /// Row.
        y: u16,
        /// The text.
        text: &'static str,
        /// Its style.
        style: Style,
    },
    /// A horizontal mark across the still blank cells of `row`: `first` in the left column,
    /// `-` elsewhere.
    HLine {
        /// The chart's area.
        area: Rect,
        /// The row.
        row: u16,
        /// The letter at the left.
        first: char,
        /// Its style.
        style: Style,
    },
    /// An event marker in column `x`: `letter` in the top row, `line` down the blank cells.
    Marker {
        /// The chart's area.
        area: Rect,
        /// The column.
        x: u16,
        /// The event's letter and its style.
        letter: (char, Style),
        /// The line's glyph and its style.
        line: (char, Style),
    },
}

/// A view's drawing operations, in painting order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Canvas {
    pub(super) ops: Vec<Op>,
}

impl Canvas {
    /// A bordered block; returns its inner area.
    pub fn block(&mut self, area: Rect, block: Block<'static>) -> Rect {
        let inner = block.inner(area);
        self.ops.push(Op::Block {
            area,
            block: Box::new(block),
        });
        inner
    }

    /// Lines of text, top to bottom, one per row of `area`; those below it are dropped.
    pub fn lines(&mut self, area: Rect, lines: Vec<Line<'static>>) {
        if area.width == 0 {
            return;
        }
        for (line, y) in lines.into_iter().zip(area.top()..area.bottom()) {
            let area = Rect::new(area.x, y, area.width, 1);
            self.ops.push(Op::Line { area, line });
        }
    }

    /// A chart filling `area`.
    pub fn chart(&mut self, area: Rect, parts: Vec<Part>) {
        if !area.is_empty() {
            self.ops.push(Op::Chart { area, parts });
        }
    }

    /// Adds another canvas's operations after these.
    pub fn append(&mut self, other: Canvas) {
        self.ops.extend(other.ops);
    }

    /// Paints every operation in order.
    pub fn paint(&self, buf: &mut Buffer) {
        for op in &self.ops {
            paint(op, buf);
        }
    }
}

/// The cells an operation owns, as non-empty rectangles.
#[must_use]
pub fn regions(op: &Op) -> Vec<Rect> {
    let rects = match op {
        Op::Block { area: a, .. } => {
            let inner_h = a.height.saturating_sub(2);
            vec![
                Rect::new(a.x, a.y, a.width, a.height.min(1)),
                Rect::new(
                    a.x,
                    a.bottom().saturating_sub(1),
                    a.width,
                    u16::from(a.height >= 2),
                ),
                Rect::new(a.x, a.y + 1, a.width.min(1), inner_h),
                Rect::new(
                    a.right().saturating_sub(1),
                    a.y + 1,
                    u16::from(a.width >= 2),
                    inner_h,
                ),
            ]
        }
        Op::Line { area, .. } | Op::Chart { area, .. } => vec![*area],
    };
    rects.into_iter().filter(|r| !r.is_empty()).collect()
}

/// Whether every glyph the operation paints is known to be one cell wide: text of
/// `widgets::single_cell` characters and charts (bars, ASCII labels and marks). Blocks are
/// not checked (ratatui keeps their titles to itself): they count as wide.
#[must_use]
pub fn narrow(op: &Op) -> bool {
    let plain = |l: &Line| {
        l.spans
            .iter()
            .all(|s| s.content.chars().all(super::widgets::single_cell))
    };
    match op {
        Op::Block { .. } => false,
        Op::Line { line, .. } => plain(line),
        Op::Chart { .. } => true,
    }
}

/// Paints one operation. A block also patches its inside with its own (default) style, which
/// changes no cell.
pub fn paint(op: &Op, buf: &mut Buffer) {
    match op {
        Op::Block { area, block } => block.as_ref().render(*area, buf),
        Op::Line { area, line } => {
            super::widgets::paint_lines(std::slice::from_ref(line), *area, buf);
        }
        Op::Chart { parts, area } => {
            for p in parts {
                paint_part(p, area.intersection(buf.area), buf);
            }
        }
    }
}

fn paint_part(part: &Part, clip: Rect, buf: &mut Buffer) {
    match part {
        Part::Spark {
            area,
            ticks,
            style,
            ascii,
        } => {
            let area = area.intersection(clip);
            if area.is_empty() {
                return;
            }
            // `ticks` are already the heights ratatui would compute: with the maximum at
            // 8 × height, it draws each value as exactly that many eighths.
            Sparkline::default()
                .data(ticks)
                .max(u64::from(area.height) * 8)
                .bar_set(if *ascii { ASCII_BARS } else { bar::NINE_LEVELS })
                .style(*style)
                .render(area, buf);
        }
        Part::Label { x, y, text, style } => {
            if clip.contains((*x, *y).into()) {
                let w = usize::from(clip.right() - x);
                buf.set_stringn(*x, *y, text, w, *style);
            }
        }
        Part::HLine {
            area,
            row,
            first,
            style,
        } => {
            let area = area.intersection(clip);
            if *row < area.top() || *row >= area.bottom() {
                return;
            }
            for x in area.left()..area.right() {
                let cell = &mut buf[(x, *row)];
                if cell.symbol() == " " {
                    cell.set_char(if x == area.left() { *first } else { '-' })
                        .set_style(*style);
                }
            }
        }
        Part::Marker {
            area,
            x,
            letter,
            line,
        } => {
            let area = area.intersection(clip);
            if *x < area.left() || *x >= area.right() {
                return;
            }
            for y in area.top()..area.bottom() {
                let cell = &mut buf[(*x, y)];
                if y == area.top() {
                    cell.set_char(letter.0).set_style(letter.1);
                } else if cell.symbol() == " " {
                    cell.set_char(line.0).set_style(line.1);
                }
            }
        }
    }
}

/// Scales `values` (the last `width` of them, newest at the right, missing ones as 0) to
/// sparkline ticks for an area `height` rows high, against `max`: first to 0..=1000, then to
/// eighths of a cell as ratatui's `Sparkline` does, so the cells are those of a sparkline of
/// the 0..=1000 values with maximum 1000.
#[must_use]
pub fn ticks(values: &[Option<f64>], width: u16, height: u16, max: f64) -> Vec<u64> {
    let w = usize::from(width);
    let scale = if max > 0.0 { 1000.0 / max } else { 0.0 };
    let tail = &values[values.len().saturating_sub(w)..];
    let top = u64::from(height) * 8;
    let mut out: Vec<u64> = vec![0; w - tail.len()];
    out.extend(tail.iter().map(|v| {
        let thousandths = (v.unwrap_or(0.0).max(0.0) * scale).round() as u64;
        (u128::from(thousandths) * u128::from(top) / 1000).min(u128::from(top)) as u64
    }));
    out
}
