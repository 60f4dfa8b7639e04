//! The part of the app's state that is saved between runs: the settings read from the config
//! file at start (`App::use_settings`), and the `Effect::Save` for those the user changes in
//! the screen, emitted by `App::update` as soon as a message changed one.
//!
//! Only what the user changed is saved: a setting given by a flag for this run stays out of
//! the file unless it is changed in the screen. Owns: which state is saved. Must not touch:
//! the file (the runtime's `config_io` writes it).

use super::{App, Effect};
use crate::config::{ProcSort, SortKey, WhoView};
use crate::config::{Setting, Settings, Units};

/// The saved settings as the app has them now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Prefs {
    interval_s: f64,
    pages: bool,
    sort: SortKey,
    proc_sort: ProcSort,
    who: Option<WhoView>,
    partitions: bool,
}

impl Prefs {
    /// The settings of `app`. In replay `interval_s` is the recording's, not changed by keys.
    pub(super) fn of(app: &App) -> Self {
        Self {
            interval_s: app.interval_s,
            pages: app.ui.pages,
            sort: app.ui.sort,
            proc_sort: app.ui.proc_sort,
            who: app.ui.who,
            partitions: app.ui.partitions,
        }
    }

    /// The effect that saves what changed since `before`, if anything did.
    pub(super) fn saved_since(&self, before: &Prefs) -> Option<Effect> {
        let mut out = Vec::new();
        if self.interval_s.to_bits() != before.interval_s.to_bits() {
            out.push(Setting::Interval(self.interval_s));
        }
        if self.pages != before.pages {
            out.push(Setting::Units(if self.pages {
                Units::Pages
            } else {
                Units::Bytes
            }));
        }
        if self.sort != before.sort {
            out.push(Setting::DiskSort(self.sort));
        }
        if self.proc_sort != before.proc_sort {
            out.push(Setting::ProcessSort(self.proc_sort));
        }
        if self.who != before.who {
            out.push(Setting::View(self.who));
        }
        if self.partitions != before.partitions {
            out.push(Setting::Partitions(self.partitions));
        }
        (!out.is_empty()).then_some(Effect::Save(out))
    }
}

impl App {
    /// Takes the settings that apply to the screen (units, sorts, view, partitions); the
    /// interval is given to `App::new`, the colours to `Look`, the fio directory to the
    /// runtime.
    pub fn use_settings(&mut self, s: &Settings) {
        if let Some(u) = s.units {
            self.ui.pages = u == Units::Pages;
        }
        if let Some(k) = s.disk_sort {
            self.ui.sort = k;
        }
        if let Some(k) = s.process_sort {
            self.ui.proc_sort = k;
        }
        if let Some(v) = s.view {
            self.ui.who = v;
        }
        if let Some(p) = s.partitions {
            self.ui.partitions = p;
        }
    }
}
