//! UI state that is not data: focus, sort order, selection, overlays.
//!
//! Owns: `UiState`, `Focus`, `SortKey`. Must not touch: drawing.

use crate::model::Disk;

/// Which pane has the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    /// Memory pane.
    Memory,
    /// Dirty & writeback pane.
    Dirty,
    /// Reclaim pane.
    Reclaim,
    /// Disks table.
    #[default]
    Disks,
    /// Jobs pane.
    Jobs,
}

impl Focus {
    const ORDER: [Focus; 5] = [
        Focus::Memory,
        Focus::Dirty,
        Focus::Reclaim,
        Focus::Disks,
        Focus::Jobs,
    ];

    fn index(self) -> usize {
        Self::ORDER.iter().position(|f| *f == self).unwrap_or(0)
    }

    /// The next pane, wrapping.
    #[must_use]
    pub fn next(self) -> Self {
        Self::ORDER[(self.index() + 1) % Self::ORDER.len()]
    }

    /// The previous pane, wrapping.
    #[must_use]
    pub fn prev(self) -> Self {
        Self::ORDER[(self.index() + Self::ORDER.len() - 1) % Self::ORDER.len()]
    }
}

/// The disk table's sort column; all but `Name` sort busiest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// %util.
    #[default]
    Util,
    /// aqu-sz.
    AquSz,
    /// The larger of r_await and w_await.
    Await,
    /// r/s + w/s.
    Iops,
    /// rkB/s + wkB/s.
    Throughput,
    /// Device name, ascending.
    Name,
}

/// The item after `cur` in `order`, wrapping (the first when `cur` is not in it).
fn next_in<T: Copy + PartialEq>(order: &[T], cur: T) -> T {
    let i = order.iter().position(|k| *k == cur).map_or(0, |i| i + 1);
    order[i % order.len()]
}

impl SortKey {
    const ORDER: [SortKey; 6] = [
        SortKey::Util,
        SortKey::AquSz,
        SortKey::Await,
        SortKey::Iops,
        SortKey::Throughput,
        SortKey::Name,
    ];

    /// The next sort column, wrapping.
    #[must_use]
    pub fn next(self) -> Self {
        next_in(&Self::ORDER, self)
    }

    /// The column title this key sorts on.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Util => "%util",
            SortKey::AquSz => "aqu-sz",
            SortKey::Await => "await",
            SortKey::Iops => "IOPS",
            SortKey::Throughput => "kB/s",
            SortKey::Name => "name",
        }
    }

    fn value(self, d: &Disk) -> f64 {
        let c = &d.cols;
        let z = |v: Option<f64>| v.unwrap_or(0.0);
        match self {
            SortKey::Util => z(c.util_pct),
            SortKey::AquSz => z(c.aqu_sz),
            SortKey::Await => z(c.r_await).max(z(c.w_await)),
            SortKey::Iops => z(c.r_s) + z(c.w_s),
            SortKey::Throughput => z(c.rkB_s) + z(c.wkB_s),
            SortKey::Name => 0.0,
        }
    }

    /// Sorts busiest first (ties and `Name` by name), a stable, explicit order.
    pub fn sort(self, disks: &mut [&Disk]) {
        disks.sort_by(|a, b| {
            self.value(b)
                .total_cmp(&self.value(a))
                .then_with(|| a.name.cmp(&b.name))
        });
    }
}

/// Everything about the view that is not data. Independent switches, hence the bools.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, Default)]
pub struct UiState {
    /// Focused pane.
    pub focus: Focus,
    /// Disk sort column.
    pub sort: SortKey,
    /// Selected disk by name (stays on the device when the order changes).
    pub selected: Option<String>,
    /// Display frozen.
    pub paused: bool,
    /// Help overlay open.
    pub help: bool,
    /// Device detail view open.
    pub detail: bool,
    /// Partitions shown.
    pub partitions: bool,
    /// Dirty figures in pages rather than bytes.
    pub pages: bool,
    /// The "who" view in place of the charts (large) or the disks (compact), if any.
    pub who: Option<WhoView>,
    /// The cgroup (path below the cgroup2 mount) the processes view is scoped to, if any.
    pub scope: Option<String>,
    /// The processes view's sort column.
    pub proc_sort: ProcSort,
    /// The selected process (stays on the pid when the order changes).
    pub proc_selected: Option<u32>,
    /// The selected cgroup in the cgroups view.
    pub cgroup_selected: Option<String>,
    /// A task's kernel stack, shown over the processes view: (pid, text or why not).
    pub stack: Option<(u32, String)>,
}

/// The processes view's sort column; all but `Pid` sort busiest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcSort {
    /// Bytes dirtied per second (`write_bytes`).
    #[default]
    Dirtied,
    /// Bytes read from storage per second (`read_bytes`).
    Read,
    /// Bytes read by syscalls per second (`rchar`).
    Rchar,
    /// Bytes written by syscalls per second (`wchar`).
    Wchar,
    /// Block-IO wait (delay accounting), ms per second.
    IoWait,
    /// Process id, ascending.
    Pid,
}

impl ProcSort {
    const ORDER: [ProcSort; 6] = [
        ProcSort::Dirtied,
        ProcSort::Read,
        ProcSort::Rchar,
        ProcSort::Wchar,
        ProcSort::IoWait,
        ProcSort::Pid,
    ];

    /// The next sort column, wrapping.
    #[must_use]
    pub fn next(self) -> Self {
        next_in(&Self::ORDER, self)
    }

    /// The column's name, as the footer shows it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            ProcSort::Dirtied => "dirtied/s",
            ProcSort::Read => "read/s",
            ProcSort::Rchar => "rchar/s",
            ProcSort::Wchar => "wchar/s",
            ProcSort::IoWait => "iowait",
            ProcSort::Pid => "pid",
        }
    }
}

/// The "who" views: who dirties, reads, waits or is throttled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhoView {
    /// Processes by IO activity.
    Processes,
    /// The cgroup v2 tree with each group's dirty domain.
    Cgroups,
}
