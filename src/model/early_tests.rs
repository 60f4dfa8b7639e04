use super::*;
use crate::model::dirty::{freerun, limits};
use crate::model::proc_row::ProcRow;
use crate::model::story::Calm;
use crate::parse::VmSysctl;

const PS: u64 = 4096;
const MIB: f64 = 1024.0 * 1024.0;

/// The idle tree's first model with the walk `rows`, nothing wrong: below background,
/// nothing throttled or saturated, writeback keeping up (no dirtying), its verdict derived.
pub(crate) fn model(rows: Vec<ProcRow>) -> Model {
    let samples = crate::source::test_samples("live-idle");
    let mut m = crate::pipeline::derive_all(&samples, crate::model::Options::default())
        .models
        .remove(0);
    m.page_size = PS;
    m.dirty.page_size = PS;
    m.dirty.state = Some(State::BelowBackground);
    m.dirty.dirtied_per_s = Some(0.0);
    m.dirty.written_per_s = Some(0.0);
    m.domains
        .retain(|d| d.kind == crate::model::domains::Kind::Global);
    for d in &mut m.domains {
        d.state = Some(State::BelowBackground);
    }
    m.throttled.clear();
    for d in &mut m.disks {
        d.saturation = crate::model::disk::Saturation::default();
        d.cols.aqu_sz = Some(0.0);
    }
    m.commands = Some(crate::model::commands::roll_up(&rows, Some(1000)));
    m.processes = Some(rows);
    m.verdict = Some(crate::model::verdict::derive(&m));
    m
}

pub(crate) fn proc(pid: u32, comm: &str, fsync_ms: Option<f64>) -> ProcRow {
    ProcRow {
        pid,
        comm: comm.into(),
        fsync_mean_ms: fsync_ms,
        fsync_per_s: fsync_ms.map(|_| 10.0),
        walk_ms: Some(1000),
        ..ProcRow::default()
    }
}

/// Incident 1's thresholds: `vm.dirty_bytes` 64M, `dirty_background_bytes` 32M, 4k pages.
pub(crate) fn incident_limits() -> (u64, u64, u64) {
    let sysctl = VmSysctl {
        dirty_bytes: Some(64 << 20),
        dirty_background_bytes: Some(32 << 20),
        ..VmSysctl::default()
    };
    let l = limits(1 << 20, &sysctl, PS).unwrap();
    (l.thresh, l.bg_thresh, freerun(l))
}

/// A flood's first second below background: `dirtied` and `written` MiB/s, d+wb `now` pages.
pub(crate) fn dirtying(m: &mut Model, dirtied: f64, written: f64, now: u64, freerun: u64) {
    m.dirty.dirtied_per_s = Some(dirtied * MIB / PS as f64);
    m.dirty.written_per_s = Some(written * MIB / PS as f64);
    m.dirty.dirty_writeback_pages = Some(now);
    m.dirty.freerun_pages = Some(freerun);
}

/// Tells `m` against `calm` as the pipeline does, and returns the verdict.
fn tell(calm: &mut Calm, mut m: Model) -> crate::model::answers::Verdict {
    let story = calm.tell(&m, true);
    let early = warn(&m, &story);
    let v = m.verdict.as_mut().unwrap();
    v.story = story;
    crate::model::verdict::warn_early(v, early);
    m.verdict.unwrap()
}

#[test]
fn incident_ones_thresholds_put_freerun_at_48m() {
    // Spec §1.2: bytes round up to pages, 64M / 4k = 16384, 32M / 4k = 8192; §1.4:
    // freerun = (16384 + 8192) / 2 = 12288 pages = 48M.
    assert_eq!(incident_limits(), (16384, 8192, 12288));
}

#[test]
fn the_first_seconds_of_a_flood_warn_from_the_victims_fsync_with_the_seconds_to_freerun() {
    let mut calm = Calm::default();
    let quiet = model(vec![proc(10, "python3", Some(0.4)), proc(20, "fio", None)]);
    for _ in 0..3 {
        let v = tell(&mut calm, quiet.clone());
        assert_eq!(v.early, None, "{}", v.headline);
    }
    // Below background: d+wb 10M (2560 pages) of freerun 48M; fio dirties 600 MiB/s and
    // 80 MiB/s is written back: +520 MiB/s = 133120 pages/s. The loop's fsync is 16 ms, 40x
    // its calm 0.4 ms.
    let (_, _, f) = incident_limits();
    let mut fio = proc(20, "fio", None);
    fio.dirtied_bytes_per_s = Some(600.0 * MIB);
    let mut m = model(vec![proc(10, "python3", Some(16.0)), fio]);
    dirtying(&mut m, 600.0, 80.0, 2560, f);
    let v = tell(&mut calm, m);
    let e = v.early.as_ref().expect("an early warning");
    // (12288 − 2560) / 133120 = 0.0731 s.
    assert!(
        (e.freerun_in_s.unwrap() - 9728.0 / 133_120.0).abs() < 1e-9,
        "{e:?}"
    );
    assert!((e.outrun_bytes_per_s - 520.0 * MIB).abs() < 1e-3, "{e:?}");
    assert_eq!(
        e.line(),
        "early warning: python3[10] fsync 16.0 ms, 40x its calm 0.40 ms, \
         freerun in ≈ 0.1 s at +520M/s"
    );
    assert!(
        v.headline
            .starts_with("global below background, early warning: python3[10] fsync"),
        "{}",
        v.headline
    );
    assert!(v.headline.ends_with("; no reclaim stall"), "{}", v.headline);
    // The writer is named beside its victim.
    assert_eq!(v.story.culprits[0].comm, "fio");
}

#[test]
fn a_larger_freerun_is_reached_in_seconds_at_this_rate() {
    // Freerun 2G (524288 pages), d+wb 0, +520 MiB/s: 524288 / 133120 = 3.94 s.
    let mut m = model(vec![]);
    dirtying(&mut m, 600.0, 80.0, 0, 524_288);
    let d = m.disks.first_mut().expect("the idle tree has a disk");
    d.cols.aqu_sz = Some(2.5);
    d.cols.r_s = Some(0.0);
    d.cols.w_s = Some(300.0);
    d.cols.w_await = Some(7.0);
    d.saturation.baseline_await_ms = Some(0.5);
    let name = d.name.clone();
    let e = warn(&m, &Story::default()).expect("the disk waits 14x its calm");
    assert_eq!(
        e.line(),
        format!(
            "early warning: {name} await 7.00 ms, 14x its calm 0.50 ms, \
             freerun in ≈ 3.9 s at +520M/s"
        )
    );
}

#[test]
fn a_disk_under_its_ratio_or_without_a_queue_or_writeback_keeping_up_does_not_warn() {
    let base = {
        let mut m = model(vec![]);
        dirtying(&mut m, 600.0, 80.0, 0, 524_288);
        let d = &mut m.disks[0];
        d.cols.aqu_sz = Some(2.5);
        d.cols.r_s = Some(0.0);
        d.cols.w_s = Some(300.0);
        d.cols.w_await = Some(1.4);
        d.saturation.baseline_await_ms = Some(0.5);
        m
    };
    // 2.8x its calm.
    assert_eq!(warn(&base, &Story::default()), None);
    // 14x, but no queue.
    let mut m = base.clone();
    m.disks[0].cols.w_await = Some(7.0);
    m.disks[0].cols.aqu_sz = Some(0.5);
    assert_eq!(warn(&m, &Story::default()), None);
    // 14x with a queue, but writeback keeps up (dirtied 600, written 600).
    m.disks[0].cols.aqu_sz = Some(2.5);
    dirtying(&mut m, 600.0, 600.0, 0, 524_288);
    assert_eq!(warn(&m, &Story::default()), None);
    // The same past freerun: the verdict says "writers throttled", no early warning.
    dirtying(&mut m, 600.0, 80.0, 0, 524_288);
    assert!(warn(&m, &Story::default()).is_some());
    m.dirty.state = Some(State::WritersThrottled);
    assert_eq!(warn(&m, &Story::default()), None);
}

#[test]
fn the_idle_trees_give_no_early_warning() {
    for tree in ["live-idle", "kernel-6.12-lab-memcg"] {
        let samples = crate::source::test_samples(tree);
        let models = crate::pipeline::derive_all(&samples, crate::model::Options::default());
        for m in &models.models {
            let v = m.verdict.as_ref().unwrap();
            assert_eq!(v.early, None, "{tree}: {}", v.headline);
            assert!(!v.headline.contains("early"), "{tree}: {}", v.headline);
        }
    }
}

#[test]
fn a_calm_build_gives_no_early_warning() {
    let mut calm = Calm::default();
    let quiet = model(vec![
        proc(10, "python3", Some(0.4)),
        proc(20, "rustc", None),
    ]);
    for _ in 0..3 {
        tell(&mut calm, quiet.clone());
    }
    // rustc dirties 20 MB/s, all of it written back; the loop's fsync is steady; the disk
    // writes with a short queue at its calm await.
    let mut rustc = proc(20, "rustc", None);
    rustc.dirtied_bytes_per_s = Some(20e6);
    let build = |fsync: f64, written: f64| {
        let mut m = model(vec![proc(10, "python3", Some(fsync)), rustc.clone()]);
        let (_, _, f) = incident_limits();
        dirtying(&mut m, 20e6 / MIB, written / MIB, 1000, f);
        let d = &mut m.disks[0];
        d.cols.aqu_sz = Some(1.2);
        d.cols.w_s = Some(80.0);
        d.cols.w_await = Some(0.9);
        d.saturation.baseline_await_ms = Some(0.5);
        m
    };
    for _ in 0..5 {
        let v = tell(&mut calm, build(0.5, 20e6));
        assert_eq!(v.early, None, "{}", v.headline);
        assert!(v.story.line().is_none(), "{:?}", v.story);
    }
    // Writeback lagging the build (dirty pages wait for their 30 s) with the loop's fsync
    // at 3x its calm: no early warning, and nobody named.
    for _ in 0..5 {
        let v = tell(&mut calm, build(1.2, 5e6));
        assert_eq!(v.early, None, "{}", v.headline);
        assert!(v.story.line().is_none(), "{:?}", v.story);
    }
}

#[test]
fn a_builds_link_burst_far_from_freerun_does_not_warn() {
    // Seen in a build: +29.2 MB/s past writeback, vda 2.33 ms at queue 9.4, 6x its calm
    // 0.37 ms, freerun 42 s away. The same burst 4 s from freerun warns.
    let mut m = model(vec![]);
    let rate = 29.2e6 / PS as f64;
    m.dirty.dirtied_per_s = Some(rate + 1000.0);
    m.dirty.written_per_s = Some(1000.0);
    m.dirty.freerun_pages = Some((rate * 42.0) as u64 + 100);
    m.dirty.dirty_writeback_pages = Some(100);
    let d = &mut m.disks[0];
    d.cols.aqu_sz = Some(9.4);
    d.cols.r_s = Some(0.0);
    d.cols.w_s = Some(200.0);
    d.cols.w_await = Some(2.33);
    d.saturation.baseline_await_ms = Some(0.37);
    assert_eq!(warn(&m, &Story::default()), None);
    m.dirty.freerun_pages = Some((rate * 4.0) as u64 + 100);
    let e = warn(&m, &Story::default()).expect("freerun 4 s away");
    assert!((e.freerun_in_s.unwrap() - 4.0).abs() < 0.01, "{e:?}");
}
