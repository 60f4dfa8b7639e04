//! What the two process tables share (the IO table, `processes`, and the memory table,
//! `processes_memory`): one cell's value and how it is written, the PID and COMMAND columns,
//! a task's wait channel as shown, and the note line over the rows (which of the two tables'
//! notes, and whether the view has room for it). Below both tables, so neither imports the
//! other's file for them.
//!
//! Owns: `Cell`, `cell`, the name and head helpers, `wchan`, the notes and `shown_note`.
//! Must not touch: app state, drawing the tables.

use std::fmt::Write as _;

use ratatui::layout::Rect;

use crate::app::{App, ProcSort};
use crate::fmt::{Bytes, Fit};
use crate::ui::widgets::{pad_to, push_right};

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

/// The note line, when the view at `inner` shows one: the note is for a roomy view; at 80x24
/// the rows matter more.
pub(super) fn shown_note(app: &App, inner: Rect) -> Option<String> {
    let note = if app.ui.proc_sort == ProcSort::Memory {
        memory_note(app, usize::from(inner.width))
    } else {
        io_note(app)
    };
    if inner.height > 8 { note } else { None }
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
fn io_note(app: &App) -> Option<String> {
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

pub(super) fn empty_text(app: &App) -> &'static str {
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

/// What the memory figures are, and how many tasks are stalled in reclaim.
fn memory_note(app: &App, width: usize) -> Option<String> {
    let m = app.model.as_ref()?;
    let rows = m.processes_by_memory.as_ref()?;
    let stalled = rows.iter().filter(|r| r.in_reclaim).count();
    let mut s = String::new();
    if stalled > 0 {
        let _ = write!(s, "{stalled} stalled in reclaim (first); ");
    }
    s.push_str("GROW/s and MAJFLT/s since the last walk; D in a reclaim wchan sorts first");
    // Why COMPms/s is empty, once, where the line has room (spec §13.1).
    let refused = m.task_delays.as_ref().filter(|d| d.state != "on");
    let why = if m.task_delayacct == Some(false) {
        Some("; COMPms/s needs sysctl kernel.task_delayacct=1".to_owned())
    } else {
        refused.map(|d| format!("; COMPms/s: {}", d.why.as_deref().unwrap_or(&d.state)))
    };
    if let Some(w) = why.filter(|w| s.chars().count() + w.chars().count() <= width) {
        s.push_str(&w);
    }
    Some(s)
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
        assert!(!io_note(&app).unwrap_or_default().contains("hidepid"));
        m.hidepid = Some("invisible".into());
        app.model = Some(m);
        let n = io_note(&app).unwrap();
        assert!(
            n.starts_with("/proc is mounted hidepid=invisible: other users' processes are hidden"),
            "{n}"
        );
    }
}
