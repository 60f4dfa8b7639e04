//! Dirty & writeback pane: nr_dirty + nr_writeback against the background threshold, the
//! throttle (freerun) point and the hard threshold; the mode and sysctls behind them; rates;
//! and how far the thresholds would fall if memory were taken.
//!
//! Owns: the dirty pane. Must not touch: app state.

use std::fmt::{self, Display, Formatter};

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Focus};
use crate::fmt::{Bytes, Dash, PerSec};
use crate::model::Model;
use crate::model::dirty::{Mode, State};
use crate::parse::VmSysctl;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{frame, gauge, kv, level};

/// Severity of a dirty state: throttled warns, over the threshold is critical.
#[must_use]
pub fn state_level(s: State) -> u8 {
    match s {
        State::BelowBackground | State::BackgroundFlushing => 0,
        State::WritersThrottled => 1,
        State::OverThresh | State::AtHardLimit => 2,
    }
}

/// `ratio 20%/10%`, `bytes 512M/1.0G` or mixed, from the sysctls.
#[must_use]
pub fn mode_text(s: &VmSysctl, thresh: Option<Mode>, bg: Option<Mode>) -> String {
    let (kind, t, b) = mode_parts(s, thresh, bg);
    format!("{kind} {t}/{b}")
}

/// `mode_text`'s kind, threshold and background threshold.
fn mode_parts(
    s: &VmSysctl,
    thresh: Option<Mode>,
    bg: Option<Mode>,
) -> (&'static str, Limit, Limit) {
    let one = |mode: Option<Mode>, ratio: Option<u64>, bytes_v: Option<u64>| match mode {
        Some(Mode::Bytes) => Limit::Bytes(Bytes(bytes_v.unwrap_or(0) as f64)),
        Some(Mode::Ratio) => Limit::Ratio(ratio.unwrap_or(0)),
        None => Limit::Unknown,
    };
    let kind = match (thresh, bg) {
        (Some(Mode::Ratio), Some(Mode::Ratio)) => "ratio",
        (Some(Mode::Bytes), Some(Mode::Bytes)) => "bytes",
        _ => "mixed",
    };
    (
        kind,
        one(thresh, s.dirty_ratio, s.dirty_bytes),
        one(bg, s.dirty_background_ratio, s.dirty_background_bytes),
    )
}

/// A dirty limit as its sysctl sets it: `512M`, `20%`, or `?`.
enum Limit {
    Bytes(Bytes),
    Ratio(u64),
    Unknown,
}

impl Display for Limit {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Bytes(b) => write!(f, "{b}"),
            Limit::Ratio(r) => write!(f, "{r}%"),
            Limit::Unknown => f.write_str("?"),
        }
    }
}

/// Pages as bytes, or as a page count when the user asked for pages (`u`); `-` for none.
#[derive(Clone, Copy)]
struct Shown {
    pages: Option<u64>,
    page_size: u64,
    count: bool,
}

impl Display for Shown {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.pages {
            None => f.write_str("-"),
            Some(p) if self.count => write!(f, "{p}"),
            Some(p) => write!(f, "{}", Bytes::pages(p, self.page_size)),
        }
    }
}

/// Draws the dirty pane.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let title = title(app.model.as_ref(), area.width);
    let inner = canvas.block(area, frame(app, title, app.ui.focus == Focus::Dirty));
    let Some(m) = &app.model else { return };
    canvas.lines(inner, lines(app, m, inner.width, inner.height));
}

/// The pane's title, with why the disks' drains are apportioned when they are for want of
/// root or debugfs (`model::drain::screen_note`), as much as fits in `width` columns:
/// `Dirty & writeback · needs root for kernel figures`, else `… · needs root`.
fn title(m: Option<&Model>, width: u16) -> String {
    const BASE: &str = "Dirty & writeback";
    let note = m.and_then(|m| crate::model::drain::screen_note(m.disks.iter().map(|d| &d.drain)));
    let room = usize::from(width.saturating_sub(2));
    note.into_iter()
        .flat_map(|(long, short)| [long, short])
        .map(|n| format!("{BASE} · {n}"))
        .find(|t| t.chars().count() <= room)
        .unwrap_or_else(|| BASE.to_owned())
}

/// The state over the interval can be above the sampled count's: what raised it, in full
/// when it fits beside the state's label in `width` columns, else only how many writers;
/// or, below background over a d+wb above b, the `nr_dirty` that decided it.
fn raised_by(m: &Model, width: u16) -> String {
    let Some(g) = m.domains.first() else {
        return String::new();
    };
    let label = m.dirty.state.map_or(0, |s| s.label().chars().count());
    let fits = |t: &str| label + t.chars().count() <= usize::from(width);
    let (full, short) = match g.raised_by() {
        Some(why) => (why, Some(format!(" ({} paused)", g.throttled_writers))),
        None => match g.below_bg_note(m.page_size) {
            Some(note) => (note, None),
            None => return String::new(),
        },
    };
    let full = format!(" ({full})");
    if fits(&full) {
        full
    } else {
        short.unwrap_or_default()
    }
}

/// The verdict's early warning after a state `label` characters long, as much as fits in
/// `width`: ` early warning: freerun in ≈ 4 s at +520M/s`, else ` early warning`.
fn early_note(m: &Model, label: usize, width: u16) -> Option<String> {
    let e = m.verdict.as_ref()?.early.as_ref()?;
    let full = format!(" early warning: {}", e.when());
    let fits = |t: &str| label + t.chars().count() <= usize::from(width);
    Some(if fits(&full) {
        full
    } else {
        " early warning".to_owned()
    })
}

/// The first line: the state, what raised it, and the limits' mode (`ratio 20%/10%`), the
/// mode only whole: at 80 columns a raised state's note leaves it no room, and cut it read
/// "mixed 1…".
fn state_line(app: &App, m: &Model, width: u16) -> Line<'static> {
    let t = theme(app);
    let d = &m.dirty;
    let state = d.state.map_or(Span::styled("-", t.dim), |s| {
        Span::styled(s.label(), level(app, state_level(s)))
    });
    let label = state.content.chars().count();
    // Below freerun, trouble coming (issue 50): the warning takes the note's place.
    let (raised, note_style) = match early_note(m, label, width) {
        Some(e) => (e, t.warn),
        None => (raised_by(m, width), t.dim),
    };
    let (kind, mode_t, mode_b) = mode_parts(&m.sysctl, d.thresh_mode, d.bg_thresh_mode);
    let mut mode = format!("   {kind} {mode_t}/{mode_b}");
    let used = label + raised.chars().count();
    if used + mode.chars().count() > usize::from(width) {
        mode.clear();
    }
    Line::from(vec![
        state,
        Span::styled(raised, note_style),
        Span::styled(mode, t.dim),
        Span::styled(if app.ui.pages { "  (pages)" } else { "" }, t.dim),
    ])
}

fn lines(app: &App, m: &Model, width: u16, height: u16) -> Vec<Line<'static>> {
    let t = theme(app);
    let d = &m.dirty;
    let ps = m.page_size;
    let show = |pages: Option<u64>| Shown {
        pages,
        page_size: ps,
        count: app.ui.pages,
    };
    let thresh = d.thresh_pages.or(d.derived_thresh_pages);
    let bg = d.bg_thresh_pages.or(d.derived_bg_thresh_pages);
    let mut out = Vec::with_capacity(10);
    out.push(state_line(app, m, width));
    // A container's (or a capped device's) domain nearer its throttle point than the global
    // one: the global line can say "below background" while its writers are throttled (§1.8).
    if let Some(dom) = crate::model::domains::most_severe(
        m.domains
            .iter()
            .filter(|d| d.kind != crate::model::domains::Kind::Global),
    )
    .filter(|d| d.state.is_some_and(|s| s != State::BelowBackground))
    {
        let style = dom
            .state
            .map_or(t.text, |s| level(app, state_level(s).max(1)));
        let text = dom.summary(ps);
        // 80 columns: `/box throttled d+wb 48.2M > f 43.4M`.
        let fits = |t: &str| t.chars().count() <= usize::from(width);
        let text = if fits(&text) {
            text
        } else {
            let short = text
                .replacen(": writers throttled (", " throttled ", 1)
                .replacen(": over thresh (", " over T ", 1)
                .replacen(": at hard limit (", " at limit ", 1)
                .replacen(": background flushing (", " flushing ", 1)
                .trim_end_matches(')')
                .to_owned();
            if fits(&short) {
                short
            } else {
                short.replacen("cgroup ", "", 1)
            }
        };
        out.push(Line::from(Span::styled(text, style)));
    }
    if let (Some(th), Some(bgv), Some(fr), Some(now)) =
        (thresh, bg, d.freerun_pages, d.dirty_writeback_pages)
    {
        let max = (th + th / 10).max(now);
        let style = d.state.map_or(t.text, |s| level(app, state_level(s)));
        out.push(gauge(
            app,
            width,
            now,
            max,
            &[(bgv, 'b'), (fr, 'f'), (th, 'T')],
            style,
        ));
    }
    let mut l = Vec::with_capacity(12);
    l.extend(kv(app, "d+wb", show(d.dirty_writeback_pages)));
    l.extend(kv(app, " b", show(bg)));
    l.extend(kv(app, " f", show(d.freerun_pages)));
    l.extend(kv(app, " T", show(thresh)));
    out.push(Line::from(l));
    let mut l = Vec::with_capacity(6);
    l.extend(kv(app, "nr_dirty", show(d.nr_dirty)));
    l.extend(kv(app, " nr_writeback", show(d.nr_writeback)));
    out.push(Line::from(l));
    let rate = |r: Option<f64>| Dash(r.map(|r| PerSec(Bytes(r * ps as f64))));
    let mut l = Vec::with_capacity(6);
    l.extend(kv(app, "dirtied", rate(d.dirtied_per_s)));
    l.extend(kv(app, "  written", rate(d.written_per_s)));
    out.push(Line::from(l));
    drain_lines(app, m, width, &mut out);
    file_lines(app, m, width, &mut out);
    if let Some((taken, what)) = eatable(m.memory.MemTotal, m.memory.MemAvailable)
        && let Some(p) = d.project(&m.sysctl, taken / ps)
    {
        out.push(Line::from(Span::styled(
            format!(
                "take {} ({what}): T→{} b→{}",
                Bytes(taken as f64),
                show(Some(p.thresh)),
                show(Some(p.bg_thresh))
            ),
            t.dim,
        )));
    }
    if height > 6 {
        checks(app, m, show, &mut out);
    }
    out
}

/// Each disk's waiting data and when it is written (spec §15.5), from 16 MiB, two at most:
/// `vda: 2.0G to write, ~67 s at 30.5M/s (kernel)`.
fn drain_lines(app: &App, m: &Model, width: u16, out: &mut Vec<Line<'static>>) {
    for disk in m.disks.iter().filter(|x| x.drain.shown()).take(2) {
        if let Some(text) = disk.drain.text() {
            // Narrow: the source's label goes first, then whole clauses from the end.
            let mut text = format!("{}: {text}", disk.name);
            if text.chars().count() > usize::from(width)
                && let Some(at) = text.rfind(" (")
            {
                text.truncate(at);
            }
            let text = super::disks::cut_at_clause(text, usize::from(width));
            out.push(Line::from(Span::styled(text, theme(app).text)));
        }
    }
}

/// The dirty-files table's first files (spec §15.4), two at most, or why it is empty:
/// `1.9G dd[4242] /mnt/big.iso`.
fn file_lines(app: &App, m: &Model, width: u16, out: &mut Vec<Line<'static>>) {
    let Some(t) = &m.dirty_files else { return };
    for f in t.files.iter().take(2) {
        let text = format!(
            "{} {}[{}] {}",
            Bytes((f.dirty_bytes + f.writeback_bytes) as f64),
            f.comm,
            f.pid,
            f.path
        );
        let text: String = text.chars().take(usize::from(width)).collect();
        out.push(Line::from(Span::styled(text, theme(app).text)));
    }
    if t.files.is_empty()
        && let Some(note) = &t.note
    {
        let text = super::disks::cut_at_clause(format!("files: {note}"), usize::from(width));
        out.push(Line::from(Span::styled(text, theme(app).dim)));
    }
}

/// What the "take" line projects, bytes, and how it was chosen: half of MemTotal (`50%`), or,
/// when MemAvailable less the eater's safety margin (`eat_plan::margin`) is smaller, that
/// (`max`): the most `m` takes unconfirmed. With an eater already holding 20G of 23.5G, 50%
/// projected thresholds of 0 for an amount the eater would refuse. `None` within 64 MiB of
/// the margin: nothing left to take. MemTotal and MemAvailable are in kB, as meminfo counts.
fn eatable(total_kb: u64, available_kb: Option<u64>) -> Option<(u64, &'static str)> {
    let total = total_kb * 1024;
    let half = total / 2;
    let Some(avail) = available_kb else {
        return Some((half, "50%"));
    };
    let room = (avail * 1024).saturating_sub(crate::jobs::eat_plan::margin(total));
    if room >= half {
        Some((half, "50%"))
    } else if room >= 64 << 20 {
        Some((room, "max"))
    } else {
        None
    }
}

/// The kernel-versus-derived check and the sysctls behind the thresholds, onto `lines`.
fn checks(
    app: &App,
    m: &Model,
    show: impl Fn(Option<u64>) -> Shown,
    lines: &mut Vec<Line<'static>>,
) {
    let t = theme(app);
    let d = &m.dirty;
    let check = |label, k: Option<u64>, dv: Option<u64>| {
        let spans = match (k, dv) {
            (Some(k), Some(dv)) if d.rt_reader => kv(
                app,
                label,
                format_args!("{k} boosted (pagewatch runs RT), derived {dv}"),
            ),
            (Some(k), Some(dv)) if k == dv => kv(app, label, format_args!("{k} = derived")),
            (Some(k), Some(dv)) => kv(app, label, format_args!("{k} vs derived {dv}")),
            (k, dv) => kv(
                app,
                label,
                format_args!("{} / derived {}", show(k), show(dv)),
            ),
        };
        Line::from(Vec::from(spans))
    };
    lines.push(check("kernel T", d.thresh_pages, d.derived_thresh_pages));
    lines.push(check(
        "kernel b",
        d.bg_thresh_pages,
        d.derived_bg_thresh_pages,
    ));
    let s = &m.sysctl;
    let cs = |v: Option<u64>| Dash(v.map(|v| Seconds(v as f64 / 100.0)));
    lines.push(Line::from(Span::styled(
        format!(
            "expire {} writeback {} dirtyable {}",
            cs(s.dirty_expire_centisecs),
            cs(s.dirty_writeback_centisecs),
            show(d.dirtyable_pages)
        ),
        t.dim,
    )));
}

/// Seconds as `30s`, `0.5s`.
struct Seconds(f64);

impl Display for Seconds {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_modes() {
        assert_eq!(state_level(State::BelowBackground), 0);
        assert_eq!(state_level(State::WritersThrottled), 1);
        assert_eq!(state_level(State::OverThresh), 2);
        let s = VmSysctl {
            dirty_ratio: Some(20),
            dirty_background_ratio: Some(10),
            ..VmSysctl::default()
        };
        assert_eq!(
            mode_text(&s, Some(Mode::Ratio), Some(Mode::Ratio)),
            "ratio 20%/10%"
        );
        let s = VmSysctl {
            dirty_bytes: Some(1 << 30),
            dirty_background_ratio: Some(10),
            ..s
        };
        assert_eq!(
            mode_text(&s, Some(Mode::Bytes), Some(Mode::Ratio)),
            "mixed 1.0G/10%"
        );
    }

    #[test]
    fn the_take_line_projects_what_the_eater_would_take_unconfirmed() {
        const GIB_KB: u64 = 1 << 20;
        let total = 24 * GIB_KB;
        // Idle: half of MemTotal, 12 GiB, fits under 23 GiB less the 1.2 GiB margin.
        assert_eq!(eatable(total, Some(23 * GIB_KB)), Some((12 << 30, "50%")));
        // An eater holds 20 GiB: 3 GiB available less the margin (5 % of 24 GiB).
        let margin = 24u64 * (1 << 30) / 20;
        assert_eq!(
            eatable(total, Some(3 * GIB_KB)),
            Some(((3 << 30) - margin, "max"))
        );
        // At the margin, nothing to take; without MemAvailable (before 3.14), half.
        assert_eq!(eatable(total, Some(margin / 1024 + 1000)), None);
        assert_eq!(eatable(total, None), Some((12 << 30, "50%")));
        // A 1 GiB guest: the margin is its 256 MiB floor.
        assert_eq!(
            eatable(GIB_KB, Some(700 << 10)),
            Some(((700 - 256) << 20, "max"))
        );
    }

    #[test]
    fn the_state_line_carries_the_early_warning_as_far_as_it_fits() {
        let samples = crate::source::test_samples("live-idle");
        let mut m = crate::pipeline::derive_all(&samples, crate::model::Options::default())
            .models
            .remove(0);
        assert_eq!(early_note(&m, 16, 160), None);
        if let Some(v) = m.verdict.as_mut() {
            v.early = Some(crate::model::answers::Early {
                what: "vda await 7.00 ms, 14x its calm 0.50 ms".into(),
                outrun_bytes_per_s: 520.0 * 1024.0 * 1024.0,
                freerun_in_s: Some(3.9),
            });
        }
        assert_eq!(
            early_note(&m, 16, 80).as_deref(),
            Some(" early warning: freerun in ≈ 3.9 s at +520M/s")
        );
        assert_eq!(early_note(&m, 16, 40).as_deref(), Some(" early warning"));
    }
}
