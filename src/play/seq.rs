//! The step sequencing of a playbook, shared by the headless run (`shell::headless`) and the
//! screen (`app::play`): which step comes next, what it asks for, and what it waits for.
//!
//! A `Sequencer` is a state machine. `poll` starts steps until one must wait (a duration, a
//! cache drop, an eater holding its memory, fio ending, a setting written), asking its `Env`
//! for job ids, job commands (the same `JobCmd`s the screen's keys produce: `StartEat`,
//! `StartFio`, `StopJob`, `DropCaches`, `Tune`) and events (phases, markers). `on_msg` feeds it
//! the reports those commands produce (`JobReport::Job`, `Dropped`, `Tuned`). Whoever
//! drives it performs the commands: the headless runner through its `Supervisor` and `Tuner`,
//! the screen through the runtime's.
//!
//! Owns: the order of the steps and the conditions they wait on. Pure: must not touch
//! processes, files or the clock (time and MemAvailable come from the `Env`).

use std::collections::BTreeMap;

use super::book::{Action, EatSize, Playbook, Wait};
use crate::event::EventKind;
use crate::jobs::fio::value::size_text;
use crate::jobs::protocol::{JobCmd, JobKind, JobMsg, JobReport};
use crate::jobs::tune::Setting;

/// What a sequencer needs from whoever drives it.
pub trait Env {
    /// Wall clock, ms.
    fn now_ms(&self) -> i64;
    /// (MemTotal, MemAvailable) in bytes, when known.
    fn mem(&self) -> Option<(u64, u64)>;
    /// A new job's id (the screen adds it to its jobs list).
    fn job(&mut self, kind: JobKind, label: String) -> u32;
    /// Carries out an effect (its reports come back through `Sequencer::on_msg`).
    fn effect(&mut self, e: JobCmd);
    /// Records an event.
    fn event(&mut self, kind: EventKind);
}

/// What the current step waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    Until(i64),
    Dropped,
    Holding(u32),
    Ended(u32),
    AllFio,
    Released(Vec<u32>),
    Tuned,
}

/// Where a run is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Poll {
    /// A step is waiting.
    Running,
    /// Every step is done.
    Done,
    /// A step failed (the message names its line).
    Failed(String),
}

/// A playbook being run.
#[derive(Debug, Clone)]
pub struct Sequencer {
    book: Playbook,
    device: Option<String>,
    ids: BTreeMap<String, u64>,
    next: usize,
    block: Option<Block>,
    /// Jobs it started that are still running.
    jobs: BTreeMap<u32, JobKind>,
    /// Settings it changed and has not put back.
    tuned: Vec<Setting>,
    phase: Option<String>,
    failed: Option<String>,
}

/// The fio file sizes by step id.
#[must_use]
pub fn file_ids(book: &Playbook) -> BTreeMap<String, u64> {
    (book.steps.iter())
        .filter_map(|s| match &s.action {
            Action::Fio {
                id: Some(id), spec, ..
            } => Some((id.clone(), spec.size)),
            _ => None,
        })
        .collect()
}

impl Sequencer {
    /// A run of `book`; `device` is the disk under the fio directory (for phase events).
    #[must_use]
    pub fn new(book: Playbook, device: Option<String>) -> Sequencer {
        Sequencer {
            ids: file_ids(&book),
            book,
            device,
            next: 0,
            block: None,
            jobs: BTreeMap::new(),
            tuned: Vec::new(),
            phase: None,
            failed: None,
        }
    }

    /// The playbook.
    #[must_use]
    pub fn book(&self) -> &Playbook {
        &self.book
    }

    /// The disk under the fio directory, whose figures the phase table shows.
    #[must_use]
    pub fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// The current phase's name.
    #[must_use]
    pub fn phase(&self) -> Option<&str> {
        self.phase.as_deref()
    }

    /// (1-based number of the step started last, step count, what it does).
    #[must_use]
    pub fn step(&self) -> (usize, usize, String) {
        let n = self.book.steps.len();
        let text = self
            .next
            .checked_sub(1)
            .and_then(|i| self.book.steps.get(i))
            .map_or_else(|| "starting".to_owned(), |s| describe(&s.action));
        (self.next, n, text)
    }

    /// Starts steps until one waits; says where the run is.
    pub fn poll(&mut self, env: &mut dyn Env) -> Poll {
        loop {
            if let Some(e) = &self.failed {
                return Poll::Failed(e.clone());
            }
            if let Some(b) = &self.block {
                let free = match b {
                    Block::Until(t) => env.now_ms() >= *t,
                    Block::Ended(id) | Block::Holding(id) => !self.jobs.contains_key(id),
                    Block::AllFio => !self.jobs.values().any(|k| *k == JobKind::Fio),
                    Block::Released(ids) => !ids.iter().any(|id| self.jobs.contains_key(id)),
                    Block::Dropped | Block::Tuned => false,
                };
                if !free {
                    return Poll::Running;
                }
                self.block = None;
            }
            let Some(s) = self.book.steps.get(self.next) else {
                return Poll::Done;
            };
            let (line, action) = (s.line, s.action.clone());
            self.next += 1;
            if let Err(e) = self.start(&action, env) {
                self.failed = Some(format!("line {line}: {e}"));
            }
        }
    }

    fn start(&mut self, a: &Action, env: &mut dyn Env) -> Result<(), String> {
        match a {
            Action::Phase(name) => {
                self.phase = Some(name.clone());
                env.event(EventKind::Phase {
                    play: self.book.name.clone(),
                    name: name.clone(),
                    device: self.device.clone(),
                });
            }
            Action::Marker(text) => env.event(EventKind::Marker { text: text.clone() }),
            Action::Wait(Wait::For(d)) => {
                let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
                self.block = Some(Block::Until(env.now_ms().saturating_add(ms)));
            }
            Action::Wait(Wait::Jobs) => self.block = Some(Block::AllFio),
            Action::DropCaches(level) => {
                env.effect(JobCmd::DropCaches(*level));
                self.block = Some(Block::Dropped);
            }
            Action::Release => {
                let eaters: Vec<u32> = (self.jobs.iter())
                    .filter(|(_, k)| **k == JobKind::Eat)
                    .map(|(id, _)| *id)
                    .collect();
                for id in &eaters {
                    env.effect(JobCmd::StopJob(*id));
                }
                // The memory is back once they have exited.
                self.block = Some(Block::Released(eaters));
            }
            Action::Eat(size) => {
                let (total, avail) = env.mem().ok_or("MemTotal is not known yet")?;
                let bytes = match size {
                    EatSize::Size(e) => e.eval(total, &self.ids)?,
                    EatSize::Leave(e) => {
                        let leave = e.eval(total, &self.ids)?;
                        avail.checked_sub(leave).filter(|b| *b > 0).ok_or_else(|| {
                            format!(
                                "MemAvailable {} is already below {}",
                                size_text(avail),
                                size_text(leave)
                            )
                        })?
                    }
                };
                let id = env.job(JobKind::Eat, format!("eat {}", size_text(bytes)));
                self.jobs.insert(id, JobKind::Eat);
                env.effect(JobCmd::StartEat {
                    id,
                    size: bytes.to_string(),
                    force: matches!(size, EatSize::Leave(_)),
                });
                self.block = Some(Block::Holding(id));
            }
            Action::Fio {
                spec, background, ..
            } => {
                let id = env.job(JobKind::Fio, spec.label());
                self.jobs.insert(id, JobKind::Fio);
                env.effect(JobCmd::StartFio {
                    id,
                    spec: spec.to_string(),
                });
                if !background {
                    self.block = Some(Block::Ended(id));
                }
            }
            Action::Tune { setting, value } => {
                if value.is_some() {
                    if !self.tuned.contains(setting) {
                        self.tuned.push(setting.clone());
                    }
                } else {
                    self.tuned.retain(|s| s != setting);
                }
                env.effect(JobCmd::Tune {
                    setting: setting.clone(),
                    value: value.clone(),
                });
                self.block = Some(Block::Tuned);
            }
        }
        Ok(())
    }

    /// A report from the effects: a step waiting on it goes on; a job of this run that
    /// failed, or a setting that could not be written, fails the run.
    pub fn on_msg(&mut self, m: &JobReport) {
        match m {
            JobReport::Job(JobMsg::Eat {
                id, holding: true, ..
            }) if self.block == Some(Block::Holding(*id)) => self.block = None,
            JobReport::Job(JobMsg::Ended {
                id, failed, how, ..
            }) if self.jobs.remove(id).is_some() && *failed => {
                self.fail_here(&format!("job #{id} {how}"));
            }
            JobReport::Dropped { .. } if self.block == Some(Block::Dropped) => self.block = None,
            JobReport::Notice(t)
                if self.block == Some(Block::Dropped) && t.starts_with("drop caches failed") =>
            {
                self.fail_here(t);
            }
            JobReport::Tuned(r) if self.block == Some(Block::Tuned) => match r {
                Ok(_) => self.block = None,
                Err(e) => self.fail_here(e),
            },
            _ => {}
        }
    }

    /// Fails the run at the step started last (its line in front).
    fn fail_here(&mut self, why: &str) {
        let line = self
            .next
            .checked_sub(1)
            .and_then(|i| self.book.steps.get(i));
        let why = line.map_or(why.to_owned(), |s| format!("line {}: {why}", s.line));
        self.failed.get_or_insert(why);
    }

    /// Fails the run (interrupted, refused): the next `poll` says so.
    pub fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    /// Ends the run: stops the jobs it started and puts back the settings it changed.
    /// Returns the ids of the jobs asked to stop.
    pub fn finish(&mut self, env: &mut dyn Env) -> Vec<u32> {
        let ids: Vec<u32> = self.jobs.keys().copied().collect();
        for id in &ids {
            env.effect(JobCmd::StopJob(*id));
        }
        while let Some(s) = self.tuned.pop() {
            env.effect(JobCmd::Tune {
                setting: s,
                value: None,
            });
        }
        self.next = self.book.steps.len();
        self.block = None;
        ids
    }
}

/// A step in a few words, for the jobs pane.
#[must_use]
pub fn describe(a: &Action) -> String {
    match a {
        Action::DropCaches(l) => format!("drop caches (level {l})"),
        Action::Eat(EatSize::Size(e)) => format!("eat {e}"),
        Action::Eat(EatSize::Leave(e)) => format!("eat, leaving {e}"),
        Action::Release => "release the eaters".into(),
        Action::Fio {
            spec, background, ..
        } => format!(
            "{}{}",
            spec.label(),
            if *background { " (background)" } else { "" }
        ),
        Action::Tune {
            setting,
            value: Some(v),
        } => format!("tune {} = {v}", setting_name(setting)),
        Action::Tune { setting, .. } => format!("restore {}", setting_name(setting)),
        Action::Wait(Wait::For(d)) => format!("wait {:.0} s", d.as_secs_f64()),
        Action::Wait(Wait::Jobs) => "wait for fio".into(),
        Action::Marker(t) => format!("marker {t}"),
        Action::Phase(p) => format!("phase {p}"),
    }
}

/// A setting as a playbook names it.
#[must_use]
pub fn setting_name(s: &Setting) -> String {
    match s {
        Setting::Sysctl(n) => n.clone(),
        Setting::Queue {
            device: Some(d),
            attr,
        } => format!("{d}:queue/{attr}"),
        Setting::Queue { attr, .. } => format!("queue/{attr}"),
    }
}

#[cfg(test)]
#[path = "seq_tests.rs"]
mod tests;
