//! When to re-read the rarely changing files (zoneinfo, the vm sysctls, /sys/block) before
//! their regular slow refresh: the one decision the screen and batch mode share.
//!
//! Owns: `RefreshPolicy`. Must not touch: the source (callers ask it), I/O.

use super::Model;
use crate::parse::Snapshot;

/// Samples between two early refreshes at most.
pub const ASK_EVERY: u32 = 5;

/// Asks for an early refresh when a figure derived from the slow files disagrees with the
/// kernel's (`Model::derived_differs`: a sysctl write, a watermark or reserve change) or a
/// disk came or went (its /sys/block settings decide whether it is a whole disk). At most once
/// every `ASK_EVERY` samples, so a lasting difference costs what a 5-sample refresh did; a
/// change seen in between is owed and asked for once the wait is over.
#[derive(Debug, Clone)]
pub struct RefreshPolicy {
    since_ask: u32,
    owed: bool,
}

impl Default for RefreshPolicy {
    fn default() -> Self {
        Self {
            since_ask: ASK_EVERY,
            owed: false,
        }
    }
}

impl RefreshPolicy {
    /// Called once per sample with the snapshot before it, the sample's own and its model:
    /// whether to ask the source to re-read its slow files with the next sample.
    pub fn due(&mut self, prev: Option<&Snapshot>, cur: &Snapshot, model: &Model) -> bool {
        self.since_ask = self.since_ask.saturating_add(1);
        let disks_changed = prev.is_some_and(|p| {
            p.disks.len() != cur.disks.len()
                || p.disks
                    .iter()
                    .zip(&cur.disks)
                    .any(|(a, b)| a.name != b.name)
        });
        self.owed |= disks_changed || model.derived_differs();
        if self.owed && self.since_ask >= ASK_EVERY {
            self.since_ask = 0;
            self.owed = false;
            return true;
        }
        false
    }

    /// Counts a sample that gave no model (nothing to compare).
    pub fn skip(&mut self) {
        self.since_ask = self.since_ask.saturating_add(1);
    }
}
