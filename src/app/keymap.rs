//! Keys → actions, as data. The help overlay and the footer are generated from this table.
//!
//! Owns: `Action` and the key table. Must not touch: app state.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Quit pagewatch.
    Quit,
    /// Open or close the help overlay.
    Help,
    /// Freeze or resume the display.
    Pause,
    /// Sample less often.
    Slower,
    /// Sample more often.
    Faster,
    /// Move focus to the next pane.
    FocusNext,
    /// Move focus to the previous pane.
    FocusPrev,
    /// Select the row above (disks) .
    Up,
    /// Select the row below (disks).
    Down,
    /// Cycle the disk sort column.
    Sort,
    /// Show or hide partitions.
    Partitions,
    /// Show dirty figures in pages instead of bytes, or back.
    Units,
    /// Open the selected device's detail view.
    Detail,
    /// Close the overlay or detail view.
    Back,
}

/// One binding: the key, how it is shown, the action, and what it does.
pub struct Binding {
    /// Key code.
    pub code: KeyCode,
    /// Required modifiers (exact match, Shift ignored for characters).
    pub mods: KeyModifiers,
    /// How the help shows the key.
    pub label: &'static str,
    /// The action.
    pub action: Action,
    /// What it does, for the help.
    pub help: &'static str,
}

const fn key(code: KeyCode, label: &'static str, action: Action, help: &'static str) -> Binding {
    Binding {
        code,
        mods: KeyModifiers::NONE,
        label,
        action,
        help,
    }
}

/// Every binding, in help order.
pub const KEYMAP: [Binding; 18] = [
    key(KeyCode::Char('q'), "q", Action::Quit, "quit"),
    Binding {
        code: KeyCode::Char('c'),
        mods: KeyModifiers::CONTROL,
        label: "Ctrl-C",
        action: Action::Quit,
        help: "quit",
    },
    key(KeyCode::Char('?'), "?", Action::Help, "this help"),
    key(
        KeyCode::Char(' '),
        "Space",
        Action::Pause,
        "pause / resume display",
    ),
    key(KeyCode::Char('+'), "+", Action::Slower, "longer interval"),
    key(KeyCode::Char('='), "=", Action::Slower, "longer interval"),
    key(KeyCode::Char('-'), "-", Action::Faster, "shorter interval"),
    key(KeyCode::Tab, "Tab", Action::FocusNext, "focus next pane"),
    key(
        KeyCode::BackTab,
        "S-Tab",
        Action::FocusPrev,
        "focus previous pane",
    ),
    key(KeyCode::Right, "→", Action::FocusNext, "focus next pane"),
    key(KeyCode::Left, "←", Action::FocusPrev, "focus previous pane"),
    key(KeyCode::Up, "↑", Action::Up, "select disk above"),
    key(KeyCode::Down, "↓", Action::Down, "select disk below"),
    key(KeyCode::Char('s'), "s", Action::Sort, "cycle the disk sort"),
    key(
        KeyCode::Char('p'),
        "p",
        Action::Partitions,
        "show / hide partitions",
    ),
    key(
        KeyCode::Char('u'),
        "u",
        Action::Units,
        "dirty in pages / bytes",
    ),
    key(
        KeyCode::Enter,
        "Enter",
        Action::Detail,
        "selected disk details",
    ),
    key(KeyCode::Esc, "Esc", Action::Back, "back"),
];

/// The action bound to a key press, if any. Releases and repeats of other kinds are ignored.
#[must_use]
pub fn lookup(ev: &KeyEvent) -> Option<Action> {
    if ev.kind != KeyEventKind::Press {
        return None;
    }
    let mods = ev.modifiers - KeyModifiers::SHIFT;
    KEYMAP
        .iter()
        .find(|b| b.code == ev.code && b.mods == mods)
        .map(|b| b.action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_actions() {
        let k = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(lookup(&k(KeyCode::Char('q'))), Some(Action::Quit));
        assert_eq!(
            lookup(&KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(lookup(&k(KeyCode::Char('c'))), None);
        assert_eq!(
            lookup(&KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Action::Help)
        );
        assert_eq!(lookup(&k(KeyCode::Enter)), Some(Action::Detail));
        let mut release = k(KeyCode::Char('q'));
        release.kind = KeyEventKind::Release;
        assert_eq!(lookup(&release), None);
    }
}
