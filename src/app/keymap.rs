//! Keys → actions, as data. The help overlay and the footer are generated from this table.
//!
//! Owns: `Key` (a terminal-free key), `Action` and the key table, with which bindings apply
//! live and which in replay, and `Mouse` (a terminal-free click or wheel turn, placed on the
//! screen by the runtime through `ui::hit`). Must not touch: app state. The only crossterm
//! uses are `key_of` and `mouse_of`, which turn terminal events into a `Key` or a `Mouse`.

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

/// A key press, independent of the terminal library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character (Shift already applied).
    Char(char),
    /// Ctrl with a character.
    Ctrl(char),
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Backspace.
    Backspace,
    /// Tab.
    Tab,
    /// Shift-Tab.
    BackTab,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
}

/// The `Key` of a terminal key press; releases, repeats of other kinds and keys pagewatch
/// does not use give `None`.
#[must_use]
pub fn key_of(ev: &KeyEvent) -> Option<Key> {
    if ev.kind != KeyEventKind::Press {
        return None;
    }
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    Some(match ev.code {
        KeyCode::Char(c) if ctrl => Key::Ctrl(c.to_ascii_lowercase()),
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        _ => return None,
    })
}

/// A mouse event pagewatch uses, independent of the terminal library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mouse {
    /// What the mouse did.
    pub kind: MouseKind,
    /// Column, 0 at the left.
    pub column: u16,
    /// Row, 0 at the top.
    pub row: u16,
}

/// A left click or a turn of the wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    /// The left button went down: focus the pane or select the row.
    Click,
    /// The wheel turned up: the row above.
    WheelUp,
    /// The wheel turned down: the row below.
    WheelDown,
}

/// The `Mouse` of a terminal mouse event; other buttons, releases, drags and moves give
/// `None`.
#[must_use]
pub fn mouse_of(ev: &MouseEvent) -> Option<Mouse> {
    let kind = match ev.kind {
        MouseEventKind::Down(MouseButton::Left) => MouseKind::Click,
        MouseEventKind::ScrollUp => MouseKind::WheelUp,
        MouseEventKind::ScrollDown => MouseKind::WheelDown,
        _ => return None,
    };
    Some(Mouse {
        kind,
        column: ev.column,
        row: ev.row,
    })
}

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Quit pagewatch.
    Quit,
    /// Open or close the help overlay.
    Help,
    /// Freeze or resume the display (live), or play and pause (replay).
    Pause,
    /// Sample less often (live) or play slower (replay).
    Slower,
    /// Sample more often (live) or play faster (replay).
    Faster,
    /// Move focus to the next pane.
    FocusNext,
    /// Move focus to the previous pane.
    FocusPrev,
    /// Select the row above (disks or jobs).
    Up,
    /// Select the row below (disks or jobs).
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
    /// Start a memory eater (asks for the size).
    EatMemory,
    /// Start a fio job (asks for the preset and its settings).
    RunFio,
    /// Stop or release the selected job.
    StopJob,
    /// Drop the page cache (root; asks which level).
    DropCaches,
    /// Add a marker with a short text.
    Marker,
    /// Replay: back one sample.
    StepBack,
    /// Replay: forward one sample.
    StepForward,
    /// Replay: back one minute.
    MinuteBack,
    /// Replay: forward one minute.
    MinuteForward,
    /// Replay: jump to the start.
    Start,
    /// Replay: jump to the end.
    End,
    /// Open or close the processes view (who dirties, reads, waits).
    Processes,
    /// Open or close the cgroups view (each group's dirty domain).
    Cgroups,
    /// Show the selected task's kernel stack (root).
    Stack,
    /// Show command lines in place of command names in the processes view.
    Cmdline,
    /// The processes view by command (rolled up, with a count) or by pid.
    RollUp,
    /// Pick a built-in playbook and run it.
    Playbook,
    /// Change one kernel setting by hand (root; restored on quit).
    Tune,
}

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Live and replay.
    Both,
    /// Live only.
    Live,
    /// Replay only.
    Replay,
}

/// One binding: the key, how it is shown, the action, and what it does.
pub struct Binding {
    /// The key.
    pub key: Key,
    /// How the help shows the key.
    pub label: &'static str,
    /// The action.
    pub action: Action,
    /// What it does, for the help.
    pub help: &'static str,
    /// Where it applies.
    pub scope: Scope,
}

const fn key(key: Key, label: &'static str, action: Action, help: &'static str) -> Binding {
    Binding {
        key,
        label,
        action,
        help,
        scope: Scope::Both,
    }
}

const fn live(key: Key, label: &'static str, action: Action, help: &'static str) -> Binding {
    Binding {
        key,
        label,
        action,
        help,
        scope: Scope::Live,
    }
}

const fn replay(key: Key, label: &'static str, action: Action, help: &'static str) -> Binding {
    Binding {
        key,
        label,
        action,
        help,
        scope: Scope::Replay,
    }
}

/// Every binding, in help order.
pub const KEYMAP: [Binding; 40] = [
    key(Key::Char('q'), "q", Action::Quit, "quit"),
    key(Key::Ctrl('c'), "Ctrl-C", Action::Quit, "quit"),
    key(Key::Char('?'), "?", Action::Help, "this help"),
    live(
        Key::Char(' '),
        "Space",
        Action::Pause,
        "pause / resume display",
    ),
    replay(Key::Char(' '), "Space", Action::Pause, "play / pause"),
    live(Key::Char('+'), "+", Action::Slower, "longer interval"),
    live(Key::Char('='), "=", Action::Slower, "longer interval"),
    live(Key::Char('-'), "-", Action::Faster, "shorter interval"),
    replay(
        Key::Char('+'),
        "+",
        Action::Faster,
        "play faster (up to 60x)",
    ),
    replay(Key::Char('='), "=", Action::Faster, "play faster"),
    replay(
        Key::Char('-'),
        "-",
        Action::Slower,
        "play slower (down to 1x)",
    ),
    key(Key::Tab, "Tab", Action::FocusNext, "focus next pane"),
    key(
        Key::BackTab,
        "S-Tab",
        Action::FocusPrev,
        "focus previous pane",
    ),
    live(Key::Right, "→", Action::FocusNext, "focus next pane"),
    live(Key::Left, "←", Action::FocusPrev, "focus previous pane"),
    replay(Key::Left, "←", Action::StepBack, "back one sample"),
    replay(Key::Right, "→", Action::StepForward, "forward one sample"),
    replay(Key::Char('['), "[", Action::MinuteBack, "back one minute"),
    replay(
        Key::Char(']'),
        "]",
        Action::MinuteForward,
        "forward one minute",
    ),
    replay(Key::Char('g'), "g", Action::Start, "jump to the start"),
    replay(Key::Char('G'), "G", Action::End, "jump to the end"),
    key(Key::Up, "↑", Action::Up, "select disk / job above"),
    key(Key::Down, "↓", Action::Down, "select disk / job below"),
    key(Key::Char('s'), "s", Action::Sort, "cycle the disk sort"),
    key(
        Key::Char('p'),
        "p",
        Action::Partitions,
        "show / hide partitions",
    ),
    key(Key::Char('u'), "u", Action::Units, "dirty in pages / bytes"),
    key(Key::Enter, "Enter", Action::Detail, "disk / job details"),
    key(Key::Esc, "Esc", Action::Back, "back"),
    key(
        Key::Char('w'),
        "w",
        Action::Processes,
        "processes by IO (who)",
    ),
    key(
        Key::Char('c'),
        "c",
        Action::Cgroups,
        "cgroups, dirty limits",
    ),
    live(Key::Char('K'), "K", Action::Stack, "kernel stack (root)"),
    live(Key::Char('a'), "a", Action::Cmdline, "command lines (who)"),
    key(Key::Char('r'), "r", Action::RollUp, "processes by command"),
    live(Key::Char('m'), "m", Action::EatMemory, "eat memory"),
    live(Key::Char('f'), "f", Action::RunFio, "run a fio job"),
    live(
        Key::Char('x'),
        "x",
        Action::StopJob,
        "stop / release / dismiss",
    ),
    live(
        Key::Char('D'),
        "D",
        Action::DropCaches,
        "drop caches (root)",
    ),
    live(Key::Char('M'), "M", Action::Marker, "add a marker"),
    live(Key::Char('P'), "P", Action::Playbook, "run a playbook"),
    live(Key::Char('T'), "T", Action::Tune, "tune a setting (root)"),
];

/// The action bound to `key`, live or in replay.
#[must_use]
pub fn lookup(key: Key, replaying: bool) -> Option<Action> {
    bindings(replaying).find(|b| b.key == key).map(|b| b.action)
}

/// The bindings that apply live or in replay, in help order.
pub fn bindings(replaying: bool) -> impl Iterator<Item = &'static Binding> {
    KEYMAP.iter().filter(move |b| match b.scope {
        Scope::Both => true,
        Scope::Live => !replaying,
        Scope::Replay => replaying,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_keys_become_keys() {
        let k = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(key_of(&k(KeyCode::Char('q'))), Some(Key::Char('q')));
        assert_eq!(
            key_of(&KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Key::Ctrl('c'))
        );
        assert_eq!(
            key_of(&KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Key::Char('?'))
        );
        let mut release = k(KeyCode::Char('q'));
        release.kind = KeyEventKind::Release;
        assert_eq!(key_of(&release), None);
        assert_eq!(key_of(&k(KeyCode::F(5))), None);
    }

    #[test]
    fn terminal_mouse_events_become_mice() {
        let ev = |kind| MouseEvent {
            kind,
            column: 7,
            row: 3,
            modifiers: KeyModifiers::NONE,
        };
        let m = |kind| {
            Some(Mouse {
                kind,
                column: 7,
                row: 3,
            })
        };
        assert_eq!(
            mouse_of(&ev(MouseEventKind::Down(MouseButton::Left))),
            m(MouseKind::Click)
        );
        assert_eq!(
            mouse_of(&ev(MouseEventKind::ScrollUp)),
            m(MouseKind::WheelUp)
        );
        assert_eq!(
            mouse_of(&ev(MouseEventKind::ScrollDown)),
            m(MouseKind::WheelDown)
        );
        for other in [
            MouseEventKind::Down(MouseButton::Right),
            MouseEventKind::Up(MouseButton::Left),
            MouseEventKind::Drag(MouseButton::Left),
            MouseEventKind::Moved,
            MouseEventKind::ScrollLeft,
        ] {
            assert_eq!(mouse_of(&ev(other)), None, "{other:?}");
        }
    }

    #[test]
    fn keys_map_to_actions_per_mode() {
        assert_eq!(lookup(Key::Char('q'), false), Some(Action::Quit));
        assert_eq!(lookup(Key::Ctrl('c'), true), Some(Action::Quit));
        assert_eq!(lookup(Key::Char('c'), false), Some(Action::Cgroups));
        assert_eq!(lookup(Key::Char('z'), false), None);
        assert_eq!(lookup(Key::Enter, false), Some(Action::Detail));
        assert_eq!(lookup(Key::Right, false), Some(Action::FocusNext));
        assert_eq!(lookup(Key::Right, true), Some(Action::StepForward));
        assert_eq!(lookup(Key::Char('+'), false), Some(Action::Slower));
        assert_eq!(lookup(Key::Char('+'), true), Some(Action::Faster));
        assert_eq!(lookup(Key::Char('m'), false), Some(Action::EatMemory));
        assert_eq!(lookup(Key::Char('m'), true), None);
        assert_eq!(lookup(Key::Char('G'), true), Some(Action::End));
        assert_eq!(lookup(Key::Char('P'), false), Some(Action::Playbook));
        assert_eq!(lookup(Key::Char('T'), false), Some(Action::Tune));
        assert_eq!(lookup(Key::Char('P'), true), None);
    }

    #[test]
    fn no_key_is_bound_twice_in_one_mode() {
        for replaying in [false, true] {
            let keys: Vec<Key> = bindings(replaying).map(|b| b.key).collect();
            for (i, k) in keys.iter().enumerate() {
                assert!(!keys[..i].contains(k), "{k:?} bound twice");
            }
        }
    }
}
