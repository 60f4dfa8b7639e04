//! The one paced read loop every live mode drives with a sink (as bandwhich's `OsInputOutput`
//! and below's `Collector`): read the source, hand the read to the sink, give the source what
//! the step asked for (the "who" data to collect, the slow files to re-read), hand the sample
//! back for reuse, wait for the next tick. The screen's sink applies and draws, batch's
//! prints, `record`'s writes, `serve`'s publishes, the playbook runner's logs for its
//! sequencer.
//!
//! `Stepper` is the pipeline and the view a sink steps each sample through. The first step's
//! wants reach the source like every other's: a recording started in the middle of an
//! incident has a first sample already past background; the gate asks for the tracepoint
//! and the process walk at that step and never again while the reason holds, so a caller
//! that dropped the first step's wants recorded neither (seen in the kernel lab, 5.10, a dd
//! in an io.max-capped memcg: no tracer in any of 12 samples).
//!
//! After each sample the loop gives the heap's free pages back (`malloc::GiveBack`, every
//! 10 s), so every live mode keeps its heap as small as the screen does (issue 52: RSS).
//!
//! Owns: `run`, `Sink`, `Flow`, `Stepper`. Must not touch: what a mode does with a step
//! (its sink), the source's files (`source`), deriving (`pipeline`).

use crate::malloc::GiveBack;
use crate::model::who::View;
use crate::pipeline::{Pipeline, Step};
use crate::sample::{RawSample, Wants};
use crate::source::{Clock, Source, SystemClock, Ticker};

/// What the loop does after a sink took a read.
#[derive(Debug, Default)]
pub struct Flow {
    /// Collect this "who" data from the next sample on (`Source::want`).
    pub wants: Option<Wants>,
    /// Re-read the slow files with the next sample (`Source::refresh_soon`).
    pub refresh: bool,
    /// Keep these learned disk baselines (`Source::keep_baselines`, `Step::learned`).
    pub learned: Option<crate::pipeline::Stored>,
    /// End the loop.
    pub stop: bool,
}

impl Flow {
    /// What `step` asks of the source.
    #[must_use]
    pub fn of(step: &Step) -> Self {
        Self {
            wants: step.wants.clone(),
            refresh: step.refresh,
            learned: step.learned.clone(),
            stop: false,
        }
    }

    /// Nothing asked; go on.
    #[must_use]
    pub fn go_on() -> Self {
        Self::default()
    }

    /// Nothing asked; stop.
    #[must_use]
    pub fn stop() -> Self {
        Self {
            stop: true,
            ..Self::default()
        }
    }
}

/// What a mode does with each read.
pub trait Sink {
    /// Waits for the next read (the ticker, and whatever else the mode listens to between
    /// reads); `false` ends the loop. Called before every read but the first.
    fn wait(&mut self, ticker: &mut Ticker, source: &mut dyn Source) -> bool;

    /// Takes one read, a sample or why it failed, that took `read_s` seconds.
    fn take(&mut self, read: crate::Result<&RawSample>, read_s: f64) -> Flow;
}

/// Reads `source` (`first` is the first read when the mode already took it, to write a
/// recording's header) until the source runs out or the sink stops, handing each read to
/// `sink` and what it asks back to the source.
pub fn run(
    source: &mut dyn Source,
    first: Option<RawSample>,
    ticker: &mut Ticker,
    sink: &mut dyn Sink,
) {
    run_giving_back(source, first, ticker, sink, &mut GiveBack::default());
}

/// `run`, giving the heap back through `give_back` after each sample.
fn run_giving_back(
    source: &mut dyn Source,
    first: Option<RawSample>,
    ticker: &mut Ticker,
    sink: &mut dyn Sink,
    give_back: &mut GiveBack,
) {
    let clock = SystemClock;
    let mut first = first.map(Ok);
    let mut started = false;
    loop {
        if std::mem::replace(&mut started, true) && !sink.wait(ticker, source) {
            return;
        }
        let t0 = clock.mono_ns();
        let read = match first.take() {
            Some(r) => r.map(Some),
            None => source.next_sample(),
        };
        let read_s = clock.mono_ns().saturating_sub(t0) as f64 / 1e9;
        let (flow, used) = match read {
            Ok(None) => return,
            Ok(Some(raw)) => (sink.take(Ok(&raw), read_s), Some(raw)),
            Err(e) => (sink.take(Err(e), read_s), None),
        };
        if let Some(w) = &flow.wants {
            source.want(w);
        }
        if flow.refresh {
            source.refresh_soon();
        }
        if let Some(l) = &flow.learned {
            source.keep_baselines(l);
        }
        if let Some(raw) = used {
            source.recycle(raw);
        }
        give_back.after_sample(std::time::Instant::now());
        if flow.stop {
            return;
        }
    }
}

/// The pipeline and the view a sink steps its samples through.
#[derive(Debug)]
pub struct Stepper {
    /// The one pipeline.
    pub pipeline: Pipeline,
    /// What decides the "who" data besides what is happening.
    pub view: View,
}

impl Stepper {
    /// A stepper over `pipeline` with `view`.
    #[must_use]
    pub fn new(pipeline: Pipeline, view: View) -> Self {
        Self { pipeline, view }
    }

    /// Steps `raw` (see `Pipeline::push`).
    pub fn step(&mut self, raw: &RawSample) -> crate::Result<Step> {
        self.pipeline.push(raw, &self.view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source of captured samples that keeps what it was asked for.
    struct Asked {
        samples: std::vec::IntoIter<RawSample>,
        wants: Vec<Wants>,
        refreshes: u32,
    }

    impl Source for Asked {
        fn next_sample(&mut self) -> crate::Result<Option<RawSample>> {
            Ok(self.samples.next())
        }
        fn want(&mut self, wants: &Wants) {
            self.wants.push(wants.clone());
        }
        fn refresh_soon(&mut self) {
            self.refreshes += 1;
        }
    }

    /// A source of `samples` that has been asked nothing yet.
    fn asked(samples: std::vec::IntoIter<RawSample>) -> Asked {
        Asked {
            samples,
            wants: Vec::new(),
            refreshes: 0,
        }
    }

    /// Steps every sample, counting the waits.
    struct Count(Stepper, u32, Vec<bool>);

    /// A `Count` over a pipeline that keeps two ticks.
    fn counting() -> Count {
        let stepper = Stepper::new(
            Pipeline::new(crate::model::Options::default(), 2),
            View::default(),
        );
        Count(stepper, 0, Vec::new())
    }

    impl Sink for Count {
        fn wait(&mut self, _: &mut Ticker, _: &mut dyn Source) -> bool {
            self.1 += 1;
            true
        }
        fn take(&mut self, read: crate::Result<&RawSample>, _: f64) -> Flow {
            let step = self.0.step(read.unwrap()).unwrap();
            self.2.push(step.first);
            Flow::of(&step)
        }
    }

    #[test]
    fn the_first_steps_wants_reach_the_source() {
        // The lab's memcg writer: its first root has a task in IO wait, reason enough to walk
        // the processes (the tracepoint's wants travel in the same `Wants`).
        let samples = crate::source::test_samples("kernel-6.12-lab-memcg");
        let n = samples.len();
        let mut it = samples.into_iter();
        let first = it.next();
        let mut src = asked(it);
        let mut sink = counting();
        run(&mut src, first, &mut Ticker::new(1.0), &mut sink);
        assert_eq!(sink.2.len(), n, "every sample stepped, the first one given");
        assert!(sink.2[0] && !sink.2[1]);
        assert_eq!(sink.1 as usize, n, "a wait before every read but the first");
        assert!(
            src.wants.first().is_some_and(|w| w.procs.is_some()),
            "the first step's wants reach the source: {:?}",
            src.wants
        );
        assert_eq!(src.wants.last(), Some(sink.0.pipeline.wants()));
    }

    #[test]
    fn a_stopping_sink_ends_the_loop_and_failures_reach_it() {
        struct Failing(u32);
        impl Source for Failing {
            fn next_sample(&mut self) -> crate::Result<Option<RawSample>> {
                self.0 += 1;
                Err(crate::Error::parse("proc/meminfo", 1, "bad"))
            }
        }
        struct StopAt(u32, u32);
        impl Sink for StopAt {
            fn wait(&mut self, _: &mut Ticker, _: &mut dyn Source) -> bool {
                true
            }
            fn take(&mut self, read: crate::Result<&RawSample>, _: f64) -> Flow {
                assert!(read.is_err());
                self.1 += 1;
                if self.1 >= self.0 {
                    Flow::stop()
                } else {
                    Flow::go_on()
                }
            }
        }
        let mut src = Failing(0);
        let mut sink = StopAt(3, 0);
        run(&mut src, None, &mut Ticker::new(1.0), &mut sink);
        assert_eq!((src.0, sink.1), (3, 3));
    }

    /// The loop gives the heap's free pages back after its samples, whatever the sink: the
    /// screen's sink did it alone, and `--batch`, `record` and `serve` kept 1.1–2.7 MB heaps
    /// after ten minutes at `--interval 0.1` (issue 52).
    #[test]
    fn the_loop_gives_the_heap_back_whatever_the_sink() {
        let samples = crate::source::test_samples("kernel-6.12-lab-memcg");
        let n = samples.len() as u64;
        let mut src = asked(samples.into_iter());
        let mut sink = counting();
        let mut give_back = GiveBack::every(std::time::Duration::ZERO);
        run_giving_back(
            &mut src,
            None,
            &mut Ticker::new(1.0),
            &mut sink,
            &mut give_back,
        );
        assert_eq!(give_back.times, n, "once after each of {n} samples");
    }
}
