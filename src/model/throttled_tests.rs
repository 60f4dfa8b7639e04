use super::*;
use crate::parse::trace::{BdpEvent, TraceStatus};
use crate::parse::trace_writers::reduce;

fn ev(pid: u32, pause: i64, rate: u64, limit: u64, ino: Option<u64>) -> BdpEvent {
    BdpEvent {
        pid,
        comm: format!("w{pid}"),
        bdi: "8:0".into(),
        limit,
        setpoint: limit - 100,
        dirty: 5000,
        task_ratelimit: rate,
        pause,
        cgroup_ino: ino,
        ..BdpEvent::default()
    }
}

fn trace(events: &[BdpEvent], state: TraceState) -> Trace {
    Trace {
        status: TraceStatus {
            state,
            why: None,
            pid: Some(11),
            tasks: vec![11, 12],
            bytes: 0,
            capped: false,
        },
        format: None,
        writers: reduce(events, 3),
        error: None,
    }
}

#[test]
fn per_task_sums_over_the_interval() {
    let t = trace(
        &[
            ev(10, 200, 0, 16384, Some(1)),
            ev(11, 0, 900, 16384, Some(1)),
            ev(10, 40, 300, 16384, Some(1)),
            ev(10, -4, 500, 16300, Some(1)),
            ev(11, 100, 700, 16200, Some(1)),
        ],
        TraceState::Armed,
    );
    let rows = from_trace(&t, Some(2.0));
    assert_eq!(rows.len(), 2);
    // pid 10: (200 + 40 + 0) / 2 s = 120 ms/s; the negative pause is no sleep.
    let a = &rows[0];
    assert_eq!((a.pid, a.pause_ms_per_s), (10, Some(120.0)));
    assert_eq!(
        (a.task_ratelimit_kbps, a.limit_pages, a.setpoint_pages),
        (Some(500), Some(16300), Some(16200))
    );
    assert_eq!(
        (a.bdi.as_deref(), a.cgroup_ino, a.comm.as_str()),
        (Some("8:0"), Some(1), "w10")
    );
    assert_eq!(a.source, ThrottleSource::Tracepoint);
    assert!(!a.is_self);
    // pid 11: (0 + 100) / 2 = 50 ms/s, and it is pagewatch's own.
    let b = &rows[1];
    assert_eq!(
        (b.pid, b.pause_ms_per_s, b.task_ratelimit_kbps),
        (11, Some(50.0), Some(700))
    );
    assert!(b.is_self);
    // Over 0.2 s pid 10 announced 240 ms of sleep: 1200 ms/s, capped at the interval's 1000.
    assert_eq!(from_trace(&t, Some(0.2))[0].pause_ms_per_s, Some(1000.0));
    // First sample: no interval, no rate; the rows still stand.
    let first = from_trace(&t, None);
    assert!(first.iter().all(|r| r.pause_ms_per_s.is_none()) && first.len() == 2);
    let tr = Tracer::derive(&t);
    assert_eq!((tr.events, tr.lost, tr.state), (5, 3, TraceState::Armed));
}

#[test]
fn wchan_rows_stand_in_when_not_armed_and_fill_in_when_armed() {
    let wchan = |pid, ms| Throttled {
        pause_ms_per_s: ms,
        ..Throttled::new(pid, "dd", ThrottleSource::Wchan)
    };
    let armed = trace(&[ev(10, 200, 0, 16384, None)], TraceState::Armed);
    let tp = from_trace(&armed, Some(1.0));
    let w = vec![wchan(5, None), wchan(6, Some(30.0))];
    // Armed: the tracepoint's rows, plus the walk's rows of tasks it did not report (a task
    // asleep before the tracepoint was armed, or whose events are not read yet).
    let on = rows(Some(&Tracer::derive(&armed)), tp.clone(), w.clone());
    assert_eq!(on[0], tp[0]);
    assert_eq!(on.iter().map(|r| r.pid).collect::<Vec<_>>(), [10, 6, 5]);
    // A task the tracepoint reported is not listed twice.
    let on = rows(
        Some(&Tracer::derive(&armed)),
        tp.clone(),
        vec![wchan(10, None)],
    );
    assert_eq!(on, tp, "the tracepoint's row, not the walk's");
    let off = trace(&[], TraceState::NotRoot);
    let got = rows(Some(&Tracer::derive(&off)), Vec::new(), w.clone());
    assert_eq!(
        got.iter().map(|r| r.pid).collect::<Vec<_>>(),
        [6, 5],
        "sorted by pause"
    );
    assert_eq!(rows(None, Vec::new(), w).len(), 2, "no tracer at all");
}

#[test]
fn the_kernel_limit_is_the_last_global_event() {
    let t = trace(
        &[
            ev(10, 0, 0, 16384, Some(1)),
            ev(10, 0, 0, 16000, None),
            ev(11, 0, 0, 900, Some(4242)),
        ],
        TraceState::Armed,
    );
    assert_eq!(
        kernel_limit(&t),
        Some((16000, 15900)),
        "a memcg domain's event is skipped"
    );
    assert_eq!(kernel_limit(&trace(&[], TraceState::Armed)), None);
}

/// A walk of fio processes: (pid, ppid), each with its stat line and io.
fn fio_walk(procs: &[(u32, u32)]) -> crate::parse::procs::Walk {
    use std::fmt::Write as _;
    let mut text = "walk 1000000000\nprev -\nclk_tck 100\ntask_delayacct 0\nscope -\n".to_owned();
    for (pid, ppid) in procs {
        let mut f: Vec<String> = (3..=52).map(|_| "0".to_owned()).collect();
        f[0] = "D".into();
        f[1] = ppid.to_string();
        f[20 - 3] = "1".into();
        f[22 - 3] = "100".into();
        let _ = write!(
            text,
            "P {pid} 100\nstat {pid} (fio) {}\nrchar: 0\nwchar: 0\nsyscr: 0\nsyscw: 0\n\
             read_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n",
            f.join(" ")
        );
    }
    crate::parse::procs::parse(&text).unwrap()
}

/// A fio worker links to its fio through the sample's lineage (a thread's group, or the
/// worker's parents) or, for a wchan row, the walk's parents; never to an unrelated pid.
#[test]
fn workers_link_to_their_fio() {
    use crate::parse::lineage::Task;
    let lineage = std::collections::BTreeMap::from([
        (
            21,
            Task {
                tgid: 20,
                parents: vec![10, 5, 1],
            },
        ),
        (
            30,
            Task {
                tgid: 30,
                parents: vec![1],
            },
        ),
    ]);
    let rows = with_lineage(
        vec![
            Throttled::new(21, "fio", ThrottleSource::Tracepoint),
            Throttled::new(30, "dd", ThrottleSource::Tracepoint),
            Throttled::new(40, "fio", ThrottleSource::Wchan),
        ],
        &lineage,
    );
    assert_eq!(
        (rows[0].tgid, rows[0].parents.clone()),
        (Some(20), vec![10, 5, 1])
    );
    // Its process, its fio, pagewatch's guard above that; not init, not a stranger.
    for pid in [21, 20, 10, 5] {
        assert!(rows[0].works_for(pid), "{pid}");
    }
    assert!(!rows[0].works_for(1) && !rows[0].works_for(99));
    assert!(!rows[1].works_for(10));
    // Without a lineage, a walk's parents: 40's parent is 10, whose parent is 5.
    let mut rows = rows;
    with_walk_parents(&mut rows, Some(&fio_walk(&[(40, 10), (10, 5), (21, 77)])));
    assert_eq!(
        (rows[2].tgid, rows[2].parents.clone()),
        (Some(40), vec![10, 5])
    );
    assert!(rows[2].works_for(10));
    assert_eq!(
        rows[0].parents,
        vec![10, 5, 1],
        "a row with a lineage keeps it"
    );
}
