//! The fleet screen (`pagewatch connect h1 h2 …`): one line a host, worst first: its link and
//! the age of its last sample, MemAvailable, the worst dirty domain's state, throttled
//! writers, saturated disks, reclaim that stalls, memory PSI and the story; or, with a host
//! opened, that host's own screen as `ui::render` draws it.
//!
//! Owns: drawing the list. Must not touch: the fleet's state (`app::fleet` owns it and orders
//! its lines).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::app::fleet::{Fleet, FleetLine, Link};
use crate::fmt::Bytes;
use crate::model::answers::ReclaimState;
use crate::model::dirty::State;
use crate::ui::theme::{COLOR, MONO, Theme};

/// Draws the fleet: the open host's screen, else the list.
pub fn render(fleet: &Fleet, area: Rect, buf: &mut Buffer) {
    if let Some(h) = fleet.open.and_then(|i| fleet.hosts.get(i)) {
        super::render(&h.app, area, buf);
        return;
    }
    let look = fleet.hosts.first().map(|h| h.app.look).unwrap_or_default();
    let t = if look.mono { &MONO } else { &COLOR };
    let title = format!(" Fleet: {} hosts, worst first ", fleet.hosts.len());
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, t.title));
    let inner = block.inner(area);
    block.render(area, buf);
    let wide = inner.width >= 120;
    let mut rows = vec![Line::styled(heading(wide), t.dim)];
    for l in fleet.lines() {
        let picked = l.host == fleet.selected;
        rows.push(row(&l, wide, t, picked));
    }
    let footer = Line::styled(
        "↑/↓ select   Enter open the host's screen   Esc back to this list   q quit",
        t.dim,
    );
    let list = Rect {
        height: inner.height.saturating_sub(1),
        ..inner
    };
    Paragraph::new(rows).render(list, buf);
    if inner.height > 0 {
        let foot = Rect {
            y: inner.bottom() - 1,
            height: 1,
            ..inner
        };
        Paragraph::new(footer).render(foot, buf);
    }
    if look.ascii {
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                if let Some(c) = buf.cell_mut((x, y)) {
                    super::widgets::ascii_cell(c);
                }
            }
        }
    }
}

fn heading(wide: bool) -> String {
    let mut h = format!(
        "{:<14} {:<10} {:>7} {:<20} {:>3} {:<10} {:<7}",
        "HOST", "LINK", "AVAIL", "DIRTY", "THR", "SATURATED", "RECLAIM"
    );
    if wide {
        h.push_str(" PSI  STORY");
    }
    h
}

/// One host's line, coloured by how bad each answer is.
fn row(l: &FleetLine, wide: bool, t: &Theme, picked: bool) -> Line<'static> {
    let link = match (l.link, l.age_s) {
        (Link::Live, Some(a)) => format!("live {a}s"),
        (link, _) => link.label().to_owned(),
    };
    let dirty = l.dirty.map_or("-", State::label);
    let saturated = match l.saturated.as_slice() {
        [] => "-".to_owned(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} +{}", rest.len()),
    };
    let reclaim = match l.reclaim {
        None | Some(ReclaimState::None | ReclaimState::Kswapd) => "-",
        Some(ReclaimState::Cgroup) => "cgroup",
        Some(ReclaimState::Direct) => "direct",
    };
    let avail = l
        .available
        .map_or("-".to_owned(), |kb| Bytes::kb(kb).to_string());
    let sel = if picked { t.selected } else { Style::new() };
    let mut spans = vec![
        Span::styled(format!("{:<14.14} ", l.name), t.text.patch(sel)),
        Span::styled(format!("{link:<10.10} "), link_style(l.link, t)),
        Span::styled(format!("{avail:>7} "), t.text),
        Span::styled(format!("{dirty:<20.20} "), dirty_style(l.dirty, t)),
        Span::styled(format!("{:>3} ", l.writers), t.text),
        Span::styled(
            format!("{saturated:<10.10} "),
            if l.saturated.is_empty() { t.ok } else { t.crit },
        ),
        Span::styled(
            format!("{reclaim:<7}"),
            if l.reclaim.is_some() { t.crit } else { t.ok },
        ),
    ];
    if wide {
        let psi = l.psi_pct.map_or("-".to_owned(), |p| format!("{p:.0}%"));
        spans.push(Span::styled(format!(" {psi:>4} "), t.text));
        spans.push(Span::styled(l.note.clone().unwrap_or_default(), t.dim));
    }
    Line::from(spans)
}

fn link_style(link: Link, t: &Theme) -> Style {
    match link {
        Link::Live => t.ok,
        Link::Waiting => t.dim,
        Link::Lost => t.crit,
    }
}

fn dirty_style(s: Option<State>, t: &Theme) -> Style {
    match s {
        None | Some(State::BelowBackground) => t.ok,
        Some(State::BackgroundFlushing) => t.text,
        Some(State::WritersThrottled) => t.warn,
        Some(State::OverThresh | State::AtHardLimit) => t.crit,
    }
}
