//! The processes view under the memory sort: who holds the memory (resident, anon, swapped),
//! who grows it, who faults pages in from storage, and who is stalled in reclaim (first, in
//! the warning colour), from `Model::processes_by_memory` (`model::procs_memory`).
//!
//! Owns: the memory table (its note line is `proc_cells`'s). Must not touch: app state, the IO
//! table.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::proc_cells::{Cell, PID_W, cell, comm_w, name, shown_note, start_head, wchan};
use crate::app::App;
use crate::model::procs_memory::MemRow;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{fitting, pad_to, push_right};

type Getter = fn(&MemRow) -> Cell;
/// (title, width, value, text column), in priority order: what fits at 80 columns first.
type Column = (&'static str, usize, Getter, bool);
const COLUMNS: [Column; 10] = [
    ("RSS", 8, |r| bytes(r.rss_bytes), false),
    ("ANON", 8, |r| bytes(r.anon_bytes), false),
    (
        "GROW/s",
        8,
        |r| Cell::Bytes(r.rss_growth_bytes_per_s),
        false,
    ),
    ("MAJFLT/s", 9, |r| Cell::Num(r.majflt_per_s, 0), false),
    ("S", 2, |r| Cell::Text(r.state.to_string()), true),
    (
        "WCHAN",
        19,
        |r| Cell::Text(wchan(r.wchan.as_deref()).to_owned()),
        true,
    ),
    ("SWAP", 8, |r| bytes(r.swap_bytes), false),
    (
        "OOMADJ",
        7,
        |r| Cell::Num(r.oom_score_adj.map(f64::from), 0),
        false,
    ),
    // Time in direct or memcg reclaim (the reclaim tracer, while armed).
    ("RECLms/s", 9, |r| Cell::Num(r.reclaim_ms_per_s, 0), false),
    // Time in direct compaction (delay accounting, spec §13.1, while it is on and read).
    ("COMPms/s", 9, |r| Cell::Num(r.compact_ms_per_s, 0), false),
];

fn bytes(b: Option<u64>) -> Cell {
    Cell::Bytes(b.map(|b| b as f64))
}

/// Draws the memory table into the view's `inner` area.
pub(super) fn draw(app: &App, inner: Rect, canvas: &mut Canvas) {
    let t = theme(app);
    let width = usize::from(inner.width);
    let comm_w = comm_w(app, width);
    let cols = fitting(&COLUMNS, width.saturating_sub(PID_W + comm_w), |c| c.1);
    let mut head = start_head(width, comm_w, "PID");
    for (title, w, _, text) in &cols {
        if *text {
            let start = head.chars().count();
            head.push_str(title);
            pad_to(&mut head, start + w);
        } else {
            push_right(&mut head, w - 1, title);
            head.push(if *title == "RSS" { '*' } else { ' ' });
        }
    }
    let mut lines = vec![Line::from(Span::styled(head, t.title))];
    if let Some(n) = shown_note(app, inner) {
        lines.push(Line::from(Span::styled(n, t.dim)));
    }
    let rows = app.sorted_memory();
    let selected = app.selected_pid();
    let room = usize::from(inner.height).saturating_sub(lines.len());
    for r in rows.iter().take(room) {
        let mut row = String::with_capacity(width);
        push_right(&mut row, PID_W - 1, r.pid);
        row.push(' ');
        row.push_str(&name(app, Some(r.pid), &r.comm, comm_w));
        pad_to(&mut row, PID_W + comm_w);
        for c in &cols {
            cell(&mut row, c.1, (c.2)(r), c.3);
        }
        let mut style = if r.in_reclaim || r.state == 'D' {
            t.warn
        } else {
            t.text
        };
        if Some(r.pid) == selected {
            style = style.patch(t.selected);
        }
        lines.push(Line::from(Span::styled(row, style)));
    }
    if rows.is_empty() {
        let text = if app.model.is_none() {
            "waiting for the first sample"
        } else {
            "no process walk yet (walks run every 2 s while this view is open, every 10 s \
             while the machine is quiet)"
        };
        lines.push(Line::from(Span::styled(text, t.dim)));
    }
    canvas.lines(inner, lines);
}
