//! What is under the mouse pointer: the pane or the table row at a cell, found with the
//! same rectangles the screen is drawn with (`layout::PaneRects::for_area`, `layout::who`)
//! and the panes' own row layouts (`disks`, `jobs::job_at`, `processes::process_at`,
//! `cgroups::cgroup_at`). A pure function of the app and the terminal's size.
//!
//! Owns: hit-testing. Must not touch: app state (the app applies the `Pointer`).

use ratatui::layout::{Position, Rect};
use ratatui::widgets::Block;

use super::layout::{self, MIN};
use super::panes;
use crate::app::jobs::JobRef;
use crate::app::{App, Focus, Target, WhoView};

/// What is at `column`, `row` of the screen `area` shows `app` in; `None` where a click
/// means nothing (header, footer, charts, a screen too small or the device detail).
#[must_use]
pub fn target(app: &App, area: Rect, column: u16, row: u16) -> Option<Target> {
    if area.width < MIN.0 || area.height < MIN.1 || app.ui.detail {
        return None;
    }
    let at = Position::new(column, row);
    let r = super::rects(app, area);
    let w = layout::who(&r, app.ui.who.is_some(), panes::throttled::height(app));
    for (rect, focus) in [
        (r.memory, Focus::Memory),
        (r.dirty, Focus::Dirty),
        (w.reclaim, Focus::Reclaim),
    ] {
        if rect.contains(at) {
            return Some(Target::Pane(focus));
        }
    }
    if w.disks.contains(at) {
        return Some(disk_at(app, w.disks, row).map_or(Target::Pane(Focus::Disks), Target::Disk));
    }
    if r.jobs.contains(at) {
        return Some(panes::jobs::job_at(app, r.jobs, r.large, row).map_or(
            Target::Pane(Focus::Jobs),
            |j| match j {
                JobRef::Own(id) => Target::Job(id),
                other => Target::JobRow(other),
            },
        ));
    }
    if w.who.contains(at) {
        let hit = match app.ui.who {
            Some(WhoView::Processes) => {
                panes::processes::process_at(app, w.who, row).map(Target::Process)
            }
            Some(WhoView::Cgroups) => {
                panes::cgroups::cgroup_at(app, w.who, row).map(Target::Cgroup)
            }
            None => None,
        };
        return Some(hit.unwrap_or(Target::Who));
    }
    None
}

/// The disk on row `row` of the table drawn at `area`: the column titles on its first inner
/// row, then the disks in display order.
fn disk_at(app: &App, area: Rect, row: u16) -> Option<String> {
    let inner = Block::bordered().inner(area);
    let i = row.checked_sub(inner.y + 1)?;
    if row >= inner.bottom() {
        return None;
    }
    app.sorted_disks()
        .get(usize::from(i))
        .map(|d| d.name.clone())
}

#[cfg(test)]
#[path = "hit_tests.rs"]
mod tests;
