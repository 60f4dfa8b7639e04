use super::*;
use crate::model::commands::CommandRow;
use crate::model::proc_row::ProcRow;
use crate::model::procs_memory::MemRow;

/// The idle tree's second model: nothing wrong (below background, nothing throttled or
/// saturated), with `rows` as its walk.
fn model(rows: Vec<ProcRow>) -> Model {
    let samples = crate::source::test_samples("live-idle");
    let mut m = crate::pipeline::derive_all(&samples, crate::model::Options::default())
        .models
        .remove(0);
    m.dirty.state = Some(State::BelowBackground);
    m.domains.clear();
    m.throttled.clear();
    for d in &mut m.disks {
        d.saturation = crate::model::disk::Saturation::default();
    }
    m.commands = Some(crate::model::commands::roll_up(&rows, Some(1000)));
    m.processes = Some(rows);
    m
}

fn proc(pid: u32, comm: &str, fsync_ms: Option<f64>, iowait: Option<f64>) -> ProcRow {
    ProcRow {
        pid,
        comm: comm.into(),
        fsync_mean_ms: fsync_ms,
        fsync_per_s: fsync_ms.map(|_| 10.0),
        iowait_ms_per_s: iowait,
        walk_ms: Some(1000),
        ..ProcRow::default()
    }
}

/// The same model in a flood: the global domain throttles its writers.
fn flooded(mut m: Model) -> Model {
    m.dirty.state = Some(State::WritersThrottled);
    m
}

#[test]
fn the_fsync_victim_is_named_against_its_own_calm_and_the_writer_is_the_culprit() {
    let mut calm = Calm::default();
    // Calm: the loop's fsyncs take 0.4 ms, the writer does not write yet.
    let quiet = model(vec![
        proc(10, "python3", Some(0.4), Some(2.0)),
        proc(20, "fio", None, None),
    ]);
    for _ in 0..3 {
        let s = calm.tell(&quiet, true);
        assert!(s.victims.is_empty() && s.culprits.is_empty(), "{s:?}");
    }
    // The flood: fio dirties 600 MB/s, the loop's fsyncs take 16 ms (40x), and another
    // process's IO wait doubles (2x: no victim).
    let mut fio = proc(20, "fio", None, Some(900.0));
    fio.dirtied_bytes_per_s = Some(600e6);
    let m = flooded(model(vec![
        proc(10, "python3", Some(16.0), Some(4.0)),
        fio,
        proc(30, "sshd", None, Some(2.0)),
    ]));
    let s = calm.tell(&m, true);
    assert_eq!(s.culprits.len(), 1);
    assert_eq!(
        (
            s.culprits[0].comm.as_str(),
            s.culprits[0].dirtied_bytes_per_s
        ),
        ("fio", 600e6)
    );
    assert_eq!(s.victims.len(), 1, "{:?}", s.victims);
    let v = &s.victims[0];
    assert_eq!((v.pid, v.figure, v.value), (10, "fsync", 16.0));
    // The calm is the quiet steps' figure: 0.4 ms each time.
    assert!((v.calm.unwrap() - 0.4).abs() < 1e-9, "{v:?}");
    assert!((v.ratio.unwrap() - 40.0).abs() < 1e-9, "{v:?}");
    // The writer's own IO wait (900 ms/s) makes it no victim: it is the culprit.
    let line = s.line().unwrap();
    assert_eq!(
        line,
        "culprit fio dirtying 572M/s; victim python3[10] fsync 16.0 ms, 40x its calm 0.40 ms"
    );
}

#[test]
fn a_process_never_seen_calm_is_a_victim_only_past_an_absolute_figure() {
    let mut calm = Calm::default();
    let m = flooded(model(vec![
        proc(10, "python3", Some(15.0), None),
        proc(11, "postgres", Some(3.0), Some(50.0)),
    ]));
    let s = calm.tell(&m, true);
    assert_eq!(s.victims.len(), 1, "{:?}", s.victims);
    assert_eq!((s.victims[0].pid, s.victims[0].calm), (10, None));
    assert!(
        s.line()
            .unwrap()
            .ends_with("fsync 15.0 ms, never seen calm")
    );
}

#[test]
fn many_short_writers_are_one_culprit_with_their_count() {
    let mut calm = Calm::default();
    let rows: Vec<ProcRow> = (0..20)
        .map(|i| {
            let mut r = proc(100 + i, "dd", None, None);
            r.exited = true;
            r.dirtied_bytes_per_s = Some(10e6);
            r
        })
        .collect();
    let s = calm.tell(&flooded(model(rows)), true);
    assert_eq!(s.culprits.len(), 1);
    assert_eq!(
        (s.culprits[0].pids, s.culprits[0].dirtied_bytes_per_s),
        (20, 200e6)
    );
    assert!(s.victims.is_empty(), "exited rows suffer nothing now");
}

#[test]
fn the_memory_taker_and_why_the_thresholds_fell() {
    let mut calm = Calm::default();
    let mut m = model(Vec::new());
    let page = m.page_size as f64;
    let (t0, a0) = calm_step(&m);
    // A calm step fixes the reference: T and MemAvailable as they were.
    assert_eq!(calm.tell(&m, true).thresholds_moved, None);
    // The eater took most of it in the next second: MemAvailable a sixth, T an eighth.
    m.time_ms += 1000;
    m.memory.MemAvailable = Some(a0 / 6);
    m.dirty.thresh_pages = Some(t0 / 8);
    m.dirty.derived_thresh_pages = Some(t0 / 8);
    m.dirty.state = Some(State::BackgroundFlushing);
    m.processes_by_memory = Some(vec![
        MemRow {
            pid: 4242,
            comm: "pagewatch-eat".into(),
            rss_bytes: Some(19 << 30),
            rss_growth_bytes_per_s: Some(2e9),
            ..mem_row()
        },
        MemRow {
            pid: 7,
            comm: "bash".into(),
            rss_growth_bytes_per_s: Some(0.0),
            ..mem_row()
        },
    ]);
    let s = calm.tell(&m, true);
    let k = s.memory_taker.as_ref().unwrap();
    assert_eq!((k.pid, k.comm.as_str()), (4242, "pagewatch-eat"));
    let want = format!(
        "T {} → {} as MemAvailable fell {} → {}; pagewatch-eat[4242] holds 19.0G",
        Bytes(t0 as f64 * page),
        Bytes((t0 / 8) as f64 * page),
        Bytes(a0 as f64 * 1024.0),
        Bytes((a0 / 6) as f64 * 1024.0)
    );
    assert_eq!(s.thresholds_moved.as_deref(), Some(want.as_str()));
    // Memory back and no reclaim: no taker, whoever grows (past the window of the fall).
    m.time_ms += 20_000;
    m.memory.MemAvailable = Some(a0);
    m.dirty.thresh_pages = Some(t0);
    let s = calm.tell(&m, true);
    assert_eq!((s.memory_taker, s.thresholds_moved), (None, None));
    // A page cache filling behind a writer: MemAvailable 1 MiB lower in a second is no
    // shortage, however fast a compiler grows.
    m.time_ms += 1000;
    m.memory.MemAvailable = Some(a0 - 1024);
    assert_eq!(calm.tell(&m, true).memory_taker, None);
    // An eater seen growing at a walk 5 s after it took the memory, MemAvailable still since:
    // the fall in the window names it.
    m.time_ms += 1000;
    m.memory.MemAvailable = Some(a0 / 6);
    m.time_ms += 5000;
    let s = calm.tell(&m, true);
    assert_eq!(s.memory_taker.map(|k| k.pid), Some(4242));
}

/// A threshold that fell while MemAvailable did not (a sysctl set `vm.dirty_bytes`) did not
/// fall because memory was taken: the story does not say so. Seen live: "T 4.6G → 64.0M as
/// MemAvailable fell 23.0G → 23.0G".
#[test]
fn a_threshold_that_fell_alone_is_not_told_as_memory_taken() {
    let mut calm = Calm::default();
    let mut m = model(Vec::new());
    let (t0, a0) = calm_step(&m);
    assert_eq!(calm.tell(&m, true).thresholds_moved, None);
    // Past background from here on: no calm step moves the reference.
    m.dirty.state = Some(State::BackgroundFlushing);
    m.time_ms += 1000;
    m.dirty.thresh_pages = Some(t0 / 70);
    m.dirty.derived_thresh_pages = Some(t0 / 70);
    m.memory.MemAvailable = Some(a0 - 1024);
    assert_eq!(calm.tell(&m, true).thresholds_moved, None, "1 MiB less");
    // MemAvailable fell by 40 % where T fell by 60 %: more than half as far, told.
    m.time_ms += 1000;
    m.dirty.thresh_pages = Some(t0 * 2 / 5);
    m.dirty.derived_thresh_pages = Some(t0 * 2 / 5);
    m.memory.MemAvailable = Some(a0 * 3 / 5);
    let told = calm.tell(&m, true).thresholds_moved;
    assert!(
        told.as_deref()
            .is_some_and(|t| t.contains("as MemAvailable fell")),
        "{told:?}"
    );
}

/// The dirty threshold (pages) and MemAvailable (kB) of a calm step.
fn calm_step(m: &Model) -> (u64, u64) {
    let t0 = m.dirty.thresh_pages.or(m.dirty.derived_thresh_pages);
    (t0.unwrap(), m.memory.MemAvailable.unwrap())
}

fn mem_row() -> MemRow {
    MemRow::blank(0, "")
}

#[test]
fn commands_rows_are_what_culprits_read() {
    // A command under the floor is no culprit, nor one writing on a calm machine, nor one
    // writing a tenth of the first's rate.
    let mut rows = vec![proc(1, "rustc", None, None), proc(2, "cc1", None, None)];
    rows[0].dirtied_bytes_per_s = Some(24e6);
    rows[1].dirtied_bytes_per_s = Some(2e6);
    let calm = model(rows);
    assert!(
        Calm::default().tell(&calm, true).culprits.is_empty(),
        "a build on a calm machine"
    );
    let named = Calm::default().tell(&flooded(calm), true).culprits;
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(named[0].comm, "rustc");
    let mut m = model(Vec::new());
    m.commands = Some(vec![CommandRow {
        comm: "rsync".into(),
        pids: 1,
        dirtied_bytes_per_s: Some(1000.0),
        read_bytes_per_s: None,
        rchar_per_s: None,
        wchar_per_s: None,
        reaped_children: 0,
        exited: 0,
        walk_ms: Some(1000),
        rates_from_walk_ms: 0,
    }]);
    assert!(Calm::default().tell(&flooded(m), true).culprits.is_empty());
}

#[test]
fn a_step_where_dirtying_outruns_writeback_is_no_calm_and_names_only_a_victim_ten_times_its_calm() {
    let mut calm = Calm::default();
    let quiet = model(vec![
        proc(10, "python3", Some(0.4), None),
        proc(11, "sshd", Some(0.4), None),
    ]);
    for _ in 0..3 {
        calm.tell(&quiet, true);
    }
    // Below background, 150000 pages/s dirtied and 20000 written (+508 MiB/s): the loop's
    // fsync is 40x its calm, sshd's 5x (a victim only once a domain is past background).
    let mut m = model(vec![
        proc(10, "python3", Some(16.0), None),
        proc(11, "sshd", Some(2.0), None),
    ]);
    m.dirty.page_size = 4096;
    m.dirty.dirtied_per_s = Some(150_000.0);
    m.dirty.written_per_s = Some(20_000.0);
    // Twice: were the first such step learned as calm, the second's ratio would fall.
    for _ in 0..2 {
        let s = calm.tell(&m, true);
        assert_eq!(s.victims.len(), 1, "{:?}", s.victims);
        assert_eq!((s.victims[0].pid, s.victims[0].figure), (10, "fsync"));
        assert!((s.victims[0].ratio.unwrap() - 40.0).abs() < 1e-9, "{s:?}");
    }
    // Writeback keeping up again: calm, nobody named.
    m.dirty.written_per_s = Some(150_000.0);
    assert!(calm.tell(&m, true).victims.is_empty());
}

#[test]
fn a_victim_blocked_in_sync_behind_a_long_drain_waits_for_that_disk() {
    let mut calm = Calm::default();
    let mut syncing = proc(10, "sync", Some(15.0), None);
    syncing.wchan = Some("wb_wait_for_completion".into());
    let mut m = flooded(model(vec![syncing, proc(11, "python3", Some(20.0), None)]));
    // vda: 2 GiB to write at 32 MiB/s: 64 s (spec §15.5).
    let d = &mut m.disks[0];
    d.name = "vda".into();
    d.drain = crate::model::drain::Drain {
        dirty_bytes: Some(2 << 30),
        writeback_bytes: Some(0),
        dirty_from: Some("kernel"),
        dirty_from_why: None,
        kernel_write_bytes_per_s: Some(f64::from(32u32 << 20)),
        drain_bytes_per_s: Some(f64::from(32u32 << 20)),
        drain_from: Some("kernel"),
        drain_eta_s: Some(64.0),
    };
    let s = calm.tell(&m, true);
    let sync = s.victims.iter().find(|v| v.pid == 10).unwrap();
    assert_eq!(
        sync.waits_for.as_deref(),
        Some("vda: 2.0G to write, ~64 s at 32.0M/s (kernel)")
    );
    assert!(
        sync.figures()
            .ends_with("; waits for vda: 2.0G to write, ~64 s at 32.0M/s (kernel)")
    );
    // Not in a sync wait: no reason given.
    let other = s.victims.iter().find(|v| v.pid == 11).unwrap();
    assert_eq!(other.waits_for, None);
    // A drain under 5 s is no reason.
    m.disks[0].drain.drain_eta_s = Some(4.0);
    let s = calm.tell(&m, true);
    assert_eq!(
        s.victims.iter().find(|v| v.pid == 10).unwrap().waits_for,
        None
    );
}

#[test]
fn calm_steps_of_a_walk_made_for_the_processes_view_alone_teach_nothing() {
    // The processes view walks at idle; the default screen and batch do not. Calm steps of
    // such a walk (`learn` false) must leave the story as an instance that never walked
    // there would tell it, or the two name different victims in the same second.
    let quiet = model(vec![proc(10, "postgres", None, Some(0.5))]);
    let flood = flooded(model(vec![proc(10, "postgres", None, Some(60.0))]));
    let (mut viewed, mut unseen, mut shared) = (Calm::default(), Calm::default(), Calm::default());
    for _ in 0..3 {
        viewed.tell(&quiet, false);
        shared.tell(&quiet, true);
    }
    let (v, u) = (viewed.tell(&flood, true), unseen.tell(&flood, true));
    assert_eq!(
        v.victims, u.victims,
        "one answer with or without the view's walks"
    );
    assert!(
        v.victims.is_empty(),
        "60 ms/s never seen calm is under 200: {v:?}"
    );
    // A walk every view makes teaches the calm: 60 ms/s against a calm of 1 (the floor).
    let s = shared.tell(&flood, true);
    assert_eq!(s.victims.len(), 1, "{s:?}");
    assert_eq!((s.victims[0].pid, s.victims[0].figure), (10, "iowait"));
    assert!((s.victims[0].ratio.unwrap() - 60.0).abs() < 1e-9, "{s:?}");
}

#[test]
fn pagewatch_itself_is_no_victim() {
    // `pagewatch record` fsyncs its file each second: in a flood its fsyncs wait too.
    let mut m = flooded(model(vec![
        proc(10, "python3", Some(7.0), None),
        proc(77, "pagewatch", Some(8.5), None),
    ]));
    m.own_pid = Some(77);
    let s = Calm::default().tell(&m, true);
    let named: Vec<u32> = s.victims.iter().map(|v| v.pid).collect();
    assert_eq!(named, [10], "{s:?}");
}

#[test]
fn another_pagewatch_is_no_victim_either() {
    // A screen beside a `record` of the same binary (here built as `pw-base`) named the
    // recorder a victim, while the recorder, leaving out only itself, named nobody.
    let mut m = flooded(model(vec![
        proc(10, "python3", Some(7.0), None),
        proc(77, "pw-base", Some(8.5), None),
        proc(78, "pw-base", Some(9.5), None),
        proc(79, "pagewatch", Some(9.0), None),
    ]));
    m.own_pid = Some(77);
    m.own_comm = Some("pw-base".to_owned());
    let s = Calm::default().tell(&m, true);
    let named: Vec<u32> = s.victims.iter().map(|v| v.pid).collect();
    assert_eq!(named, [10], "{s:?}");
}

#[test]
fn a_calm_step_reading_a_victims_figure_teaches_no_calm() {
    // A flood's first second reads calm by the dirty counters while the loop's fsync already
    // waits 10.9 ms: learnt as its calm, 7 ms in the flood was 0.6x it and never named.
    let mut calm = Calm::default();
    calm.tell(
        &model(vec![proc(10, "python3", Some(10.9), Some(250.0))]),
        true,
    );
    let s = calm.tell(
        &flooded(model(vec![proc(10, "python3", Some(7.0), None)])),
        true,
    );
    assert_eq!(s.victims.len(), 1, "{s:?}");
    assert_eq!((s.victims[0].figure, s.victims[0].ratio), ("fsync", None));
    // Under the figures, a calm reading is learnt as before.
    calm.tell(
        &model(vec![proc(10, "python3", Some(0.5), Some(2.0))]),
        true,
    );
    let s = calm.tell(
        &flooded(model(vec![proc(10, "python3", Some(7.0), None)])),
        true,
    );
    assert!((s.victims[0].ratio.unwrap() - 14.0).abs() < 1e-9, "{s:?}");
}

#[test]
fn a_calm_outlives_a_walk_that_starts_again_and_rows_without_the_process() {
    let mut calm = Calm::default();
    let quiet = model(vec![proc(10, "python3", Some(0.4), None)]);
    let t0 = quiet.time_ms;
    calm.tell(&quiet, true);
    let at = |mut m: Model, s: i64| {
        m.time_ms = t0 + s * 1000;
        m
    };
    // A walk that starts again lists no one yet; then rows without the loop (it dropped out
    // of the most active). Both once made batch forget its calm.
    calm.tell(&at(model(Vec::new()), 20), true);
    calm.tell(&at(model(vec![proc(20, "sshd", None, None)]), 40), true);
    let flood = |s| {
        at(
            flooded(model(vec![proc(10, "python3", Some(8.0), None)])),
            s,
        )
    };
    let v = calm.tell(&flood(60), true).victims;
    assert_eq!(
        (v[0].pid, v[0].ratio.map(f64::round)),
        (10, Some(20.0)),
        "{v:?}"
    );
    // Five minutes after the rows last listed it, it is forgotten: never seen calm.
    calm.tell(&at(model(vec![proc(20, "sshd", None, None)]), 361), true);
    let v = calm.tell(&flood(362), true).victims;
    assert_eq!((v[0].pid, v[0].ratio), (10, None), "{v:?}");
}

/// A saturated disk's readers are culprits beside its writers (a direct `fio --rw=randread`
/// saturating vda at 345 MB/s named nobody: reading is no dirtying); a dirty flood with no
/// disk saturated names its writers only.
#[test]
fn a_saturated_disks_readers_are_culprits_and_a_dirty_floods_are_not() {
    let mut calm = Calm::default();
    let mut fio = proc(20, "fio", None, None);
    fio.read_bytes_per_s = Some(345e6);
    let mut dd = proc(30, "dd", None, None);
    dd.dirtied_bytes_per_s = Some(50e6);
    // Under a tenth of the first culprit's bytes: not named.
    let mut cat = proc(40, "cat", None, None);
    cat.read_bytes_per_s = Some(30e6);
    let rows = vec![fio, dd, cat];
    let s = calm.tell(&flooded(model(rows.clone())), true);
    let named: Vec<_> = s
        .culprits
        .iter()
        .map(|c| (c.comm.as_str(), c.dirtied_bytes_per_s, c.read_bytes_per_s))
        .collect();
    assert_eq!(named, [("dd", 50e6, None)]);
    let mut m = model(rows);
    m.disks[0].saturation.saturated = true;
    let s = calm.tell(&m, true);
    let named: Vec<_> = s
        .culprits
        .iter()
        .map(|c| (c.comm.as_str(), c.dirtied_bytes_per_s, c.read_bytes_per_s))
        .collect();
    assert_eq!(named, [("fio", 0.0, Some(345e6)), ("dd", 50e6, Some(0.0))]);
    assert_eq!(
        s.line().unwrap(),
        "culprit fio reading 329M/s, dd dirtying 47.7M/s"
    );
}

/// `m` at `s` seconds.
fn at(mut m: Model, s: i64) -> Model {
    m.time_ms = s * 1000;
    m
}

/// The calm figures are handed back once learnt, `SAY_EVERY` steps in; again when one moved,
/// or after `SAY_SEEN_EVERY` steps (so that the time they were last listed stays recent in
/// the file through an incident), kept to the file's 4 decimals.
#[test]
fn the_calm_learnt_is_handed_back_when_new_or_moved_at_most_every_few_steps() {
    let mut calm = Calm::default();
    let mut due = Vec::new();
    for s in 1..=90 {
        // 0.4 ms; 0.8 ms at step 20, 0.44 at 21; no fsync timed after.
        let fsync = match s {
            ..20 => Some(0.4),
            20 => Some(0.8),
            21 => Some(0.44),
            _ => None,
        };
        calm.tell(&at(model(vec![proc(10, "python3", fsync, None)]), s), true);
        if let Some(l) = calm.take_due() {
            due.push((s, l[&(10, "python3".to_owned())]));
        }
    }
    // Learnt at 1: said at 5. Moved at 20 (0.4 + 0.3 × 0.4 = 0.52) and 21 (0.52 − 0.3 ×
    // 0.08 = 0.496): said at 20 and 25. Then 60 steps after 25, with the time last listed.
    let said: Vec<_> = due.iter().map(|(s, p)| (*s, p.calm[0], p.seen_s)).collect();
    assert_eq!(
        said,
        [
            (5, Some(0.4), 5),
            (20, Some(0.52), 20),
            (25, Some(0.496), 25),
            (85, Some(0.496), 85)
        ]
    );
    // Kept to 4 decimals: 0.4 + 0.3 × (0.43337 − 0.4) = 0.410011 is 0.41.
    let mut c = Calm::default();
    for fsync in [0.4, 0.43337] {
        c.tell(
            &at(model(vec![proc(10, "python3", Some(fsync), None)]), 1),
            true,
        );
    }
    assert_eq!(c.learned()[&(10, "python3".to_owned())].calm[0], Some(0.41));
}

/// The stored figure wins over the one this instance learnt (every instance compares with
/// the same calm); a process it never saw calm is compared with the stored calm of the same
/// pid and comm, another comm's is not used; its own figure where none is stored.
#[test]
fn the_stored_calm_wins_over_its_own_and_names_the_victim_a_late_instance_never_saw_calm() {
    use crate::parse::baselines::Process;
    let stored = |calm: f64| {
        let p = Process {
            calm: [Some(calm), None],
            seen_s: 100,
        };
        crate::parse::baselines::Processes::from([
            ((10, "python3".to_owned()), p),
            ((11, "postgres".to_owned()), p),
        ])
    };
    let flood = |s| {
        at(
            flooded(model(vec![
                proc(10, "python3", Some(16.0), None),
                proc(11, "postmaster", Some(16.0), None),
            ])),
            s,
        )
    };
    let mut late = Calm::default();
    late.seed(stored(0.5));
    let v = late.tell(&flood(101), true).victims;
    let got: Vec<_> = v.iter().map(|v| (v.pid, v.ratio)).collect();
    assert_eq!(got, [(10, Some(32.0)), (11, None)], "{v:?}");
    // Its own 0.4 ms learnt first: the stored 0.5 ms's 32x all the same, as every instance
    // says; its own 0.4 ms where nothing is stored: 40x.
    let mut own = Calm::default();
    own.seed(stored(0.5));
    own.tell(
        &at(model(vec![proc(10, "python3", Some(0.4), None)]), 100),
        true,
    );
    let v = own.tell(&flood(101), true).victims;
    assert_eq!(v[0].ratio, Some(32.0), "{v:?}");
    own.seed(crate::parse::baselines::Processes::new());
    let v = own.tell(&flood(102), true).victims;
    assert_eq!(v[0].ratio, Some(40.0), "{v:?}");
    // Nothing is handed back that it did not learn itself.
    assert_eq!(late.learned().len(), 0);
    assert_eq!(own.learned().len(), 1);
}

/// One answer: an instance started mid-incident, which never saw a calm step, tells why the
/// thresholds moved against the last calm step another instance handed back (`reference_due`,
/// through the baselines file), in the same words as that instance; not against one of an
/// earlier boot. The reference is handed back once it moved by 1 %, at most every 5 steps.
#[test]
fn a_late_instance_tells_the_thresholds_moved_from_the_calm_step_another_saw() {
    let calm_step = |s: i64, avail_kb: u64| {
        let mut m = at(model(Vec::new()), s);
        m.booted_ms = 0;
        m.memory.MemAvailable = Some(avail_kb);
        m
    };
    let mut before = Calm::default();
    let mut said = Vec::new();
    let a0 = model(Vec::new()).memory.MemAvailable.unwrap();
    for s in 1..=12 {
        // 0.5 % lower at 7 (not handed back), 2 % at 11.
        let a = match s {
            ..7 => a0,
            7..11 => a0 - a0 / 200,
            _ => a0 - a0 / 50,
        };
        before.tell(&calm_step(s, a), true);
        if let Some(r) = before.reference_due() {
            said.push((s, r.seen_s));
        }
    }
    assert_eq!(
        said,
        [(5, 5), (11, 11)],
        "first at 5, then at 11, once moved 1 %"
    );
    let stored = before.learned_reference().unwrap();
    // The incident: the first instance and a late one seeded with what it stored.
    let mut incident = calm_step(13, a0 / 6);
    let t0 = incident.dirty.thresh_pages.unwrap();
    incident.dirty.thresh_pages = Some(t0 / 8);
    incident.dirty.derived_thresh_pages = Some(t0 / 8);
    incident.dirty.state = Some(State::BackgroundFlushing);
    let mine = before.tell(&incident, true).thresholds_moved;
    let mut late = Calm::default();
    late.seed_reference(Some(stored));
    let theirs = late.tell(&incident, true).thresholds_moved;
    assert!(
        mine.as_deref().is_some_and(|t| t.starts_with("T ")),
        "{mine:?}"
    );
    assert_eq!(theirs, mine);
    // Another instance stored a later calm step: both tell the fall from it, not their own.
    let later = Reference {
        seen_s: 12,
        available_bytes: stored.available_bytes * 0.9,
        ..stored
    };
    before.seed_reference(Some(later));
    late.seed_reference(Some(later));
    let (mine, theirs) = (
        before.tell(&incident, true).thresholds_moved,
        late.tell(&incident, true).thresholds_moved,
    );
    assert_eq!(mine, theirs);
    assert_ne!(mine, before_text(&stored, &incident));
    // Unseeded it says nothing; seeded with a step of an earlier boot, nothing either.
    assert_eq!(Calm::default().tell(&incident, true).thresholds_moved, None);
    let mut rebooted = incident.clone();
    rebooted.booted_ms = 100_000;
    let mut old = Calm::default();
    old.seed_reference(Some(stored));
    assert_eq!(old.tell(&rebooted, true).thresholds_moved, None);
}

/// A first step has no rates: nothing on it is judged, and it is no calm step to tell the
/// thresholds' fall from (a screen started in a flood did, and told another fall than the
/// instances that saw the calm).
#[test]
fn a_first_step_is_no_calm_step() {
    let mut first = model(Vec::new());
    first.interval_s = None;
    let mut late = Calm::default();
    late.tell(&first, true);
    assert_eq!(late.learned_reference(), None);
    let mut second = model(Vec::new());
    second.time_ms = first.time_ms + 1000;
    late.tell(&second, true);
    assert!(late.learned_reference().is_some());
}

/// What `Calm` tells of `incident` seeded with `r` alone.
fn before_text(r: &Reference, incident: &Model) -> Option<String> {
    let mut c = Calm::default();
    c.seed_reference(Some(*r));
    c.tell(incident, true).thresholds_moved
}
