//! Dirty & writeback pane: nr_dirty + nr_writeback against the background threshold, the
//! throttle (freerun) point and the hard threshold; the mode and sysctls behind them; rates;
//! and how far the thresholds would fall if memory were taken.
//!
//! Owns: the dirty pane. Must not touch: app state.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Focus};
use crate::fmt::{bytes, pages};
use crate::model::Model;
use crate::model::dirty::{Mode, State};
use crate::parse::VmSysctl;
use crate::ui::canvas::Canvas;
use crate::ui::theme;
use crate::ui::widgets::{frame, gauge, kv, level};

/// Severity of a dirty state: throttled warns, the hard limit is critical.
#[must_use]
pub fn state_level(s: State) -> u8 {
    match s {
        State::BelowBackground | State::BackgroundFlushing => 0,
        State::WritersThrottled => 1,
        State::AtHardLimit => 2,
    }
}

/// `ratio 20/10`, `bytes 512M/1.0G` or mixed, from the sysctls.
#[must_use]
pub fn mode_text(s: &VmSysctl, thresh: Option<Mode>, bg: Option<Mode>) -> String {
    let one = |mode: Option<Mode>, ratio: Option<u64>, bytes_v: Option<u64>| match mode {
        Some(Mode::Bytes) => bytes(bytes_v.unwrap_or(0) as f64),
        Some(Mode::Ratio) => format!("{}%", ratio.unwrap_or(0)),
        None => "?".to_owned(),
    };
    let kind = match (thresh, bg) {
        (Some(Mode::Ratio), Some(Mode::Ratio)) => "ratio",
        (Some(Mode::Bytes), Some(Mode::Bytes)) => "bytes",
        _ => "mixed",
    };
    format!(
        "{kind} {}/{}",
        one(thresh, s.dirty_ratio, s.dirty_bytes),
        one(bg, s.dirty_background_ratio, s.dirty_background_bytes)
    )
}

/// Pages as bytes, or as a page count when the user asked for pages (`u`).
fn show_pages(app: &App, p: Option<u64>, page_size: u64) -> String {
    match p {
        None => "-".to_owned(),
        Some(p) if app.ui.pages => p.to_string(),
        Some(p) => pages(p, page_size),
    }
}

/// Draws the dirty pane.
pub fn draw(app: &App, area: Rect, canvas: &mut Canvas) {
    let inner = canvas.block(
        area,
        frame(app, "Dirty & writeback", app.ui.focus == Focus::Dirty),
    );
    let Some(m) = &app.model else { return };
    canvas.lines(inner, lines(app, m, inner.width, inner.height));
}

fn lines(app: &App, m: &Model, width: u16, height: u16) -> Vec<Line<'static>> {
    let t = theme(app);
    let d = &m.dirty;
    let ps = m.page_size;
    let show = |p: Option<u64>| show_pages(app, p, ps);
    let thresh = d.thresh_pages.or(d.derived_thresh_pages);
    let bg = d.bg_thresh_pages.or(d.derived_bg_thresh_pages);
    let state = d.state.map_or(Span::styled("-", t.dim), |s| {
        Span::styled(s.label(), level(app, state_level(s)))
    });
    let mut out = vec![Line::from(vec![
        state,
        Span::styled(
            format!(
                "   {}",
                mode_text(&m.sysctl, d.thresh_mode, d.bg_thresh_mode)
            ),
            t.dim,
        ),
        Span::styled(if app.ui.pages { "  (pages)" } else { "" }, t.dim),
    ])];
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
    let mut l = Vec::new();
    l.extend(kv(app, "d+wb", show(d.dirty_writeback_pages)));
    l.extend(kv(app, " b", show(bg)));
    l.extend(kv(app, " f", show(d.freerun_pages)));
    l.extend(kv(app, " T", show(thresh)));
    out.push(Line::from(l));
    let mut l = Vec::new();
    l.extend(kv(app, "nr_dirty", show(d.nr_dirty)));
    l.extend(kv(app, " nr_writeback", show(d.nr_writeback)));
    out.push(Line::from(l));
    let rate = |r: Option<f64>| {
        r.map_or_else(|| "-".to_owned(), |r| format!("{}/s", bytes(r * ps as f64)))
    };
    let mut l = Vec::new();
    l.extend(kv(app, "dirtied", rate(d.dirtied_per_s)));
    l.extend(kv(app, "  written", rate(d.written_per_s)));
    out.push(Line::from(l));
    let taken = m.memory.MemTotal * 1024 / ps / 2;
    if let Some(p) = d.project(&m.sysctl, taken) {
        out.push(Line::from(Span::styled(
            format!(
                "take {} (50%): T→{} b→{}",
                pages(taken, ps),
                show(Some(p.thresh)),
                show(Some(p.bg_thresh))
            ),
            t.dim,
        )));
    }
    if height > 6 {
        out.extend(checks(app, m));
    }
    out
}

/// The kernel-versus-derived check and the sysctls behind the thresholds.
fn checks(app: &App, m: &Model) -> Vec<Line<'static>> {
    let t = theme(app);
    let d = &m.dirty;
    let ps = m.page_size;
    let show = |p: Option<u64>| show_pages(app, p, ps);
    let mut lines = Vec::new();
    let check = |k: Option<u64>, dv: Option<u64>| match (k, dv) {
        (Some(k), Some(dv)) if k == dv => format!("{k} = derived"),
        (Some(k), Some(dv)) => format!("{k} vs derived {dv}"),
        (k, dv) => format!("{} / derived {}", show(k), show(dv)),
    };
    lines.push(Line::from(
        kv(
            app,
            "kernel T",
            check(d.thresh_pages, d.derived_thresh_pages),
        )
        .to_vec(),
    ));
    lines.push(Line::from(
        kv(
            app,
            "kernel b",
            check(d.bg_thresh_pages, d.derived_bg_thresh_pages),
        )
        .to_vec(),
    ));
    let s = &m.sysctl;
    let cs =
        |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| format!("{}s", v as f64 / 100.0));
    lines.push(Line::from(Span::styled(
        format!(
            "expire {} writeback {} dirtyable {}",
            cs(s.dirty_expire_centisecs),
            cs(s.dirty_writeback_centisecs),
            show(d.dirtyable_pages)
        ),
        t.dim,
    )));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_modes() {
        assert_eq!(state_level(State::BelowBackground), 0);
        assert_eq!(state_level(State::WritersThrottled), 1);
        assert_eq!(state_level(State::AtHardLimit), 2);
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
}
