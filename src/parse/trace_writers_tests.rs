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
    assert_eq!(parse(&text).unwrap(), w);
    assert!(text.starts_with("events "), "{text}");
}

#[test]
fn bad_lines_name_themselves() {
    let e = parse("events 1\nlost 0\npid=x events=1 bdi=8:0 comm=a\n").unwrap_err();
    assert!(e.to_string().contains(":3"), "{e}");
    let e = parse("events 1\nnonsense\n").unwrap_err();
    assert!(e.to_string().contains(":2"), "{e}");
    let e = parse("pid=3 events=1 comm=a\n").unwrap_err();
    assert!(e.to_string().contains("no bdi"), "{e}");
    assert_eq!(parse("").unwrap(), Writers::default());
}
