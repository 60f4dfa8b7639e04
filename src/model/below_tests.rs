use super::*;
use crate::parse::below::{Below as RawBelow, Throttle, Wbt, Written};
use crate::parse::trace::parse_status;
use crate::parse::{DiskCounters, jbd2};

const FLOOD: &str = include_str!("../../tests/fixtures/jbd2/info-flood");

fn snap(mono_s: u64, journals: Vec<jbd2::Journal>) -> Snapshot {
    Snapshot {
        mono_ns: mono_s * 1_000_000_000,
        journals,
        ..Snapshot::default()
    }
}

fn journal(transactions: u64, requested: u64, commit_us: u64, flushing_ms: u64) -> jbd2::Journal {
    let mut j = jbd2::parse("vda-8", FLOOD).unwrap();
    j.transactions = transactions;
    j.requested = requested;
    let a = j.avg.as_mut().unwrap();
    a.commit_us = commit_us;
    a.flushing_ms = flushing_ms;
    j
}

fn disk(w_await: Option<f64>) -> Vec<Disk> {
    vec![Disk::from_cols(
        "vda",
        crate::model::disk::Columns {
            w_await,
            ..Default::default()
        },
    )]
}

#[test]
fn rates_come_from_the_counts_and_the_commit_time_from_the_kernels_average() {
    let p = snap(10, vec![journal(31, 31, 7706, 0)]);
    let c = snap(12, vec![journal(41, 35, 7706, 0)]);
    let j = &journals(Some(&p), &c, Some(2.0), &[])[0];
    assert_eq!((j.journal.as_str(), j.device.as_str()), ("vda-8", "vda"));
    assert_eq!((j.commits_per_s, j.requested_per_s), (Some(5.0), Some(2.0)));
    assert_eq!(j.commit_ms, Some(7.706));
    assert_eq!(
        (j.running_ms, j.blocks, j.transactions),
        (Some(20), Some(6), 41)
    );
    assert!(!j.fsync_bound, "7.7 ms commits are not slow");
    let first = &journals(None, &c, None, &[])[0];
    assert_eq!(first.commits_per_s, None);
    // A remount starts the counts again: no rate, not a negative one.
    let back = &journals(Some(&c), &p, Some(2.0), &[])[0];
    assert_eq!(back.commits_per_s, None);
}

#[test]
fn fsync_is_journal_bound_only_with_forced_slow_commits_well_over_the_write_await() {
    let p = snap(10, vec![journal(100, 50, 1000, 0)]);
    let slow = snap(11, vec![journal(104, 53, 85_000, 36)]);
    let j = &journals(Some(&p), &slow, Some(1.0), &disk(Some(3.0)))[0];
    assert!(j.fsync_bound, "{j:?}");
    let why = j.why.as_deref().unwrap();
    assert!(
        why.contains("commits take 85 ms") && why.contains("3.0 forced/s"),
        "{why}"
    );
    assert!(why.contains("flushing data (36 ms"), "{why}");
    // No commit asked for in the interval: nobody waits on it.
    let timed = snap(11, vec![journal(104, 50, 85_000, 36)]);
    assert!(!journals(Some(&p), &timed, Some(1.0), &disk(Some(3.0)))[0].fsync_bound);
    // Every write slow: the device, not the journal (85 < 4 × 30).
    assert!(!journals(Some(&p), &slow, Some(1.0), &disk(Some(30.0)))[0].fsync_bound);
    // Just under the threshold.
    let under = snap(11, vec![journal(104, 53, 19_999, 36)]);
    assert!(!journals(Some(&p), &under, Some(1.0), &disk(None))[0].fsync_bound);
    let at = snap(11, vec![journal(104, 53, 20_000, 0)]);
    let j = &journals(Some(&p), &at, Some(1.0), &disk(None))[0];
    assert!(
        j.fsync_bound && !j.why.as_deref().unwrap().contains("since mount"),
        "{j:?}"
    );
}

fn below(events: crate::parse::below::Events) -> Snapshot {
    let c = DiskCounters {
        name: "vda".into(),
        major: 254,
        minor: 0,
        ..DiskCounters::default()
    };
    Snapshot {
        disks: vec![std::sync::Arc::new(c)],
        below: Some(RawBelow {
            status: parse_status("state armed\n").unwrap(),
            events: Some(events),
            error: None,
        }),
        ..Snapshot::default()
    }
}

#[test]
fn wbt_rows_name_the_disk_and_say_when_wbt_limits() {
    let mut e = crate::parse::below::Events::default();
    e.wbt.push(Wbt {
        dev: "254:0".into(),
        steps: 2,
        down: 2,
        step: Some(2),
        bg: 4,
        normal: 8,
        max: 16,
        lat: 3,
        lat_max_us: 91_000,
        stat: 1,
        rmean_ns: 95_000_000,
        ..Wbt::default()
    });
    e.wbt.push(Wbt {
        dev: "7:100".into(),
        step: Some(-2),
        steps: 1,
        down: 1,
        ..Wbt::default()
    });
    let b = derive(&below(e), Some(2.0)).unwrap();
    let (vda, other) = (&b.wbt[0], &b.wbt[1]);
    assert_eq!(vda.device, "vda");
    assert!(vda.limiting);
    assert_eq!((vda.depth_bg, vda.depth_normal, vda.depth_max), (4, 8, 16));
    assert_eq!(
        (vda.read_min_max_ms, vda.read_mean_ms),
        (Some(91.0), Some(95.0))
    );
    assert_eq!(
        other.device, "7:100",
        "no disk has that number: the BDI stays"
    );
    assert!(
        !other.limiting,
        "scaled up beyond the default is not limiting"
    );
    assert_eq!(other.read_mean_ms, None);
}

#[test]
fn reclaim_sleeps_and_writes_are_rates_and_reach_the_verdict_wording() {
    let e = crate::parse::below::Events {
        throttled: vec![Throttle {
            reason: "writeback".into(),
            count: 4,
            delayed_us: 400_000,
            max_us: 100_000,
        }],
        written: Written { file: 50, anon: 0 },
        ..Default::default()
    };
    let b = derive(&below(e), Some(2.0)).unwrap();
    let t = &b.reclaim_throttled[0];
    assert_eq!((t.per_s, t.sleep_ms_per_s, t.max_ms), (2.0, 200.0, 100.0));
    assert_eq!(b.reclaim_wrote_file_per_s, Some(25.0));
    let note = reclaim_note(&b).unwrap();
    assert!(note.contains("slept 200 ms/s on writeback"), "{note}");
    assert!(note.contains("wrote 25 dirty file pages/s"), "{note}");
    let quiet = derive(&below(crate::parse::below::Events::default()), Some(1.0)).unwrap();
    assert_eq!(reclaim_note(&quiet), None);
    let mut off = below(crate::parse::below::Events::default());
    off.below.as_mut().unwrap().status = parse_status("state not-root\nwhy euid 1000\n").unwrap();
    off.below.as_mut().unwrap().events = None;
    let b = derive(&off, Some(1.0)).unwrap();
    assert_eq!(
        (b.state, b.why.as_deref()),
        (TraceState::NotRoot, Some("euid 1000"))
    );
}
