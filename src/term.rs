//! The terminal: raw mode and the alternate screen on, and always back off again — on return,
//! on `?` errors (the guard's `Drop`), and on panic (ratatui's hook, installed by `try_init`).
//!
//! Owns: terminal setup and restore. The only module that enables raw mode.

use ratatui::DefaultTerminal;

/// Restores the terminal when dropped.
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        // Best effort: after SIGHUP the terminal may be gone.
        let _ = ratatui::try_restore();
    }
}

/// Enters raw mode and the alternate screen; the panic hook restores before reporting.
pub fn init() -> std::io::Result<(DefaultTerminal, Guard)> {
    let terminal = ratatui::try_init()?;
    Ok((terminal, Guard))
}
