//! The memory and dirty panes in a scope (issue 54): the group's memory against its tightest
//! limit, its events, refaults, PSI and io.max; its own dirty domain with the kernel's
//! threshold beside it; the host's figures after, each labelled `host`.
//!
//! Owns: those two panes in a scope (`ui` draws them in place of `memory` and `dirty`). Must
//! not touch: app state, the machine view's lines.

use std::fmt::Write as _;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Focus};
use crate::fmt::{Bytes, Dash};
use crate::model::Model;
use crate::model::scope::ScopeView;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{frame, gauge, kv, level, stacked_bar};

/// Draws the memory and dirty panes of a scope; `false` (nothing drawn) in the machine view.
pub fn draw(app: &App, memory: Rect, dirty: Rect, canvas: &mut Canvas) -> bool {
    let Some((m, v, path)) = app.model.as_ref().and_then(|m| {
        let v = m.scope.as_ref()?;
        Some((m, v, v.path.as_deref()?))
    }) else {
        return false;
    };
    let focus = |f: Focus| app.ui.focus == f;
    let inner = canvas.block(
        memory,
        frame(app, format!("Memory cgroup {path}"), focus(Focus::Memory)),
    );
    let lines = memory_lines(app, m, v, inner.width);
    canvas.lines(inner, lines);
    let inner = canvas.block(
        dirty,
        frame(app, format!("Dirty cgroup {path}"), focus(Focus::Dirty)),
    );
    let lines = dirty_lines(app, m, v, inner.width);
    canvas.lines(inner, lines);
    true
}

/// Bytes or `-`.
fn b(v: Option<u64>) -> Dash<Bytes> {
    Dash(v.map(|v| Bytes(v as f64)))
}

/// The memory pane's lines in a scope, `height` rows at most.
#[must_use]
pub fn memory_lines(app: &App, m: &Model, v: &ScopeView, width: u16) -> Vec<Line<'static>> {
    let t = theme(app);
    let mut out = Vec::with_capacity(8);
    // The binding limit: the lower of memory.max and memory.high.
    let limit = match (v.memory_max_bytes, v.memory_high_bytes) {
        (Some(a), Some(h)) => Some(a.min(h)),
        (a, h) => a.or(h),
    };
    let used = v.memory_current_bytes;
    let share = used.zip(limit).map(|(u, l)| u as f64 / l.max(1) as f64);
    let lvl = share.map_or(0, |s| u8::from(s >= 0.8) + u8::from(s >= 0.9));
    let mut first = vec![
        Span::styled("In use ", t.dim),
        Span::styled(b(used).to_string(), level(app, lvl)),
    ];
    match (limit, share) {
        (Some(l), Some(s)) => first.push(Span::styled(
            format!(" {:.0}% of {}", s * 100.0, Bytes(l as f64)),
            t.dim,
        )),
        _ => first.push(Span::styled(" no limit", t.dim)),
    }
    out.push(Line::from(first));
    let z = |x: Option<u64>| x.unwrap_or(0);
    let dirty = z(v.dirty_bytes);
    let wb = z(v.writeback_bytes);
    let file = z(v.file_bytes).saturating_sub(dirty + wb);
    let total = limit.unwrap_or_else(|| z(used)).max(z(used));
    let seg = [
        (z(v.anon_bytes), 'a'),
        (file, 'f'),
        (dirty, 'd'),
        (wb, 'w'),
        (total.saturating_sub(z(used)), '.'),
    ];
    out.push(stacked_bar(app, width, total, &seg));
    let mut l = Vec::with_capacity(12);
    l.extend(kv(app, "anon", b(v.anon_bytes)));
    l.extend(kv(app, " file", b(v.file_bytes)));
    l.extend(kv(app, " dirty", b(v.dirty_bytes)));
    l.extend(kv(app, " wb", b(v.writeback_bytes)));
    out.push(Line::from(l));
    let mut l = Vec::with_capacity(12);
    l.extend(kv(app, "max", b(v.memory_max_bytes)));
    l.extend(kv(app, " high", b(v.memory_high_bytes)));
    if let Some(g) = &v.limit_group {
        l.extend(kv(app, " set in", g));
    }
    out.push(Line::from(l));
    let row = v.interval.as_ref();
    let ev = |x: Option<u64>| Dash(x);
    let mut l = Vec::with_capacity(12);
    l.extend(kv(app, "events high", ev(v.events.and_then(|e| e.high))));
    l.extend(kv(app, " max", ev(v.events.and_then(|e| e.max))));
    l.extend(kv(app, " oom", ev(v.events.and_then(|e| e.oom))));
    l.extend(kv(app, " kill", ev(v.events.and_then(|e| e.oom_kill))));
    out.push(Line::from(l));
    let rate = |x: Option<f64>| Dash(x.map(|r| format!("{r:.0}/s")));
    let psi = |x: Option<f32>| Dash(x.map(|p| format!("{p:.1}")));
    let mut l = Vec::with_capacity(12);
    l.extend(kv(
        app,
        "refault",
        rate(row.and_then(|r| r.refault_file_per_s)),
    ));
    l.extend(kv(app, " scan", rate(row.and_then(|r| r.pgscan_per_s))));
    l.extend(kv(
        app,
        " PSI mem",
        psi(row.and_then(|r| r.memory_psi_avg10)),
    ));
    l.extend(kv(app, " io", psi(row.and_then(|r| r.io_psi_avg10))));
    out.push(Line::from(l));
    let bps = |x: Option<f64>| Dash(x.map(|r| crate::fmt::PerSec(Bytes(r))));
    let mut l = Vec::with_capacity(6);
    l.extend(kv(
        app,
        "io.stat read",
        bps(row.and_then(|r| r.read_bytes_per_s)),
    ));
    l.extend(kv(
        app,
        " write",
        bps(row.and_then(|r| r.write_bytes_per_s)),
    ));
    out.push(Line::from(l));
    let mem = &m.memory;
    let avail = mem.MemAvailable.or(mem.derived_MemAvailable);
    out.push(Line::from(Span::styled(
        format!(
            "host Available {} of {}",
            Dash(avail.map(Bytes::kb)),
            Bytes::kb(mem.MemTotal)
        ),
        t.dim,
    )));
    out
}

/// The dirty pane's lines in a scope: its own domain first, the host's global one after.
#[must_use]
pub fn dirty_lines(app: &App, m: &Model, v: &ScopeView, width: u16) -> Vec<Line<'static>> {
    let t = theme(app);
    let ps = m.page_size;
    let pg = |p: Option<u64>| Dash(p.map(|p| Bytes::pages(p, ps)));
    let mut out = Vec::with_capacity(8);
    let Some(d) = &v.domain else {
        out.push(Line::from(Span::styled(
            "no dirty domain for this group (no memory.stat read)",
            t.dim,
        )));
        host_lines(app, m, width, &mut out);
        return out;
    };
    let lvl = d.state.map_or(0, super::dirty::state_level);
    let state = d.state.map_or("-", crate::model::dirty::State::label);
    let mut first = vec![Span::styled(state, level(app, lvl))];
    if let Some(p) = d.paced() {
        first.push(Span::styled(format!(" ({p})"), t.dim));
    }
    out.push(Line::from(first));
    if let (Some(th), Some(bg), Some(fr), Some(now)) = (
        d.thresh_pages,
        d.bg_thresh_pages,
        d.freerun_pages,
        d.dirty_writeback(),
    ) {
        let max = (th + th / 10).max(now);
        out.push(gauge(
            app,
            width,
            now,
            max,
            &[(bg, 'b'), (fr, 'f'), (th, 'T')],
            level(app, lvl),
        ));
    }
    let mut l = Vec::with_capacity(12);
    l.extend(kv(app, "d+wb", pg(d.dirty_writeback())));
    l.extend(kv(app, " b", pg(d.bg_thresh_pages)));
    l.extend(kv(app, " f", pg(d.freerun_pages)));
    l.extend(kv(app, " T", pg(d.thresh_pages)));
    out.push(Line::from(l));
    let mut l = Vec::with_capacity(6);
    l.extend(kv(app, "kernel T", pg(d.kernel_thresh_pages)));
    l.extend(kv(app, " avail", pg(d.avail_pages)));
    out.push(Line::from(l));
    if !v.io_max.is_empty() {
        out.push(Line::from(Vec::from(kv(
            app,
            "io.max",
            v.io_max.join("; "),
        ))));
    }
    host_lines(app, m, width, &mut out);
    if let Some(text) = missing_line(&v.missing, width) {
        out.push(Line::from(Span::styled(text, t.dim)));
    }
    out
}

/// What the scope could not read (`model::scope`'s `missing`), by file name, with what it
/// would take: `not read: tracing (root), wb_stats (root, 6.10+)`; where that is wider than
/// `width`, `needs root: tracing, wb_stats` (and `+N` others); `None`: nothing missing.
#[must_use]
pub fn missing_line(missing: &[String], width: u16) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let files: Vec<(&str, bool, bool)> = missing
        .iter()
        .map(|m| {
            let (file, why) = m.split_once(": ").unwrap_or((m.as_str(), ""));
            let name = file.rsplit('/').next().unwrap_or(file);
            let root = why.contains("need root") || why.contains("needs root");
            (name, root, why.contains("6.10+"))
        })
        .collect();
    let full: Vec<String> = files
        .iter()
        .map(|&(name, root, v610)| match (root, v610) {
            (true, true) => format!("{name} (root, 6.10+)"),
            (true, false) => format!("{name} (root)"),
            (false, _) => name.to_owned(),
        })
        .collect();
    let full = format!("not read: {}", full.join(", "));
    if full.chars().count() <= usize::from(width) {
        return Some(full);
    }
    let root: Vec<&str> = files.iter().filter(|f| f.1).map(|f| f.0).collect();
    let others = files.len() - root.len();
    let mut short = if root.is_empty() {
        format!("not read: {others}")
    } else {
        format!("needs root: {}", root.join(", "))
    };
    if !root.is_empty() && others > 0 {
        let _ = write!(short, " +{others}");
    }
    Some(short)
}

/// The host's global domain, labelled; its state alone where the counts do not fit.
fn host_lines(app: &App, m: &Model, width: u16, out: &mut Vec<Line<'static>>) {
    let t = theme(app);
    if let Some(g) = m.domains.first() {
        let full = format!("host {}", g.summary(m.page_size));
        let text = if full.chars().count() <= usize::from(width) {
            full
        } else {
            format!(
                "host {}",
                g.state.map_or("-", crate::model::dirty::State::label)
            )
        };
        out.push(Line::from(Span::styled(text, t.dim)));
    }
}

#[cfg(test)]
mod tests {
    use super::missing_line;

    #[test]
    fn what_the_scope_did_not_read_by_name_with_what_it_needs() {
        assert_eq!(missing_line(&[], 80), None);
        let m = [
            "sys/kernel/tracing: the writers' pauses (balance_dirty_pages tracepoint) need root \
             (euid 1000)"
                .to_owned(),
            "sys/kernel/debug/bdi/*/wb_stats: the kernel's own WbDirtyThresh needs root, \
             debugfs and kernel 6.10+"
                .to_owned(),
            "/box/memory.pressure: no PSI (4.20+, psi=1)".to_owned(),
        ];
        assert_eq!(
            missing_line(&m, 80).as_deref(),
            Some("not read: tracing (root), wb_stats (root, 6.10+), memory.pressure")
        );
        // Narrow: the files that need root, and how many others.
        assert_eq!(
            missing_line(&m, 38).as_deref(),
            Some("needs root: tracing, wb_stats +1")
        );
        assert_eq!(missing_line(&m[2..], 10).as_deref(), Some("not read: 1"));
    }
}
