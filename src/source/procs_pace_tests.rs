//! The walker's pace: each pace's period, a busier pace at once, and the walk after a
//! first walk a second later so that it can name writers (issue 53).

use super::*;

#[test]
fn each_pace_walks_at_its_period_and_a_busier_pace_walks_at_once() {
    let tree = Tree::new();
    tree.set(42, 'S', 500, 0);
    let mut w = fake_walker(&tree);
    let at = |pace| ProcScope {
        pace,
        ..ProcScope::default()
    };
    // Seconds at which each pace walked, over 30 s of 1 s samples: the first walk is
    // followed by one a second later (`AFTER_FIRST_WALK_NS`), then the pace's multiples of
    // the wall clock (here the monotonic one).
    let walks = |pace| {
        let mut w = fake_walker(&tree);
        (0..=30u64)
            .filter(|s| w.maybe_walk(s * S, &at(pace)).is_some())
            .collect::<Vec<_>>()
    };
    let after_first = |step: u64| {
        [0u64, 1]
            .into_iter()
            .chain((step..=30).step_by(step as usize))
            .collect::<Vec<_>>()
    };
    assert_eq!(walks(Pace::Attribute), after_first(5));
    assert_eq!(walks(Pace::Quiet), after_first(10));
    let mut q = fake_walker(&tree);
    let said = parse(q.maybe_walk(0, &at(Pace::Quiet)).unwrap()).unwrap();
    assert_eq!(
        said.period_ns,
        Some(S),
        "a first walk says the next is 1 s on"
    );
    let said = parse(q.maybe_walk(S, &at(Pace::Quiet)).unwrap()).unwrap();
    assert_eq!(said.period_ns, Some(10 * S), "the walk says its pace");
    // Quiet, then something happens 3 s after a walk: the busier pace walks at that sample,
    // then on its own multiples; back to quiet walks at once too, saying the next walk is
    // 10 s away.
    assert!(w.maybe_walk(0, &at(Pace::Quiet)).is_some());
    assert!(w.maybe_walk(S, &at(Pace::Quiet)).is_some());
    assert!(w.maybe_walk(3 * S, &at(Pace::Quiet)).is_none());
    let busy = parse(w.maybe_walk(4 * S, &at(Pace::Attribute)).unwrap()).unwrap();
    assert_eq!(
        (busy.prev_mono_ns, busy.period_ns),
        (Some(S), Some(5 * S)),
        "a new pace keeps what was seen: rates over the 3 s since the quiet walk"
    );
    assert!(
        w.maybe_walk(5 * S, &at(Pace::Attribute)).is_some(),
        "on 5 s"
    );
    assert!(w.maybe_walk(6 * S, &at(Pace::Attribute)).is_none());
    let calm = parse(w.maybe_walk(7 * S, &at(Pace::Quiet)).unwrap()).unwrap();
    assert_eq!(
        (calm.prev_mono_ns, calm.period_ns),
        (Some(5 * S), Some(10 * S))
    );
    // The next quiet walk is on the next multiple of 10 s, 3 s on.
    assert!(w.maybe_walk(9 * S, &at(Pace::Quiet)).is_none());
    assert!(w.maybe_walk(10 * S, &at(Pace::Quiet)).is_some());
}

/// One answer: two instances at one pace, started 3 s apart, walk in the same seconds from
/// the first multiple of the period on, so their rates are over the same intervals. A tick
/// read a little before its second counts as on it, one read late as well.
#[test]
fn instances_started_apart_walk_in_the_same_seconds() {
    let tree = Tree::new();
    tree.set(42, 'S', 500, 0);
    let scope = ProcScope::default();
    let walks = |start: u64, jitter_ms: i64| {
        let mut w = fake_walker(&tree);
        (start..=40u64)
            .filter(|s| {
                let wall = i64::try_from(s * 1000).unwrap() + jitter_ms;
                let mono = s * S + 7;
                w.maybe_walk_at(mono, wall, &scope).is_some()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(walks(12, 0), [12, 13, 15, 20, 25, 30, 35, 40]);
    assert_eq!(walks(14, 0), [14, 15, 20, 25, 30, 35, 40]);
    assert_eq!(walks(14, -200), [14, 15, 20, 25, 30, 35, 40], "read early");
    assert_eq!(walks(14, 400), [14, 15, 20, 25, 30, 35, 40], "read late");
    // The wall clock stepped back an hour after the first walks: the monotonic clock walks
    // within two periods, and the walks fall on the new clock's multiples after.
    let mut w = fake_walker(&tree);
    assert!(w.maybe_walk_at(0, 3_600_000, &scope).is_some());
    assert!(w.maybe_walk_at(S, 3_601_000, &scope).is_some());
    let back: Vec<u64> = (2..=14u64)
        .filter(|s| {
            w.maybe_walk_at(s * S, i64::try_from(s * 1000).unwrap(), &scope)
                .is_some()
        })
        .collect();
    assert_eq!(back, [2, 5, 10]);
}

/// Issue 53: a writer already running at a first walk has no previous reading there, so that
/// walk cannot name it; the next walk, a second later at any pace, does (at the 5 s pace the
/// lab's dd of 4.7 s was gone by then, never listed).
#[test]
fn a_writer_seen_by_a_first_walk_is_named_a_second_later() {
    let tree = Tree::new();
    tree.set(42, 'D', 500, 1 << 20);
    let mut w = fake_walker(&tree);
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    assert!(w.maybe_walk(100 * S, &scope).is_some());
    assert!(w.writers.is_empty(), "{:?}", w.writers);
    tree.set(42, 'D', 500, 9 << 20);
    assert!(w.maybe_walk(101 * S, &scope).is_some());
    assert_eq!(w.writers, [(8 << 20, 42)]);
}

/// Issue 53: a first walk names at once the writers that started within the last 10 s
/// (`FIRST_WALK_WRITERS_NS`): all they wrote is that recent, and one shorter than a second
/// is gone by the next walk (the lab's dd of 3.8 s, first seen by a first walk, was gone a
/// second later). One started long before is not named: its `write_bytes` may be days old.
#[test]
fn a_first_walk_names_the_writers_started_within_10_s() {
    let tree = Tree::new();
    let tck = rustix::param::clock_ticks_per_second();
    // At 100 s on the boot clock: 42 started at 95 s, 43 at 5 s; both have written, both
    // asleep (not in D state, not otherwise written at a first walk).
    tree.set(42, 'S', 95 * tck, 4 << 20);
    tree.set(43, 'S', 5 * tck, 4 << 20);
    let mut w = fake_walker(&tree);
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    assert!(w.maybe_walk(100 * S, &scope).is_some());
    assert_eq!(w.writers, [(4 << 20, 42)]);
}
