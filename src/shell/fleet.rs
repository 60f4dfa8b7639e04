//! The fleet's runtime (`pagewatch connect h1 h2 …`): a thread a host reading its remote
//! stream (`remote::RemoteSource`, which reconnects with backoff), the input and signal
//! threads, and the main thread applying their messages to the one `Fleet` and drawing it
//! (`ui::fleet`) once a message changed it; a tick a second ages the samples.
//!
//! Owns: those threads and the terminal while the fleet shows. Must not touch: what a host's
//! line says (`app::fleet`), how it is drawn (`ui::fleet`), ssh (`remote`).

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::app::Msg;
use crate::app::fleet::{Fleet, FleetMsg};
use crate::shell::remote::RemoteSource;
use crate::source::{Clock, Source, SystemClock};

/// Runs the fleet screen until `q` or a signal (keys only: no mouse reporting).
pub fn run(mut fleet: Fleet, sources: Vec<RemoteSource>) -> Result<()> {
    let (tx, rx) = mpsc::channel::<FleetMsg>();
    for (host, source) in sources.into_iter().enumerate() {
        follow(host, source, tx.clone())?;
    }
    let (screen_tx, screen_rx) = mpsc::channel::<Msg>();
    crate::shell::tui::spawn_input(screen_tx.clone())?;
    crate::shell::tui::spawn_signals(screen_tx)?;
    std::thread::Builder::new()
        .name("keys".to_owned())
        .spawn(move || {
            for m in screen_rx {
                if tx.send(FleetMsg::Screen(m)).is_err() {
                    return;
                }
            }
        })?;
    let (mut term, _guard) = crate::shell::term::init(false).context("starting the terminal")?;
    let tick = Duration::from_secs(1);
    let mut next_tick = Instant::now();
    loop {
        let now = Instant::now();
        let msg = if now >= next_tick {
            next_tick = now + tick;
            FleetMsg::Screen(Msg::Tick {
                now_ms: SystemClock.wall_ms(),
            })
        } else {
            match rx.recv_timeout(next_tick - now) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        };
        if let FleetMsg::Screen(Msg::Resize) = &msg {
            term.resized();
        }
        if fleet.update(msg) {
            return Ok(());
        }
        if fleet.take_dirty() {
            term.draw_with(|area, buf| crate::ui::fleet::render(&fleet, area, buf))
                .context("drawing the fleet")?;
        }
    }
}

/// A thread reading host `host`'s stream: each sample or failure a message.
fn follow(host: usize, mut source: RemoteSource, tx: Sender<FleetMsg>) -> Result<()> {
    std::thread::Builder::new()
        .name(format!("host-{host}"))
        .spawn(move || {
            loop {
                let msg = match source.next_sample() {
                    Ok(Some(s)) => Msg::Sample(s),
                    Ok(None) => return,
                    Err(e) => Msg::SampleError(e.to_string()),
                };
                if tx.send(FleetMsg::Host { host, msg }).is_err() {
                    return;
                }
            }
        })?;
    Ok(())
}
