use super::*;
use crate::model::procs::ProcRow;

/// `n` one-second records of the idle tree (the report's test models; `summary`'s tests too).
pub(crate) fn models(n: usize) -> Vec<Model> {
    let s = crate::source::test_samples("live-idle");
    let snaps: Vec<_> = s
        .iter()
        .map(|r| crate::parse::Snapshot::parse(r).unwrap())
        .collect();
    (1..=n)
        .map(|i| {
            let mut m = Model::derive(
                Some(&snaps[i - 1]),
                &snaps[i],
                crate::model::Options::default(),
            );
            m.interval_s = Some(1.0);
            m.time_ms = 1000 * i64::try_from(i).unwrap();
            m
        })
        .collect()
}

fn writer(pid: u32, ms: Option<f64>, source: ThrottleSource) -> Throttled {
    Throttled {
        cgroup: Some("/box".into()),
        pause_ms_per_s: ms,
        ..Throttled::new(pid, format!("w{pid}"), source)
    }
}

fn proc_row(pid: u32, dirtied: f64) -> ProcRow {
    ProcRow {
        pid,
        comm: format!("p{pid}"),
        cgroup: None,
        dirtied_bytes_per_s: Some(dirtied),
        read_bytes_per_s: Some(10.0),
        rchar_per_s: None,
        wchar_per_s: None,
        cache_hit_est_pct: None,
        iowait_ms_per_s: None,
        state: 'R',
        wchan: None,
        no_permission: false,
        rss_bytes: None,
        anon_bytes: None,
        rss_growth_bytes_per_s: None,
        majflt_per_s: None,
        walk_ms: Some(1000),
        rates_from_walk_ms: 0,
        reaped_children: false,
        reaped_dirtied_bytes: None,
        cmdline: None,
        exited: false,
        exit_delays: None,
        reaped_io: None,
        ..ProcRow::default()
    }
}

/// Gives each record's rows a walk of their own, at the record's time: a walk every record,
/// as at a 1 s pace (the pipeline stamps a walk's rows with its time, `rates_from_walk_ms`,
/// and the records to the next walk repeat them).
fn a_walk_each(m: &mut [Model]) {
    for x in m {
        let walk = u64::try_from(x.time_ms).unwrap();
        for p in x.processes.iter_mut().flatten() {
            p.rates_from_walk_ms = walk;
        }
        for c in x.commands.iter_mut().flatten() {
            c.rates_from_walk_ms = walk;
        }
    }
}

#[test]
fn writers_add_up_listed_and_paused_seconds() {
    let mut m = models(3);
    m[0].throttled = vec![writer(7, Some(200.0), ThrottleSource::Tracepoint)];
    m[1].throttled = vec![
        writer(7, Some(300.0), ThrottleSource::Tracepoint),
        writer(9, None, ThrottleSource::Wchan),
    ];
    // Passing through balance_dirty_pages without a pause is not being throttled: pid 7's
    // third row and pid 11 (only such rows) do not count.
    m[2].throttled = vec![
        writer(9, None, ThrottleSource::Wchan),
        writer(7, Some(0.0), ThrottleSource::Tracepoint),
        writer(11, Some(0.0), ThrottleSource::Tracepoint),
    ];
    let w = writers(&m);
    assert_eq!(w.len(), 2);
    // pid 7: listed 2 s, paused 0.2 + 0.3 = 0.5 s, first at the first record.
    assert_eq!((w[0].pid, w[0].listed_s, w[0].first_ms), (7, 2.0, 1000));
    assert!((w[0].paused_s.unwrap() - 0.5).abs() < 1e-12);
    assert!(w[0].exact);
    // pid 9: listed 2 s, no pause figure, approximate.
    assert_eq!(
        (w[1].pid, w[1].listed_s, w[1].paused_s, w[1].exact),
        (9, 2.0, None, false)
    );
    let mut o = String::new();
    render(&mut o, &m, 0);
    assert!(o.contains("| 7 | w7 | /box | 2.0 s | 0.5 s |"), "{o}");
    assert!(o.contains("| 9 | w9 | /box | 2.0 s | - |"), "{o}");
}

#[test]
fn dirtiers_integrate_rates_and_skip_the_idle() {
    let mut m = models(2);
    m[0].processes = Some(vec![proc_row(1, 1000.0), proc_row(2, 0.0)]);
    m[1].processes = Some(vec![proc_row(1, 3000.0), proc_row(3, 5000.0)]);
    a_walk_each(&mut m);
    let d = dirtiers(&m);
    let got: Vec<(u32, f64, f64)> = d.iter().map(|d| (d.pid, d.dirtied, d.read)).collect();
    assert_eq!(got, [(3, 5000.0, 10.0), (1, 4000.0, 20.0)]);
}

/// Wchan rows say why the tracepoint was not there: the state in the first record that
/// listed one unarmed; nothing when it was armed.
#[test]
fn wchan_rows_say_why_the_tracepoint_was_not_armed() {
    use crate::model::throttled::Tracer;
    let tracer = |state| Tracer {
        state,
        why: Some("no tracefs mount in mountinfo".into()),
        events: 0,
        lost: 0,
        capped: false,
        error: None,
    };
    let mut m = models(2);
    m[1].throttled = vec![writer(9, None, ThrottleSource::Wchan)];
    assert_eq!(
        why_wchan(&m).as_deref(),
        Some("The tracepoint had not been asked for yet in those records.")
    );
    m[1].tracer = Some(tracer(TraceState::NoTracefs));
    let mut o = String::new();
    render(&mut o, &m, 0);
    assert!(
        o.contains(
            "approximate. The tracepoint was not armed in those records: no-tracefs (no \
             tracefs mount in mountinfo)."
        ),
        "{o}"
    );
    m[1].tracer = Some(tracer(TraceState::Armed));
    assert_eq!(why_wchan(&m), None);
}

/// A workqueue thread renamed for each work item (the kernel's `kworker/u8:0+flush-254:0`,
/// then `kworker/u8:0-writeback`) is one row; a pid that exec'd is two.
#[test]
fn a_kworker_renamed_between_walks_is_one_row() {
    let mut m = models(3);
    let named = |comm: &str, dirtied: f64| ProcRow {
        comm: comm.into(),
        ..proc_row(12, dirtied)
    };
    m[0].processes = Some(vec![named("kworker/u8:0+flush-254:0", 100.0)]);
    m[1].processes = Some(vec![
        named("kworker/u8:0-writeback", 20.0),
        ProcRow {
            comm: "bash".into(),
            ..proc_row(40, 5.0)
        },
    ]);
    m[2].processes = Some(vec![
        named("kworker/u8:0", 3.0),
        ProcRow {
            comm: "dd".into(),
            ..proc_row(40, 7.0)
        },
    ]);
    a_walk_each(&mut m);
    let d = dirtiers(&m);
    let got: Vec<(u32, &str, f64)> = (d.iter())
        .map(|d| (d.pid, d.comm.as_str(), d.dirtied))
        .collect();
    assert_eq!(
        got,
        [
            (12, "kworker/u8:0", 123.0),
            (40, "dd", 7.0),
            (40, "bash", 5.0)
        ]
    );
}

/// A row of a process that lived 1 s of a 3 s walk (born or exited between walks), at
/// 100 B/s: the three records repeating it add its 100 bytes once, not 300.
#[test]
#[allow(clippy::float_cmp, reason = "whole bytes")]
fn a_row_shorter_than_its_walk_counts_its_bytes_once() {
    let mut m = models(3);
    for x in &mut m {
        x.processes = Some(vec![
            proc_row(1, 100.0),
            ProcRow {
                walk_ms: Some(3000),
                ..proc_row(2, 100.0)
            },
        ]);
        x.commands = Some(crate::model::commands::roll_up(
            x.processes.as_deref().unwrap(),
            Some(3000),
        ));
    }
    let d = dirtiers(&m);
    let got: Vec<(u32, f64)> = d.iter().map(|d| (d.pid, d.dirtied.round())).collect();
    assert_eq!(got, [(2, 300.0), (1, 100.0)]);
}

#[test]
#[allow(clippy::float_cmp, reason = "sums of whole MiB and tenths of a second")]
fn a_loop_of_short_lived_writers_rolls_up_by_command() {
    use ThrottleSource::{Tracepoint, Wchan};
    const MIB: f64 = 1024.0 * 1024.0;
    let named = |comm: &str, pid: u32, dirtied_mib: f64| ProcRow {
        comm: comm.into(),
        ..proc_row(pid, dirtied_mib * MIB)
    };
    let paced = |comm: &str, pid: u32, ms: Option<f64>, src| Throttled {
        comm: comm.into(),
        ..writer(pid, ms, src)
    };
    // Four one-second records (the tree has three intervals: the last one again, a
    // second later).
    let mut m = models(3);
    m.push(m[2].clone());
    m[3].time_ms = 4000;
    // A shell loop starts a new dd each second (two overlap at the second record); fio
    // runs throughout; bash walks by without dirtying; dd 105 exits without dirtying.
    m[0].processes = Some(vec![named("dd", 101, 4.0), named("fio", 7, 5.0)]);
    m[0].throttled = vec![
        paced("dd", 101, Some(200.0), Tracepoint),
        paced("fio", 7, Some(300.0), Tracepoint),
    ];
    m[1].processes = Some(vec![
        named("dd", 102, 5.0),
        named("dd", 103, 6.0),
        named("fio", 7, 5.0),
    ]);
    m[1].throttled = vec![
        paced("dd", 102, Some(100.0), Tracepoint),
        paced("dd", 103, Some(100.0), Tracepoint),
        paced("fio", 7, Some(300.0), Tracepoint),
    ];
    m[2].processes = Some(vec![named("dd", 104, 7.0), named("bash", 50, 0.0)]);
    m[2].throttled = vec![paced("dd", 104, None, Wchan)];
    m[3].processes = Some(vec![named("dd", 105, 0.0), named("fio", 7, 5.0)]);
    // fio passes through balance_dirty_pages without a pause: not throttled there.
    m[3].throttled = vec![paced("fio", 7, Some(0.0), Tracepoint)];
    a_walk_each(&mut m);
    let c = commands(&m);
    assert_eq!(c.len(), 2, "{c:?}");
    // dd: pids 101–104 (105 dirtied nothing and was never throttled); 4 + 5 + 6 + 7 =
    // 22 MiB; read 10 B/s × 1 s by each; listed in records 0, 1, 2 (102 and 103 at once
    // count once): 3 s; paused 0.2 + 0.1 + 0.1 = 0.4 s (104's wchan row has no figure).
    assert_eq!(
        (
            c[0].comm.as_str(),
            c[0].pids,
            c[0].dirtied,
            c[0].read,
            c[0].listed_s
        ),
        ("dd", 4, 22.0 * MIB, 40.0, 3.0)
    );
    assert!((c[0].paused_s.unwrap() - 0.4).abs() < 1e-12);
    assert_eq!(c[0].cgroups, ["/box"]);
    // fio: one pid, 3 × 5 = 15 MiB, listed 2 s (not the last record), paused 0.3 + 0.3 =
    // 0.6 s.
    assert_eq!(
        (c[1].comm.as_str(), c[1].pids, c[1].dirtied, c[1].listed_s),
        ("fio", 1, 15.0 * MIB, 2.0)
    );
    assert!((c[1].paused_s.unwrap() - 0.6).abs() < 1e-12);
    let mut o = String::new();
    render(&mut o, &m, 0);
    assert!(
        o.contains("| dd ×4 | /box | 22.0M | 40B | 3.0 s | 0.4 s |"),
        "{o}"
    );
    assert!(
        o.contains("| fio ×1 | /box | 15.0M | 30B | 2.0 s | 0.6 s |"),
        "{o}"
    );
    // The per-pid table still lists each dd on its own.
    assert!(o.contains("| 104 | dd | - | 7.0M | 10B |"), "{o}");
}

/// A shell loop of 30 dd a walk, 1 MiB/s each over a 1 s walk: the per-process rows keep
/// the walk's `TOP` most active, the roll-up every one; the command adds up all 30.
#[test]
#[allow(clippy::float_cmp, reason = "whole MiB")]
fn a_loop_wider_than_the_rows_kept_adds_up_from_the_walks() {
    use crate::model::procs::TOP;
    const MIB: f64 = 1024.0 * 1024.0;
    let mut m = models(2);
    for (w, x) in m.iter_mut().enumerate() {
        let all: Vec<ProcRow> = (0..30)
            .map(|i| ProcRow {
                comm: "dd".into(),
                ..proc_row(100 * (w as u32 + 1) + i, MIB)
            })
            .collect();
        x.commands = Some(crate::model::commands::roll_up(&all, Some(1000)));
        x.processes = Some(all[..TOP].to_vec());
    }
    a_walk_each(&mut m);
    assert!(m.iter().all(|x| x.interval_s == Some(1.0)));
    let c = commands(&m);
    // 30 × 1 MiB/s over each of two 1 s walks; the per-process rows alone: 20 × 2.
    assert_eq!((c[0].comm.as_str(), c[0].dirtied), ("dd", 60.0 * MIB));
    assert_eq!(
        dirtiers(&m).iter().map(|d| d.dirtied).sum::<f64>(),
        40.0 * MIB
    );
    // 40 distinct pids in the rows, 30 in one walk: at least 40.
    assert_eq!(c[0].pids, 2 * TOP);
    assert_eq!(c[0].read, 30.0 * 10.0 * 2.0);
    // Without the walks' roll-ups (an older model), the rows' sums stand.
    for x in &mut m {
        x.commands = None;
    }
    assert_eq!(commands(&m)[0].dirtied, 40.0 * MIB);
}

/// 25 short dd over two 2 s walks (15, then 10), each one exited row of 40 MiB over 1 s,
/// repeated by the two 1 s records of its walk; the per-process rows keep 8 of each walk.
/// Each walk counts once.
#[test]
#[allow(clippy::float_cmp, reason = "whole MiB")]
fn exited_processes_count_once_each_over_the_walks() {
    const MIB: f64 = 1024.0 * 1024.0;
    let mut m = models(3);
    m.push(m[2].clone());
    for (i, x) in m.iter_mut().enumerate() {
        let (walk, n, first) = if i < 2 {
            (2000, 15, 100)
        } else {
            (4000, 10, 200)
        };
        let all: Vec<ProcRow> = (0..n)
            .map(|p| ProcRow {
                comm: "dd".into(),
                exited: true,
                rates_from_walk_ms: walk,
                ..proc_row(first + p, 40.0 * MIB)
            })
            .collect();
        x.commands = Some(crate::model::commands::roll_up(&all, Some(2000)));
        x.processes = Some(all[..8].to_vec());
    }
    let c = commands(&m);
    // 16 distinct pids in the rows, 15 at most in one walk, 15 + 10 exited over the walks.
    assert_eq!((c[0].comm.as_str(), c[0].pids), ("dd", 25));
    // Each walk once: n × 40 MiB/s × 1 s over 2 s, × the walk's 2 s: 25 × 40 MiB.
    assert_eq!(c[0].dirtied, 1000.0 * MIB);
}

#[test]
fn nothing_to_say_writes_nothing() {
    let mut o = String::new();
    render(&mut o, &models(2), 0);
    assert!(o.is_empty());
}

/// The records the pipeline derives from `samples`, one a second (1 s, 2 s, …): each taken by
/// one `procs::Tracker` (walks and exit drains), whose rows fill its record as they fill the
/// live ones: a walk's rows repeat in every record until the next walk, or until they go
/// stale.
fn pipeline(samples: &[crate::parse::Snapshot]) -> Vec<Model> {
    let base = models(1).remove(0);
    let mut t = crate::model::procs::Tracker::default();
    (1..)
        .zip(samples)
        .map(|(s, snap)| {
            t.update(snap);
            let mut m = base.clone();
            m.time_ms = 1000 * s;
            t.fill(&mut m);
            m
        })
        .collect()
}

/// Asserts that `comm` dirtied `want_mib` MiB in the report's By command and summed over its
/// per-process rows (Top dirtiers).
fn assert_dirtied(m: &[Model], comm: &str, want_mib: u64) {
    let by = commands(m).into_iter().find(|c| c.comm == comm);
    let rows = dirtiers(m).into_iter().filter(|d| d.comm == comm);
    let mib = |b: f64| b / f64::from(1 << 20);
    let by_command = mib(by.map_or(0.0, |c| c.dirtied));
    let by_rows = mib(rows.map(|d| d.dirtied).sum());
    let want = want_mib as f64;
    assert!(
        (by_command - want).abs() < 1e-6 && (by_rows - want).abs() < 1e-6,
        "{comm}: {by_command} MiB by command, {by_rows} MiB over its rows, of {want} MiB"
    );
}

/// A writer on a quiet machine, walked every 10 s (`source::procs` `QUIET_WALK_PERIOD_NS`),
/// then at 2 s when the load starts (a new pace walks at once), then no more (the walk is no
/// longer wanted: its rows linger until they go stale, `procs::STALE_NS`): 1 MiB/s over the
/// 10 s walk (two records repeat it), 15 MiB/s over the 2 s walk (six records repeat it).
/// The walks measured 10 + 30 MiB; a rate × each record's interval read 2 + 90.
#[test]
fn a_walk_whose_pace_changes_counts_what_it_measured_once() {
    use crate::model::exits::tests::walk;
    const MIB: u64 = 1 << 20;
    let fio = |written_mib: u64| [(300, "fio", -500.0, written_mib * MIB, 0)];
    // A walk at `at` s, the one before at `prev` s, the next due `period` s after it.
    let paced = |at: u64, prev: Option<u64>, written_mib: u64, period: u64| {
        let mut s = walk(at, prev, &fio(written_mib));
        if let Some(w) = s.procs.as_mut() {
            std::sync::Arc::make_mut(w).period_ns = Some(period * 1_000_000_000);
        }
        s
    };
    let samples: Vec<_> = (1..=20)
        .map(|s| match s {
            2 => paced(2, None, 0, 10),
            12 => paced(12, Some(2), 10, 10),
            14 => paced(14, Some(12), 40, 2),
            _ => crate::parse::Snapshot {
                mono_ns: s * 1_000_000_000,
                ..crate::parse::Snapshot::default()
            },
        })
        .collect();
    let m = pipeline(&samples);
    let walks: Vec<Option<u64>> = m
        .iter()
        .map(|x| x.processes.as_ref()?.first()?.walk_ms)
        .collect();
    let mut repeats = vec![Some(10_000); 2];
    repeats.extend([Some(2000); 6]);
    repeats.push(None);
    assert_eq!(walks[11..20], repeats, "the pipeline's repeats");
    assert_dirtied(&m, "fio", 40);
}

/// `tests/exits_burst.rs` in records: 20 dd of 40 MiB, each living 0.3 s, on a quiet machine
/// listening for exits from the start; the walk starts at 5 s (a first walk: no rates),
/// walks 1 s later (`source::procs` `AFTER_FIRST_WALK_NS`), then at the 5 s pace (11 s), then
/// stops. The eight dd that exited by 6 s are credited at the 1 s walk, the twelve after at
/// the 5 s walk, each over 1 s (`MIN_BORN_SPAN_NS`): 800 MiB in all. A rate × each record's
/// interval read the 1 s walk five times (the records to the next walk) and the 5 s walk's
/// rate for six seconds (its rows lingering): 2,176 MiB, as the live run's
/// `dd-burst ×20 | 3.9G` of 800M.
#[test]
fn twenty_short_writers_between_walks_add_up_to_their_bytes() {
    use crate::model::exits::tests::{both, drain, task, walk};
    use crate::parse::taskstats::AGROUP;
    const MIB: u64 = 1 << 20;
    let samples: Vec<_> = (1..=20u64)
        .map(|s| {
            // Two dd exit in each second from 3 s (the listener's first drain, at 1 s, does
            // not say since when; a dd that ended by 2 s may have started before it) to 6 s,
            // three from 7 s to 10 s.
            let n = match s {
                3..=6 => 2,
                7..=10 => 3,
                _ => 0,
            };
            let dd = (0..n)
                .map(|i| {
                    let pid = 1000 + 3 * s as u32 + i;
                    task(pid, pid, 100, AGROUP, 0.3, 40 * MIB, 0)
                })
                .collect();
            let d = drain(s, (s > 1).then(|| s - 1), dd);
            match s {
                5 => both(d, walk(5, None, &[])),
                6 => both(d, walk(6, Some(5), &[])),
                11 => both(d, walk(11, Some(6), &[])),
                _ => d,
            }
        })
        .collect();
    let m = pipeline(&samples);
    let c = commands(&m);
    let dd = c.iter().find(|c| c.comm == "dd").expect("dd by command");
    assert_eq!(dd.pids, 20, "{c:?}");
    assert_dirtied(&m, "dd", 800);
}
