//! The screen as the terminal shows it, and the cell updates that take it to the next frame.
//!
//! When the view is a canvas laid out like the last one (same operations over the same
//! cells), only the operations that changed are repainted, each on its own cleared cells, and
//! only those cells are compared: an idle screen costs the building of its canvas, not the
//! painting and diffing of every cell. Anything else (the first frame, a new size or layout,
//! the device detail, help or a prompt) is painted whole and diffed whole, as ratatui's
//! `Terminal::draw` does. Either way `front` ends equal to `ui::render` of the frame, but for
//! a chart held: one whose new frame is the one shown scrolled left, its newest column
//! repeating the last shown (`canvas::only_scrolled`), stays as shown for up to `HOLD`
//! frames (issue 52: at idle the charts scrolled every second, and each scroll rewrote every
//! column that differs from its neighbour). Any change in the newest column, a title, a
//! threshold or a marker repaints it at once, so nothing that moves is hidden; what a held
//! chart shows late is where its older bars sit, by at most `HOLD` columns.
//! Owns: the last frame shown. Must not touch: app state, the terminal itself.

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::canvas::{self, Canvas, Frame, Op};
use crate::app::App;

/// One cell update: column, row, new cell.
pub type Update = (u16, u16, Cell);

/// The most frames in a row a chart that only scrolled is held (at 1 Hz it then scrolls
/// every 5 s while nothing moves).
pub const HOLD: u8 = 4;

/// The last frame shown.
#[derive(Debug, Default)]
pub struct Screen {
    /// Frames each chart of `ops` has been held (the same index), and the most allowed.
    held: Vec<u8>,
    hold: u8,
    /// The cells on the terminal.
    front: Buffer,
    /// The operations that painted `front`; empty when it was painted another way.
    ops: Vec<Op>,
    /// A spare buffer for whole frames, kept to reuse its allocation while they come in a row.
    spare: Buffer,
    /// A small buffer for one chart column or a block's top rows, reused frame to frame (kept
    /// apart from `spare`, which shrinking and regrowing would refill cell by cell).
    scratch: Buffer,
}

impl Screen {
    /// A screen that shows nothing yet, and holds charts that only scrolled (`HOLD`).
    #[must_use]
    pub fn new() -> Self {
        Self {
            hold: HOLD,
            ..Self::default()
        }
    }

    /// A screen whose terminal always equals a whole render of the frame: no chart held.
    #[must_use]
    pub fn exact() -> Self {
        Self::default()
    }

    /// Forgets what the terminal shows, as after clearing it: the next frame is drawn whole
    /// against a blank screen of `area`.
    pub fn clear(&mut self, area: Rect) {
        self.front = Buffer::empty(area);
        self.ops.clear();
    }

    /// The cells as last drawn.
    #[must_use]
    pub fn cells(&self) -> &Buffer {
        &self.front
    }

    /// The updates, in row-major order, that turn the last frame into `app`'s frame at `area`.
    pub fn frame(&mut self, app: &App, area: Rect) -> Vec<Update> {
        if area != self.front.area {
            self.clear(area);
        }
        let mut updates = match super::canvas(app, area) {
            Some(c) if same_layout(&self.ops, &c.ops) => {
                // The spare serves runs of whole frames (help, the device detail); once frames
                // are repainted in place again its 370 KB (160x48 cells) are given back.
                if !self.spare.content.is_empty() {
                    self.spare = Buffer::default();
                }
                self.changed(c)
            }
            c => self.whole(app, area, c),
        };
        if app.look.ascii {
            for (_, _, c) in &mut updates {
                super::widgets::ascii_cell(c);
            }
        }
        updates
    }

    /// Repaints and compares only the operations that changed.
    fn changed(&mut self, mut new: Canvas) -> Vec<Update> {
        let mut updates = Vec::new();
        self.held.resize(new.ops.len(), 0);
        for ((old, op), held) in self.ops.iter().zip(&mut new.ops).zip(&mut self.held) {
            if old == op {
                continue;
            }
            if let (Op::Chart { parts: was, .. }, Op::Chart { parts, .. }) = (old, &*op) {
                if *held < self.hold && canvas::only_scrolled(was, parts, usize::from(self.hold)) {
                    // What the terminal shows stays the op to compare the next frame with.
                    *held += 1;
                    op.clone_from(old);
                    continue;
                }
                *held = 0;
            }
            let op = &*op;
            if let (Op::Line { line: was, .. }, Op::Line { line, area }) = (old, op) {
                if canvas::narrow(old) && canvas::narrow(op) {
                    reline(was, line, *area, &mut self.front, &mut updates);
                    continue;
                }
            }
            if let (Op::Block { frame: was, .. }, Op::Block { frame, area }) = (old, op) {
                let same_border = Frame {
                    title: frame.title.clone(),
                    ..was.clone()
                } == *frame;
                if same_border && area.height >= 2 {
                    retitle(
                        was,
                        frame,
                        *area,
                        &mut self.scratch,
                        &mut self.front,
                        &mut updates,
                    );
                    continue;
                }
            }
            if let (Op::Chart { parts: was, .. }, Op::Chart { parts, area }) = (old, op) {
                if let Some(cols) = canvas::changed_columns(was, parts, *area) {
                    for x in cols {
                        recolumn(
                            parts,
                            *area,
                            x,
                            &mut self.scratch,
                            &mut self.front,
                            &mut updates,
                        );
                    }
                    continue;
                }
            }
            let regions = canvas::regions(op);
            let before: Vec<Buffer> = regions.iter().map(|r| take(&mut self.front, *r)).collect();
            canvas::paint(op, &mut self.front);
            let narrow = canvas::narrow(old) && canvas::narrow(op);
            for b in &before {
                if narrow {
                    diff_narrow(b, &self.front, &mut updates);
                } else {
                    let after = copy(&self.front, b.area);
                    updates.extend(
                        b.diff(&after)
                            .into_iter()
                            .map(|(x, y, c)| (x, y, c.clone())),
                    );
                }
            }
        }
        self.ops = new.ops;
        row_major(updates)
    }

    /// Paints the whole frame and compares every cell.
    fn whole(&mut self, app: &App, area: Rect, canvas: Option<Canvas>) -> Vec<Update> {
        let updates = self.painted(area, |next| match &canvas {
            Some(c) => c.paint(next),
            None => super::render(app, area, next),
        });
        self.ops = canvas.map(|c| c.ops).unwrap_or_default();
        updates
    }

    /// The updates that turn the last frame into the one `paint` paints whole at `area` (a
    /// view that is not one app's screen: the fleet's list).
    pub fn painted(&mut self, area: Rect, paint: impl FnOnce(&mut Buffer)) -> Vec<Update> {
        if area != self.front.area {
            self.clear(area);
        }
        let mut next = std::mem::take(&mut self.spare);
        next.resize(area);
        next.reset();
        paint(&mut next);
        let updates = self
            .front
            .diff(&next)
            .into_iter()
            .map(|(x, y, c)| (x, y, c.clone()))
            .collect();
        self.spare = std::mem::replace(&mut self.front, next);
        self.ops.clear();
        self.held.clear();
        updates
    }
}

/// `updates` in row-major order, which lets the terminal backend skip most cursor moves.
/// Each update is a whole cell, so what is sorted is its position and index, packed in one
/// integer, and the updates are then moved once each into their place.
fn row_major(updates: Vec<Update>) -> Vec<Update> {
    if updates.is_sorted_by_key(|(x, y, _)| (*y, *x)) {
        return updates;
    }
    let mut keys: Vec<u64> = updates
        .iter()
        .zip(0u64..)
        .map(|((x, y, _), i)| u64::from(*y) << 48 | u64::from(*x) << 32 | i)
        .collect();
    keys.sort_unstable();
    let mut slots: Vec<Option<Update>> = updates.into_iter().map(Some).collect();
    keys.iter()
        .filter_map(|k| slots[(k & u64::from(u32::MAX)) as usize].take())
        .collect()
}

/// Whether two canvases paint the same cells with operations of the same kinds: then each
/// operation can be repainted alone.
fn same_layout(old: &[Op], new: &[Op]) -> bool {
    old.len() == new.len()
        && old.iter().zip(new).all(|(a, b)| {
            std::mem::discriminant(a) == std::mem::discriminant(b) && area(a) == area(b)
        })
}

fn area(op: &Op) -> Rect {
    match op {
        Op::Block { area, .. } | Op::Line { area, .. } | Op::Chart { area, .. } => *area,
    }
}

/// The cells of `rect` as a buffer of that area; in `buf` they are left blank.
fn take(buf: &mut Buffer, rect: Rect) -> Buffer {
    let rect = rect.intersection(buf.area);
    let mut content = Vec::with_capacity(rect.area() as usize);
    for y in rect.top()..rect.bottom() {
        let i = buf.index_of(rect.x, y);
        content.extend(
            buf.content[i..i + usize::from(rect.width)]
                .iter_mut()
                .map(std::mem::take),
        );
    }
    Buffer {
        area: rect,
        content,
    }
}

/// Brings column `x` of a chart to what `parts` paint there: the column is painted on
/// `scratch` (a one-column buffer, reused) and the cells that differ are set and reported.
fn recolumn(
    parts: &[canvas::Part],
    area: Rect,
    x: u16,
    scratch: &mut Buffer,
    buf: &mut Buffer,
    out: &mut Vec<Update>,
) {
    let col = Rect::new(x, area.y, 1, area.height).intersection(buf.area);
    scratch.resize(col);
    scratch.reset();
    canvas::paint_column(parts, area, x, scratch);
    for (cell, y) in scratch.content.iter().zip(col.top()..col.bottom()) {
        let old = &mut buf[(x, y)];
        if old != cell {
            old.clone_from(cell);
            out.push((x, y, cell.clone()));
        }
    }
}

/// Brings a block's top row from `was`'s title to `frame`'s, the rest of the block being
/// unchanged. Only the cells up to the longer title's end can differ (the border past it is
/// the same line either way), and only those are compared. A title of single-cell
/// characters gives its cells directly (`Frame::top_row`); any other has the block drawn by
/// ratatui on `scratch`, two rows high and only as wide as needed. The cells that differ are
/// set and reported.
fn retitle(
    was: &Frame,
    frame: &Frame,
    area: Rect,
    scratch: &mut Buffer,
    buf: &mut Buffer,
    out: &mut Vec<Update>,
) {
    let area = area.intersection(buf.area);
    let width = |f: &Frame| u16::try_from(Span::raw(f.title.as_ref()).width()).unwrap_or(u16::MAX);
    // The corner, the longer title and one border cell after it.
    let reach = width(was).max(width(frame)).saturating_add(2);
    let kept = if reach < area.width.saturating_sub(1) {
        reach
    } else {
        area.width
    };
    if let Some(cells) = frame.top_row(area.width) {
        let i = buf.index_of(area.x, area.y);
        let row = buf.content[i..i + usize::from(kept)].iter_mut();
        for ((cell, new), x) in row.zip(cells).zip(area.left()..) {
            if *cell != new {
                cell.clone_from(&new);
                out.push((x, area.y, new));
            }
        }
        return;
    }
    // Drawn by ratatui one column wider than kept, that column being scratch's own corner.
    let drawn = if kept < area.width { kept + 1 } else { kept };
    let top = Rect::new(area.x, area.y, drawn, 2).intersection(buf.area);
    scratch.resize(top);
    scratch.reset();
    frame.block().render(top, scratch);
    let row = Rect::new(top.x, top.y, kept.min(top.width), top.height.min(1));
    let before = take(buf, row);
    for (x, c) in (row.left()..row.right()).zip(&scratch.content) {
        buf[(x, row.y)] = c.clone();
    }
    let after = copy(buf, row);
    out.extend(
        before
            .diff(&after)
            .into_iter()
            .map(|(x, y, c)| (x, y, c.clone())),
    );
}

/// Takes a row that shows the plain line `old` to `new` (both `canvas::is_plain`), setting
/// and reporting only the cells whose character or style differs: a plain line's cell is its
/// character in its style, or blank past the text, so nothing else can change. Leading spans
/// equal in text and style paint the same cells, so they are passed whole.
fn reline(old: &Line, new: &Line, area: Rect, buf: &mut Buffer, out: &mut Vec<Update>) {
    let area = area.intersection(buf.area);
    let (mut first, mut skipped) = (0, 0usize);
    if old.style == new.style {
        for (a, b) in old.spans.iter().zip(&new.spans) {
            if a != b {
                break;
            }
            first += 1;
            skipped += a.content.chars().count();
        }
    }
    let mut was = canvas::plain_cells(old.style, old.spans.get(first..).unwrap_or_default());
    let mut now = canvas::plain_cells(new.style, new.spans.get(first..).unwrap_or_default());
    let from = area
        .left()
        .saturating_add(u16::try_from(skipped).unwrap_or(u16::MAX));
    for x in from..area.right() {
        let (a, b) = (was.next(), now.next());
        if a == b {
            if a.is_none() {
                break;
            }
            continue;
        }
        let mut cell = Cell::EMPTY;
        if let Some((c, style)) = b {
            cell.set_char(c).set_style(style);
        }
        buf[(x, area.y)] = cell.clone();
        out.push((x, area.y, cell));
    }
}

/// The cells of `before`'s area that differ in `after`, where every glyph on both sides is one
/// cell wide: then a cell-by-cell comparison is what `Buffer::diff` gives, without measuring
/// every glyph's width.
fn diff_narrow(before: &Buffer, after: &Buffer, out: &mut Vec<Update>) {
    let r = before.area;
    let w = usize::from(r.width);
    for (row, y) in before.content.chunks(w.max(1)).zip(r.top()..r.bottom()) {
        let i = after.index_of(r.x, y);
        for ((old, new), x) in row.iter().zip(&after.content[i..i + w]).zip(r.left()..) {
            if old != new {
                out.push((x, y, new.clone()));
            }
        }
    }
}

/// A copy of the cells of `rect`.
fn copy(buf: &Buffer, rect: Rect) -> Buffer {
    let mut content = Vec::with_capacity(rect.area() as usize);
    for y in rect.top()..rect.bottom() {
        let i = buf.index_of(rect.x, y);
        content.extend_from_slice(&buf.content[i..i + usize::from(rect.width)]);
    }
    Buffer {
        area: rect,
        content,
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::app::{App, Key, Look, Msg};
    use crate::source::HostInfo;

    /// A terminal: the screen's updates applied to a buffer.
    fn apply(term: &mut Buffer, updates: &[Update]) {
        for (x, y, c) in updates {
            term[(*x, *y)] = c.clone();
        }
    }

    fn whole(app: &App, area: Rect) -> Buffer {
        let mut b = Buffer::empty(area);
        super::super::render(app, area, &mut b);
        b
    }

    use crate::source::test_samples as samples;

    /// Every frame, the terminal equals a whole render: through samples, keys that change the
    /// layout, focus and overlays, and sizes, in colour and in `--ascii` without colour.
    #[test]
    fn updates_reproduce_whole_frames() {
        let keys = [
            None,
            Some(Key::Tab),
            Some(Key::Char('s')),
            Some(Key::Char('p')),
            Some(Key::Char('?')),
            Some(Key::Esc),
            Some(Key::Enter),
            Some(Key::Esc),
            Some(Key::Char('M')),
            Some(Key::Esc),
            Some(Key::Down),
            Some(Key::BackTab),
        ];
        for look in [
            Look::default(),
            Look {
                ascii: true,
                mono: true,
            },
        ] {
            for (w, h) in [(160, 48), (80, 24), (120, 40)] {
                let area = Rect::new(0, 0, w, h);
                let mut app = App::new(HostInfo::default(), look, 1.0);
                let mut screen = Screen::exact();
                let mut term = Buffer::empty(area);
                let mut frames = 0;
                for tree in ["live-idle", "live-fio-randwrite", "live-memeaten"] {
                    for (i, s) in samples(tree).into_iter().enumerate() {
                        app.update(Msg::Sample(s));
                        if let Some(k) = keys[i % keys.len()] {
                            app.update(Msg::Key(k));
                        }
                        apply(&mut term, &screen.frame(&app, area));
                        assert_eq!(term, whole(&app, area), "{tree} sample {i} at {w}x{h}");
                        let mut front = screen.cells().clone();
                        if look.ascii {
                            // The front keeps the glyphs; only what is written is ASCII.
                            front
                                .content
                                .iter_mut()
                                .for_each(super::super::widgets::ascii_cell);
                            let all = term.content.iter().all(|c| c.symbol().is_ascii());
                            assert!(all, "--ascii: {tree} sample {i} at {w}x{h}");
                        }
                        assert_eq!(front, term);
                        frames += 1;
                    }
                }
                assert!(frames > 10);
            }
        }
    }

    /// A frame that changes nothing sends nothing; one new sample sends far fewer cells than
    /// the screen has.
    #[test]
    fn unchanged_frames_send_nothing() {
        let area = Rect::new(0, 0, 160, 48);
        let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
        let mut screen = Screen::new();
        let all = samples("live-idle");
        for s in &all[..all.len() - 1] {
            app.update(Msg::Sample(s.clone()));
        }
        assert!(
            screen.frame(&app, area).len() > 1000,
            "first frame is whole"
        );
        assert!(screen.frame(&app, area).is_empty());
        app.update(Msg::Sample(all[all.len() - 1].clone()));
        let n = screen.frame(&app, area).len();
        assert!(n > 0 && n < 1500, "{n} cells for one sample");
    }

    /// A chart that only scrolled (nothing new in its newest column) stays as shown for
    /// `HOLD` frames, then catches up; a change in the newest column, or in its other parts,
    /// repaints it at once, and the terminal then equals the frame.
    #[test]
    fn a_chart_that_only_scrolls_is_held_and_a_change_is_shown_at_once() {
        use super::canvas::Part;
        let area = Rect::new(0, 0, 10, 4);
        let chart = |ticks: Vec<u64>, label: &'static str| {
            let mut c = Canvas::default();
            let parts = vec![
                Part::Spark {
                    area,
                    ticks,
                    style: ratatui::style::Style::default(),
                    ascii: false,
                },
                Part::Label {
                    x: 0,
                    y: 0,
                    text: label,
                    style: ratatui::style::Style::default(),
                },
            ];
            c.chart(area, parts);
            c
        };
        let painted = |c: &Canvas| {
            let mut b = Buffer::empty(area);
            c.paint(&mut b);
            b
        };
        // A spike in column 2 of a flat line, scrolled left one column a frame.
        let spike = |lag: usize| -> Vec<u64> {
            (0..10).map(|i| if i + lag == 2 { 24 } else { 1 }).collect()
        };
        let app = App::new(HostInfo::default(), Look::default(), 1.0);
        let mut screen = Screen::new();
        screen.clear(area);
        let mut term = Buffer::empty(area);
        apply(
            &mut term,
            &screen.whole(&app, area, Some(chart(spike(0), "IOPS"))),
        );
        for lag in 1..=usize::from(HOLD) {
            let sent = screen.changed(chart(spike(lag), "IOPS"));
            assert!(sent.is_empty(), "only scrolled, frame {lag}: held");
            assert_eq!(term, painted(&chart(spike(0), "IOPS")), "as first shown");
        }
        let next = usize::from(HOLD) + 1;
        apply(&mut term, &screen.changed(chart(spike(next), "IOPS")));
        assert_eq!(term, painted(&chart(spike(next), "IOPS")), "caught up");
        // Something new in the newest column: shown at once.
        let mut moved = spike(next + 1);
        moved[9] = 30;
        let sent = screen.changed(chart(moved.clone(), "IOPS"));
        assert!(!sent.is_empty());
        apply(&mut term, &sent);
        assert_eq!(term, painted(&chart(moved.clone(), "IOPS")));
        // A label that changed, the bars only scrolled: at once too.
        let mut scrolled = moved[1..].to_vec();
        scrolled.push(30);
        apply(&mut term, &screen.changed(chart(scrolled.clone(), "IOPS!")));
        assert_eq!(term, painted(&chart(scrolled, "IOPS!")));
        // Not a scroll: the bars changed in the middle.
        let (a, mut b) = (spike(0), spike(1));
        b[5] = 9;
        let parts = |c: Canvas| match c.ops.into_iter().next() {
            Some(Op::Chart { parts, .. }) => parts,
            _ => unreachable!(),
        };
        let (a, b) = (parts(chart(a, "x")), parts(chart(b, "x")));
        assert!(!canvas::only_scrolled(&a, &b, 4));
        assert!(canvas::only_scrolled(&a, &parts(chart(spike(3), "x")), 4));
        assert!(
            !canvas::only_scrolled(&a, &parts(chart(spike(3), "x")), 2),
            "further than asked"
        );
    }

    /// The operations of every canvas own disjoint cells, and each paints only its own.
    #[test]
    fn operations_own_disjoint_cells() {
        let area = Rect::new(0, 0, 160, 48);
        let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
        for s in samples("live-fio-randwrite") {
            app.update(Msg::Sample(s));
            let c = super::super::canvas(&app, area).unwrap();
            let mut owner = Buffer::empty(area);
            let mut seen = vec![None; area.area() as usize];
            for (i, op) in c.ops.iter().enumerate() {
                for r in canvas::regions(op) {
                    for y in r.top()..r.bottom() {
                        for x in r.left()..r.right() {
                            let k = owner.index_of(x, y);
                            assert_eq!(seen[k], None, "{op:?} overlaps at ({x},{y})");
                            seen[k] = Some(i);
                        }
                    }
                }
                let mut alone = Buffer::empty(area);
                canvas::paint(op, &mut alone);
                for (k, cell) in alone.content.iter().enumerate() {
                    if *cell != Cell::EMPTY {
                        assert_eq!(seen[k], Some(i), "{op:?} paints outside its cells");
                    }
                }
                canvas::paint(op, &mut owner);
            }
        }
    }
}

#[cfg(test)]
#[path = "screen_tests.rs"]
mod in_place;
