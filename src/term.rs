//! The terminal: raw mode and the alternate screen on, and always back off again — on return,
//! on `?` errors (the guard's `Drop`), and on panic (a hook installed by `init` restores before
//! the report is printed).
//!
//! Frames are collected in memory and written with one `write` per frame (`FrameOut`): the
//! standard output is line-buffered, which split each frame into several writes. Output that
//! was not flushed when the terminal is dropped (a panic in the middle of a frame) is dropped
//! with it, never written after the terminal was restored.
//! Owns: terminal setup and restore. The only module that enables raw mode.

use std::io::{self, Write};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{EnterAlternateScreen, enable_raw_mode};

/// The terminal the TUI draws on.
pub type Term = Terminal<CrosstermBackend<FrameOut>>;

/// Standard output, written once per flush.
#[derive(Default)]
pub struct FrameOut {
    buf: Vec<u8>,
}

impl Write for FrameOut {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let mut out = io::stdout().lock();
            let res = out.write_all(&self.buf).and_then(|()| out.flush());
            self.buf.clear();
            res?;
        }
        Ok(())
    }
}

/// Restores the terminal when dropped.
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        // Best effort: after SIGHUP the terminal may be gone.
        let _ = ratatui::try_restore();
    }
}

/// Enters raw mode and the alternate screen; the panic hook restores before reporting.
pub fn init() -> io::Result<(Term, Guard)> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = ratatui::try_restore();
        hook(info);
    }));
    enable_raw_mode()?;
    // From here on the guard restores, whatever fails next.
    let guard = Guard;
    execute!(io::stdout(), EnterAlternateScreen)?;
    let terminal = Terminal::new(CrosstermBackend::new(FrameOut::default()))?;
    Ok((terminal, guard))
}
