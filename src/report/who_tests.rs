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

/// A shell loop of 30 dd a walk, 1 MiB/s each over a 2 s walk: the per-process rows keep
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
                walk_ms: Some(2000),
                ..proc_row(100 * (w as u32 + 1) + i, MIB)
            })
            .collect();
        x.commands = Some(crate::model::commands::roll_up(&all, Some(2000)));
        x.processes = Some(all[..TOP].to_vec());
    }
    assert!(m.iter().all(|x| x.interval_s == Some(1.0)));
    let c = commands(&m);
    // 30 × 1 MiB/s over each of two 1 s records; the per-process rows alone: 20 × 2.
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
    // Each walk: n × 40 MiB over 2 s, × its two 1 s records: 25 × 40 MiB.
    assert_eq!(c[0].dirtied, 1000.0 * MIB);
}

#[test]
fn nothing_to_say_writes_nothing() {
    let mut o = String::new();
    render(&mut o, &models(2), 0);
    assert!(o.is_empty());
}
