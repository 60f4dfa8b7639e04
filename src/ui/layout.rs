//! Where each pane goes, for the compact (80x24) and large (≥120x36) layouts.
//!
//! ```text
//! large (160x48):                               compact (80x24):
//! +-------------------- header (3) ----------+  +------------ header (2) -----------+
//! | memory     | dirty & writeback | reclaim |  | memory          | dirty & wb       |
//! |            |   (11 rows)       |         |  |   (8 rows)      |                  |
//! +------------+-------------------+---------+  +--------- reclaim (3) -------------+
//! | disks (table, up to 12 rows) | jobs      |  | disks (the rest)                   |
//! +------------------------------------------+  | jobs (up to 3 rows, when any)      |
//! | history charts (the rest)                |  +------------ footer (1) -----------+
//! +------------------- footer (1) -----------+
//! ```
//! The jobs pane exists only when there are jobs, found fio processes or a notice; it sits
//! next to the disks so cause and effect are on one screen.
//! Owns: rectangles. Must not touch: data or drawing.

use ratatui::layout::{Constraint, Layout, Rect};

/// The smallest usable terminal.
pub const MIN: (u16, u16) = (80, 24);

/// Pane rectangles for one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneRects {
    /// Header.
    pub header: Rect,
    /// Memory pane.
    pub memory: Rect,
    /// Dirty & writeback pane.
    pub dirty: Rect,
    /// Reclaim pane.
    pub reclaim: Rect,
    /// Disk table.
    pub disks: Rect,
    /// Jobs pane (zero-sized when there is nothing to show).
    pub jobs: Rect,
    /// History charts (empty in the compact layout).
    pub charts: Rect,
    /// Key help line.
    pub footer: Rect,
    /// Whether this is the large layout.
    pub large: bool,
}

impl PaneRects {
    /// Splits `area`; `disk_rows` is how many devices there are to show, `job_rows` how many
    /// lines the jobs pane wants.
    #[must_use]
    pub fn for_area(area: Rect, disk_rows: usize, job_rows: usize) -> Self {
        let large = area.width >= 120 && area.height >= 36;
        if large {
            let disks_h = (disk_rows.max(job_rows) as u16 + 3).clamp(5, 12);
            let [header, top, disks, charts, footer] = Layout::vertical([
                Constraint::Length(3),
                Constraint::Length(11),
                Constraint::Length(disks_h),
                Constraint::Min(6),
                Constraint::Length(1),
            ])
            .areas(area);
            let [memory, dirty, reclaim] = Layout::horizontal([
                Constraint::Ratio(1, 3),
                Constraint::Ratio(1, 3),
                Constraint::Ratio(1, 3),
            ])
            .areas(top);
            let (disks, jobs) = if job_rows > 0 {
                let [d, j] =
                    Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
                        .areas(disks);
                (d, j)
            } else {
                (disks, Rect::new(disks.right(), disks.y, 0, disks.height))
            };
            Self {
                header,
                memory,
                dirty,
                reclaim,
                disks,
                jobs,
                charts,
                footer,
                large,
            }
        } else {
            let jobs_h = job_rows.min(3) as u16;
            let [header, top, reclaim, disks, jobs, footer] = Layout::vertical([
                Constraint::Length(2),
                Constraint::Length(8),
                Constraint::Length(3),
                Constraint::Min(3),
                Constraint::Length(jobs_h),
                Constraint::Length(1),
            ])
            .areas(area);
            let [memory, dirty] =
                Layout::horizontal([Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)]).areas(top);
            let charts = Rect::new(area.x, disks.bottom(), area.width, 0);
            Self {
                header,
                memory,
                dirty,
                reclaim,
                disks,
                jobs,
                charts,
                footer,
                large,
            }
        }
    }
}
