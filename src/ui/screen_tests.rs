//! The in-place repaints against whole ones: a retitled block, a relined row and the order of
//! the updates, each checked cell by cell against ratatui's own drawing of the new frame.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::*;

fn frame(title: &str, ascii: bool) -> Frame {
    Frame {
        title: title.to_owned().into(),
        border: Style::new().fg(Color::Blue),
        title_style: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ascii,
    }
}

/// The cells of `area` as ratatui draws `frame`'s block whole, on a screen wider than it.
fn drawn(frame: &Frame, area: Rect) -> Buffer {
    let mut b = Buffer::empty(Rect::new(0, 0, 40, 6));
    frame.block().render(area, &mut b);
    b
}

/// Titles that grow, shrink, reach the right corner, are cut at it, and have wide glyphs, in
/// blocks of several widths (one cut by the screen's edge) and both border sets: after each
/// retitle the screen equals the new block drawn whole, and the updates reported are exactly
/// the cells that changed.
#[test]
fn a_retitled_block_equals_the_block_drawn_whole() {
    let titles = [
        "",
        "ab",
        "abcdefghij",
        "abc",
        "abcdefghijklmnopqrstuvwxyz",
        "abcdefghijklmnopqrstuvwxyz12",
        "abcdefghijklmnopqrstuvwxyz1234567890",
        "x",
        "日本語",
        "ok",
        "",
    ];
    let mut scratch = Buffer::default();
    for area in [
        Rect::new(3, 1, 30, 4),
        Rect::new(3, 1, 45, 4),
        Rect::new(0, 0, 3, 2),
    ] {
        for ascii in [false, true] {
            for pair in titles.windows(2) {
                let (was, now) = (frame(pair[0], ascii), frame(pair[1], ascii));
                let mut screen = drawn(&was, area);
                let mut out = Vec::new();
                retitle(&was, &now, area, &mut scratch, &mut screen, &mut out);
                let want = drawn(&now, area);
                assert_eq!(screen, want, "{pair:?} in {area:?}");
                let changed: Vec<_> = drawn(&was, area)
                    .diff(&want)
                    .into_iter()
                    .map(|(x, y, c)| (x, y, c.clone()))
                    .collect();
                assert_eq!(out, changed, "{pair:?} in {area:?}");
            }
        }
    }
}

fn line(parts: &[(&str, Color)]) -> Line<'static> {
    Line::from(
        parts
            .iter()
            .map(|(t, c)| Span::styled((*t).to_owned(), Style::new().fg(*c)))
            .collect::<Vec<_>>(),
    )
}

/// Rows whose leading spans are equal, whose later spans change text, style or length, and
/// whose line style changes: after each reline the row equals the new line painted whole.
#[test]
fn a_relined_row_equals_the_line_painted_whole() {
    let (g, r) = (Color::Green, Color::Red);
    let lines = [
        line(&[("vda ", g), ("12.0 ", g), ("r/s", g)]),
        line(&[("vda ", g), ("13.5 ", g), ("r/s", g)]),
        line(&[("vda ", g), ("13.5 ", r), ("r/s", g)]),
        line(&[("vda ", g), ("13.5 ", r)]),
        line(&[
            ("vda ", g),
            ("13.5 ", r),
            ("r/s and a tail past the row's end", g),
        ]),
        line(&[
            ("vda ", g),
            ("13.5 ", r),
            ("r/s and a tail past the row's end", g),
        ])
        .style(Style::new().bg(r)),
        line(&[("vdb", g)]),
        line(&[]),
        line(&[("a row longer than the area it is given", g)]),
    ];
    let area = Rect::new(2, 1, 20, 1);
    let paint = |l: &Line| {
        let mut b = Buffer::empty(Rect::new(0, 0, 30, 3));
        canvas::paint_lines(std::slice::from_ref(l), area, &mut b);
        b
    };
    for pair in lines.windows(2) {
        let mut screen = paint(&pair[0]);
        let mut out = Vec::new();
        reline(&pair[0], &pair[1], area, &mut screen, &mut out);
        assert_eq!(screen, paint(&pair[1]), "{:?} to {:?}", pair[0], pair[1]);
        let changed: Vec<_> = paint(&pair[0])
            .diff(&paint(&pair[1]))
            .into_iter()
            .map(|(x, y, c)| (x, y, c.clone()))
            .collect();
        assert_eq!(out, changed);
    }
}

/// Updates come out row by row, left to right, each once, whatever order they went in.
#[test]
fn updates_come_out_in_row_major_order() {
    let cell = |c: char| {
        let mut cell = Cell::EMPTY;
        cell.set_char(c);
        cell
    };
    let updates = vec![
        (5, 2, cell('a')),
        (1, 0, cell('b')),
        (0, 2, cell('c')),
        (7, 0, cell('d')),
        (3, 1, cell('e')),
    ];
    let got: Vec<(u16, u16, String)> = row_major(updates)
        .into_iter()
        .map(|(x, y, c)| (x, y, c.symbol().to_owned()))
        .collect();
    let want = [
        (1, 0, "b"),
        (7, 0, "d"),
        (3, 1, "e"),
        (0, 2, "c"),
        (5, 2, "a"),
    ];
    assert_eq!(got, want.map(|(x, y, s)| (x, y, s.to_owned())));
    let sorted = row_major(vec![(0, 0, cell('x')), (1, 0, cell('y'))]);
    assert_eq!(sorted.len(), 2);
}
