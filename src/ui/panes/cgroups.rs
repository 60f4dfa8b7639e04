//! Cgroups view: the cgroup v2 tree in the view's sort (`s`: most active first, then by
//! refaults, reclaim scans, major faults, path). For each group: memory.current against
//! memory.high/max, file / dirty / writeback, its own dirty domain (spec §1.8: threshold,
//! freerun and state), memory and io PSI, memory.events since the last sample, io.stat rates
//! and memory.stat's thrashing rates (refaults file/anon, activations, pgscan, pgsteal, major
//! faults; pages per second). Sorted by a thrashing key, those columns come first, beside
//! the memory PSI, the limits and the dirty domain. Enter scopes the processes view to the
//! selected group. On a host without cgroup v2 memory it is one line saying why there are no
//! container dirty limits.
//!
//! Owns: the cgroups table. Must not touch: app state.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::fmt::{Bytes, Fit, Rate};
use crate::model::cgroups::CgroupRow;
use crate::ui::canvas::Canvas;
use crate::ui::panes::dirty::state_level;
use crate::ui::theme;
use crate::ui::widgets::{fitting, frame, level, pad_to, push_right};

const PATH_W: usize = 28;

/// Columns after the path: (title, width, value).
type Getter = fn(&CgroupRow, u64) -> String;
type Column = (&'static str, usize, Getter);

/// The thrashing columns (pages per second).
const REFAULT: Column = ("RFLT/s f/a", 12, |c, _| {
    format!(
        "{}/{}",
        Rate(c.refault_file_per_s),
        Rate(c.refault_anon_per_s)
    )
});
const ACTIVATE: Column = ("ACT/s", 7, |c, _| Rate(c.activate_per_s).to_string());
const SCAN: Column = ("SCAN/s", 7, |c, _| Rate(c.pgscan_per_s).to_string());
const STEAL: Column = ("STEAL/s", 8, |c, _| Rate(c.pgsteal_per_s).to_string());
const MAJFLT: Column = ("MAJF/s", 7, |c, _| Rate(c.pgmajfault_per_s).to_string());

/// Sorted by a thrashing key: refaults, scans, memory PSI, limits and major faults first (all
/// of them in 80 columns), then the dirty domain.
const THRASH_COLUMNS: [Column; 17] = [
    COLUMNS[0],
    REFAULT,
    SCAN,
    COLUMNS[7],
    COLUMNS[6],
    MAJFLT,
    STEAL,
    ACTIVATE,
    COLUMNS[1],
    COLUMNS[2],
    COLUMNS[3],
    COLUMNS[4],
    COLUMNS[5],
    COLUMNS[8],
    COLUMNS[9],
    COLUMNS[10],
    COLUMNS[11],
];

/// The other sorts: the dirty domain first; the refaults where there is room (160 columns).
const COLUMNS: [Column; 17] = [
    ("MEM", 8, |c, _| bytes(c.current_bytes)),
    ("DIRTY", 8, |c, _| bytes(c.dirty_bytes)),
    ("WB", 7, |c, _| bytes(c.writeback_bytes)),
    ("STATE", 20, |c, _| {
        c.state.map_or("-", |s| s.label()).to_owned()
    }),
    ("FREERUN", 8, |c, ps| bytes(c.freerun_pages.map(|p| p * ps))),
    ("THRESH", 8, |c, ps| bytes(c.thresh_pages.map(|p| p * ps))),
    ("HIGH/MAX", 14, |c, _| {
        format!("{}/{}", bytes(c.high_bytes), bytes(c.max_bytes))
    }),
    ("PSI m/io", 10, |c, _| {
        format!("{}/{}", psi(c.memory_psi_avg10), psi(c.io_psi_avg10))
    }),
    ("EV h/m/o", 10, |c, _| {
        format!(
            "{}/{}/{}",
            n(c.events_high),
            n(c.events_max),
            n(c.events_oom)
        )
    }),
    ("RD/s", 8, |c, _| rate(c.read_bytes_per_s)),
    ("WR/s", 8, |c, _| rate(c.write_bytes_per_s)),
    ("FILE", 8, |c, _| bytes(c.file_bytes)),
    REFAULT,
    SCAN,
    STEAL,
    MAJFLT,
    ACTIVATE,
];

fn bytes(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |b| Bytes(b as f64).to_string())
}

fn rate(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |b| Bytes(b).to_string())
}

fn psi(v: Option<f32>) -> String {
    Fit(v.map(f64::from), 1, 4).to_string()
}

fn n(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// The cgroup (its path) on row `row` of the view drawn at `area` (its border included), as
/// `ui::hit` asks; `None` off the rows.
#[must_use]
pub fn cgroup_at(app: &App, area: Rect, row: u16) -> Option<String> {
    let cg = app.model.as_ref()?.cgroups.as_ref()?;
    let inner = ratatui::widgets::Block::bordered().inner(area);
    // The note, then the column titles, then the rows (as `draw` lays them out).
    let first = inner.y + 1 + u16::from(cg.note.is_some());
    let i = row.checked_sub(first)?;
    if row >= inner.bottom() {
        return None;
    }
    app.sorted_cgroups()
        .get(usize::from(i))
        .map(|r| r.path.clone())
}

/// Draws the cgroups view.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let inner = canvas.block(
        area,
        frame(
            app,
            "Cgroups: dirty domains (↑↓ select, Enter: its processes, Esc back)",
            true,
        ),
    );
    let t = theme(app);
    let Some(m) = &app.model else { return };
    let Some(cg) = &m.cgroups else {
        canvas.lines(
            inner,
            vec![Line::from(Span::styled(
                "no cgroup data in this feed (older recording or captured tree)",
                t.dim,
            ))],
        );
        return;
    };
    let width = usize::from(inner.width);
    // 80 columns: a shorter path column, so the state fits.
    let path_w = if width < 100 { 20 } else { PATH_W };
    let avail = width.saturating_sub(path_w);
    let all: &[Column] = if app.ui.cgroup_sort.thrashing() {
        &THRASH_COLUMNS
    } else {
        &COLUMNS
    };
    let cols = fitting(all, avail, |c| c.1);
    let mut lines = Vec::with_capacity(usize::from(inner.height));
    if let Some(note) = cg.note {
        lines.push(Line::from(Span::styled(note, t.warn)));
    }
    if cg.rows.is_empty() && cg.note.is_some() {
        device_caps(app, m, usize::from(inner.height), &mut lines);
        canvas.lines(inner, lines);
        return;
    }
    let mut head = String::from("CGROUP");
    pad_to(&mut head, path_w);
    for c in &cols {
        push_right(&mut head, c.1 - 1, c.0);
        head.push(' ');
    }
    lines.push(Line::from(Span::styled(head, t.title)));
    let rows = app.sorted_cgroups();
    let selected = app
        .ui
        .cgroup_selected
        .as_deref()
        .or(rows.first().map(|r| r.path.as_str()));
    let room = usize::from(inner.height).saturating_sub(lines.len());
    for r in rows.iter().take(room) {
        let mut row = String::with_capacity(width);
        let mut path = r.path.clone();
        if path.chars().count() > path_w - 1 {
            // Keep the tail: the leaf names the container.
            let tail: String = path.chars().rev().take(path_w - 2).collect();
            path = format!("…{}", tail.chars().rev().collect::<String>());
        }
        row.push_str(&path);
        pad_to(&mut row, path_w);
        for c in &cols {
            push_right(&mut row, c.1 - 1, (c.2)(r, m.page_size));
            row.push(' ');
        }
        let mut style = r.state.map_or(t.text, |s| {
            let l = state_level(s);
            if l > 0 { level(app, l) } else { t.text }
        });
        if Some(r.path.as_str()) == selected {
            style = style.patch(t.selected);
        }
        lines.push(Line::from(Span::styled(row, style)));
    }
    if cg.rows.is_empty() && cg.note.is_none() {
        lines.push(Line::from(Span::styled("no cgroups below the root", t.dim)));
    }
    device_caps(app, m, usize::from(inner.height), &mut lines);
    // Spec §1.8: the headroom runs up the ancestors this mount shows; in a cgroup namespace
    // (a container) the host's limits above its root are invisible, and nothing here can tell.
    if !cg.rows.is_empty() && lines.len() < usize::from(inner.height) {
        lines.push(Line::from(Span::styled(
            "note: a container's cgroup namespace hides the host's limits above it",
            t.dim,
        )));
    }
    canvas.lines(inner, lines);
}

/// The devices whose dirty share is capped below 100 % or that are strictlimit (FUSE sets
/// both), in the rows left at the bottom: their writers are throttled on their own share
/// whatever the global domain says (spec §1.9).
fn device_caps(app: &App, m: &crate::model::Model, height: usize, lines: &mut Vec<Line<'static>>) {
    let t = theme(app);
    let caps: Vec<_> = m
        .domains
        .iter()
        .filter(|d| d.kind == crate::model::domains::Kind::Bdi)
        .collect();
    if caps.is_empty() || lines.len() + 2 > height {
        return;
    }
    lines.push(Line::from(Span::styled(
        "devices with a capped dirty share (max_ratio/max_bytes < 100 % or strictlimit):",
        t.dim,
    )));
    let ps = m.page_size;
    for d in caps.into_iter().take(height - lines.len()) {
        let style = d.state.map_or(t.text, |s| {
            let l = state_level(s);
            if l > 0 { level(app, l) } else { t.text }
        });
        let pages = |p: Option<u64>| bytes(p.map(|p| p * ps));
        lines.push(Line::from(Span::styled(
            format!(
                "  bdi {:<8} cap T {} f {}  d+wb {}  {}",
                d.path,
                pages(d.thresh_pages),
                pages(d.freerun_pages),
                pages(d.dirty_writeback()),
                d.state
                    .map_or("(dirty pages known from debugfs wb_stats, root)", |s| s
                        .label())
            ),
            style,
        )));
    }
}
