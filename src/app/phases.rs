//! The phase table of a playbook that ended in the screen: the same table `pagewatch play`
//! prints (`play::table`), over the models and events since the playbook started, shown in
//! an overlay until Esc or Enter, and scrolled with the arrows when it does not fit.
//!
//! Owns: the events and models kept while a playbook runs (slimmed: no processes, cgroups, domains or
//! throttled rows, which the table does not read), the finished table and its scroll
//! position. Must not touch: the terminal (`ui::panes::phases` draws it), processes, files.

use super::keymap::{Key, MouseKind};
use super::{App, Effect};
use crate::model::Model;
use crate::play::seq::Sequencer;
use crate::play::table::{PhaseRow, phases, render_text};

/// Most models kept for one playbook's table (about 3 hours at one sample a second); past
/// it the oldest go, and the first phases' figures with them.
const MAX_MODELS: usize = 10_000;

/// Columns one left or right arrow scrolls.
const SIDE_STEP: isize = 8;

/// A finished playbook's phase table, as the overlay shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseTable {
    /// The playbook's end: `playbook NAME ends`, or why it stopped.
    pub title: String,
    /// The rows (as `pagewatch play --format json` has them).
    pub rows: Vec<PhaseRow>,
    /// The table as text (`play::table::render_text`), one entry per line.
    pub lines: Vec<String>,
    /// First line shown.
    pub top: usize,
    /// First column shown.
    pub left: usize,
}

impl PhaseTable {
    /// The widest line, in characters.
    #[must_use]
    pub fn width(&self) -> usize {
        self.lines
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    }

    fn scroll(&mut self, down: isize, right: isize) {
        let max_top = self.lines.len().saturating_sub(1);
        let max_left = self.width().saturating_sub(1);
        self.top = self.top.saturating_add_signed(down).min(max_top);
        self.left = self.left.saturating_add_signed(right).min(max_left);
    }
}

impl App {
    /// A playbook starts: its table will cover the events logged and the samples taken from
    /// now on.
    pub(super) fn phases_start(&mut self) {
        self.play_events = Some(Vec::new());
        self.play_models.clear();
    }

    /// A sample's model while a playbook runs, without what the table does not read.
    pub(super) fn phases_keep(&mut self, model: &mut Model) {
        if self.play.is_none() {
            return;
        }
        let heavy = (
            model.processes.take(),
            model.cgroups.take(),
            std::mem::take(&mut model.domains),
            std::mem::take(&mut model.throttled),
        );
        if self.play_models.len() >= MAX_MODELS {
            self.play_models.remove(0);
        }
        self.play_models.push(model.clone());
        (
            model.processes,
            model.cgroups,
            model.domains,
            model.throttled,
        ) = heavy;
    }

    /// The playbook `seq` ended (`title` says how): its table opens over the screen, unless
    /// it had no phases.
    pub(super) fn phases_end(&mut self, seq: &Sequencer, title: String) {
        let models = std::mem::take(&mut self.play_models);
        let events = self.play_events.take().unwrap_or_default();
        let rows = phases(&models, &events, seq.device(), self.now_ms);
        if rows.is_empty() {
            return;
        }
        let text = render_text(&rows);
        self.phase_table = Some(PhaseTable {
            title,
            lines: text.lines().map(str::to_owned).collect(),
            rows,
            top: 0,
            left: 0,
        });
    }

    /// A key while the table is open: Esc or Enter closes it, the arrows (or h j k l) scroll.
    pub(super) fn phases_key(&mut self, k: Key) -> Vec<Effect> {
        let Some(t) = &mut self.phase_table else {
            return Vec::new();
        };
        match k {
            Key::Esc | Key::Enter => self.phase_table = None,
            Key::Up | Key::Char('k') => t.scroll(-1, 0),
            Key::Down | Key::Char('j') => t.scroll(1, 0),
            Key::Left | Key::Char('h') => t.scroll(0, -SIDE_STEP),
            Key::Right | Key::Char('l') => t.scroll(0, SIDE_STEP),
            Key::Char('g') => (t.top, t.left) = (0, 0),
            _ => {}
        }
        Vec::new()
    }

    /// A click closes the table; the wheel scrolls it.
    pub(super) fn phases_pointer(&mut self, kind: MouseKind) {
        let Some(t) = &mut self.phase_table else {
            return;
        };
        match kind {
            MouseKind::Click => self.phase_table = None,
            MouseKind::WheelUp => t.scroll(-3, 0),
            MouseKind::WheelDown => t.scroll(3, 0),
        }
    }
}

#[cfg(test)]
#[path = "phases_tests.rs"]
mod tests;
