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
//!
//! The cuts are computed directly, giving the rectangles ratatui's `Layout` solver gives for
//! the same constraints (see the tests): every frame builds them, and the solver's cache costs
//! more to look up, with cold caches, than the arithmetic.
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

/// Whether `area` gets the large layout (charts, bordered panes side by side).
#[must_use]
pub fn is_large(area: Rect) -> bool {
    area.width >= 120 && area.height >= 36
}

impl PaneRects {
    /// Splits `area`; `disk_rows` is how many devices there are to show, `job_rows` how many
    /// lines the jobs pane wants.
    #[must_use]
    pub fn for_area(area: Rect, disk_rows: usize, job_rows: usize) -> Self {
        let large = is_large(area);
        if large {
            let disks_h = (disk_rows.max(job_rows) as u16 + 3).clamp(5, 12);
            let [header, top, disks, charts, footer] = stack(
                area,
                [
                    Constraint::Length(3),
                    Constraint::Length(11),
                    Constraint::Length(disks_h),
                    Constraint::Min(6),
                    Constraint::Length(1),
                ],
            );
            let [memory, dirty, reclaim] = columns(top);
            let (disks, jobs) = if job_rows > 0 {
                // Percentage(58) and Percentage(42): the cut rounded half up.
                let left = ((u32::from(disks.width) * 58 + 50) / 100) as u16;
                let jobs = Rect::new(disks.x + left, disks.y, disks.width - left, disks.height);
                (
                    Rect {
                        width: left,
                        ..disks
                    },
                    jobs,
                )
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
            let [header, top, reclaim, disks, jobs, footer] = stack(
                area,
                [
                    Constraint::Length(2),
                    Constraint::Length(8),
                    Constraint::Length(3),
                    Constraint::Min(3),
                    Constraint::Length(jobs_h),
                    Constraint::Length(1),
                ],
            );
            let [memory, dirty] = columns(top);
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

/// Where the "who" panes go: cut from the charts (large) or the disks (compact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WhoRects {
    /// The disk table (compact: empty while a who view is open).
    pub disks: Rect,
    /// The throttled-writers table (empty when nobody is throttled).
    pub throttled: Rect,
    /// The processes or cgroups view (empty when none is open).
    pub who: Rect,
    /// The history charts (large: empty while a who view is open).
    pub charts: Rect,
    /// The reclaim pane: one borderless row beside an open who view (compact), so the view
    /// keeps three rows and the table three writers.
    pub reclaim: Rect,
}

/// Cuts the who panes out of `r`: the throttled-writers table (`throttled_h` rows with its
/// borders, 0 for none) on top of the charts (large) or below the disks (compact, at most 5
/// rows, leaving the disks 4); an open who view takes the rest of the charts (large) or the
/// disks' place (compact), where the reclaim pane gives up its borders (one row) so the view
/// keeps three rows and the table three writers (6 rows each at 80x24). The reclaim pane also
/// gives up its borders when, without them, the table would have no room for a writer (the
/// jobs pane and a playbook's lines take the disks' rows at 80x24): a headline of "2 paused"
/// over a table of column names alone was seen there.
#[must_use]
pub fn who(r: &PaneRects, view: bool, throttled_h: u16) -> WhoRects {
    let empty = |a: Rect| Rect::new(a.x, a.y, a.width, 0);
    if r.large {
        let area = r.charts;
        let th = throttled_h.min(area.height.saturating_sub(6));
        let throttled = Rect::new(area.x, area.y, area.width, th);
        let rest = Rect::new(area.x, area.y + th, area.width, area.height - th);
        let (who, charts) = if view {
            (rest, empty(rest))
        } else {
            (empty(rest), rest)
        };
        WhoRects {
            disks: r.disks,
            throttled,
            who,
            charts,
            reclaim: r.reclaim,
        }
    } else {
        // With a who view open the reclaim pane is one line and the disks are hidden: the
        // view and the table share the rest, three rows and three writers each. Without a
        // view, the reclaim pane is one line only when the table would otherwise show no
        // writer (4 rows: borders, column names, one writer).
        let no_room = throttled_h >= 4 && r.disks.height.saturating_sub(4) < 4;
        let (reclaim, area, cap, keep) = if (view || no_room) && r.reclaim.height >= 3 {
            let line = Rect::new(r.reclaim.x, r.reclaim.y, r.reclaim.width, 1);
            let below = Rect::new(
                r.disks.x,
                line.bottom(),
                r.disks.width,
                r.disks.bottom() - line.bottom(),
            );
            if view {
                (line, below, 6, 6)
            } else {
                (line, below, 5, 4)
            }
        } else {
            (r.reclaim, r.disks, 5, 4)
        };
        let th = throttled_h.min(cap).min(area.height.saturating_sub(keep));
        let top = Rect::new(area.x, area.y, area.width, area.height - th);
        let throttled = Rect::new(area.x, top.bottom(), area.width, th);
        let (who, disks) = if view {
            (top, empty(top))
        } else {
            (empty(top), top)
        };
        WhoRects {
            disks,
            throttled,
            who,
            charts: r.charts,
            reclaim,
        }
    }
}

/// `area` cut top to bottom by `Length`s and one `Min`, as ratatui's `Layout::vertical` does.
/// When every constraint fits, each `Length` gets its rows and the `Min` the rest; otherwise
/// (an area smaller than any layout is for) ratatui's solver decides.
fn stack<const N: usize>(area: Rect, constraints: [Constraint; N]) -> [Rect; N] {
    let needed: u16 = constraints
        .iter()
        .map(|c| match c {
            Constraint::Length(n) | Constraint::Min(n) => *n,
            _ => u16::MAX,
        })
        .fold(0, u16::saturating_add);
    if needed > area.height {
        return Layout::vertical(constraints).areas(area);
    }
    let spare = area.height - needed;
    let mut y = area.y;
    constraints.map(|c| {
        let h = match c {
            Constraint::Min(n) => n + spare,
            Constraint::Length(n) => n,
            _ => 0,
        };
        y += h;
        Rect::new(area.x, y - h, area.width, h)
    })
}

/// `area` cut into `K` columns of equal share, as ratatui lays out `K` constraints
/// `Ratio(1, K)`: column `i` starts at `i·width/K` rounded half up.
#[must_use]
pub fn columns<const K: usize>(area: Rect) -> [Rect; K] {
    std::array::from_fn(|i| {
        let (start, end) = (cut(area.width, K, i), cut(area.width, K, i + 1));
        Rect::new(area.x + start, area.y, end - start, area.height)
    })
}

/// `area` cut into `K` rows of equal share, as ratatui lays out `K` constraints `Ratio(1, K)`:
/// row `i` starts at `i·height/K` rounded half up.
#[must_use]
pub fn rows<const K: usize>(area: Rect) -> [Rect; K] {
    std::array::from_fn(|i| {
        let (start, end) = (cut(area.height, K, i), cut(area.height, K, i + 1));
        Rect::new(area.x, area.y + start, area.width, end - start)
    })
}

/// Where share `i` of `n` cells cut into `k` equal shares starts: `i·n/k` rounded half up.
fn cut(n: u16, k: usize, i: usize) -> u16 {
    let (n, k, i) = (u32::from(n), k as u32, i as u32);
    ((2 * i * n + k) / (2 * k)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cuts are the ones ratatui's solver makes for the same constraints: here for small
    /// sizes one by one and some larger ones (the solver is slow in a debug build; the same
    /// formulas were checked against it for every `u16` width).
    #[test]
    fn same_rects_as_ratatui_layout() {
        for n in (0..=40).chain([79, 80, 81, 119, 120, 121, 159, 160, 161, 211, 333, 4097]) {
            let (wide, tall) = (Rect::new(3, 5, n, 7), Rect::new(5, 3, 7, n));
            let ratio = |k| vec![Constraint::Ratio(1, k); k as usize];
            let across = |k| Layout::horizontal(ratio(k)).split(wide);
            let down = |k| Layout::vertical(ratio(k)).split(tall);
            assert_eq!(columns::<2>(wide)[..], across(2)[..], "{n}");
            assert_eq!(columns::<3>(wide)[..], across(3)[..], "{n}");
            assert_eq!(rows::<2>(tall)[..], down(2)[..], "{n}");
            assert_eq!(rows::<4>(tall)[..], down(4)[..], "{n}");
        }
        // Disks and jobs share their row 58/42.
        for w in (120..=130).chain([159, 160, 161, 211, 333, 4097]) {
            let r = PaneRects::for_area(Rect::new(0, 0, w, 40), 2, 1);
            let want = Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
                .split(Rect::new(0, 14, w, 5));
            assert_eq!([r.disks, r.jobs][..], want[..], "{w}");
        }
        for h in (0..=40).chain([48, 61, 120, 1000]) {
            let area = Rect::new(2, 1, 90, h);
            for disks_h in 5..=12 {
                let c = [
                    Constraint::Length(3),
                    Constraint::Length(11),
                    Constraint::Length(disks_h),
                    Constraint::Min(6),
                    Constraint::Length(1),
                ];
                assert_eq!(
                    stack(area, c)[..],
                    Layout::vertical(c).split(area)[..],
                    "{h}"
                );
            }
            for jobs_h in 0..=3 {
                let c = [
                    Constraint::Length(2),
                    Constraint::Length(8),
                    Constraint::Length(3),
                    Constraint::Min(3),
                    Constraint::Length(jobs_h),
                    Constraint::Length(1),
                ];
                assert_eq!(
                    stack(area, c)[..],
                    Layout::vertical(c).split(area)[..],
                    "{h}"
                );
            }
        }
    }

    #[test]
    fn who_panes_take_the_charts_or_the_disks() {
        let large = PaneRects::for_area(Rect::new(0, 0, 160, 48), 1, 0);
        let w = who(&large, false, 5);
        assert_eq!((w.throttled.y, w.throttled.height), (large.charts.y, 5));
        assert_eq!(w.charts.height, large.charts.height - 5);
        assert_eq!((w.who.height, w.disks), (0, large.disks));
        let w = who(&large, true, 0);
        assert_eq!((w.who, w.charts.height), (large.charts, 0));
        // Compact: the table under the disks (at most 5 rows), the view in the disks' place
        // and the reclaim pane's borders (6 rows each); the disks keep 4 rows.
        let small = PaneRects::for_area(Rect::new(0, 0, 80, 24), 1, 0);
        let w = who(&small, false, 9);
        assert_eq!(w.throttled.height, 5);
        assert_eq!(w.disks.height, small.disks.height - 5);
        assert_eq!(w.throttled.y, w.disks.bottom());
        let w = who(&small, true, 9);
        assert_eq!((w.throttled.height, w.disks.height), (6, 0));
        assert_eq!((w.who.height, w.who.y), (6, small.reclaim.y + 1));
        assert_eq!(
            (w.reclaim.height, w.throttled.bottom()),
            (1, small.disks.bottom())
        );
        assert_eq!(w.reclaim, who(&small, true, 0).reclaim);
        assert_eq!(who(&small, false, 9).reclaim, small.reclaim);
    }

    #[test]
    fn the_throttled_table_keeps_a_writer_when_jobs_take_the_disks_rows() {
        // 80x24 with a playbook running: its status line and two notices leave the disks 7
        // rows. Keeping the disks their 4, the table got 3 (borders and column names, no
        // writer) under a headline of "2 paused"; the reclaim pane gives up its borders.
        let small = PaneRects::for_area(Rect::new(0, 0, 80, 24), 1, 3);
        assert_eq!(small.disks.height, 7);
        let w = who(&small, false, 5);
        assert_eq!(w.throttled.height, 5, "{w:?}");
        assert_eq!(w.disks.height, 4);
        assert_eq!(w.reclaim.height, 1);
        assert_eq!(
            (w.disks.y, w.throttled.bottom()),
            (w.reclaim.bottom(), small.disks.bottom())
        );
        // Nobody throttled, or room enough: the reclaim pane keeps its borders.
        assert_eq!(who(&small, false, 0).reclaim, small.reclaim);
        let roomy = PaneRects::for_area(Rect::new(0, 0, 80, 24), 1, 0);
        assert_eq!(who(&roomy, false, 5).reclaim, roomy.reclaim);
    }
}
