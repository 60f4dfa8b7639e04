//! A view as a list of drawing operations (a bordered block, one line of text, a chart), each
//! with everything that decides its cells. Painting the list onto a blank buffer is the
//! view; two equal operations paint the same cells, so `Screen` repaints only the operations
//! that changed since the last frame.
//!
//! The operations of one canvas own disjoint cells (`regions`): a block owns its border ring,
//! a line its row, a chart the inside of its block. So any operation can be repainted alone,
//! on its own cleared cells, and the result is what a whole repaint would give.
//! Owns: `Canvas`, `Op`, `Part` and how each paints (lines through `paint_lines`). Must not
//! touch: app state, layout.

use std::borrow::Cow;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::symbols::bar;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

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
        /// The border and title.
        frame: Frame,
    },
    /// One line of text in a one-row area, cut at its width (`paint_lines`).
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

/// A block's border and title (`widgets::frame`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The title, at the top left.
    pub title: Cow<'static, str>,
    /// The border's style.
    pub border: Style,
    /// The title's style.
    pub title_style: Style,
    /// `--ascii` border glyphs.
    pub ascii: bool,
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
    pub fn block(&mut self, area: Rect, frame: Frame) -> Rect {
        let inner = Block::bordered().inner(area);
        self.ops.push(Op::Block { area, frame });
        inner
    }

    /// Lines of text, top to bottom, one per row of `area`; those below it are dropped, and
    /// the rows left over get empty lines. So a table whose row count changes from one frame
    /// to the next (the processes view as processes come and go) keeps its layout and is
    /// repainted line by line (`Screen`), not whole: the view was repainted and diffed whole
    /// on most frames, a fifth of its CPU time at idle.
    pub fn lines(&mut self, area: Rect, lines: Vec<Line<'static>>) {
        if area.width == 0 {
            return;
        }
        let mut lines = lines.into_iter();
        for y in area.top()..area.bottom() {
            let line = lines.next().unwrap_or_default();
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

/// Whether every glyph the operation paints is known to be one cell wide: plain lines
/// (`is_plain`) and charts (bars, ASCII labels and marks). Blocks are not checked
/// (ratatui keeps their titles to itself): they count as wide.
#[must_use]
pub fn narrow(op: &Op) -> bool {
    match op {
        Op::Block { .. } => false,
        Op::Line { line, .. } => is_plain(line),
        Op::Chart { .. } => true,
    }
}

/// The cells of spans of a plain line (`is_plain`) whose style is `line_style`, left to
/// right: each character with the style `paint_lines` gives it.
pub fn plain_cells(line_style: Style, spans: &[Span<'_>]) -> impl Iterator<Item = (char, Style)> {
    let base = Style::default().patch(line_style);
    spans.iter().flat_map(move |s| {
        let style = base.patch(s.style);
        s.content.chars().map(move |c| (c, style))
    })
}

/// Paints one operation. A block also patches its inside with its own (default) style, which
/// changes no cell.
pub fn paint(op: &Op, buf: &mut Buffer) {
    match op {
        Op::Block { area, frame } => frame.block().render(*area, buf),
        Op::Line { area, line } => {
            paint_lines(std::slice::from_ref(line), *area, buf);
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
            let shown = area.intersection(clip);
            let set = if *ascii { ASCII_BARS } else { bar::NINE_LEVELS };
            // What ratatui's `Sparkline` draws for values already scaled to eighths of a cell
            // (maximum 8 × height): each column from the bottom up, a full block per 8 ticks
            // and the remainder's eighth on top.
            for x in shown.left()..shown.right() {
                let mut h = ticks.get(usize::from(x - area.x)).copied().unwrap_or(0);
                for y in (shown.top()..shown.bottom()).rev() {
                    buf[(x, y)].set_symbol(level(&set, h)).set_style(*style);
                    h = h.saturating_sub(8);
                }
            }
        }
        Part::Label { x, y, text, style } => {
            if *y < clip.top() || *y >= clip.bottom() {
                return;
            }
            for (cx, ch) in (*x..).zip(text.chars()) {
                if cx >= clip.left() && cx < clip.right() {
                    buf[(cx, *y)].set_char(ch).set_style(*style);
                }
            }
        }
        Part::HLine {
            area,
            row,
            first,
            style,
        } => {
            let shown = area.intersection(clip);
            if *row < shown.top() || *row >= shown.bottom() {
                return;
            }
            for x in shown.left()..shown.right() {
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

/// The glyph for `h` eighths of a cell (ratatui's `Sparkline::symbol_for_height`).
fn level<'a>(set: &bar::Set<'a>, h: u64) -> &'a str {
    match h {
        0 => set.empty,
        1 => set.one_eighth,
        2 => set.one_quarter,
        3 => set.three_eighths,
        4 => set.half,
        5 => set.five_eighths,
        6 => set.three_quarters,
        7 => set.seven_eighths,
        _ => set.full,
    }
}

/// The columns of a chart whose cells may differ between `old` and `new` parts, given that
/// both paint `area`; `None` when the parts differ in shape (count, kind, place or style),
/// and the whole chart must be repainted.
#[must_use]
pub fn changed_columns(old: &[Part], new: &[Part], area: Rect) -> Option<Vec<u16>> {
    if old.len() != new.len() || old.iter().zip(new).any(|(a, b)| !same_shape(a, b)) {
        return None;
    }
    let cols = (area.left()..area.right())
        .filter(|&x| old.iter().zip(new).any(|(a, b)| differs_at(a, b, x)))
        .collect();
    Some(cols)
}

/// Whether the chart `new` is the chart `old` scrolled left by `lag` columns (1 ..= `max_lag`,
/// the same for every sparkline) with the newest column repeating `old`'s: nothing moved
/// since, only time passed. Its other parts (labels, threshold lines, markers) are the same.
/// `Screen` then keeps `old` on the terminal a few frames rather than repaint every column
/// that differs from its neighbour (issue 52: a chart that scrolls rewrites its whole area).
#[must_use]
pub fn only_scrolled(old: &[Part], new: &[Part], max_lag: usize) -> bool {
    let sparks = |ps: &[Part]| {
        ps.iter()
            .filter(|p| matches!(p, Part::Spark { .. }))
            .count()
    };
    let others_same = old.len() == new.len()
        && old.iter().zip(new).all(|(a, b)| match (a, b) {
            (Part::Spark { .. }, Part::Spark { .. }) => same_shape(a, b),
            _ => a == b,
        });
    if !others_same || sparks(new) == 0 {
        return false;
    }
    (1..=max_lag).any(|lag| {
        old.iter().zip(new).all(|(a, b)| match (a, b) {
            (Part::Spark { ticks: was, .. }, Part::Spark { ticks: now, .. }) => {
                scrolled(was, now, lag)
            }
            _ => true,
        })
    })
}

/// Whether `now` is `was` moved left by `lag` with its last value repeated at the right.
fn scrolled(was: &[u64], now: &[u64], lag: usize) -> bool {
    let (Some(&last), true) = (was.last(), was.len() == now.len() && lag < was.len()) else {
        return false;
    };
    let keep = was.len() - lag;
    now[..keep] == was[lag..] && now[keep..].iter().all(|&t| t == last)
}

/// Whether two parts are of the same kind, in the same place and style: what is left to
/// differ is per column (`differs_at`).
fn same_shape(a: &Part, b: &Part) -> bool {
    match (a, b) {
        (
            Part::Spark {
                area: a1,
                style: s1,
                ascii: c1,
                ticks: t1,
            },
            Part::Spark {
                area: a2,
                style: s2,
                ascii: c2,
                ticks: t2,
            },
        ) => a1 == a2 && s1 == s2 && c1 == c2 && t1.len() == t2.len(),
        (Part::Label { .. }, Part::Label { .. }) | (Part::HLine { .. }, Part::HLine { .. }) => {
            a == b
        }
        (
            Part::Marker {
                area: a1,
                letter: l1,
                line: n1,
                ..
            },
            Part::Marker {
                area: a2,
                letter: l2,
                line: n2,
                ..
            },
        ) => a1 == a2 && l1 == l2 && n1 == n2,
        _ => false,
    }
}

/// Whether two parts of the same shape paint column `x` differently.
fn differs_at(a: &Part, b: &Part, x: u16) -> bool {
    match (a, b) {
        (
            Part::Spark {
                area, ticks: t1, ..
            },
            Part::Spark { ticks: t2, .. },
        ) => {
            x >= area.left() && x < area.right() && {
                let i = usize::from(x - area.x);
                t1.get(i) != t2.get(i)
            }
        }
        (Part::Marker { x: x1, .. }, Part::Marker { x: x2, .. }) => {
            x1 != x2 && (x == *x1 || x == *x2)
        }
        _ => false,
    }
}

/// Paints column `x` of a chart: its parts clipped to that column.
pub fn paint_column(parts: &[Part], area: Rect, x: u16, buf: &mut Buffer) {
    let clip = Rect::new(x, area.y, 1, area.height).intersection(buf.area);
    for p in parts {
        paint_part(p, clip, buf);
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
    let mut out: Vec<u64> = Vec::with_capacity(w);
    out.resize(w - tail.len(), 0);
    out.extend(tail.iter().map(|v| {
        let x = v.unwrap_or(0.0).max(0.0) * scale;
        if x >= 1000.0 {
            return top;
        }
        // `x.round()` for 0 <= x < 1000, without a call into libm (a cold call every frame).
        let whole = x as u64;
        let thousandths = whole + u64::from(x - whole as f64 >= 0.5);
        thousandths * top / 1000
    }));
    out
}

/// Whether `c` is one grapheme of exactly one cell on its own: printable ASCII and the few
/// symbols the panes use. Anything else (combining marks, wide or control characters) sends
/// its line through `Paragraph`, which segments graphemes and measures widths.
pub(super) fn single_cell(c: char) -> bool {
    matches!(c, ' '..='~' | '█' | '·' | '→' | 'Δ' | 'µ' | '–' | '…')
}

/// Whether `paint_lines` writes `line` cell by cell: left-aligned, every character one cell
/// (`single_cell`). Its cells are then one per character, in the span's style patched onto
/// the line's, and blank after the text.
pub(super) fn is_plain(line: &Line) -> bool {
    line.alignment.is_none()
        && line
            .spans
            .iter()
            .all(|s| s.content.chars().all(single_cell))
}

/// Draws `lines` top to bottom in `area`, each cut at the area's width: exactly the cells of
/// `Paragraph::new(lines).render(area, buf)` without wrapping. Lines of plain text (see
/// `single_cell`, left-aligned) are written cell by cell, skipping `Paragraph`'s grapheme
/// segmentation and width lookups; any other line is drawn by `Paragraph` on its own row.
pub fn paint_lines(lines: &[Line], area: Rect, buf: &mut Buffer) {
    let area = area.intersection(buf.area);
    for (line, y) in lines.iter().zip(area.top()..area.bottom()) {
        if !is_plain(line) {
            let row = Rect::new(area.x, y, area.width, 1);
            Paragraph::new(line.clone()).render(row, buf);
            continue;
        }
        let base = Style::default().patch(line.style);
        let mut x = area.left();
        'spans: for span in &line.spans {
            let style = base.patch(span.style);
            for c in span.content.chars() {
                if x >= area.right() {
                    break 'spans;
                }
                buf[(x, y)].set_char(c).set_style(style);
                x += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::{Color, Modifier};
    use ratatui::text::Span;
    use ratatui::widgets::Sparkline;

    use super::*;

    /// A table that lost or gained rows keeps its operations (one per row of its area), so
    /// `Screen` repaints it line by line; the padding paints nothing.
    #[test]
    fn lines_fill_their_area_so_a_table_keeps_its_layout() {
        let area = Rect::new(0, 0, 20, 5);
        let (mut short, mut long) = (Canvas::default(), Canvas::default());
        short.lines(area, vec![Line::from("a"); 2]);
        long.lines(area, vec![Line::from("b"); 7]);
        assert_eq!((short.ops.len(), long.ops.len()), (5, 5));
        let mut painted = Buffer::empty(area);
        short.paint(&mut painted);
        let mut plain = Buffer::empty(area);
        paint_lines(&[Line::from("a"), Line::from("a")], area, &mut plain);
        assert_eq!(painted, plain);
    }

    /// The sparkline painter draws what ratatui's `Sparkline` draws for the same 0..=1000
    /// values with maximum 1000, whole and clipped to single columns.
    #[test]
    fn spark_matches_ratatui_sparkline() {
        let values: Vec<Option<f64>> = (0..70u32)
            .map(|i| (i % 9 != 4).then(|| f64::from((i * 37) % 101)))
            .collect();
        for (area, max, ascii) in [
            (Rect::new(2, 1, 50, 7), 100.0, false),
            (Rect::new(0, 0, 80, 1), 60.0, true),
            (Rect::new(3, 2, 9, 3), 250.0, false),
            (Rect::new(1, 1, 20, 4), 0.0, false),
        ] {
            let style = Style::new().fg(Color::Cyan);
            let full = Rect::new(0, 0, 90, 10);
            let mut want = Buffer::empty(full);
            let w = usize::from(area.width);
            let tail = &values[values.len().saturating_sub(w)..];
            let scale = if max > 0.0 { 1000.0 / max } else { 0.0 };
            let mut data: Vec<u64> = vec![0; w - tail.len()];
            data.extend(
                tail.iter()
                    .map(|v| (v.unwrap_or(0.0) * scale).round() as u64),
            );
            Sparkline::default()
                .data(data)
                .max(1000)
                .bar_set(if ascii { ASCII_BARS } else { bar::NINE_LEVELS })
                .style(style)
                .render(area, &mut want);
            let spark = Part::Spark {
                area,
                ticks: ticks(&values, area.width, area.height, max),
                style,
                ascii,
            };
            let mut got = Buffer::empty(full);
            paint_part(&spark, full, &mut got);
            assert_eq!(got, want, "{area:?}");
            let mut cols = Buffer::empty(full);
            for x in area.left()..area.right() {
                paint_part(&spark, Rect::new(x, 0, 1, 10), &mut cols);
            }
            assert_eq!(cols, want, "by column, {area:?}");
        }
    }

    /// A chart of every kind of part (labels that start left of a column, over a sparkline, a
    /// threshold line and a marker on the blank cells), painted one column at a time
    /// (`paint_column`, as `Screen` repaints a chart), is the chart painted whole.
    #[test]
    fn a_chart_painted_by_column_is_the_chart_painted_whole() {
        let area = Rect::new(2, 1, 24, 5);
        let (cyan, red) = (Style::new().fg(Color::Cyan), Style::new().fg(Color::Red));
        let parts = vec![
            Part::Spark {
                area,
                ticks: (0..24).map(|i| (i * 7) % 41).collect(),
                style: cyan,
                ascii: false,
            },
            Part::HLine {
                area,
                row: 3,
                first: 'T',
                style: red,
            },
            Part::Label {
                x: 2,
                y: 1,
                text: "dirty 1.2G",
                style: red,
            },
            Part::Label {
                x: 20,
                y: 5,
                text: "a label cut at the edge",
                style: cyan,
            },
            Part::Marker {
                area,
                x: 9,
                letter: ('E', red),
                line: ('|', cyan),
            },
        ];
        let full = Rect::new(0, 0, 30, 8);
        let mut whole = Buffer::empty(full);
        for p in &parts {
            paint_part(p, area.intersection(full), &mut whole);
        }
        let mut by_column = Buffer::empty(full);
        for x in area.left()..area.right() {
            paint_column(&parts, area, x, &mut by_column);
        }
        assert_eq!(by_column, whole);
        assert_eq!(whole[(2, 1)].symbol(), "d");
        assert_eq!(whole[(25, 5)].symbol(), "e");
    }

    fn both(lines: &[Line], area: Rect) -> (Buffer, Buffer) {
        let full = Rect::new(0, 0, 30, 6);
        let mut fast = Buffer::empty(full);
        let mut slow = Buffer::empty(full);
        // Pre-existing content with a style, so patching shows up in the comparison.
        for b in [&mut fast, &mut slow] {
            b.set_string(0, 0, "#".repeat(30), Style::new().bg(Color::Blue));
        }
        paint_lines(lines, area, &mut fast);
        Paragraph::new(lines.to_vec()).render(area, &mut slow);
        (fast, slow)
    }

    #[test]
    fn paint_lines_matches_paragraph() {
        let dim = Style::new().fg(Color::DarkGray);
        let bold = Style::new().add_modifier(Modifier::BOLD).fg(Color::Red);
        let lines = vec![
            Line::from(vec![
                Span::styled("Available ", dim),
                Span::styled("21.3G", bold),
            ]),
            Line::from(Span::styled("█".repeat(40), bold)),
            Line::from(vec![
                Span::raw("T→1.0G b→512M Δ 12 kB µs – …·"),
                Span::styled(" tail that is cut", dim),
            ]),
            // Not plain: a wide character, a combining mark, a tab.
            Line::from("wide 漢字 e\u{301} tab\tend"),
            Line::from(vec![Span::raw("x")]).style(Style::new().fg(Color::Green)),
            Line::from("past the bottom"),
        ];
        for area in [
            Rect::new(0, 0, 30, 6),
            Rect::new(3, 1, 12, 3),
            Rect::new(29, 0, 1, 6),
            Rect::new(0, 0, 0, 6),
        ] {
            let (fast, slow) = both(&lines, area);
            assert_eq!(fast, slow, "{area:?}");
            // PartialEq treats an empty cell like " "; compare symbols and styles too.
            for (a, b) in fast.content.iter().zip(&slow.content) {
                assert_eq!(a.symbol(), b.symbol());
                assert_eq!(a.style(), b.style());
            }
        }
    }
}
