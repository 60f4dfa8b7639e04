//! The app's one entry for messages, at the top of the folder: `App::update` applies a
//! message (`App::apply`, in `mod.rs`), lets a running playbook see the job reports and go
//! on (`play`), and saves what changed (`prefs`).
//!
//! Owns: `App::update`. Must not touch: anything but composing those three.

use super::{App, Effect, Msg, play, prefs};

impl App {
    /// Applies one message; returns what the runtime must do, with `Effect::Save` when the
    /// message changed a saved setting (`prefs`). A running playbook sees the job reports
    /// too, and goes on.
    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        let saves = matches!(msg, Msg::Key(_) | Msg::Action(_) | Msg::Pointer(_));
        let before = saves.then(|| prefs::Prefs::of(self));
        let seen = self.play.as_ref().and_then(|_| play::seen(&msg));
        let mut out = self.apply(msg);
        if self.play.is_some() {
            out.extend(self.drive_play(seen.as_ref()));
        }
        if let Some(before) = before {
            out.extend(prefs::Prefs::of(self).saved_since(&before));
        }
        out
    }
}
