use super::*;
use crate::event::FioDir;
use crate::model::disk::Columns;
use crate::model::{Disk, Options};

/// A model at `t` ms covering `dt` s, with MemAvailable `avail` kB, a dirty state, a direct
/// scan rate and one disk `vda` (reads/s, writes/s, r_await, w_await, aqu-sz, %util).
fn model(t: i64, dt: f64, avail: u64, state: State, direct: f64, io: [f64; 6]) -> Model {
    let snap = crate::parse::Snapshot {
        page_size: 4096,
        ..crate::parse::Snapshot::default()
    };
    let mut m = Model::derive(None, &snap, Options::default());
    m.time_ms = t;
    m.interval_s = Some(dt);
    m.memory.MemAvailable = Some(avail);
    m.dirty.state = Some(state);
    m.reclaim.pgscan_direct_s = Some(direct);
    m.disks = vec![Disk::from_cols(
        "vda",
        Columns {
            r_s: Some(io[0]),
            w_s: Some(io[1]),
            r_await: Some(io[2]),
            w_await: Some(io[3]),
            aqu_sz: Some(io[4]),
            util_pct: Some(io[5]),
            ..Columns::default()
        },
    )];
    m
}

fn ev(t: i64, kind: EventKind) -> Event {
    Event { wall_ms: t, kind }
}

fn phase(t: i64, name: &str) -> Event {
    ev(
        t,
        EventKind::Phase {
            play: "p".into(),
            name: name.into(),
            device: Some("vda".into()),
        },
    )
}

/// Phase "default" at 1 s, with fio job 1 (a synced randwrite) started in it; phase "tuned"
/// at 5 s with `vm.dirty_bytes` set; job 1's result arrives after the second phase began.
fn default_then_tuned() -> Vec<Event> {
    let write = FioDir {
        ios: 100,
        iops: 50.0,
        bw_bytes_s: 800_000.0,
        clat_mean_us: 20.0,
        clat_p99_us: 900.0,
        ..FioDir::default()
    };
    vec![
        phase(1000, "default"),
        ev(
            1500,
            EventKind::JobStart {
                job: 1,
                what: "fio".into(),
                argv: vec![],
                pid: None,
            },
        ),
        phase(5000, "tuned"),
        ev(
            5000,
            EventKind::Tune {
                setting: "vm.dirty_bytes".into(),
                old: "0".into(),
                new: "15728640".into(),
                restore: false,
                note: None,
            },
        ),
        // Job 1 started in "default": its result belongs there even though it came later.
        ev(
            5200,
            EventKind::FioResult {
                job: 1,
                result: FioSummary {
                    name: "randwrite".into(),
                    write,
                    sync: FioDir {
                        ios: 100,
                        iops: 50.0,
                        clat_mean_us: 1500.0,
                        clat_p99_us: 250_000.0,
                        ..FioDir::default()
                    },
                    ..FioSummary::default()
                },
            },
        ),
    ]
}

#[test]
fn cuts_models_and_events_into_phases() {
    let events = default_then_tuned();
    let models = vec![
        model(1000, 1.0, 999, State::BelowBackground, 0.0, [0.0; 6]),
        // default: 2 s throttled (one of them over thresh), 1 s of direct reclaim.
        model(
            2000,
            1.0,
            500,
            State::WritersThrottled,
            0.0,
            [100.0, 300.0, 2.0, 6.0, 1.0, 40.0],
        ),
        model(
            3000,
            1.0,
            400,
            State::OverThresh,
            10.0,
            [0.0, 0.0, 0.0, 0.0, 3.0, 60.0],
        ),
        model(5000, 2.0, 800, State::BelowBackground, 0.0, [0.0; 6]),
        // tuned
        model(
            6000,
            1.0,
            700,
            State::BelowBackground,
            0.0,
            [10.0, 0.0, 1.0, 0.0, 0.5, 10.0],
        ),
    ];
    let rows = phases(&models, &events, Some("vda"), 7000);
    assert_eq!(rows.len(), 2);
    let (d, t) = (&rows[0], &rows[1]);
    assert!((d.duration_s - 4.0).abs() < 1e-9 && (t.duration_s - 2.0).abs() < 1e-9);
    assert_eq!(d.mem_available_min_kb, Some(400));
    assert!((d.throttled_s - 2.0).abs() < 1e-9);
    assert!((d.over_thresh_s - 1.0).abs() < 1e-9);
    assert!((d.direct_reclaim_s - 1.0).abs() < 1e-9);
    let dev = d.device.as_ref().unwrap();
    // Only the record with I/O has an await: (100*2 + 300*6)/400 = 5 ms.
    assert!((dev.await_ms.unwrap() - 5.0).abs() < 1e-9);
    // aqu-sz and %util over the three records of the phase: (1+3+0)/3, (40+60+0)/3.
    assert!((dev.aqu_sz.unwrap() - 4.0 / 3.0).abs() < 1e-9);
    assert!((dev.util_pct.unwrap() - 100.0 / 3.0).abs() < 1e-9);
    assert_eq!(d.fio.len(), 1);
    assert_eq!((d.fio[0].dir, d.fio[0].iops), ("write", 50.0));
    assert_eq!(
        (d.fio[0].clat_p99_us, d.fio[0].fsync_p99_us),
        (900.0, Some(250_000.0)),
        "the write's p99 and the fsync's p99 are kept apart"
    );
    assert!(t.fio.is_empty());
    assert_eq!(t.tuned, ["vm.dirty_bytes 0 -> 15728640"]);
    assert_eq!(t.mem_available_min_kb, Some(700));
    let text = render_text(&rows);
    assert!(
        text.contains("randwrite") && text.contains("vda await") && text.contains("250.000"),
        "{text}"
    );
}

#[test]
fn no_phase_events_no_rows() {
    assert!(phases(&[], &[], None, 0).is_empty());
}

/// A recording's events may come from a hostile playbook or be hostile themselves: the table
/// (screen, `play`, report.md) and every event label show their control characters escaped.
#[test]
fn hostile_names_are_escaped_in_the_table_and_labels() {
    let events = vec![
        phase(0, "cold\u{1b}[2J"),
        ev(
            500,
            EventKind::Tune {
                setting: "vm.dirty_bytes\u{1b}]0;x\u{7}".into(),
                old: "0".into(),
                new: "1".into(),
                restore: false,
                note: None,
            },
        ),
        ev(
            600,
            EventKind::Marker {
                text: "m\u{9b}1m\u{202e}".into(),
            },
        ),
    ];
    let rows = phases(&[], &events, None, 1000);
    assert_eq!(rows[0].name, "cold\\x1b[2J");
    assert_eq!(rows[0].tuned, ["vm.dirty_bytes\\x1b]0;x\\x07 0 -> 1"]);
    let text = render_text(&rows);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert_eq!(events[0].label(), "p: phase cold\\x1b[2J");
    assert_eq!(events[2].label(), "marker: m\\u{9b}1m\\u{202e}");
}
