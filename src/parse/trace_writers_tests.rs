use super::*;
use crate::parse::trace::parse_events;

fn ev(pid: u32, ts_s: f64, pause: i64, limit: u64) -> BdpEvent {
    BdpEvent {
        pid,
        comm: format!("w{pid}"),
        ts_s,
        bdi: "8:0".into(),
        limit,
        setpoint: limit - 10,
        pause,
        cgroup_ino: Some(1),
        ..BdpEvent::default()
    }
}

#[test]
fn one_row_per_task_with_its_sum_and_its_last_event() {
    // Task 7: pauses 20 + 30 (+ a -5 that is no sleep); its last event by clock is the one at
    // 2.0 s (limit 300), although it was read first (another CPU).
    let events = [
        ev(7, 2.0, 20, 300),
        ev(9, 1.0, 8, 100),
        ev(7, 1.5, 30, 200),
        ev(7, 1.9, -5, 250),
    ];
    let w = reduce(&events, 3);
    assert_eq!((w.events, w.lost, w.rows.len()), (4, 3, 2));
    let r = &w.rows[0];
    assert_eq!((r.pid, r.events, r.pause_ms, r.limit), (7, 3, 50, 300));
    assert_eq!((r.last_ns, r.comm.as_str()), (2_000_000_000, "w7"));
    assert_eq!((w.rows[1].pid, w.rows[1].pause_ms), (9, 8));
}

#[test]
fn the_pseudo_file_reads_back_what_was_written() {
    let mut events = parse_events(crate::parse::trace::tests::EVENTS_6_18)
        .unwrap()
        .events;
    events[0].comm = "kworker/u8:2 two words".into();
    let w = reduce(&events, 1);
    let text = render(&w);
    assert_eq!(parse(&text), w);
    assert!(text.starts_with("events "), "{text}");
}

#[test]
fn a_bad_line_is_skipped_and_named_and_the_good_rows_stand() {
    let good = "pid=7 events=2 pause_ms=40 last_ns=9 bdi=8:0 limit=1 setpoint=1 dirty=1 \
                task_ratelimit=1 comm=dd";
    let w = parse(&format!(
        "events 3\nlost 0\npid=x events=1 bdi=8:0 comm=a\n{good}\n"
    ));
    assert_eq!(w.rows.len(), 1, "the good row stands");
    assert_eq!((w.rows[0].pid, w.rows[0].pause_ms), (7, 40));
    let why = w.skipped.unwrap();
    assert!(why.contains(":3") && why.contains("line skipped"), "{why}");
    let w = parse("events 1\nnonsense\npid=3 events=1 comm=a\n");
    let why = w.skipped.unwrap();
    assert!(why.contains(":2") && why.contains("and 1 more"), "{why}");
    assert!(w.rows.is_empty());
    assert_eq!(parse(""), Writers::default());
}

#[test]
fn events_with_no_allowed_rate_count_as_stopped_and_old_lines_have_no_count() {
    // Task 7: two of its three events were stopped (task_ratelimit 0: dirty at the hard
    // limit, spec §7); task 9 was paced, never stopped.
    let paced = |pid, ts_s| BdpEvent {
        task_ratelimit: 5000,
        ..ev(pid, ts_s, 8, 300)
    };
    let events = [
        ev(7, 1.0, 4, 300),
        paced(7, 1.1),
        ev(7, 1.2, 4, 300),
        paced(9, 1.0),
    ];
    let w = reduce(&events, 0);
    let stopped: Vec<_> = w.rows.iter().map(|r| (r.pid, r.stopped)).collect();
    assert_eq!(stopped, [(7, Some(2)), (9, Some(0))]);
    let text = render(&w);
    assert!(text.contains(" stopped=2 comm=w7"), "{text}");
    assert_eq!(parse(&text), w);
    // A line a recording wrote before the count existed.
    let old = parse(
        "events 1\nlost 0\npid=7 events=1 pause_ms=4 last_ns=9 bdi=8:0 limit=1 setpoint=1 \
         dirty=1 task_ratelimit=0 comm=dd\n",
    );
    assert_eq!(old.rows[0].stopped, None);
}
