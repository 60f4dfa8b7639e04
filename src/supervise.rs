//! The edge that carries out the app's experiment effects: it starts and stops memory eaters
//! and fio, drops caches, and looks for fio processes pagewatch did not start, reporting
//! everything back as messages.
//!
//! Owns: the job handles (children die with pagewatch: eaters by their parent-death signal,
//! fio through its `__guard`), and the threads for slow work (sync + drop, /proc scans).
//! Must not touch: app state (it only sends `Msg`s), the terminal.
//! Start it on the main thread: a child's parent-death signal fires when the thread that
//! spawned it exits.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use crate::app::{Effect, ForeignFio, JobMsg, Msg};
use crate::jobs::eat_plan::EatState;
use crate::jobs::eater::{EatUpdate, Eater};
use crate::jobs::foreign::FioPairing;

/// Performs job effects.
pub struct Supervisor {
    exe: PathBuf,
    tx: Sender<Msg>,
    eaters: BTreeMap<u32, Eater>,
    /// Pids of fio runs pagewatch started (their guards), hidden from the foreign scan.
    own_pids: Arc<Mutex<BTreeSet<u32>>>,
    pairing: Arc<Mutex<FioPairing>>,
    scanning: Arc<Mutex<bool>>,
}

impl Supervisor {
    /// A supervisor that starts children from `exe` (pagewatch's own binary) and reports on `tx`.
    #[must_use]
    pub fn new(exe: PathBuf, tx: Sender<Msg>) -> Self {
        Self {
            exe,
            tx,
            eaters: BTreeMap::new(),
            own_pids: Arc::default(),
            pairing: Arc::default(),
            scanning: Arc::default(),
        }
    }

    /// Carries out one effect; effects that are not about jobs are ignored.
    pub fn perform(&mut self, e: &Effect) {
        match e {
            Effect::StartEat { id, size, force } => self.eat(*id, size, *force),
            Effect::StopJob(id) => self.stop(*id),
            Effect::DropCaches(level) => self.drop_caches(*level),
            Effect::ScanFio => self.scan_foreign(),
            _ => {}
        }
    }

    fn send(&self, m: JobMsg) {
        let _ = self.tx.send(Msg::Job(m));
    }

    fn eat(&mut self, id: u32, size: &str, force: bool) {
        let tx = self.tx.clone();
        let notify = Arc::new(move |u: EatUpdate| {
            for m in eat_msgs(id, u) {
                let _ = tx.send(Msg::Job(m));
            }
        });
        match Eater::spawn(&self.exe, size, force, notify) {
            Ok(eater) => {
                let mut argv = vec![self.exe.display().to_string(), "eat".into(), size.into()];
                if force {
                    argv.push("--force".into());
                }
                self.send(JobMsg::Started {
                    id,
                    pid: eater.pid(),
                    argv,
                });
                self.eaters.insert(id, eater);
            }
            Err(e) => self.send(JobMsg::Ended {
                id,
                how: format!("failed: {e:#}"),
                failed: true,
                result: None,
            }),
        }
    }

    fn stop(&mut self, id: u32) {
        if let Some(e) = self.eaters.remove(&id) {
            e.release();
        }
    }

    fn drop_caches(&self, level: u8) {
        let tx = self.tx.clone();
        std::thread::spawn(move || {
            let msg = match crate::jobs::dropcache::drop_caches(level) {
                Ok(took) => Msg::Dropped {
                    level,
                    took_ms: took.as_millis() as u64,
                },
                Err(e) => Msg::Notice(format!("drop caches failed: {e}")),
            };
            let _ = tx.send(msg);
        });
    }

    /// Scans /proc for fio processes pagewatch did not start, on a thread; one scan at a time.
    fn scan_foreign(&self) {
        {
            let Ok(mut busy) = self.scanning.lock() else {
                return;
            };
            if *busy {
                return;
            }
            *busy = true;
        }
        let (tx, own, pairing, busy) = (
            self.tx.clone(),
            Arc::clone(&self.own_pids),
            Arc::clone(&self.pairing),
            Arc::clone(&self.scanning),
        );
        std::thread::spawn(move || {
            let exclude = own.lock().map(|s| s.clone()).unwrap_or_default();
            let found = crate::jobs::foreign::scan(std::path::Path::new("/proc"), &exclude);
            let now = crate::source::SystemClock;
            let mono = crate::source::Clock::mono_ns(&now);
            let rates = pairing
                .lock()
                .map(|mut p| p.update(&found, mono))
                .unwrap_or_default();
            let views = found
                .iter()
                .map(|f| {
                    let r = rates.iter().find(|r| r.pid == f.pid).and_then(|r| r.total);
                    let cache = f.files().first().and_then(|file| {
                        let info = crate::jobs::cachestat::cached_pages(&file.via).ok()?;
                        let how = match info.method {
                            crate::jobs::cachestat::CacheMethod::Cachestat => "cachestat",
                            crate::jobs::cachestat::CacheMethod::Mincore => "mincore",
                        };
                        Some((
                            file.path.display().to_string(),
                            info.pages_cached,
                            info.pages_total,
                            how,
                        ))
                    });
                    ForeignFio {
                        pid: f.pid,
                        cmdline: f.cmdline.join(" "),
                        read_bytes_s: r.map(|r| r.read_bytes_s),
                        write_bytes_s: r.map(|r| r.write_bytes_s),
                        rchar_s: r.map(|r| r.rchar_s),
                        wchar_s: r.map(|r| r.wchar_s),
                        cache,
                    }
                })
                .collect();
            let _ = tx.send(Msg::Foreign(views));
            if let Ok(mut b) = busy.lock() {
                *b = false;
            }
        });
    }

    /// Releases every eater (and stops fio); called when pagewatch quits.
    pub fn shutdown(&mut self) {
        for (_, e) in std::mem::take(&mut self.eaters) {
            e.release();
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// An eater's report as job messages.
fn eat_msgs(id: u32, u: EatUpdate) -> Vec<JobMsg> {
    match u {
        EatUpdate::Progress {
            touched,
            target,
            state,
            reason,
        } => {
            let mut out = vec![JobMsg::Eat {
                id,
                touched,
                target,
                holding: matches!(state, EatState::Holding | EatState::Aborted),
            }];
            if let (EatState::Aborted, Some(r)) = (state, reason) {
                out.push(JobMsg::Note {
                    id,
                    text: format!("stopped growing: {r}"),
                });
            }
            out
        }
        EatUpdate::Exited { code, reason, .. } => vec![JobMsg::Ended {
            id,
            failed: code.is_some_and(|c| c != 0),
            how: reason,
            result: None,
        }],
    }
}
