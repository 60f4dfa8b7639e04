//! UI state that is not data: focus, sort order, selection, overlays.
//!
//! Owns: `UiState`, `Focus` (the sort columns and views it holds are `config::choices`).
//! Must not touch: drawing.

use crate::config::{CgroupSort, ProcSort, SortKey, WhoView};

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
    /// The help overlay shows its end (its notes on what the figures mean), where the
    /// terminal is too short for all of it: ↓ goes there, ↑ back to the keys.
    pub help_end: bool,
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
    /// The processes view rolls rows up by command (`r`).
    pub proc_rollup: bool,
    /// The selected process (stays on the pid when the order changes).
    pub proc_selected: Option<u32>,
    /// The selected cgroup in the cgroups view.
    pub cgroup_selected: Option<String>,
    /// The cgroups view's sort.
    pub cgroup_sort: CgroupSort,
    /// A task's kernel stack, shown over the processes view: (pid, text or why not).
    pub stack: Option<(u32, String)>,
    /// The task whose stack is open (`K`): re-read at every sample until Esc.
    pub stack_pid: Option<u32>,
    /// The processes view shows command lines in place of comm (`a`).
    pub cmdline: bool,
    /// The command lines of the rows shown, as last read (`JobReport::Cmdlines`).
    pub cmdlines: std::collections::HashMap<u32, String>,
}
