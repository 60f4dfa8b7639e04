//! The screen's edge for playbooks and tuning: it checks a playbook picked in the screen
//! (the same checks as `pagewatch play`, the one-playbook lock, and the tuning lock for a
//! playbook that tunes), reads and writes the allowlisted settings through a `Tuner` (which
//! holds the tuning lock while a setting is changed, and whose restore guard outlives a
//! SIGKILL), and reports back as messages. The steps themselves run in the app
//! (`app::play`), through the same `Sequencer` as the headless run; their jobs go to the
//! screen's `Supervisor`.
//!
//! Owns: the screen's `Tuner` and the lock while a playbook runs. Must not touch: app state
//! (it only sends `Msg`s), the terminal.

use std::path::PathBuf;
use std::sync::mpsc::Sender;

use super::headless::{check, tune};
use super::preflight::disk_of;
use crate::app::{Effect, Msg, TuneView};
use crate::event::EventKind;
use crate::jobs::protocol::{JobCmd, JobReport};
use crate::jobs::tune::Tuner;
use crate::jobs::tuner::tune_event;
use crate::play::book::Action;

/// Performs the playbook and tuning effects of the screen.
pub struct PlayEdge {
    tx: Sender<Msg>,
    tuner: Tuner,
    fio_dir: Option<PathBuf>,
    lock: Option<std::fs::File>,
}

impl PlayEdge {
    /// An edge whose restore guard is `exe __guard --restore`, reporting on `tx`.
    #[must_use]
    pub fn new(exe: PathBuf, tx: Sender<Msg>, fio_dir: Option<PathBuf>) -> PlayEdge {
        PlayEdge {
            tx,
            tuner: Tuner::new(Some(exe)),
            fio_dir,
            lock: None,
        }
    }

    /// The disk under the fio directory.
    fn device(&self) -> Option<String> {
        crate::jobs::fio::FioDir::check(self.fio_dir.as_deref())
            .ok()
            .and_then(|b| disk_of(&b))
    }

    /// Carries out a playbook or tuning effect; false for any other effect.
    pub fn perform(&mut self, e: &Effect) -> bool {
        let msg = match e {
            Effect::Job(JobCmd::Tune { setting, value }) => {
                let device = self.device();
                Msg::Job(JobReport::Tuned(tune(
                    &mut self.tuner,
                    setting,
                    value.as_deref(),
                    device.as_deref(),
                )))
            }
            Effect::CheckPlay(book) => {
                let device = self.device();
                let result = check(book, self.fio_dir.as_deref())
                    .map_err(|e| format!("{e:#}"))
                    .and_then(|(_, lock)| {
                        let views = views(book, device.as_deref())?;
                        if book.tunes() {
                            self.tuner.claim().map_err(|e| format!("{e:#}"))?;
                        }
                        self.lock = Some(lock);
                        Ok(views)
                    });
                Msg::PlayChecked {
                    book: book.clone(),
                    device,
                    result,
                }
            }
            Effect::CheckTune { setting, value } => {
                let result = if rustix::process::geteuid().is_root() {
                    setting.resolve(self.device().as_deref()).and_then(|k| {
                        let lasting = crate::jobs::wbt::device_of(&k.path).and_then(|d| {
                            crate::jobs::wbt::lasting(d, &crate::jobs::wbt::state(d))
                        });
                        Tuner::current(&k)
                            .map(|old| (k.name.clone(), old, lasting))
                            .map_err(|e| format!("{e:#}"))
                    })
                } else {
                    Err("tuning kernel settings needs root".to_owned())
                };
                Msg::TuneChecked {
                    setting: setting.clone(),
                    value: value.clone(),
                    result,
                }
            }
            Effect::PlayEnded => {
                self.lock = None;
                self.tuner.unpin();
                return true;
            }
            _ => return false,
        };
        let _ = self.tx.send(msg);
        true
    }

    /// Puts every changed setting back (pagewatch is leaving); the events to record.
    pub fn restore_all(&mut self) -> Vec<EventKind> {
        self.lock = None;
        self.tuner
            .restore_all()
            .into_iter()
            .filter_map(Result::ok)
            .map(|c| tune_event(&c))
            .collect()
    }
}

/// The settings a playbook changes, with their values now.
fn views(book: &crate::play::Playbook, device: Option<&str>) -> Result<Vec<TuneView>, String> {
    let mut out = Vec::new();
    // Each device's lasting wbt change is named once, at its first write.
    let mut named: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for s in &book.steps {
        if let Action::Tune { setting, value } = &s.action {
            let knob = setting
                .resolve(device)
                .map_err(|e| format!("line {}: {e}", s.line))?;
            let old = Tuner::current(&knob).map_err(|e| format!("line {}: {e:#}", s.line))?;
            let lasting = crate::jobs::wbt::device_of(&knob.path)
                .filter(|d| value.is_some() && named.insert((*d).to_owned()))
                .and_then(|d| crate::jobs::wbt::lasting(d, &crate::jobs::wbt::state(d)));
            out.push(TuneView {
                setting: knob.name,
                old,
                new: value.clone().unwrap_or_else(|| "original".into()),
                lasting,
            });
        }
    }
    Ok(out)
}
