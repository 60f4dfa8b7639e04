use super::*;

#[test]
fn first_sample_seeds_and_garbage_is_skipped() {
    let mut samples = crate::source::test_samples("live-idle");
    let n = samples.len();
    let mut bad = samples[1].clone();
    bad.files.insert("proc/meminfo".into(), "garbage".into());
    samples.insert(2, bad);
    let s = derive_all(&samples, Options::default());
    assert_eq!(s.models.len(), n - 1);
    assert_eq!(s.failures.len(), 1);
    assert_eq!(s.failures[0].0, 2);
    // The record after the bad sample spans from the last good one.
    assert_eq!(s.models[1].time_ms, samples[3].wall_ms);
    let dt = (samples[3].mono_ns - samples[1].mono_ns) as f64 / 1e9;
    assert!((s.models[1].interval_s.unwrap() - dt).abs() < 1e-9);
    // Every record is judged.
    assert!(s.models.iter().all(|m| m.verdict.is_some()));
}

#[test]
fn a_step_is_judged_and_kept_in_the_history() {
    let samples = crate::source::test_samples("live-idle");
    let mut p = Pipeline::default();
    let a = p.push(&samples[0], &View::default()).unwrap();
    assert!(a.first && a.model.interval_s.is_none());
    let b = p.push(&samples[1], &View::default()).unwrap();
    assert!(!b.first && b.model.interval_s.is_some());
    assert_eq!(p.history().ticks(), 2);
    let v = b.model.verdict.as_ref().unwrap();
    assert!(v.saturated.is_empty(), "an idle tree has no saturated disk");
    assert_eq!(p.rederive().unwrap().time_ms, b.model.time_ms);
}
