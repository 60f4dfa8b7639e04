//! What a scrape serves: the last complete sample, derived exactly as batch mode derives it,
//! with the live counters and each device's saturation against its own baseline.
//!
//! `Live` takes each step of the pipeline that samples (the screen's, `record`'s: `step`),
//! or, for `serve`, which has no other, steps each raw sample through its own (`sample`),
//! updates the `Counters`, and returns a finished `Page`: one pipeline per process, so
//! `/metrics` beside the screen judges each device against the screen's baseline. The edge publishes each page whole, so a
//! scrape never sees a half-updated sample.
//! Owns: `Live`, `Page`. Must not touch: I/O, the clock (the edge hands in how long the read
//! took), the text formats.

use std::sync::Arc;

use crate::metrics::counters::Counters;
use crate::model::who::View;
use crate::model::{Model, Options};
use crate::pipeline::Pipeline;
use crate::sample::{RawSample, Wants};

/// One device's saturation at the page's sample.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskState {
    /// Kernel name.
    pub name: String,
    /// 0 fine, 1 warn, 2 saturated (`model::saturation`, judged by the pipeline).
    pub level: u8,
    /// The device's calm baseline await, ms.
    pub baseline_await_ms: Option<f64>,
    /// Under load with nothing to judge it by yet (`Saturation::unjudged`).
    pub unjudged: bool,
}

/// Everything one scrape says, fixed at one sample.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The `host` label.
    pub host: String,
    /// The last derived record; `None` until two samples were read. Shared, not copied,
    /// between the pages of samples that failed after it.
    pub model: Option<Arc<Model>>,
    /// Each device of `model`, in its order.
    pub disks: Vec<DiskState>,
    /// The counters up to and including `model`.
    pub counters: Counters,
    /// Samples read and parsed since the start.
    pub samples: u64,
    /// Samples that failed to read or parse.
    pub errors: u64,
    /// How long reading the last sample's kernel files took, s.
    pub read_s: Option<f64>,
}

/// Turns raw samples into pages.
pub struct Live {
    pipeline: Pipeline,
    refresh_due: bool,
    wants: Option<Wants>,
    /// The disks' calm baselines learned, not yet taken (`Step::learned`).
    learned: Option<crate::parse::baselines::Stored>,
    last: Page,
    /// What decides the "who" data: only `--latency`'s devices (no screen).
    view: View,
}

impl Live {
    /// A feed for host `host`, deriving with `opts`.
    #[must_use]
    pub fn new(host: &str, opts: Options) -> Self {
        Self {
            pipeline: Pipeline::new(opts, 2),
            refresh_due: false,
            wants: None,
            learned: None,
            view: View::default(),
            last: Page {
                host: if host.is_empty() { "unknown" } else { host }.to_owned(),
                ..Page::default()
            },
        }
    }

    /// The page after sample `raw`, read in `read_s` seconds. A sample that does not parse
    /// counts as an error and leaves the figures as they were; the rate after it is taken
    /// from the last good sample, as batch mode does.
    pub fn sample(&mut self, raw: &RawSample, read_s: f64) -> Page {
        self.last.read_s = Some(read_s);
        let Ok(step) = self.pipeline.push(raw, &self.view) else {
            return self.error();
        };
        // As batch mode does: a sysctl write or a new disk is seen on the next record.
        self.refresh_due |= step.refresh;
        if step.wants.is_some() {
            self.wants = step.wants;
        }
        if step.learned.is_some() {
            self.learned = step.learned;
        }
        self.step(step.model, step.first, read_s)
    }

    /// The page after a step someone else's pipeline took (the screen's, `record`'s): its
    /// `model`, none for the `first` step; the sample was read in `read_s` seconds.
    pub fn step(&mut self, model: Model, first: bool, read_s: f64) -> Page {
        self.last.read_s = Some(read_s);
        self.last.samples += 1;
        if !first {
            let m = model;
            let disks: Vec<DiskState> = m
                .disks
                .iter()
                .map(|d| DiskState {
                    name: d.name.clone(),
                    level: d.saturation.saturation_level,
                    baseline_await_ms: d.saturation.baseline_await_ms,
                    unjudged: d.saturation.unjudged,
                })
                .collect();
            let levels: Vec<(&str, u8)> =
                disks.iter().map(|d| (d.name.as_str(), d.level)).collect();
            self.last.counters.observe(&m, &levels);
            self.last.disks = disks;
            self.last.model = Some(Arc::new(m));
        }
        self.last.clone()
    }

    /// Times the block requests of these devices (`--latency`), the queue too when `queue`.
    pub fn set_latency(&mut self, devices: &[String], queue: bool) {
        self.view.latency = devices.to_vec();
        self.view.queue_time = queue;
    }

    /// The disks' calm baselines the pipeline learned, when it is time to keep them.
    pub fn take_learned(&mut self) -> Option<crate::parse::baselines::Stored> {
        self.learned.take()
    }

    /// The "who" data the pipeline wants collected, when it changed since the last call.
    pub fn take_wants(&mut self) -> Option<Wants> {
        self.wants.take()
    }

    /// The page as it stands (before any sample: only the host).
    #[must_use]
    pub fn current(&self) -> Page {
        self.last.clone()
    }

    /// Samples read and parsed so far.
    #[must_use]
    pub fn samples(&self) -> u64 {
        self.last.samples
    }

    /// Whether the source should re-read its slow files with the next sample
    /// (`Source::refresh_soon`); asking clears it.
    pub fn take_refresh(&mut self) -> bool {
        std::mem::take(&mut self.refresh_due)
    }

    /// The page after a sample that could not be read or parsed.
    pub fn error(&mut self) -> Page {
        self.last.errors += 1;
        self.last.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_the_samples_and_errors_keep_the_figures() {
        let s = crate::source::test_samples("live-fio-randwrite");
        let mut live = Live::new("", Options::default());
        let p = live.sample(&s[0], 0.001);
        assert!(p.model.is_none(), "one sample gives no record");
        assert_eq!((p.samples, p.errors, p.host.as_str()), (1, 0, "unknown"));
        let p = live.sample(&s[1], 0.002);
        let m = p.model.as_deref().unwrap();
        let want = &crate::pipeline::derive_all(&s[..2], Options::default()).models[0];
        assert_eq!(m, want, "the same record batch mode prints");
        assert_eq!(p.disks.len(), m.disks.len());
        assert_eq!(p.read_s, Some(0.002));
        let mut bad = s[2].clone();
        bad.files
            .insert("proc/meminfo".into(), "MemTotal: x kB\n".into());
        let e = live.sample(&bad, 0.003);
        assert_eq!((e.samples, e.errors), (2, 1));
        assert_eq!(e.model, p.model, "figures kept");
        // The next good sample's rates run from the last good one (s[1]).
        let p = live.sample(&s[2], 0.001);
        let fed = [s[0].clone(), s[1].clone(), bad, s[2].clone()];
        let want = crate::pipeline::derive_all(&fed, Options::default());
        assert_eq!(p.model.as_deref(), want.models.last());
    }

    #[test]
    fn a_step_from_another_pipeline_is_served_as_it_is() {
        let s = crate::source::test_samples("live-fio-randwrite");
        let mut p = Pipeline::new(Options::default(), 2);
        let mut live = Live::new("h", Options::default());
        let first = p.push(&s[0], &View::default()).unwrap();
        let page = live.step(first.model, first.first, 0.001);
        assert!(page.model.is_none() && page.samples == 1);
        let mut step = p.push(&s[1], &View::default()).unwrap();
        // A figure only that pipeline could have: the page carries the step's model, not one
        // derived again.
        step.model.disks[0].saturation.saturation_level = 2;
        let page = live.step(step.model.clone(), false, 0.002);
        assert_eq!(page.model.as_deref(), Some(&step.model));
        assert_eq!(page.disks[0].level, 2);
        assert_eq!(
            (page.samples, page.errors, page.read_s),
            (2, 0, Some(0.002))
        );
        assert!(
            live.take_wants().is_none(),
            "its wants are that pipeline's to hand out"
        );
    }
}
