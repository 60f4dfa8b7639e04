//! Reclaim pane: kswapd against direct reclaim, stalls, swap, faults, refaults, and free
//! memory against the zone watermarks; direct compaction and huge-page fault fallbacks
//! (spec §13) in a line of their own while either happens; a line per NUMA node on machines
//! with more than one (spec §12). Cost budget: nothing read of its
//! own (the figures come from `/proc/vmstat`, read already); one line drawn while shown.
//!
//! Owns: the reclaim pane. Must not touch: app state.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Focus};
use crate::fmt::{Bytes, Dash, Opt, PerSec, Percent, Rate};
use crate::model::Model;
use crate::model::verdict::{ReclaimState, ReclaimVerdict};
use crate::model::zones::Watermarks;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{frame, kv, level, push_right};

/// Where free memory stands against the summed watermarks, and its severity.
#[must_use]
pub fn watermark_state(w: &Watermarks) -> (&'static str, u8) {
    if w.free_pages < w.min_pages {
        ("below min: allocators reclaim directly", 2)
    } else if w.free_pages < w.low_pages {
        ("below low: kswapd reclaiming", 1)
    } else if w.free_pages < w.high_pages {
        ("below high: kswapd until high", 0)
    } else {
        ("above high", 0)
    }
}

/// The pane's state line: where free memory stands, unless the interval's reclaim (the
/// verdict's answer, `model::verdict`) says more while free memory now stands above min: direct
/// reclaim, or cgroup limit reclaim, ran. Then that first, as the verdict says it (reclaim in
/// the interval beats a watermark snapshot), red when it stalls tasks
/// (`ReclaimVerdict::stalls`). Seen: "below low: kswapd reclaiming" over 105 allocstall/s
/// while a file was read through a full memory, and "above high" while a 256 MB memcg
/// scanned 458k pages/s with memory stalled 20 % of the time.
#[must_use]
pub fn pane_state(w: &Watermarks, ran: Option<&ReclaimVerdict>) -> (&'static str, u8) {
    let snapshot = watermark_state(w);
    let Some(ran) = ran else { return snapshot };
    if w.free_pages < w.min_pages {
        return snapshot;
    }
    let below_low = w.free_pages < w.low_pages;
    let below_high = w.free_pages < w.high_pages;
    let label = match (ran.state, below_low, below_high) {
        (ReclaimState::Direct, true, _) if ran.compaction_only() => {
            "direct compaction ran; free below low"
        }
        (ReclaimState::Direct, false, true) if ran.compaction_only() => {
            "direct compaction ran; free below high"
        }
        (ReclaimState::Direct, false, false) if ran.compaction_only() => {
            "direct compaction ran; free above high"
        }
        (ReclaimState::Direct, true, _) => "direct reclaim ran; free below low",
        (ReclaimState::Direct, false, true) => "direct reclaim ran; free below high",
        (ReclaimState::Direct, false, false) => "direct reclaim ran; free above high",
        (ReclaimState::Cgroup, true, _) => "cgroup limit reclaim; free below low",
        (ReclaimState::Cgroup, false, true) => "cgroup limit reclaim; free below high",
        (ReclaimState::Cgroup, false, false) => "cgroup limit reclaim; free above high",
        (ReclaimState::None | ReclaimState::Kswapd, ..) => return snapshot,
    };
    (label, if ran.stalls() { 2 } else { snapshot.1 })
}

/// The verdict's reclaim answer, once the pipeline made one.
fn answer(m: &Model) -> Option<&ReclaimVerdict> {
    m.verdict.as_ref().map(|v| &v.reclaim)
}

/// Direct reclaim or allocation stalls are the application paying for memory itself.
fn direct_level(m: &Model) -> u8 {
    if m.reclaim.direct_ran() { 2 } else { 0 }
}

/// Direct compaction stalls the allocating task as direct reclaim does.
fn compaction_level(m: &Model) -> u8 {
    if m.reclaim.compaction_ran() { 2 } else { 0 }
}

/// The compaction line, while direct compaction or a huge-page fault fallback happens (spec
/// §13): `compact stall 20/s fail 5/s  thp fallback 9/s`.
fn compaction_line(app: &App, m: &Model) -> Option<Line<'static>> {
    let r = &m.reclaim;
    let fell_back = r.thp_fault_fallback_s.is_some_and(|f| f > 0.0);
    if !r.compaction_ran() && !fell_back {
        return None;
    }
    let t = theme(app);
    let cl = level(app, compaction_level(m));
    let mut l = Vec::with_capacity(6);
    l.push(Span::styled("compact stall ", t.dim));
    l.push(Span::styled(
        PerSec(Rate(r.compact_stall_s)).to_string(),
        cl,
    ));
    l.extend(kv(app, " fail", PerSec(Rate(r.compact_fail_s))));
    l.extend(kv(
        app,
        "  thp fallback",
        PerSec(Rate(r.thp_fault_fallback_s)),
    ));
    Some(Line::from(l))
}

/// cgroup limit reclaim that stalls tasks is the application paying at its cgroup's limit.
fn limit_level(m: &Model) -> u8 {
    let stalls = answer(m).is_some_and(ReclaimVerdict::limit_stalls);
    if stalls { 2 } else { 0 }
}

/// Draws the reclaim pane.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    if area.height == 1 {
        return bare(app, area, canvas);
    }
    let inner = canvas.block(area, frame(app, "Reclaim", app.ui.focus == Focus::Reclaim));
    let Some(m) = &app.model else { return };
    let t = theme(app);
    let r = &m.reclaim;
    let dl = level(app, direct_level(m));
    let wm = r.watermarks.as_ref().map(|w| (w, pane_state(w, answer(m))));
    if inner.height < 3 {
        canvas.lines(inner, vec![one_line(app, m, usize::from(inner.width))]);
        return;
    }
    let eff = |v: Option<f64>| Dash(v.map(Percent));
    let mut lines = Vec::with_capacity(10);
    // The state first, as in the dirty pane: when the rows shown while something happens
    // (memcg, proactive, the -below tracer's) outgrow the pane, the figures at the bottom are
    // cut, never the conclusion.
    if let Some((w, state)) = wm {
        lines.push(state_line(app, w, state, inner.width));
    }
    lines.push(Line::from(Span::styled(
        "pages/s        scan   steal  eff",
        t.dim,
    )));
    // Scan, steal and efficiency under their headings.
    let row = |scan, steal, efficiency| {
        let mut s = String::with_capacity(24);
        push_right(&mut s, 8, Rate(scan));
        s.push(' ');
        push_right(&mut s, 7, Rate(steal));
        s.push(' ');
        push_right(&mut s, 4, eff(efficiency));
        s
    };
    lines.push(Line::from(vec![
        Span::styled("kswapd    ", t.dim),
        Span::raw(row(
            r.pgscan_kswapd_s,
            r.pgsteal_kswapd_s,
            r.kswapd_efficiency_pct,
        )),
    ]));
    lines.push(Line::from(vec![
        Span::styled("direct    ", t.dim),
        Span::styled(
            row(
                r.pgscan_direct_s,
                r.pgsteal_direct_s,
                r.direct_efficiency_pct,
            ),
            dl,
        ),
    ]));
    // cgroup limit reclaim and memory.reclaim, which kswapd and direct do not count: shown
    // while they happen.
    for (label, scan, steal, lvl) in [
        (
            "memcg     ",
            r.pgscan_memcg_s,
            r.pgsteal_memcg_s,
            limit_level(m),
        ),
        ("proactive ", r.pgscan_proactive_s, r.pgsteal_proactive_s, 0),
    ] {
        if scan.is_some_and(|s| s > 0.0) {
            let e = efficiency_of(steal, scan);
            lines.push(Line::from(vec![
                Span::styled(label, t.dim),
                Span::styled(row(scan, steal, e), level(app, lvl)),
            ]));
        }
    }
    let mut l = Vec::with_capacity(5);
    l.push(Span::styled("allocstall ", t.dim));
    l.push(Span::styled(PerSec(Rate(r.allocstall_s)).to_string(), dl));
    l.extend(kv(
        app,
        "  throttle",
        PerSec(Rate(r.pgscan_direct_throttle_s)),
    ));
    lines.push(Line::from(l));
    lines.extend(stalled_line(app, m));
    lines.extend(compaction_line(app, m));
    lines.push(swap_line(app, r));
    let refault = match (r.refault_anon_s, r.refault_file_s) {
        (Some(a), Some(f)) => kv(
            app,
            "refault",
            format_args!("anon {} file {} /s", Rate(Some(a)), Rate(Some(f))),
        ),
        _ => kv(app, "refault", PerSec(Opt(r.refault_s, 0))),
    };
    lines.push(Line::from(Vec::from(refault)));
    let below = super::below::reclaim_lines(m).into_iter();
    lines.extend(below.map(|(text, lvl)| Line::from(Span::styled(text, level(app, lvl)))));
    if let Some((w, _)) = wm {
        lines.push(watermark_line(app, w, m.page_size));
    }
    lines.extend(m.nodes.iter().map(|n| node_line(app, n, m.page_size)));
    canvas.lines(inner, lines);
}

/// Who stalled in reclaim, while the reclaim tracer timed someone (`model::reclaim_tasks`).
fn stalled_line(app: &App, m: &Model) -> Option<Line<'static>> {
    let n = m.reclaim_tasks.as_ref()?.named(3)?;
    Some(Line::from(vec![
        Span::styled("stalled ", theme(app).dim),
        Span::styled(n, level(app, direct_level(m))),
    ]))
}

/// Swap in and out, and major faults.
fn swap_line(app: &App, r: &crate::model::Reclaim) -> Line<'static> {
    let mut l = Vec::with_capacity(9);
    l.extend(kv(app, "swap in", Rate(r.pswpin_s)));
    l.extend(kv(app, " out", Rate(r.pswpout_s)));
    l.extend(kv(app, "  majflt", PerSec(Rate(r.pgmajfault_s))));
    Line::from(l)
}

/// A NUMA node (only with more than one, spec §12): its free pages against its low mark,
/// its dirty + writeback against its dirty share (red past it), and pages spilled to it.
fn node_line(app: &App, n: &crate::model::nodes::Node, page_size: u64) -> Line<'static> {
    let p = |v: u64| Bytes::pages(v, page_size);
    let mut l = Vec::with_capacity(10);
    l.push(Span::styled(format!("node {} ", n.node), theme(app).dim));
    l.extend(kv(
        app,
        "free",
        format_args!("{} low {}", p(n.free_pages), p(n.low_pages)),
    ));
    l.push(Span::styled(" dirty ", theme(app).dim));
    let share = format!(
        "{} of {}",
        p(n.dirty_writeback_pages),
        Dash(n.dirty_limit_pages.map(p))
    );
    l.push(Span::styled(
        share,
        level(app, if n.past_dirty_share { 2 } else { 0 }),
    ));
    l.extend(kv(app, " miss", PerSec(Rate(n.numa_miss_s))));
    Line::from(l)
}

/// The worst zone's free pages against its watermarks.
fn watermark_line(app: &App, w: &Watermarks, page_size: u64) -> Line<'static> {
    let mut l = Vec::with_capacity(8);
    l.extend(kv(app, "free", Bytes::pages(w.free_pages, page_size)));
    l.extend(kv(app, " min", Bytes::pages(w.min_pages, page_size)));
    l.extend(kv(app, " low", Bytes::pages(w.low_pages, page_size)));
    l.extend(kv(app, " high", Bytes::pages(w.high_pages, page_size)));
    Line::from(l)
}

/// The state and the worst zone's name as far as it fits in `width`: the long form, else the
/// zone alone, else nothing, so the state is never cut (at 160x48 "below min: allocators
/// reclaim directly" leaves 13 of 51 columns).
fn state_line(
    app: &App,
    w: &Watermarks,
    (label, lvl): (&'static str, u8),
    width: u16,
) -> Line<'static> {
    let mut state = vec![Span::styled(label, level(app, lvl))];
    if let Some(z) = &w.zone {
        let room = usize::from(width).saturating_sub(label.chars().count());
        let full = format!(" ({z}, the worst zone)");
        let short = format!(" ({z})");
        if let Some(text) = [full, short]
            .into_iter()
            .find(|s| s.chars().count() <= room)
        {
            state.push(Span::styled(text, theme(app).dim));
        }
    }
    Line::from(state)
}

/// steal / scan, percent; `None` when nothing was scanned.
fn efficiency_of(steal: Option<f64>, scan: Option<f64>) -> Option<f64> {
    let scan = scan.filter(|s| *s > 0.0)?;
    Some(steal.unwrap_or(0.0) / scan * 100.0)
}

/// Beside a who view at 80x24: the one line, without borders (the figures' names, kswapd,
/// direct, stall, refault, say which pane it is).
fn bare(app: &App, area: Rect, canvas: &mut Canvas) {
    let Some(m) = &app.model else { return };
    let mut line = one_line(app, m, usize::from(area.width).saturating_sub(1));
    line.spans.insert(0, Span::styled(" ", theme(app).dim));
    canvas.lines(area, vec![line]);
}

/// A state label in short, for the one-line form: `direct reclaim`, `memcg limit`, else the
/// watermark state's first words (`above high`, `below min`).
fn short_state(label: &'static str) -> &'static str {
    if label.starts_with("direct reclaim ran") {
        "direct reclaim"
    } else if label.starts_with("direct compaction ran") {
        "direct compaction"
    } else if label.starts_with("cgroup limit reclaim") {
        "memcg limit"
    } else {
        label.split(':').next().unwrap_or(label)
    }
}

/// The pane in one line (compact layout): its state, then the rates; of the refault, swap and
/// major-fault figures at its end, only those that fit whole in `room` columns (at 80 large
/// rates cut it at "swa").
fn one_line(app: &App, m: &Model, room: usize) -> Line<'static> {
    let t = theme(app);
    let r = &m.reclaim;
    let dl = level(app, direct_level(m));
    let mut l = Vec::with_capacity(20);
    // The pane's state first, in short, as the full pane leads with it: what reclaimed in the
    // interval (red while it stalls tasks; its figures, red, follow), else where free memory
    // stands. First, so a long line never cuts it ("[cgroup limit reclai" was seen).
    if let Some(w) = &r.watermarks {
        let (label, lvl) = pane_state(w, answer(m));
        l.push(Span::styled("[", t.dim));
        l.push(Span::styled(short_state(label), level(app, lvl)));
        l.push(Span::styled("] ", t.dim));
    }
    // cgroup limit reclaim's figures next to the state they explain (kswapd and direct count
    // global reclaim only).
    if r.pgscan_memcg_s.is_some_and(|s| s > 0.0) {
        l.push(Span::styled("memcg ", t.dim));
        l.push(Span::styled(
            format!("{}/{}", Rate(r.pgscan_memcg_s), Rate(r.pgsteal_memcg_s)),
            level(app, limit_level(m)),
        ));
        l.push(Span::raw(" "));
    }
    l.extend(kv(
        app,
        "kswapd",
        format_args!("{}/{}", Rate(r.pgscan_kswapd_s), Rate(r.pgsteal_kswapd_s)),
    ));
    l.push(Span::styled(" direct ", t.dim));
    l.push(Span::styled(
        format!("{}/{}", Rate(r.pgscan_direct_s), Rate(r.pgsteal_direct_s)),
        dl,
    ));
    l.push(Span::styled(" stall ", t.dim));
    l.push(Span::styled(Rate(r.allocstall_s).to_string(), dl));
    if r.compaction_ran() {
        l.push(Span::styled(" compact ", t.dim));
        l.push(Span::styled(
            Rate(r.compact_stall_s).to_string(),
            level(app, compaction_level(m)),
        ));
    }
    // Refaults next: the key figure under memory pressure is never what an 80-column line
    // drops before the fault and swap figures, which come last.
    let tail = [
        kv(app, " refault", Rate(r.refault_s)),
        kv(
            app,
            " swap",
            format_args!("{}/{}", Rate(r.pswpin_s), Rate(r.pswpout_s)),
        ),
        kv(app, " majflt", Rate(r.pgmajfault_s)),
    ];
    let mut used: usize = l.iter().map(Span::width).sum();
    for part in tail {
        let w: usize = part.iter().map(Span::width).sum();
        if used + w > room {
            break;
        }
        used += w;
        l.extend(part);
    }
    Line::from(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermark_states() {
        let w = |free| Watermarks {
            free_pages: free,
            min_pages: 100,
            low_pages: 125,
            high_pages: 150,
            zone: None,
        };
        assert_eq!(watermark_state(&w(99)).1, 2);
        assert_eq!(watermark_state(&w(100)).1, 1);
        assert_eq!(watermark_state(&w(130)).0, "below high: kswapd until high");
        assert_eq!(watermark_state(&w(150)).0, "above high");
        // Reclaim in the interval comes first, whatever free memory now is; below min says
        // it already.
        let ran = |state, stall_pct| ReclaimVerdict {
            state,
            sure: crate::model::verdict::Sure::Sampled,
            why: String::new(),
            stall_pct,
            who: Vec::new(),
        };
        let quiet = ran(ReclaimState::None, Some(0.0));
        let kswapd = ran(ReclaimState::Kswapd, Some(0.0));
        let direct = ran(ReclaimState::Direct, None);
        assert_eq!(pane_state(&w(130), None), watermark_state(&w(130)));
        assert_eq!(pane_state(&w(130), Some(&quiet)), watermark_state(&w(130)));
        assert_eq!(pane_state(&w(100), Some(&kswapd)), watermark_state(&w(100)));
        assert_eq!(pane_state(&w(99), Some(&direct)), watermark_state(&w(99)));
        assert_eq!(
            pane_state(&w(100), Some(&direct)),
            ("direct reclaim ran; free below low", 2)
        );
        assert_eq!(
            pane_state(&w(130), Some(&direct)).0,
            "direct reclaim ran; free below high"
        );
        assert_eq!(
            pane_state(&w(150), Some(&direct)).0,
            "direct reclaim ran; free above high"
        );
        // cgroup limit reclaim: red only while memory stalls 1 % of the interval or more;
        // otherwise the snapshot's own level.
        let limit = |pct| ran(ReclaimState::Cgroup, pct);
        assert_eq!(
            pane_state(&w(150), Some(&limit(Some(20.0)))),
            ("cgroup limit reclaim; free above high", 2)
        );
        assert_eq!(
            pane_state(&w(150), Some(&limit(Some(0.5)))),
            ("cgroup limit reclaim; free above high", 0)
        );
        assert_eq!(
            pane_state(&w(110), Some(&limit(None))),
            ("cgroup limit reclaim; free below low", 1)
        );
        assert_eq!(
            pane_state(&w(130), Some(&limit(Some(1.0)))).0,
            "cgroup limit reclaim; free below high"
        );
        // The one-line form's words for each.
        let short = |free, ran| short_state(pane_state(&w(free), ran).0);
        let stalled = limit(Some(20.0));
        assert_eq!(short(150, Some(&stalled)), "memcg limit");
        assert_eq!(short(110, Some(&direct)), "direct reclaim");
        assert_eq!(short(99, Some(&direct)), "below min");
        assert_eq!(short(110, None), "below low");
        assert_eq!(short(150, Some(&quiet)), "above high");
        // Direct compaction alone says so, not "direct reclaim".
        let compaction = ReclaimVerdict {
            why: "direct compaction: 20 stalls/s, 5 failed/s".into(),
            ..direct.clone()
        };
        assert_eq!(
            pane_state(&w(150), Some(&compaction)),
            ("direct compaction ran; free above high", 2)
        );
        assert_eq!(short(110, Some(&compaction)), "direct compaction");
        let both = ReclaimVerdict {
            why: "direct reclaim: 1 allocstall/s, scanning 9 pages/s; direct compaction: 2 stalls/s, 0 failed/s".into(),
            ..direct.clone()
        };
        assert_eq!(short(110, Some(&both)), "direct reclaim");
    }
}
