//! A whole sequence of raw samples derived into `Model`s, exactly as batch mode derives them:
//! each sample is parsed, a sample that fails to parse is skipped (and counted) while the last
//! good snapshot stays the base for the next rate, and the first good sample only seeds the
//! rates, so it gives no record.
//!
//! Owns: that loop over an in-memory slice. Must not touch: I/O, the clock, output formats.

use super::{Model, Options};
use crate::parse::Snapshot;
use crate::sample::RawSample;

/// The derived records of a sample sequence.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// One record per sample after the first good one, in sample order.
    pub models: Vec<Model>,
    /// Samples that failed to parse, with the reason, as `(index in the input, message)`.
    pub failures: Vec<(usize, String)>,
}

/// Derives every record of `samples`, as `pagewatch --batch` would have printed them.
#[must_use]
pub fn derive(samples: &[RawSample], opts: Options) -> Series {
    let mut out = Series::default();
    let mut prev: Option<Snapshot> = None;
    let mut procs = super::procs::Tracker::default();
    for (i, raw) in samples.iter().enumerate() {
        let snap = match Snapshot::parse(raw) {
            Ok(s) => s,
            Err(e) => {
                out.failures.push((i, e.to_string()));
                continue;
            }
        };
        procs.update(&snap);
        if let Some(p) = &prev {
            let mut m = Model::derive(Some(p), &snap, opts);
            procs.fill(&mut m);
            out.models.push(m);
        }
        prev = Some(snap);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_seeds_and_garbage_is_skipped() {
        let mut samples = crate::source::test_samples("live-idle");
        let n = samples.len();
        let mut bad = samples[1].clone();
        bad.files.insert("proc/meminfo".into(), "garbage".into());
        samples.insert(2, bad);
        let s = derive(&samples, Options::default());
        assert_eq!(s.models.len(), n - 1);
        assert_eq!(s.failures.len(), 1);
        assert_eq!(s.failures[0].0, 2);
        // The record after the bad sample spans from the last good one.
        assert_eq!(s.models[1].time_ms, samples[3].wall_ms);
        let dt = (samples[3].mono_ns - samples[1].mono_ns) as f64 / 1e9;
        assert!((s.models[1].interval_s.unwrap() - dt).abs() < 1e-9);
    }
}
