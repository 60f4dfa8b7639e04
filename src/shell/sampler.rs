//! One live sample through the pipeline, with what the step asks of the source (the "who"
//! data to collect, the slow files to re-read) handed back to it: the step `record` and the
//! headless playbook runner take for every sample, the first one included. A recording
//! started in the middle of an incident has a first sample already past background; the
//! gate asks for the tracepoint and the process walk at that step and never again while the
//! reason holds, so a caller that dropped the first step's wants recorded neither (seen in
//! the kernel lab, 5.10, a dd in an io.max-capped memcg: no tracer in any of 12 samples).
//!
//! Owns: `step`. Must not touch: the output, the clock.

use crate::model::who::View;
use crate::pipeline::{Pipeline, Step};
use crate::sample::RawSample;
use crate::source::Source;

/// Steps `raw` and hands `source` the step's wants, refresh and learned baselines.
pub fn step(
    pipeline: &mut Pipeline,
    source: &mut dyn Source,
    raw: &RawSample,
    view: &View,
) -> crate::Result<Step> {
    let step = pipeline.push(raw, view)?;
    if let Some(w) = &step.wants {
        source.want(w);
    }
    if step.refresh {
        source.refresh_soon();
    }
    if let Some(l) = &step.learned {
        source.keep_baselines(l);
    }
    Ok(step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::Wants;

    /// A source that keeps what it was asked for.
    #[derive(Default)]
    struct Asked(Option<Wants>);

    impl Source for Asked {
        fn next_sample(&mut self) -> crate::Result<Option<RawSample>> {
            Ok(None)
        }
        fn want(&mut self, wants: &Wants) {
            self.0 = Some(wants.clone());
        }
    }

    #[test]
    fn the_first_steps_wants_reach_the_source() {
        // The lab's memcg writer: its first root has a task in IO wait, reason enough to walk
        // the processes (the tracepoint's wants travel in the same `Wants`).
        let samples = crate::source::test_samples("kernel-6.12-lab-memcg");
        let mut p = Pipeline::new(crate::model::Options::default(), 2);
        let mut src = Asked::default();
        let first = step(&mut p, &mut src, &samples[0], &View::default()).unwrap();
        assert!(first.first);
        assert!(
            src.0.as_ref().is_some_and(|w| w.procs.is_some()),
            "the first step's wants reach the source: {:?}",
            src.0
        );
        assert_eq!(src.0.as_ref(), Some(p.wants()));
        // The next step asks nothing new while the reason holds: a caller that dropped the
        // first step's wants would never tell the source.
        let next = step(&mut p, &mut src, &samples[1], &View::default()).unwrap();
        assert!(next.wants.is_none(), "{:?}", next.wants);
    }
}
