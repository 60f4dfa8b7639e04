//! Styles: ok/warn/crit colours for thresholds, and a monochrome set for NO_COLOR.
//!
//! Owns: `Theme`, and `theme`, the one in force for an app (`ui::theme`, which every pane
//! calls). Must not touch: layout or data.

use ratatui::style::{Color, Modifier, Style};

use crate::app::App;

/// Every style the panes use.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    /// Normal text.
    pub text: Style,
    /// Labels and secondary text.
    pub dim: Style,
    /// Healthy state.
    pub ok: Style,
    /// Approaching a limit.
    pub warn: Style,
    /// At or past a limit.
    pub crit: Style,
    /// Pane titles.
    pub title: Style,
    /// Border of the focused pane.
    pub focus: Style,
    /// Selected table row.
    pub selected: Style,
    /// Memory bar segments: anon, file, dirty, writeback, shmem, slab, free.
    pub segments: [Style; 7],
    /// Whether colours are in use (segments then draw as solid blocks).
    pub color: bool,
}

/// The colour theme.
pub const COLOR: Theme = Theme {
    text: Style::new(),
    dim: Style::new().fg(Color::DarkGray),
    ok: Style::new().fg(Color::Green),
    warn: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
    crit: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
    title: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
    focus: Style::new().fg(Color::Cyan),
    selected: Style::new().add_modifier(Modifier::REVERSED),
    segments: [
        Style::new().fg(Color::Magenta),
        Style::new().fg(Color::Blue),
        Style::new().fg(Color::Yellow),
        Style::new().fg(Color::Red),
        Style::new().fg(Color::Cyan),
        Style::new().fg(Color::Green),
        Style::new().fg(Color::DarkGray),
    ],
    color: true,
};

/// NO_COLOR: emphasis by weight and reverse video only.
pub const MONO: Theme = Theme {
    text: Style::new(),
    dim: Style::new(),
    ok: Style::new(),
    warn: Style::new().add_modifier(Modifier::BOLD),
    crit: Style::new()
        .add_modifier(Modifier::BOLD)
        .add_modifier(Modifier::REVERSED),
    title: Style::new().add_modifier(Modifier::BOLD),
    focus: Style::new().add_modifier(Modifier::BOLD),
    selected: Style::new().add_modifier(Modifier::REVERSED),
    segments: [Style::new(); 7],
    color: false,
};

/// The theme in force for this app.
#[must_use]
pub fn theme(app: &App) -> &'static Theme {
    if app.look.mono { &MONO } else { &COLOR }
}
