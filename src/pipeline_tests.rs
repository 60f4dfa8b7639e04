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

/// The early warning's models (`early::tests`): python3's 4 KiB fsyncs at `fsync_ms`, at
/// `time_ms`; in `flood`, fio dirties 600 MiB/s below background and 80 MiB/s is written
/// back, d+wb 10M of freerun 48M (incident 1's thresholds).
fn fsync_loop(time_ms: i64, fsync_ms: f64, flood: bool) -> crate::model::Model {
    use crate::model::early::tests::{dirtying, incident_limits, model, proc};
    let mut fio = proc(20, "fio", None);
    if flood {
        fio.dirtied_bytes_per_s = Some(600.0 * 1024.0 * 1024.0);
    }
    let mut m = model(vec![proc(13460, "python3", Some(fsync_ms)), fio]);
    if flood {
        dirtying(&mut m, 600.0, 80.0, 2560, incident_limits().2);
    }
    m.time_ms = time_ms;
    m
}

/// The verdict `p` gives `m`, as a step tells it, and what `p` hands back to keep.
fn told(
    p: &mut Pipeline,
    mut m: crate::model::Model,
) -> (crate::model::answers::Verdict, Option<Stored>) {
    tell(&mut p.calm, &mut m, true);
    (m.verdict.unwrap(), p.take_due())
}

#[test]
fn started_mid_incident_and_seeded_from_the_store_it_names_the_victims_of_one_started_before() {
    // A sees python3's fsyncs calm at 0.32 ms for 10 s and keeps what it learns in the state
    // file; B starts in the flood, where they take 9.9 ms, seeded from that file through
    // the samples.
    let t0 = 1_795_950_000_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baselines");
    let (mut store, _) = crate::source::baselines::Store::at(Some(path.clone()), &[]);
    let mut a = Pipeline::default();
    let mut kept = Vec::new();
    for i in 0..10 {
        let at = t0 + i * 1000;
        let (v, learned) = told(&mut a, fsync_loop(at, 0.32, false));
        assert!(v.story.victims.is_empty(), "{:?}", v.story);
        if let Some(l) = learned {
            store.keep(&l, at / 1000);
            kept.push(i);
        }
    }
    // Handed back once learnt, 5 steps in; not again while it stands still.
    assert_eq!(kept, [4]);
    let flood_at = t0 + 10_000;
    let (va, _) = told(&mut a, fsync_loop(flood_at, 9.9, true));
    let (store, warnings) = crate::source::baselines::Store::at(Some(path), &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let text = store.text().unwrap().to_owned();
    assert!(
        text.contains("process 13460 python3\ncalm 0.3200 -\n"),
        "{text}"
    );
    let mut b = Pipeline::default();
    b.seed(Some(&text));
    let (vb, learned) = told(&mut b, fsync_loop(flood_at, 9.9, true));
    assert_eq!(learned, None, "B learnt nothing of its own to hand back");
    // The same victim with the same ratio, the same early warning, the same headline.
    assert_eq!(va.story.victims, vb.story.victims);
    let v = &vb.story.victims[0];
    assert!((v.ratio.unwrap() - 9.9 / 0.32).abs() < 1e-9, "{v:?}");
    assert_eq!(va.early, vb.early);
    assert!(
        vb.early
            .as_ref()
            .unwrap()
            .line()
            .starts_with("early warning: python3[13460] fsync 9.9 ms, 31x its calm 0.32 ms"),
        "{:?}",
        vb.early
    );
    assert_eq!(va.headline, vb.headline);
    // Unseeded, it never saw python3 calm: no ratio, no early warning.
    let (alone, _) = told(&mut Pipeline::default(), fsync_loop(flood_at, 9.9, true));
    assert_eq!(alone.early, None, "{}", alone.headline);
    assert!(alone.story.victims.is_empty(), "{:?}", alone.story);
    // A stored calm listed more than 5 minutes before the step is not used: A listed python3
    // last at t0 + 4 s in the file.
    let mut late = Pipeline::default();
    late.seed(Some(&text));
    let (v, _) = told(&mut late, fsync_loop(t0 + 4000 + 301_000, 9.9, true));
    assert_eq!(v.early, None, "{}", v.headline);
}
