//! The terminal: raw mode and the alternate screen on, and always back off again — on return,
//! on `?` errors (the guard's `Drop`), and on panic (a hook installed by `init` restores before
//! the report is printed).
//!
//! Frames are collected in memory and written with one `write` per frame (`FrameOut`): the
//! standard output is line-buffered, which split each frame into several writes. Output that
//! was not flushed when the terminal is dropped (a panic in the middle of a frame) is dropped
//! with it, never written after the terminal was restored.
//!
//! Frames come from `ui::Screen`, which sends only the cells that changed; this module writes
//! them, hides the cursor, and on a size change clears the terminal first (what ratatui's
//! `Terminal::draw` does, without painting and diffing the whole screen every frame). The size
//! is asked of the standard output with one `ioctl` (crossterm's `window_size` opens
//! `/dev/tty` on every call), for the first frame and the first after each resize event
//! (`Term::resized`), not on every frame.
//!
//! Mouse reporting (unless `--no-mouse`) asks for button presses and the wheel only
//! (`?1000h`, SGR coordinates `?1006h`), not every movement (crossterm's
//! `EnableMouseCapture` also asks for motion, an input wake-up for each mouse move). It is
//! turned off wherever the terminal is restored: the guard's drop (orderly exit, `?`
//! errors, SIGTERM, SIGHUP, SIGINT and SIGQUIT, which all quit through the main loop) and
//! the panic hook.
//! Owns: terminal setup, drawing and restore. The only module that enables raw mode.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{EnterAlternateScreen, enable_raw_mode};
use ratatui::layout::Rect;

use crate::app::App;
use crate::ui::Screen;

/// The terminal the TUI draws on.
pub struct Term {
    backend: CrosstermBackend<FrameOut>,
    screen: Screen,
    /// Size at the last frame; `None` before the first.
    known: Option<Rect>,
    /// The terminal reported a resize since the last frame: ask its size again.
    resized: bool,
}

impl Term {
    /// Draws `app`'s frame: the cells that changed since the last one.
    pub fn draw(&mut self, app: &App) -> io::Result<()> {
        let area = self.area_now()?;
        let updates = self.screen.frame(app, area);
        self.show(&updates)
    }

    /// Draws the frame `paint` paints whole into a buffer of the terminal's size (the
    /// fleet's list, or one of its hosts' screens): the cells that changed.
    pub fn draw_with(&mut self, paint: impl FnOnce(Rect, &mut Buffer)) -> io::Result<()> {
        let area = self.area_now()?;
        let updates = self.screen.painted(area, |b| paint(area, b));
        self.show(&updates)
    }

    /// The terminal's size now, clearing it when that changed.
    fn area_now(&mut self) -> io::Result<Rect> {
        let area = match self.known {
            Some(area) if !self.resized => area,
            _ => size()?,
        };
        self.resized = false;
        if self.known != Some(area) {
            self.backend.clear()?;
            self.screen.clear(area);
        }
        self.known = Some(area);
        Ok(area)
    }

    /// Writes `updates` and flushes.
    fn show(&mut self, updates: &[crate::ui::Update]) -> io::Result<()> {
        if !updates.is_empty() {
            self.backend
                .draw(updates.iter().map(|(x, y, c)| (*x, *y, c)))?;
        }
        self.backend.hide_cursor()?;
        Backend::flush(&mut self.backend)
    }
}

impl Term {
    /// The size of the last frame drawn (what a mouse event's position refers to).
    #[must_use]
    pub fn area(&self) -> Option<Rect> {
        self.known
    }

    /// The terminal reported a new size (SIGWINCH, as crossterm's resize event): the next
    /// frame asks for it.
    pub fn resized(&mut self) {
        self.resized = true;
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        // Straight to stdout: a frame cut short by a panic stays unwritten in `FrameOut`.
        let _ = execute!(io::stdout(), ratatui::crossterm::cursor::Show);
    }
}

/// The terminal's size, from the standard output (from crossterm when that is not a terminal).
fn size() -> io::Result<Rect> {
    if let Ok(ws) = rustix::termios::tcgetwinsize(io::stdout()) {
        return Ok(Rect::new(0, 0, ws.ws_col, ws.ws_row));
    }
    let (w, h) = ratatui::crossterm::terminal::size()?;
    Ok(Rect::new(0, 0, w, h))
}

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
        restore();
    }
}

/// Mouse reporting was turned on (and is to be turned off on restore).
static MOUSE_ON: AtomicBool = AtomicBool::new(false);

/// Button presses and the wheel, in SGR coordinates (no motion reports).
const MOUSE_ENABLE: &[u8] = b"\x1b[?1000h\x1b[?1006h";
/// Turns off what `MOUSE_ENABLE` turned on.
const MOUSE_DISABLE: &[u8] = b"\x1b[?1006l\x1b[?1000l";

/// Mouse reporting off (when it was on), then raw mode and the alternate screen off.
fn restore() {
    if MOUSE_ON.swap(false, Ordering::SeqCst) {
        let mut out = io::stdout();
        let _ = out.write_all(MOUSE_DISABLE).and_then(|()| out.flush());
    }
    let _ = ratatui::try_restore();
}

/// Enters raw mode and the alternate screen, with mouse reporting when `mouse`; the panic
/// hook restores before reporting.
pub fn init(mouse: bool) -> io::Result<(Term, Guard)> {
    check_capable(std::env::var("TERM").ok().as_deref())?;
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        hook(info);
    }));
    enable_raw_mode()?;
    // From here on the guard restores, whatever fails next.
    let guard = Guard;
    execute!(io::stdout(), EnterAlternateScreen)?;
    if mouse {
        MOUSE_ON.store(true, Ordering::SeqCst);
        let mut out = io::stdout();
        out.write_all(MOUSE_ENABLE)?;
        out.flush()?;
    }
    let terminal = Term {
        backend: CrosstermBackend::new(FrameOut::default()),
        screen: Screen::new(),
        known: None,
        resized: false,
    };
    Ok((terminal, guard))
}

/// Refuses a terminal that cannot show the screen (an unset `TERM`, or `dumb`: no cursor
/// addressing, no alternate screen), before anything is written to it.
fn check_capable(term: Option<&str>) -> io::Result<()> {
    let why = match term {
        None | Some("") => "TERM is not set",
        Some("dumb") => "TERM=dumb cannot move the cursor",
        Some(_) => return Ok(()),
    };
    Err(io::Error::other(format!(
        "{why}: this terminal cannot show pagewatch's screen; use --batch, or set TERM (for \
         example TERM=xterm-256color, or TERM=vt100 with --ascii)"
    )))
}

#[cfg(test)]
mod tests {
    use super::check_capable;

    #[test]
    fn dumb_and_unset_terminals_are_refused() {
        for t in [None, Some(""), Some("dumb")] {
            let e = check_capable(t).unwrap_err().to_string();
            assert!(e.contains("use --batch"), "{t:?}: {e}");
        }
        assert!(check_capable(Some("xterm-256color")).is_ok());
        assert!(check_capable(Some("linux")).is_ok());
    }
}
