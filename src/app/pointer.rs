//! Clicks and the wheel, once the runtime has placed them on the screen (`ui::hit` finds
//! the pane or row under the pointer with the rectangles the screen is drawn with): a click
//! focuses a pane or selects a disk, job, process or cgroup; the wheel moves the selection
//! of the table under the pointer, as the arrows do.
//!
//! Owns: those transitions. Must not touch: the layout (`ui::hit`), the terminal.

use super::{Action, App, Effect, Focus, MouseKind, Pointer, Target};

impl App {
    /// Applies a click or wheel turn.
    pub(super) fn pointer(&mut self, p: Pointer) -> Vec<Effect> {
        if self.phase_table.is_some() && self.prompt.is_none() {
            self.phases_pointer(p.kind);
            return Vec::new();
        }
        if self.prompt.is_some() || self.ui.detail {
            return Vec::new();
        }
        if self.ui.help {
            match p.kind {
                MouseKind::Click => self.ui.help = false,
                MouseKind::WheelUp => self.ui.help_end = false,
                MouseKind::WheelDown => self.ui.help_end = true,
            }
            return Vec::new();
        }
        match p.kind {
            MouseKind::Click => self.click(p.target),
            MouseKind::WheelUp => self.wheel(&p.target, false),
            MouseKind::WheelDown => self.wheel(&p.target, true),
        }
    }

    fn click(&mut self, target: Target) -> Vec<Effect> {
        match target {
            Target::Pane(f) => {
                if f != Focus::Jobs || self.jobs.has_rows() {
                    self.ui.focus = f;
                }
            }
            Target::Disk(name) => {
                self.ui.focus = Focus::Disks;
                self.ui.selected = Some(name);
            }
            Target::Job(id) => {
                self.ui.focus = Focus::Jobs;
                self.jobs.select(super::jobs::JobRef::Own(id));
            }
            Target::JobRow(r) => {
                self.ui.focus = Focus::Jobs;
                self.jobs.select(r);
            }
            Target::Who => {}
            Target::Process(pid) => {
                self.ui.stack = None;
                self.ui.proc_selected = Some(pid);
            }
            Target::Cgroup(path) => self.ui.cgroup_selected = Some(path),
        }
        Vec::new()
    }

    fn wheel(&mut self, target: &Target, down: bool) -> Vec<Effect> {
        match target {
            Target::Pane(Focus::Disks) | Target::Disk(_) => self.move_selection(down),
            Target::Pane(Focus::Jobs) | Target::Job(_) | Target::JobRow(_) => {
                self.ui.focus = Focus::Jobs;
                self.jobs.move_selection(down);
            }
            Target::Who | Target::Process(_) | Target::Cgroup(_) => {
                return self.act(if down { Action::Down } else { Action::Up });
            }
            Target::Pane(_) => {}
        }
        Vec::new()
    }
}
