//! The experiment keys and the jobs they start: `m` eat memory, `f` fio, `D` drop caches and
//! `M` a marker, each through its prompt; `x` on the jobs pane's selected row (stop or release
//! our job, dismiss an ended row, explain that a foreign fio is not ours); `P` and `T` handed
//! to the playbook code (`play.rs`, which also takes the playbook prompts' submissions and
//! cancellations); the jobs asked for on the command line (`--eat`, `--fio`); job reports
//! turned into events. And replay's cursor: a step, a minute, the start or the end, a jump
//! re-deriving up to an hour of samples before its target so that the charts and each disk's
//! calm baseline are those a straight replay would have.
//!
//! Owns: turning those keys, prompt submissions and job reports into app changes and effects.
//! Must not touch: processes, files or the clock. An eater's size is checked against the
//! latest model's MemTotal and MemAvailable with the eater's own rule (`jobs::eat_plan`).

use super::jobs::XAction;
use super::prompt::{Outcome, Prompt, Submit};
use super::{Action, App, Effect, JobCmd, JobKind, JobMsg, Key, Replay};
use crate::event::EventKind;
use crate::fmt;
use crate::parse::Snapshot;

impl App {
    /// Opens the prompt for an experiment key, or acts at once (`x`).
    pub(super) fn experiment(&mut self, a: Action) -> Vec<Effect> {
        if self.replay.is_some() {
            return Vec::new();
        }
        if let Some(why) = self.remote_refusal(a) {
            self.notice = Some(why);
            return Vec::new();
        }
        if !self.caps.experiments && a != Action::Marker {
            self.notice =
                Some("experiments need live /proc: this is a captured tree or a replay".to_owned());
            return Vec::new();
        }
        self.notice = None;
        match a {
            Action::EatMemory => {
                self.prompt = Some(Prompt::Eat {
                    input: String::new(),
                    error: None,
                });
            }
            Action::RunFio => {
                self.prompt = Some(Prompt::fio(self.fio_presets.clone()));
            }
            Action::DropCaches => {
                self.prompt = Some(Prompt::Drop {
                    unavailable: self.caps.drop_caches.clone(),
                });
            }
            Action::Marker => {
                self.prompt = Some(Prompt::Marker {
                    input: String::new(),
                });
            }
            Action::Playbook => return self.open_picker(),
            Action::Tune => return self.open_tune(),
            Action::StopJob => {
                // What the pane's title says (`XAction::title`).
                match self.jobs.x_action() {
                    XAction::Stop(id) | XAction::Release(id) => {
                        self.jobs.stopping(id);
                        return vec![Effect::Job(JobCmd::StopJob(id))];
                    }
                    XAction::Dismiss(r) => self.jobs.dismiss(r),
                    XAction::NotOurs(pid) => {
                        self.notice = Some(format!(
                            "fio pid {pid} is not ours: pagewatch does not stop it (kill {pid})"
                        ));
                    }
                    XAction::Nothing => self.notice = Some("no running job to stop".to_owned()),
                }
            }
            _ => {}
        }
        Vec::new()
    }

    pub(super) fn prompt_key(&mut self, k: Key) -> Vec<Effect> {
        let Some(p) = &mut self.prompt else {
            return Vec::new();
        };
        match p.key(k) {
            Outcome::Open => Vec::new(),
            Outcome::Cancel => match self.prompt.take() {
                Some(p) => self.play_cancelled(&p),
                None => Vec::new(),
            },
            Outcome::Submit(s) => {
                self.prompt = None;
                self.submit(s)
            }
        }
    }

    fn submit(&mut self, s: Submit) -> Vec<Effect> {
        match s {
            Submit::Eat { size, force } => self.eat(size, force),
            Submit::Fio(spec) => {
                let id = self.jobs.add(JobKind::Fio, fio_label(&spec), self.now_ms);
                vec![Effect::Job(JobCmd::StartFio { id, spec })]
            }
            Submit::Drop(level) => vec![Effect::Job(JobCmd::DropCaches(level))],
            Submit::Marker(text) => self.log(EventKind::Marker { text }),
            other => self.play_submit(other),
        }
    }

    /// Checks the size against the latest meminfo, then starts the eater or asks to confirm.
    fn eat(&mut self, size: String, force: bool) -> Vec<Effect> {
        let Some(mem) = self.model.as_ref().map(|m| &m.memory) else {
            self.notice = Some("no sample yet: cannot size the eater".to_owned());
            return Vec::new();
        };
        let total = mem.MemTotal * 1024;
        let bytes = match crate::jobs::size::parse_size(&size, total) {
            Ok(b) => b,
            Err(e) => {
                self.prompt = Some(Prompt::Eat {
                    input: size,
                    error: Some(e.to_string()),
                });
                return Vec::new();
            }
        };
        let avail = mem.MemAvailable.unwrap_or(mem.MemFree) * 1024;
        // The eater's own rule decides; the words here fit the screen's `y` to confirm.
        if crate::jobs::eat_plan::check_target(bytes, total, avail, force).is_err() {
            let margin = crate::jobs::eat_plan::margin(total);
            self.prompt = Some(Prompt::EatConfirm {
                why: format!(
                    "{} is more than MemAvailable {} minus the {} safety margin",
                    fmt::bytes(bytes as f64),
                    fmt::bytes(avail as f64),
                    fmt::bytes(margin as f64)
                ),
                size,
            });
            return Vec::new();
        }
        let id = self.jobs.add(
            JobKind::Eat,
            format!("eat {}", fmt::bytes(bytes as f64)),
            self.now_ms,
        );
        vec![Effect::Job(JobCmd::StartEat { id, size, force })]
    }

    /// Jobs asked for on the command line (`--eat`, `--fio`): the eater refuses oversize
    /// requests itself, so nothing is confirmed here.
    pub fn launch(&mut self, eat: &[String], fio: &[String]) -> Vec<Effect> {
        let mut out = Vec::new();
        for size in eat {
            let id = self
                .jobs
                .add(JobKind::Eat, format!("eat {size}"), self.now_ms);
            out.push(Effect::Job(JobCmd::StartEat {
                id,
                size: size.clone(),
                force: false,
            }));
        }
        for spec in fio {
            let id = self.jobs.add(JobKind::Fio, fio_label(spec), self.now_ms);
            out.push(Effect::Job(JobCmd::StartFio {
                id,
                spec: spec.clone(),
            }));
        }
        out
    }

    /// Applies a job report; start and end become events.
    pub(super) fn job(&mut self, msg: &JobMsg) -> Vec<Effect> {
        self.jobs.apply(msg, self.now_ms);
        let Some(job) = self.jobs.get(msg.id()) else {
            return Vec::new();
        };
        let (id, what) = (job.id, job.label.clone());
        match msg {
            JobMsg::Started { pid, argv, .. } => self.log(EventKind::JobStart {
                job: id,
                what,
                argv: argv.clone(),
                pid: Some(*pid),
            }),
            JobMsg::Ended { how, result, .. } => {
                let mut out = Vec::new();
                if let Some(r) = result {
                    out.extend(self.log(EventKind::FioResult {
                        job: id,
                        result: r.clone(),
                    }));
                }
                out.extend(self.log(EventKind::JobStop {
                    job: id,
                    how: how.clone(),
                }));
                out
            }
            _ => Vec::new(),
        }
    }

    /// Turns the app into a replay of `samples` (already parsed), at the first sample.
    pub fn start_replay(&mut self, samples: Vec<(Snapshot, Option<f64>)>, speed: u32) {
        self.replay = Some(Replay::new(samples, speed));
        self.goto(0);
    }

    /// Replay: moves to sample `i`, re-deriving the chart history up to it.
    pub fn goto(&mut self, i: usize) {
        let Some(r) = self.replay.take() else { return };
        if r.samples.is_empty() {
            self.replay = Some(r);
            return;
        }
        let i = i.min(r.samples.len() - 1);
        // The pipeline steps again from up to `REDERIVE` samples before `i`, so the chart
        // history and each disk's calm baseline are those a straight replay would have.
        self.pipeline.reset();
        let first = i.saturating_sub(REDERIVE);
        for (snap, up) in &r.samples[first..=i] {
            self.ingest_snapshot(snap.clone(), *up);
        }
        self.now_ms = r.samples[i].0.wall_ms;
        let mut r = r;
        r.cursor = i;
        self.replay = Some(r);
        self.dirty = true;
    }

    /// Replay: one step of the cursor; a step forward derives one more sample.
    pub(super) fn step(&mut self, n: usize) {
        for _ in 0..n {
            let Some(r) = &mut self.replay else { return };
            let next = r.cursor + 1;
            let Some((snap, up)) = r.samples.get(next).cloned() else {
                r.playing = false;
                return;
            };
            r.cursor = next;
            self.ingest_snapshot(snap, up);
        }
    }

    pub(super) fn seek(&mut self, a: Action) {
        let Some(r) = &self.replay else { return };
        let last = r.samples.len().saturating_sub(1);
        let target = match a {
            Action::StepForward => {
                self.step(1);
                return;
            }
            Action::StepBack => r.cursor.saturating_sub(1),
            Action::MinuteBack => r.index_after(-60_000),
            Action::MinuteForward => r.index_after(60_000),
            Action::Start => 0,
            Action::End => last,
            _ => return,
        };
        if let Some(r) = &mut self.replay {
            r.playing = r.playing && target < last;
        }
        self.goto(target);
    }
}

/// Samples a replay jump steps again before its target: an hour at 1 Hz. A disk's calm
/// baseline older than that is not carried across a jump.
const REDERIVE: usize = 3600;

/// `fio randread size=64M` for the spec `randread,size=64M`.
fn fio_label(spec: &str) -> String {
    format!("fio {}", spec.replace(',', " "))
}
