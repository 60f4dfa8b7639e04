//! `--record FILE` while the screen runs: a thread that owns the recording file and writes
//! every raw sample and event the runtime hands it, so the recording is exactly what was
//! displayed.
//!
//! Owns: the recorder thread. Must not touch: app state or the terminal; failures come back to
//! the app as notices.

use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};

use crate::app::Msg;
use crate::event::Event;
use crate::record::{Header, Recorder};
use crate::sample::RawSample;
use crate::source::HostInfo;

enum Item {
    Sample(RawSample),
    Event(Event),
}

/// The runtime's end of the recorder thread.
pub struct Tee {
    tx: Option<Sender<Item>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Tee {
    /// Starts the recorder thread for `path`; the file is created when the first sample arrives
    /// (its header needs one). Problems are reported to the app on `app_tx`.
    #[must_use]
    pub fn start(path: PathBuf, host: HostInfo, interval_s: f64, app_tx: Sender<Msg>) -> Self {
        let (tx, rx) = mpsc::channel::<Item>();
        let thread = std::thread::spawn(move || {
            let mut rec: Option<Recorder> = None;
            let mut pending: Vec<Event> = Vec::new();
            let mut failed = false;
            for item in rx {
                if failed {
                    continue;
                }
                let res = match (item, rec.as_mut()) {
                    (Item::Sample(s), Some(r)) => r.write_sample(&s),
                    (Item::Sample(s), None) => {
                        let provenance = std::env::args().collect::<Vec<_>>().join(" ");
                        let header = Header::from_sample(
                            &s,
                            host.clone(),
                            interval_s,
                            provenance,
                            s.wall_ms,
                        );
                        Recorder::create(&path, &header).and_then(|mut r| {
                            r.write_sample(&s)?;
                            for e in pending.drain(..) {
                                r.write_event(&e)?;
                            }
                            rec = Some(r);
                            Ok(())
                        })
                    }
                    (Item::Event(e), Some(r)) => r.write_event(&e),
                    (Item::Event(e), None) => {
                        pending.push(e);
                        Ok(())
                    }
                };
                if let Err(e) = res {
                    failed = true;
                    let _ = app_tx.send(Msg::Notice(format!(
                        "recording to {} stopped: {e}",
                        path.display()
                    )));
                }
            }
            if let Some(r) = rec {
                let _ = r.finish();
            }
        });
        Self {
            tx: Some(tx),
            thread: Some(thread),
        }
    }

    /// Records a sample (a copy of what the app is about to show).
    pub fn sample(&self, s: &RawSample) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Item::Sample(s.clone()));
        }
    }

    /// Records an event.
    pub fn event(&self, e: &Event) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Item::Event(e.clone()));
        }
    }
}

impl Drop for Tee {
    /// Closes the channel and waits for the thread to write what is queued and close the file.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
