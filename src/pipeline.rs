//! The one pipeline from raw samples to judged models, driven by every mode: the screen,
//! batch, `record`, `play`, `serve`, replay, the report and export. Modes differ only in what
//! they do with each step's output, so they cannot drift apart.
//!
//! A step parses the sample (`Parser`, which skips files that repeat), follows the process
//! walks (`procs::Tracker`), derives the `Model` against the last good snapshot, judges each
//! disk against its own calm baseline (`saturation::Judge`), folds the interval's throttled
//! writers into the dirty domains and computes the verdict (`verdict`) with who and whom
//! (`story::Calm`), keeps the chart
//! history, and says whether to re-read the slow files (`RefreshPolicy`) and which "who" data
//! to collect next (`who::Gate`). The judge and the processes' calm are seeded with the
//! baselines every instance stored (the disks' and the processes' calm figures), which the
//! samples carry (`names::BASELINES`), and hand back what they learned with the step
//! (`Step::learned`, `Judge::take_due` and `Calm::take_due`) for the caller to keep: an
//! instance started mid-incident judges the disks and names the victims as one started
//! before it.
//!
//! Owns: `Pipeline`, `Step`. Must not touch: I/O, the clock, threads, output formats: the
//! caller hands the source the refresh and the wants.

use crate::history::History;
use crate::model::procs::Tracker;
use crate::model::refresh::RefreshPolicy;
use crate::model::saturation::Judge;
use crate::model::story::Calm;
use crate::model::who::{Gate, View};
use crate::model::{Model, Options, verdict};
/// The disks' calm baselines and the processes' calm figures a step hands back to keep
/// (`Step::learned`).
pub use crate::parse::baselines::Stored;
use crate::parse::{Parser, Snapshot};
use crate::sample::{RawSample, Wants, names};

/// The chart history a pipeline keeps unless told otherwise: ten minutes at 1 Hz, what the
/// screen shows.
pub const HISTORY: usize = 600;

/// What one step gives.
#[derive(Debug, Clone)]
pub struct Step {
    /// The judged model of the sample.
    pub model: Model,
    /// The first good sample: nothing to take rates against (batch and reports skip it).
    pub first: bool,
    /// Ask the source to re-read its slow files with the next sample.
    pub refresh: bool,
    /// The "who" data to collect from the next sample on, when it changed.
    pub wants: Option<Wants>,
    /// The disks' calm baselines and the processes' calm figures this run learned, when it
    /// is time to keep them (`Judge::take_due`, `Calm::take_due`): the caller hands them to
    /// the source (`Source::keep_baselines`), which stores them for the other instances and
    /// the next run.
    pub learned: Option<Stored>,
}

/// The state that turns samples into judged models, kept in one place.
#[derive(Debug)]
pub struct Pipeline {
    parser: Parser,
    prev: Option<Snapshot>,
    cur: Option<Snapshot>,
    procs: Tracker,
    refresh: RefreshPolicy,
    gate: Gate,
    judge: Judge,
    /// Each process's calm figures, for the verdict's victims (`story::Calm`).
    calm: Calm,
    /// The stored baselines' text the judge and the calm were last seeded with
    /// (`names::BASELINES`), and why it was refused, if it was.
    seeded: Option<String>,
    seed_error: Option<String>,
    history: History,
    opts: Options,
}

impl Default for Pipeline {
    fn default() -> Self {
        Self::new(Options::default(), HISTORY)
    }
}

impl Pipeline {
    /// A pipeline deriving with `opts` and keeping `history` ticks for the charts.
    #[must_use]
    pub fn new(opts: Options, history: usize) -> Self {
        Self {
            parser: Parser::new(),
            prev: None,
            cur: None,
            procs: Tracker::default(),
            refresh: RefreshPolicy::default(),
            gate: Gate::default(),
            judge: Judge::default(),
            calm: Calm::default(),
            seeded: None,
            seed_error: None,
            history: History::new(history),
            opts,
        }
    }

    /// Parses and steps one raw sample. A sample that does not parse is an error and changes
    /// nothing but the refresh count: the next rate is taken from the last good snapshot.
    pub fn push(&mut self, raw: &RawSample, view: &View) -> crate::Result<Step> {
        self.seed(raw.file(names::BASELINES));
        match self.parser.parse(raw) {
            Ok(snap) => Ok(self.push_snapshot(snap, view)),
            Err(e) => {
                self.refresh.skip();
                Err(e)
            }
        }
    }

    /// Steps one parsed snapshot.
    pub fn push_snapshot(&mut self, snap: Snapshot, view: &View) -> Step {
        self.procs.update(&snap);
        let mut model = self.derive(self.cur.as_ref(), &snap);
        self.judge.at(model.time_ms, model.interval_s);
        self.judge.judge(&mut model.disks);
        model.verdict = Some(verdict::derive(&model));
        tell(
            &mut self.calm,
            &mut model,
            self.gate.walks_for_what_happens(),
        );
        let learned = self.take_due();
        self.history.push(&model);
        let refresh = self.refresh.due(self.cur.as_ref(), &snap, &model);
        let wants = self.gate.update(&model, view);
        let first = self.cur.is_none();
        self.prev = self.cur.replace(snap);
        Step {
            model,
            first,
            refresh,
            wants,
            learned,
        }
    }

    /// Seeds the judge and the calm with the stored baselines a sample carries
    /// (`names::BASELINES`), when their text differs from the last seeded: the same in most
    /// samples of a run, so parsed once each time it changes. Text that does not parse (a
    /// damaged recording) seeds nothing and is kept as the reason (`seed_error`).
    fn seed(&mut self, text: Option<&str>) {
        let Some(text) = text else { return };
        if self.seeded.as_deref() == Some(text) {
            return;
        }
        self.seeded = Some(text.to_owned());
        match crate::parse::baselines::parse(text) {
            Ok(mut stored) => {
                self.seed_error = None;
                self.calm.seed(std::mem::take(&mut stored.processes));
                self.calm.seed_reference(stored.reference.take());
                self.judge.seed(stored);
            }
            Err(e) => self.seed_error = Some(format!("{}: {e}", names::BASELINES)),
        }
    }

    /// Why the stored baselines a sample carried were refused; `None` when they were not.
    #[must_use]
    pub fn seed_error(&self) -> Option<&str> {
        self.seed_error.as_deref()
    }

    /// The disks' calm baselines and the processes' calm figures this run learned
    /// (`Judge::learned`, `Calm::learned`), to keep at the end.
    #[must_use]
    pub fn learned(&self) -> Stored {
        let mut out = self.judge.learned();
        out.processes = self.calm.learned();
        out.reference = self.calm.learned_reference();
        out
    }

    /// What the judge and the calm learned, when either is due to hand it back.
    fn take_due(&mut self) -> Option<Stored> {
        let disks = self.judge.take_due();
        let processes = self.calm.take_due();
        let reference = self.calm.reference_due();
        if disks.is_none() && processes.is_none() && reference.is_none() {
            return None;
        }
        let mut out = disks.unwrap_or_default();
        out.processes = processes.unwrap_or_default();
        out.reference = reference;
        Some(out)
    }

    /// The model of the last sample derived again (after an option changed), judged with
    /// the baselines as they stand, which it does not move.
    #[must_use]
    pub fn rederive(&self) -> Option<Model> {
        let cur = self.cur.as_ref()?;
        let mut model = self.derive(self.prev.as_ref(), cur);
        self.judge.clone().judge(&mut model.disks);
        model.verdict = Some(verdict::derive(&model));
        let learn = self.gate.walks_for_what_happens();
        tell(&mut self.calm.clone(), &mut model, learn);
        Some(model)
    }

    fn derive(&self, prev: Option<&Snapshot>, cur: &Snapshot) -> Model {
        let mut model = Model::derive(prev, cur, self.opts);
        self.procs.fill(&mut model);
        crate::model::reclaim_tasks::annotate(
            model.reclaim_tasks.as_ref(),
            model.processes_by_memory.as_mut(),
        );
        crate::model::task_delays::annotate(
            model.task_delays.as_ref(),
            model.processes_by_memory.as_mut(),
        );
        verdict::fold_dirty(&mut model);
        model
    }

    /// Changes the derivation options from the next step on.
    pub fn set_options(&mut self, opts: Options) {
        self.opts = opts;
    }

    /// The chart history.
    #[must_use]
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The last process walk, while the tracker holds one.
    #[must_use]
    pub fn walk(&self) -> Option<&crate::parse::procs::Walk> {
        self.procs.walk()
    }

    /// The "who" data in force.
    #[must_use]
    pub fn wants(&self) -> &Wants {
        self.gate.wants()
    }

    /// Forgets every sample (a replay jumps): the next one is a first one.
    pub fn reset(&mut self) {
        *self = Self::new(self.opts, self.history.capacity());
    }
}

/// A whole sequence of raw samples stepped as batch mode steps them: a sample that fails to
/// parse is skipped (and counted) while the last good snapshot stays the base for the next
/// rate, and the first good sample only seeds the rates, so it gives no record.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// One record per sample after the first good one, in sample order.
    pub models: Vec<Model>,
    /// Samples that failed to parse, with the reason, as `(index in the input, message)`.
    pub failures: Vec<(usize, String)>,
}

/// Tells the story of `model`, whose verdict is derived, against `calm`, and the early
/// warning it leads to (`early::warn`, worded in the headline by `verdict::warn_early`).
/// `learn`: the walk behind the model is one every view makes (`Calm::tell`).
fn tell(calm: &mut Calm, model: &mut Model, learn: bool) {
    let story = calm.tell(model, learn);
    let early = crate::model::early::warn(model, &story);
    if let Some(v) = &mut model.verdict {
        // Why the dirty thresholds moved is part of the dirty answer: the taker and T's fall.
        if let Some(t) = &story.thresholds_moved {
            v.dirty.why = format!("{}; {t}", v.dirty.why);
        }
        v.story = story;
        verdict::warn_early(v, early);
    }
}

/// Steps every sample of `samples`, as `pagewatch --batch` would have printed them.
#[must_use]
pub fn derive_all(samples: &[RawSample], opts: Options) -> Series {
    let mut out = Series::default();
    let mut p = Pipeline::new(opts, 2);
    for (i, raw) in samples.iter().enumerate() {
        match p.push(raw, &View::default()) {
            Ok(step) if !step.first => out.models.push(step.model),
            Ok(_) => {}
            Err(e) => out.failures.push((i, e.to_string())),
        }
    }
    out
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
