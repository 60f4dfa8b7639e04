//! Playbooks and tuning from the screen: the picker (`P`), the `tune` key (`T`), their
//! confirmations, and driving a running playbook's `play::seq::Sequencer` with the app's own
//! jobs and events (the same step sequencing as the headless `pagewatch play`).
//!
//! Owns: turning the picker's choice into `Effect::CheckPlay`, the check's answer into a
//! confirmation (the settings with their old and new values), feeding every job report to
//! the running sequencer and carrying out what it asks for as effects. One playbook at a
//! time. Must not touch: processes, files or settings: the runtime checks, reads and writes
//! them (`Effect::CheckPlay`, `CheckTune`, `Tune`) and reports back.

use super::prompt::{Prompt, Submit};
use super::{App, Effect, JobCmd, JobKind, JobReport, Msg};
use crate::event::EventKind;
use crate::play::seq::{Env, Poll, Sequencer};
use crate::play::{Playbook, builtin};

/// The app as a sequencer's `Env`: jobs go to the jobs list, events to the markers.
struct AppEnv<'a> {
    app: &'a mut App,
    out: Vec<Effect>,
}

impl Env for AppEnv<'_> {
    fn now_ms(&self) -> i64 {
        self.app.now_ms
    }

    fn mem(&self) -> Option<(u64, u64)> {
        let m = &self.app.model.as_ref()?.memory;
        Some((
            m.MemTotal * 1024,
            m.MemAvailable.unwrap_or(m.MemFree) * 1024,
        ))
    }

    fn job(&mut self, kind: JobKind, label: String) -> u32 {
        self.app.jobs.add(kind, label, self.app.now_ms)
    }

    fn effect(&mut self, e: JobCmd) {
        if let JobCmd::StopJob(id) = e {
            self.app.jobs.stopping(id);
        }
        self.out.push(Effect::Job(e));
    }

    fn event(&mut self, kind: EventKind) {
        let e = self.app.log(kind);
        self.out.extend(e);
    }
}

/// The reports a running sequencer waits on (a cheap copy of those only).
pub(super) fn seen(msg: &Msg) -> Option<JobReport> {
    match msg {
        Msg::Job(
            r @ (JobReport::Job(_)
            | JobReport::Dropped { .. }
            | JobReport::Notice(_)
            | JobReport::Tuned(_)),
        ) => Some(r.clone()),
        _ => None,
    }
}

impl App {
    /// `P`: the picker, unless a playbook runs or experiments are unavailable.
    pub(super) fn open_picker(&mut self) -> Vec<Effect> {
        if let Some(p) = &self.play {
            self.notice = Some(format!(
                "playbook {} is running: one at a time",
                p.book().name
            ));
            return Vec::new();
        }
        if self.play_checking {
            self.notice = Some("a playbook is being checked: one at a time".into());
            return Vec::new();
        }
        match builtin::all() {
            Ok(books) => {
                self.prompt = Some(Prompt::Play {
                    books: (self.playbooks.iter().cloned().chain(books))
                        .map(|b| (b.name, b.description))
                        .collect(),
                    selected: 0,
                });
            }
            Err(e) => self.notice = Some(format!("built-in playbooks: {e}")),
        }
        Vec::new()
    }

    /// `T`: the tune prompt (root only).
    pub(super) fn open_tune(&mut self) -> Vec<Effect> {
        if let Some(why) = &self.caps.tune {
            self.notice = Some(why.clone());
            return Vec::new();
        }
        self.prompt = Some(Prompt::Tune {
            setting: String::new(),
            value: String::new(),
            field: 0,
            error: None,
        });
        Vec::new()
    }

    /// A completed playbook or tune prompt.
    pub(super) fn play_submit(&mut self, s: Submit) -> Vec<Effect> {
        match s {
            Submit::Play(name) => {
                let file = self.playbooks.iter().find(|b| b.name == name).cloned();
                let Some(book) =
                    file.or_else(|| builtin::text(&name).and_then(|t| Playbook::parse(t).ok()))
                else {
                    self.notice = Some(format!("no playbook {name}"));
                    return Vec::new();
                };
                let book = if (self.play_scale - 1.0).abs() > f64::EPSILON {
                    book.scaled(self.play_scale)
                } else {
                    book
                };
                self.play_checking = true;
                self.notice = Some(format!("checking playbook {name}…"));
                vec![Effect::CheckPlay(book)]
            }
            Submit::PlayConfirmed => {
                let Some((book, device)) = self.play_pending.take() else {
                    return Vec::new();
                };
                self.play_checking = false;
                self.notice = Some(format!("playbook {} starts", book.name));
                self.phases_start();
                let mut out = self.log(EventKind::Marker {
                    text: format!("playbook {} starts", book.name),
                });
                self.play = Some(Sequencer::new(book, device));
                out.extend(self.drive_play(None));
                out
            }
            Submit::Tune { setting, value } => {
                let parsed = crate::jobs::tune::Setting::parse(&setting)
                    .and_then(|s| s.value(&value).map(|v| (s, v)));
                match parsed {
                    Ok((setting, value)) => vec![Effect::CheckTune { setting, value }],
                    Err(e) => {
                        self.prompt = Some(Prompt::Tune {
                            setting,
                            value,
                            field: 0,
                            error: Some(e),
                        });
                        Vec::new()
                    }
                }
            }
            Submit::TuneConfirmed { setting, value } => vec![Effect::Job(JobCmd::Tune {
                setting,
                value: Some(value),
            })],
            _ => Vec::new(),
        }
    }

    /// A cancelled playbook confirmation gives back the one-playbook lock.
    pub(super) fn play_cancelled(&mut self, p: &Prompt) -> Vec<Effect> {
        if matches!(p, Prompt::PlayConfirm { .. }) {
            self.play_pending = None;
            self.play_checking = false;
            return vec![Effect::PlayEnded];
        }
        Vec::new()
    }

    /// The runtime's answers: a checked playbook, a setting's value, a setting written.
    pub(super) fn play_msg(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::PlayChecked {
                book,
                device,
                result,
            } => match result {
                Ok(changes) => {
                    self.notice = None;
                    self.prompt = Some(Prompt::PlayConfirm {
                        name: book.name.clone(),
                        description: book.description.clone(),
                        changes,
                    });
                    self.play_pending = Some((book, device));
                }
                Err(e) => {
                    self.play_checking = false;
                    self.notice = Some(format!("playbook {}: {e}", book.name));
                }
            },
            Msg::TuneChecked {
                setting,
                value,
                result,
            } => match result {
                Ok((name, old, lasting)) => {
                    self.prompt = Some(Prompt::TuneConfirm {
                        setting,
                        name,
                        old,
                        value,
                        lasting,
                    });
                }
                Err(e) => self.notice = Some(e),
            },
            Msg::Job(JobReport::Tuned(Ok(c))) => {
                self.notice = Some(
                    crate::event::Event {
                        wall_ms: self.now_ms,
                        kind: crate::jobs::tuner::tune_event(&c),
                    }
                    .label(),
                );
                return self.log(crate::jobs::tuner::tune_event(&c));
            }
            Msg::Job(JobReport::Tuned(Err(e))) => self.notice = Some(e),
            _ => {}
        }
        Vec::new()
    }

    /// Feeds a report to the running playbook and carries out its next steps; at its end,
    /// stops its jobs, puts its settings back and gives back the lock.
    pub(super) fn drive_play(&mut self, msg: Option<&JobReport>) -> Vec<Effect> {
        let Some(mut seq) = self.play.take() else {
            return Vec::new();
        };
        if let Some(m) = msg {
            seq.on_msg(m);
        }
        let mut env = AppEnv {
            app: self,
            out: Vec::new(),
        };
        let end = match seq.poll(&mut env) {
            Poll::Running => None,
            Poll::Done => Some(format!("playbook {} ends", seq.book().name)),
            Poll::Failed(e) => Some(format!("playbook {} stopped: {e}", seq.book().name)),
        };
        let Some(text) = end else {
            let out = env.out;
            self.play = Some(seq);
            return out;
        };
        seq.finish(&mut env);
        let mut out = env.out;
        self.notice = Some(text.clone());
        out.extend(self.log(EventKind::Marker { text: text.clone() }));
        out.push(Effect::PlayEnded);
        self.phases_end(&seq, text);
        out
    }

    /// Leaving with a playbook running: a marker says so (the runtime stops the jobs and
    /// puts the settings back).
    pub(super) fn quit_play(&mut self) -> Vec<Effect> {
        self.play_models.clear();
        self.play_events = None;
        match self.play.take() {
            Some(seq) => self.log(EventKind::Marker {
                text: format!("playbook {} stopped: pagewatch quit", seq.book().name),
            }),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "play_tests.rs"]
mod tests;
