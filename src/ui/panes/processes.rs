//! Processes view: who dirties, reads, waits, htop-like but about IO. One row a process:
//! dirtied/s (write_bytes, counted when pages are dirtied), storage reads/s (read_bytes),
//! syscall read and write/s (rchar/wchar), a cache-hit estimate, IO wait ms/s (delay
//! accounting), state, wchan and cgroup. Sorted by the chosen column (by default bytes to or
//! from storage; the memory sort draws the memory table, `processes_memory`); scoped to a
//! cgroup when one was chosen in the cgroups view. A task's kernel stack shows over it on
//! `K`; `a` shows command lines in place of command names (`App::cmdline_of`). On `r` the
//! rows are rolled up by command (`Model::commands`: a count in place of the pid, the
//! command's bytes over the walk). A process whose io jumped with children it reaped reads
//! `reaped` in its byte-rate columns: that jump is not its rate. While the sync tracer
//! measures (`model::sync`), `SYNC/s` and `SYNCms` (mean/max) give each process's fsync,
//! fdatasync, sync_file_range and msync calls: the victim of a flood shows there.
//!
//! Owns: the processes table. Must not touch: app state.

use std::fmt::Write as _;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, ProcSort};
use crate::fmt::{Bytes, Fit};
use crate::model::procs::ProcRow as Process;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{fitting, frame, pad_to, push_right};

/// Columns after pid and command, in priority order: (title, width, value, sort key).
/// Byte rates are printed with a unit (`12.3M`), milliseconds and percentages as numbers.
type Getter = fn(&Process) -> Cell;
/// (title, width, value, sort key, text column).
type Column = (&'static str, usize, Getter, Option<ProcSort>, bool);
const COLUMNS: [Column; 11] = [
    (
        "DIRTIED/s",
        10,
        |p| Cell::Bytes(p.dirtied_bytes_per_s),
        Some(ProcSort::Dirtied),
        false,
    ),
    (
        "READ/s",
        9,
        |p| Cell::Bytes(p.read_bytes_per_s),
        Some(ProcSort::Read),
        false,
    ),
    (
        "IOWAIT",
        8,
        |p| Cell::Num(p.iowait_ms_per_s, 0),
        Some(ProcSort::IoWait),
        false,
    ),
    // Shown only while the sync tracer measures (`sync_shown`).
    ("SYNC/s", 7, |p| Cell::Num(p.fsync_per_s, 0), None, false),
    (
        "SYNCms",
        11,
        |p| Cell::Text(crate::fmt::mean_max_ms(p.fsync_mean_ms, p.fsync_max_ms)),
        Some(ProcSort::Sync),
        false,
    ),
    ("S", 2, |p| Cell::Text(p.state.to_string()), None, true),
    (
        "WCHAN",
        20,
        |p| Cell::Text(wchan(p.wchan.as_deref()).to_owned()),
        None,
        true,
    ),
    (
        "RCHAR/s",
        9,
        |p| Cell::Bytes(p.rchar_per_s),
        Some(ProcSort::Rchar),
        false,
    ),
    (
        "WCHAR/s",
        9,
        |p| Cell::Bytes(p.wchar_per_s),
        Some(ProcSort::Wchar),
        false,
    ),
    (
        "HIT%est",
        8,
        |p| Cell::Num(p.cache_hit_est_pct, 0),
        None,
        false,
    ),
    (
        "CGROUP",
        32,
        |p| Cell::Text(p.cgroup.clone().unwrap_or_default()),
        None,
        true,
    ),
];

/// Whether the sync columns are shown: the sync tracer measures.
fn sync_shown(app: &App) -> bool {
    let sync = app.model.as_ref().and_then(|m| m.sync.as_ref());
    sync.is_some_and(crate::model::sync::Sync::measured)
}

/// A task's wait channel as shown: `-` while it runs (the kernel prints `0`) or unreadable.
#[must_use]
pub fn wchan(w: Option<&str>) -> &str {
    match w {
        None | Some("" | "0") => "-",
        Some(w) => w,
    }
}

/// One table cell's value.
pub(super) enum Cell {
    Bytes(Option<f64>),
    Num(Option<f64>, usize),
    Text(String),
}

pub(super) const PID_W: usize = 8;
const COMM_W: usize = 16;

/// The command column's width: wider for command lines, when the pane has room.
pub(super) fn comm_w(app: &App, width: usize) -> usize {
    if app.ui.cmdline {
        COMM_W.max(width / 3)
    } else {
        COMM_W
    }
}

/// A row's name: its command line while `a` is on and one is known (`App::cmdline_of`), else
/// its comm. `pid`: `None` for a rolled-up row (a command, not a process).
pub(super) fn name(app: &App, pid: Option<u32>, comm: &str, w: usize) -> String {
    let line = pid
        .filter(|_| app.ui.cmdline)
        .and_then(|p| app.cmdline_of(p));
    let mut s = line.unwrap_or(comm).to_owned();
    if let Some((i, _)) = s.char_indices().nth(w.saturating_sub(1)) {
        s.truncate(i);
    }
    s
}

/// The pane's title: scope, sort and where the figures come from.
fn title(app: &App, width: u16) -> String {
    let memory = app.ui.proc_sort == ProcSort::Memory;
    let mut s = String::from(if memory {
        "Processes by memory"
    } else {
        "Processes by IO"
    });
    if let Some(c) = &app.ui.scope {
        let _ = write!(s, " in {c}");
    }
    if let Some(ms) = app.model.as_ref().and_then(|m| m.walk_interval_ms) {
        // The rates are over the walk's interval, which the gate paces (`sample::Pace`).
        let _ = write!(s, " over {} s", ((ms + 500) / 1000).max(1));
    }
    if app.ui.proc_rollup {
        s.push_str(" by command (r by pid; Esc back)");
        return s;
    }
    // The key hints go first when the title would not fit the pane's top border.
    let by = app.ui.proc_sort.label();
    let room = usize::from(width).saturating_sub(2);
    let full = format!(" (sort {by}; s sorts, a cmdline, K stack, Esc back)");
    let short = format!(" (sort {by}; Esc back)");
    let hint = [full, short]
        .into_iter()
        .find(|h| s.chars().count() + h.chars().count() <= room)
        .unwrap_or_else(|| format!(" (sort {by})"));
    s.push_str(&hint);
    s
}

/// The rolled-up rows as rows of the table: the count in `pid`, rates per command.
fn command_rows(app: &App) -> Vec<Process> {
    let commands = app.model.as_ref().and_then(|m| m.commands.as_ref());
    commands
        .into_iter()
        .flatten()
        .map(|c| Process {
            pid: u32::try_from(c.pids).unwrap_or(u32::MAX),
            comm: c.comm.clone(),
            dirtied_bytes_per_s: c.dirtied_bytes_per_s,
            read_bytes_per_s: c.read_bytes_per_s,
            rchar_per_s: c.rchar_per_s,
            wchar_per_s: c.wchar_per_s,
            state: ' ',
            ..Process::default()
        })
        .collect()
}

/// Whether a column is one of the byte rates a reaped jump leaves blank.
fn byte_rate(sort: Option<ProcSort>) -> bool {
    matches!(
        sort,
        Some(ProcSort::Dirtied | ProcSort::Read | ProcSort::Rchar | ProcSort::Wchar)
    )
}

/// Draws the processes view, or the kernel stack asked for in its place.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    if let Some((pid, text)) = &app.ui.stack {
        stack(app, *pid, text, area, canvas);
        return;
    }
    let inner = canvas.block(area, frame(app, title(app, area.width), true));
    if app.ui.proc_sort == ProcSort::Memory {
        super::processes_memory::draw(app, inner, canvas);
        return;
    }
    let t = theme(app);
    let width = usize::from(inner.width);
    let comm_w = comm_w(app, width);
    let avail = width.saturating_sub(PID_W + comm_w);
    let sync = sync_shown(app);
    let shown: Vec<Column> = (COLUMNS.iter())
        .filter(|c| sync || !c.0.starts_with("SYNC"))
        .copied()
        .collect();
    let cols = fitting(&shown, avail, |c| c.1);
    let mut lines = Vec::with_capacity(usize::from(inner.height));
    lines.push(Line::from(Span::styled(
        head(app, &cols, width, comm_w),
        t.title,
    )));
    if let Some(note) = shown_note(app, inner) {
        lines.push(Line::from(Span::styled(note, t.dim)));
    }
    let rolled = if app.ui.proc_rollup {
        command_rows(app)
    } else {
        Vec::new()
    };
    let procs: Vec<&Process> = if app.ui.proc_rollup {
        rolled.iter().collect()
    } else {
        app.sorted_processes()
    };
    let selected = (!app.ui.proc_rollup).then(|| app.selected_pid()).flatten();
    let room = usize::from(inner.height).saturating_sub(lines.len());
    for p in procs.iter().take(room) {
        let mut row = String::with_capacity(width);
        if app.ui.proc_rollup {
            push_right(&mut row, PID_W - 1, format!("{}x", p.pid));
        } else {
            push_right(&mut row, PID_W - 1, p.pid);
        }
        row.push(' ');
        let pid = (!app.ui.proc_rollup).then_some(p.pid);
        row.push_str(&name(app, pid, &p.comm, comm_w));
        pad_to(&mut row, PID_W + comm_w);
        for c in &cols {
            // The sync figures are the tracer's, which sees every task: never "no perm".
            let from_proc = c.3.is_some() && c.3 != Some(ProcSort::Sync);
            let v = if p.no_permission && !c.4 && from_proc {
                Cell::Text("no perm".into())
            } else if p.reaped_children && p.dirtied_bytes_per_s.is_none() && byte_rate(c.3) {
                Cell::Text("reaped".into())
            } else {
                (c.2)(p)
            };
            cell(&mut row, c.1, v, c.4);
        }
        let mut style = if p.state == 'D' {
            t.warn
        } else if p.no_permission {
            t.dim
        } else {
            t.text
        };
        if Some(p.pid) == selected {
            style = style.patch(t.selected);
        }
        lines.push(Line::from(Span::styled(row, style)));
    }
    if procs.is_empty() {
        lines.push(Line::from(Span::styled(empty_text(app), t.dim)));
    }
    canvas.lines(inner, lines);
}

/// The note line, when the view at `inner` shows one: the note is for a roomy view; at 80x24
/// the rows matter more.
pub(super) fn shown_note(app: &App, inner: Rect) -> Option<String> {
    let note = if app.ui.proc_sort == ProcSort::Memory {
        super::processes_memory::note(app)
    } else {
        note(app)
    };
    if inner.height > 8 { note } else { None }
}

/// The process on row `row` of the view drawn at `area` (its border included), as `ui::hit`
/// asks; `None` off the rows or while a kernel stack is shown.
#[must_use]
pub fn process_at(app: &App, area: Rect, row: u16) -> Option<u32> {
    if app.ui.stack.is_some() || app.ui.proc_rollup {
        return None;
    }
    let inner = ratatui::widgets::Block::bordered().inner(area);
    let first = inner.y + 1 + u16::from(shown_note(app, inner).is_some());
    let i = row.checked_sub(first)?;
    if row >= inner.bottom() {
        return None;
    }
    app.shown_pids().get(usize::from(i)).copied()
}

fn head(app: &App, cols: &[&Column], width: usize, comm_w: usize) -> String {
    let pid = if app.ui.proc_rollup { "PIDS" } else { "PID" };
    let mut head = start_head(width, comm_w, pid);
    for (title, w, _, sort, text) in cols {
        // The storage sort is dirtied + read: both are marked.
        let storage = app.ui.proc_sort == ProcSort::Storage
            && matches!(sort, Some(ProcSort::Dirtied | ProcSort::Read));
        let mark = if *sort == Some(app.ui.proc_sort) || storage {
            '*'
        } else {
            ' '
        };
        if *text {
            let start = head.chars().count();
            head.push_str(title);
            pad_to(&mut head, start + w);
        } else {
            push_right(&mut head, w - 1, title);
            head.push(mark);
        }
    }
    head
}

/// The head's PID (titled `pid`) and COMMAND titles.
pub(super) fn start_head(width: usize, comm_w: usize, pid: &str) -> String {
    let mut head = String::with_capacity(width);
    push_right(&mut head, PID_W - 1, pid);
    head.push(' ');
    head.push_str("COMMAND");
    pad_to(&mut head, PID_W + comm_w);
    head
}

/// A line on what the figures mean here: delay accounting off, no permission, a walk yet to
/// come.
fn note(app: &App) -> Option<String> {
    let m = app.model.as_ref()?;
    let hidden = m
        .processes
        .iter()
        .flatten()
        .filter(|p| p.no_permission)
        .count();
    let mut parts = Vec::new();
    if let Some(h) = &m.hidepid {
        parts.push(format!(
            "/proc is mounted hidepid={h}: other users' processes are hidden (run as root)"
        ));
    }
    if m.task_delayacct == Some(false) {
        parts.push(
            "IOWAIT needs delay accounting: sysctl kernel.task_delayacct=1 (counts tasks \
             started afterwards)"
                .to_owned(),
        );
    } else if m.delayacct_switched_on {
        parts.push("IOWAIT - for tasks started before delay accounting was switched on".to_owned());
    }
    if let Some(sync) = &m.sync {
        use crate::parse::sync_calls::SyncSource;
        use crate::parse::trace::TraceState;
        match (sync.state, sync.source) {
            (TraceState::Armed, _) if sync.lost > 0 => parts.push(format!(
                "SYNC undercounts: {} sync events lost (more calls than the buffer holds)",
                sync.lost
            )),
            (TraceState::Armed, _) => parts.push(
                "SYNC: fsync, fdatasync, sync_file_range, msync calls/s, mean/max ms (O_SYNC \
                 writes wait in IOWAIT)"
                    .to_owned(),
            ),
            (_, SyncSource::Delayacct) => parts.push(
                "no syscall tracepoints: sync waits show only in IOWAIT (delay accounting)"
                    .to_owned(),
            ),
            (TraceState::NotRoot, _) => parts.push("SYNC latency needs root".to_owned()),
            _ => {}
        }
    }
    if m.processes
        .iter()
        .flatten()
        .any(|p| p.reaped_children && p.dirtied_bytes_per_s.is_none())
    {
        parts.push("reaped: IO of children it waited for, not its own rate".to_owned());
    }
    match &m.exits {
        Some(e) if e.source == "taskstats" => {
            if m.processes.iter().flatten().any(|p| p.exited) {
                parts.push("X: exited since the last walk, its IO from its exit record".into());
            }
            if e.lost > 0 {
                parts.push(format!("{} exit records lost (buffer full)", e.lost));
            }
        }
        Some(e) if e.state != "off" => parts.push(format!(
            "exits not seen ({}): an exited process's IO shows in its parent",
            e.why.as_deref().unwrap_or(&e.state)
        )),
        _ => {}
    }
    if hidden > 0 {
        parts.push(format!(
            "{hidden} without permission to read their io (run as root)"
        ));
    }
    if m.processes.is_some() {
        parts.push("HIT%est = 1 - read_bytes/rchar: pipes and sockets count in rchar".to_owned());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn empty_text(app: &App) -> &'static str {
    if app.model.is_none() {
        "waiting for the first sample"
    } else {
        "no process did IO in the last walk (walks run every 2 s while this view is open, \
         every 10 s while the machine is quiet)"
    }
}

pub(super) fn cell(row: &mut String, w: usize, c: Cell, text_column: bool) {
    match c {
        Cell::Text(s) if !text_column => {
            push_right(row, w - 1, s);
            row.push(' ');
        }
        Cell::Bytes(v) => {
            let s = v.map_or_else(|| "-".to_owned(), |b| Bytes(b).to_string());
            push_right(row, w - 1, s);
            row.push(' ');
        }
        Cell::Num(v, d) => {
            push_right(row, w - 1, Fit(v, d, w - 1));
            row.push(' ');
        }
        Cell::Text(s) => {
            let mut s = s;
            s.truncate(w - 1);
            let start = row.chars().count();
            row.push_str(&s);
            pad_to(row, start + w);
        }
    }
}

/// The kernel stack of a task, in the view's place.
fn stack(app: &App, pid: u32, text: &str, area: Rect, canvas: &mut Canvas) {
    let t = theme(app);
    let lines: Vec<Line<'static>> = text
        .lines()
        .map(|l| Line::from(Span::styled(l.to_owned(), t.text)))
        .collect();
    let inner = canvas.block(
        area,
        frame(app, format!("Kernel stack of {pid} (Esc closes)"), true),
    );
    canvas.lines(inner, lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under `hidepid=` the pane says that others' processes are hidden (issue 51).
    #[test]
    fn the_note_says_when_hidepid_hides_others_processes() {
        let mut app = App::new(
            crate::source::HostInfo::default(),
            crate::app::Look::default(),
            1.0,
        );
        for s in crate::source::test_samples("live-idle") {
            app.update(crate::app::Msg::Sample(s));
        }
        let mut m = app.model.clone().unwrap();
        m.processes = Some(Vec::new());
        app.model = Some(m.clone());
        assert!(!note(&app).unwrap_or_default().contains("hidepid"));
        m.hidepid = Some("invisible".into());
        app.model = Some(m);
        let n = note(&app).unwrap();
        assert!(
            n.starts_with("/proc is mounted hidepid=invisible: other users' processes are hidden"),
            "{n}"
        );
    }
}
