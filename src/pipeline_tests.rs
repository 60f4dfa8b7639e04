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

/// `samples` with vda's identity columns filled (`source::block_id`): a virtio serial, a
/// size and a block size, as this machine's vda gives them.
fn with_identity(samples: &mut [RawSample], serial: &str) {
    for s in samples {
        let block = s.files.get_mut(names::BLOCK_DEVICES).unwrap();
        *block = block
            .lines()
            .map(|l| {
                let mut f: Vec<&str> = l.split('\t').collect();
                if f[0] == "vda" {
                    f.resize(18, "");
                    (f[9], f[16], f[17]) = (serial, "536870912", "512");
                }
                f.join("\t") + "\n"
            })
            .collect();
    }
}

/// Two calm seconds before `s0`: 10 writes of 4 KiB a second at 0.5 ms each, queue 0.01.
fn calm_before(s0: &RawSample) -> Vec<RawSample> {
    (1..=2)
        .rev()
        .map(|back: i64| {
            let mut s = s0.clone();
            s.mono_ns -= back.unsigned_abs() * 1_000_000_000;
            s.wall_ms -= back * 1000;
            let stats = s.files.get_mut(names::DISKSTATS).unwrap();
            let b = back;
            *stats = stats
                .lines()
                .map(|l| {
                    let mut f: Vec<String> = l.split_whitespace().map(str::to_owned).collect();
                    if f[2] == "vda" {
                        // writes, sectors written, ms writing, ms doing IO, weighted ms.
                        for (i, less) in [(7, 10), (9, 80), (10, 5), (12, 5), (13, 5)] {
                            let v: i64 = f[i].parse().unwrap();
                            f[i] = (v - less * b).to_string();
                        }
                    }
                    f.join(" ") + "\n"
                })
                .collect();
            s
        })
        .collect()
}

/// Each record's wall time and vda's (saturated, level, not judged, baseline).
type Judged = Vec<(i64, (bool, u8, bool, Option<f64>))>;

fn judged(samples: &[RawSample], mut keep: impl FnMut(&Stored)) -> Judged {
    let mut p = Pipeline::new(Options::default(), 2);
    let mut out = Vec::new();
    for raw in samples {
        let step = p.push(raw, &View::default()).unwrap();
        if let Some(l) = &step.learned {
            keep(l);
        }
        if step.first {
            continue;
        }
        let v = step.model.verdict.as_ref().unwrap();
        // Never "no disk saturated" while vda is loaded and unjudged.
        let d = step.model.disks.iter().find(|d| d.name == "vda").unwrap();
        if d.saturation.unjudged {
            assert!(!v.headline.contains("no disk saturated"), "{}", v.headline);
            assert!(
                v.headline.contains("vda: cannot judge yet"),
                "{}",
                v.headline
            );
        }
        let s = &d.saturation;
        out.push((
            step.model.time_ms,
            (
                s.saturated,
                s.saturation_level,
                s.unjudged,
                s.baseline_await_ms,
            ),
        ));
    }
    out
}

#[test]
fn started_mid_flood_and_seeded_from_the_store_it_judges_as_one_started_before() {
    // The 6.12 lab's buffered flood: 1.2 MB writes at queue 3-5, w_await 30-97 ms. A sees two
    // calm seconds first (4 KiB writes at 0.5 ms) and keeps what it learns in the state file;
    // B starts at the flood's second sample, seeded from that file through the samples.
    let mut flood = crate::source::test_samples("kernel-6.12-lab-writer");
    with_identity(&mut flood, "overlayblk");
    let mut a_samples = calm_before(&flood[0]);
    a_samples.extend(flood.iter().cloned());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baselines");
    let (mut store, _) = crate::source::baselines::Store::at(Some(path.clone()), &[]);
    let mut kept = 0;
    // B reads the file as A left it before the flood (A's later hand-backs, each step while
    // saturated, carry peaks B could not have seen yet).
    let a = judged(&a_samples, |l| {
        if kept == 0 {
            store.keep(l, 1);
        }
        kept += 1;
    });
    assert!(kept >= 1);
    let (store, warnings) = crate::source::baselines::Store::at(Some(path), &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let text = store.text().unwrap().to_owned();
    let mut b_samples = flood[1..].to_vec();
    for s in &mut b_samples {
        s.files.insert(names::BASELINES.into(), text.clone());
    }
    let b = judged(&b_samples, |_| {});
    // Every record B has, A has at the same time, with the same answer and baseline.
    assert_eq!(b.len(), flood.len() - 2);
    let a_common: Judged = a
        .iter()
        .filter(|r| b.iter().any(|x| x.0 == r.0))
        .copied()
        .collect();
    assert_eq!(a_common, b);
    assert!(b.iter().all(|r| r.1.0 && !r.1.2), "{b:?}");
    // Without the store the late one cannot judge, and says so: not "no disk saturated".
    let alone = judged(&flood[1..], |_| {});
    assert!(alone.iter().all(|r| !r.1.0 && r.1.2), "{alone:?}");
    // A's calm baseline is the 0.5 ms of 4 KiB writes (hand-computed: 5 ms over 10 writes).
    assert_eq!(a[0].1, (false, 0, false, Some(0.5)));
}

#[test]
fn a_damaged_baselines_file_in_a_sample_seeds_nothing_and_says_why() {
    let mut samples = crate::source::test_samples("kernel-6.12-lab-writer");
    with_identity(&mut samples, "overlayblk");
    for s in &mut samples {
        s.files.insert(
            names::BASELINES.into(),
            "pagewatch-baselines 1\ndevice x\nreads 1e999\n".into(),
        );
    }
    let mut p = Pipeline::new(Options::default(), 2);
    for raw in &samples {
        let step = p.push(raw, &View::default()).unwrap();
        let vda = step.model.disks.iter().find(|d| d.name == "vda").unwrap();
        assert!(
            step.first || vda.saturation.unjudged,
            "{:?}",
            vda.saturation
        );
    }
    assert_eq!(
        p.seed_error(),
        Some("pagewatch/baselines: line 3: bad figure `1e999`")
    );
}

#[test]
fn the_dirty_answer_says_why_the_thresholds_fell_and_who_took_the_memory() {
    use crate::model::dirty::State;
    use crate::model::procs_memory::MemRow;
    let samples = crate::source::test_samples("live-idle");
    let mut m = derive_all(&samples, Options::default()).models.remove(0);
    m.dirty.state = Some(State::BelowBackground);
    m.domains.clear();
    m.throttled.clear();
    for d in &mut m.disks {
        d.saturation = crate::model::disk::Saturation::default();
    }
    let mut calm = Calm::default();
    m.verdict = Some(verdict::derive(&m));
    tell(&mut calm, &mut m, true);
    let calm_why = m.verdict.as_ref().unwrap().dirty.why.clone();
    assert!(!calm_why.contains("T "), "{calm_why}");
    // The eater took most of the memory in the next second: MemAvailable a sixth, T an
    // eighth, and it grows at 2 GB/s.
    m.time_ms += 1000;
    m.memory.MemAvailable = m.memory.MemAvailable.map(|a| a / 6);
    m.dirty.thresh_pages = m.dirty.thresh_pages.map(|t| t / 8);
    m.dirty.derived_thresh_pages = m.dirty.derived_thresh_pages.map(|t| t / 8);
    m.processes_by_memory = Some(vec![MemRow {
        rss_bytes: Some(19 << 30),
        rss_growth_bytes_per_s: Some(2e9),
        ..MemRow::blank(4242, "pagewatch-eat")
    }]);
    m.verdict = Some(verdict::derive(&m));
    tell(&mut calm, &mut m, true);
    let why = &m.verdict.as_ref().unwrap().dirty.why;
    assert!(why.contains("; T "), "{why}");
    assert!(why.contains("as MemAvailable fell"), "{why}");
    assert!(why.ends_with("pagewatch-eat[4242] holds 19.0G"), "{why}");
}
