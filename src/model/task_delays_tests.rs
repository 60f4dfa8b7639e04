//! By-hand checks of the per-process delays (spec §13.1).

use super::*;
use crate::parse::taskstats::{self, TaskExit};

/// A delay's (count, total ns).
type Pair = (u64, u64);

/// A querier's text at `read_ns`, one `g` line per (pid, compact (count, ns), freepages
/// (count, ns)); every other delay 0.
fn reading(read_ns: u64, rows: &[(u32, Pair, Pair)]) -> Exits {
    let text = taskstats::render(&Exits {
        state: "on".to_owned(),
        read_ns,
        records: rows
            .iter()
            .map(|&(pid, c, f)| TaskExit {
                group: true,
                pid,
                delays: [Some((0, 0)), Some((0, 0)), Some(f), Some((0, 0)), Some(c)],
                ..TaskExit::default()
            })
            .collect(),
        ..Exits::default()
    });
    // Through the pseudo-file, as replay reads it.
    taskstats::parse(&text).unwrap()
}

/// A model of the idle test samples.
fn idle_model() -> crate::model::Model {
    let s = crate::source::test_samples("live-idle");
    let a = crate::parse::Snapshot::parse(&s[0]).unwrap();
    let b = crate::parse::Snapshot::parse(&s[1]).unwrap();
    crate::model::Model::derive(Some(&a), &b, crate::model::Options::default())
}

#[test]
fn the_verdict_names_who_stalled_longest_in_direct_compaction() {
    let mut m = idle_model();
    m.reclaim.compact_stall_s = Some(20.0);
    m.reclaim.compact_fail_s = Some(5.0);
    let mut eat = MemRow::blank(123, "pagewatch-eat");
    eat.compact_ms_per_s = Some(140.0);
    m.processes_by_memory = Some(vec![MemRow::blank(5, "db"), eat]);
    let why = |m: &crate::model::Model| crate::model::verdict::derive(m).reclaim.why;
    assert_eq!(
        why(&m),
        "direct compaction: 20 stalls/s, 5 failed/s; \
         pagewatch-eat[123] in direct compaction 140 ms/s"
    );
    // No stall counted in the interval: nobody named for compaction.
    m.reclaim.compact_stall_s = Some(0.0);
    assert!(!why(&m).contains("in direct compaction"), "{}", why(&m));
}

#[test]
fn the_delays_are_ms_per_second_between_two_readings() {
    // 2 s apart: pid 7 compacted 280 ms more in 3 attempts (140 ms/s) and reclaimed 50 ms
    // more (25 ms/s); pid 9 did neither; pid 11 is new (no rate).
    let a = reading(
        1_000_000_000,
        &[
            (7, (10, 500_000_000), (4, 100_000_000)),
            (9, (0, 0), (0, 0)),
        ],
    );
    let b = reading(
        3_000_000_000,
        &[
            (7, (13, 780_000_000), (6, 150_000_000)),
            (9, (0, 0), (0, 0)),
            (11, (1, 5_000_000), (0, 0)),
        ],
    );
    let d = derive(Some(&a), Some(&b)).unwrap();
    assert_eq!(d.state, "on");
    assert_eq!(
        d.rows,
        vec![
            DelayRow {
                pid: 7,
                compact_ms_per_s: Some(140.0),
                compact_count: Some(3),
                freepages_delay_ms_per_s: Some(25.0),
            },
            DelayRow {
                pid: 9,
                compact_ms_per_s: Some(0.0),
                compact_count: Some(0),
                freepages_delay_ms_per_s: Some(0.0),
            },
        ]
    );
    // The first reading gives rows of nothing; no reading, no delays.
    assert!(derive(None, Some(&a)).unwrap().rows.is_empty());
    assert_eq!(derive(Some(&a), None), None);
}

#[test]
fn a_total_that_went_back_or_a_kernel_without_the_field_gives_no_rate() {
    // pid 7 reused by a new process: its total went back.
    let a = reading(1_000_000_000, &[(7, (10, 500_000_000), (4, 100_000_000))]);
    let b = reading(2_000_000_000, &[(7, (1, 1_000_000), (1, 1_000_000))]);
    let d = derive(Some(&a), Some(&b)).unwrap();
    assert_eq!(
        (
            d.rows[0].compact_ms_per_s,
            d.rows[0].freepages_delay_ms_per_s
        ),
        (None, None)
    );
    // A struct older than the compaction delay (v11, 5.19): `-` in the text, no rate.
    let mut old = reading(2_000_000_000, &[(7, (0, 0), (5, 101_000_000))]);
    old.records[0].delays[4] = None;
    let d = derive(Some(&a), Some(&old)).unwrap();
    assert_eq!(d.rows[0].compact_ms_per_s, None);
    assert_eq!(d.rows[0].freepages_delay_ms_per_s, Some(1.0));
}

#[test]
fn refused_queries_say_why_and_leave_the_rows_null() {
    let cur = Exits {
        state: "no-permission".to_owned(),
        why: Some("taskstats GET needs CAP_NET_ADMIN".to_owned()),
        read_ns: 2,
        ..Exits::default()
    };
    let d = derive(None, Some(&cur)).unwrap();
    assert_eq!(d.state, "no-permission");
    let mut rows = vec![MemRow::blank(7, "eat")];
    annotate(Some(&d), Some(&mut rows));
    assert_eq!(
        (rows[0].compact_ms_per_s, rows[0].freepages_delay_ms_per_s),
        (None, None)
    );
    let json = serde_json::to_value(&rows[0]).unwrap();
    assert!(json["compact_ms_per_s"].is_null(), "{json}");
}

#[test]
fn the_longest_compacting_process_is_named_from_half_a_ms_per_second() {
    let mut rows = vec![
        MemRow::blank(5, "db"),
        MemRow::blank(123, "pagewatch-eat"),
        MemRow::blank(9, "idle"),
    ];
    rows[0].compact_ms_per_s = Some(20.0);
    rows[1].compact_ms_per_s = Some(140.4);
    rows[2].compact_ms_per_s = Some(0.4);
    assert_eq!(
        longest_compacting(Some(&rows)).as_deref(),
        Some("pagewatch-eat[123] in direct compaction 140 ms/s")
    );
    rows[0].compact_ms_per_s = None;
    rows[1].compact_ms_per_s = Some(0.4);
    assert_eq!(longest_compacting(Some(&rows)), None);
}

#[test]
fn processes_are_queried_only_with_delay_accounting_on_and_the_walk_wanted() {
    let mut m = idle_model();
    m.processes_by_memory = Some((1..=12).map(|p| MemRow::blank(p, "x")).collect());
    m.task_delayacct = Some(true);
    assert_eq!(
        pids(m.task_delayacct, m.processes_by_memory.as_deref(), true),
        (1..=10).collect::<Vec<u32>>(),
        "MAX_PIDS, in row order"
    );
    assert!(
        pids(m.task_delayacct, m.processes_by_memory.as_deref(), false).is_empty(),
        "no walk: no query"
    );
    m.task_delayacct = Some(false);
    assert!(
        pids(m.task_delayacct, m.processes_by_memory.as_deref(), true).is_empty(),
        "delay accounting off: no query"
    );
    m.task_delayacct = None;
    assert!(
        pids(m.task_delayacct, m.processes_by_memory.as_deref(), true).is_empty(),
        "not known yet: no query"
    );
}

#[test]
fn direct_compaction_alone_wants_the_walk_and_so_the_delays() {
    let mut m = idle_model();
    m.task_delayacct = Some(true);
    m.processes_by_memory = Some(vec![MemRow::blank(7, "eat")]);
    let view = crate::model::who::View::default();
    let wants = crate::model::who::Gate::default().update(&m, &view);
    assert!(
        wants
            .as_ref()
            .is_none_or(|w| w.procs.is_none() && w.delays.is_empty()),
        "the idle samples have no reason to walk: {wants:?}"
    );
    m.reclaim.compact_stall_s = Some(5.0);
    let wants = crate::model::who::Gate::default()
        .update(&m, &view)
        .unwrap();
    assert!(
        wants.procs.is_some(),
        "direct compaction is a reason to walk"
    );
    assert_eq!(wants.delays, vec![7]);
}

#[test]
fn the_memory_rows_get_their_process_delays() {
    let a = reading(1_000_000_000, &[(7, (10, 500_000_000), (4, 100_000_000))]);
    let b = reading(3_000_000_000, &[(7, (13, 780_000_000), (6, 150_000_000))]);
    let d = derive(Some(&a), Some(&b));
    let mut rows = vec![MemRow::blank(5, "db"), MemRow::blank(7, "eat")];
    annotate(d.as_ref(), Some(&mut rows));
    assert_eq!(
        (rows[1].compact_ms_per_s, rows[1].freepages_delay_ms_per_s),
        (Some(140.0), Some(25.0))
    );
    assert_eq!(
        (rows[0].compact_ms_per_s, rows[0].freepages_delay_ms_per_s),
        (None, None)
    );
    let json = serde_json::to_value(&rows[1]).unwrap();
    assert_eq!(json["compact_ms_per_s"], 140.0);
    assert_eq!(json["freepages_delay_ms_per_s"], 25.0);
}
