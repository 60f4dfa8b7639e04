//! Exits credited through `procs::Tracker`, from hand-written walks and drains: the boot clock
//! is the monotonic one plus 1,000 s, 100 ticks a second. `walk`, `drain`, `task` and `both`
//! also build the report's "who" records (`report::who`'s tests).

use std::fmt::Write;
use std::sync::Arc;

use crate::model::procs::{ProcRow, Tracker};
use crate::parse::Snapshot;
use crate::parse::procs::parse as parse_walk;
use crate::parse::taskstats::{AGROUP, Exits as Drain, TaskExit};

const S: u64 = 1_000_000_000;
const MIB: u64 = 1 << 20;

/// A process of a walk: pid, comm, start (s, monotonic), write_bytes, reaped marks.
pub(crate) type Proc<'a> = (u32, &'a str, f64, u64, u64);

pub(crate) fn walk(at_s: u64, prev_s: Option<u64>, procs: &[Proc]) -> Snapshot {
    let mut t = format!(
        "walk {}\nprev {}\nclk_tck 100\ntask_delayacct 1\nscope -\npage_size 4096\nboot {}\n",
        at_s * S,
        prev_s.map_or("-".to_owned(), |p| (p * S).to_string()),
        (at_s + 1000) * S
    );
    for &(pid, comm, start_s, write, marks) in procs {
        let start = ((start_s + 1000.0) * 100.0).round() as u64;
        let _ = write!(
            t,
            "P {pid} {start}\nstat {pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 151 {marks} 0 0 2 \
             13 0 0 20 0 1 0 {start} 5373952 384 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 \
             17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\nrchar: {write}\nwchar: {write}\nsyscr: 1\n\
             syscw: 1\nread_bytes: 0\nwrite_bytes: {write}\ncancelled_write_bytes: 0\nwchan 0\n\
             cmdline {comm} --from-the-walk\n"
        );
    }
    Snapshot {
        mono_ns: at_s * S,
        procs: Some(Arc::new(parse_walk(&t).unwrap())),
        ..Snapshot::default()
    }
}

/// A task's exit record: pid, tgid, ppid, flags, age (s), write_bytes, blkio delay (ns).
pub(crate) fn task(
    pid: u32,
    group: u32,
    parent: u32,
    flags: u8,
    age_s: f64,
    write: u64,
    blkio: u64,
) -> TaskExit {
    let mut delays = [Some((0, 0)); 5];
    delays[0] = Some((1, blkio));
    TaskExit {
        pid,
        tgid: Some(group),
        ppid: Some(parent),
        flags,
        version: 16,
        etime_us: Some((age_s * 1e6) as u64),
        tgetime_us: Some((age_s * 1e6) as u64),
        io: Some([write, write, 0, write, 0]),
        delays,
        comm: if pid == group { "dd" } else { "worker" }.into(),
        ..TaskExit::default()
    }
}

/// A drain at `at_s` whose previous one was at `since_s`, with `records`.
pub(crate) fn drain(at_s: u64, since_s: Option<u64>, records: Vec<TaskExit>) -> Snapshot {
    Snapshot {
        mono_ns: at_s * S,
        exits: Some(Drain {
            state: "listening".into(),
            since_ns: since_s.map(|s| s * S),
            read_ns: at_s * S,
            records,
            ..Drain::default()
        }),
        ..Snapshot::default()
    }
}

/// A drain and a walk in one sample (the source drains first).
pub(crate) fn both(d: Snapshot, w: Snapshot) -> Snapshot {
    Snapshot {
        exits: d.exits,
        ..w
    }
}

fn row(t: &Tracker, pid: u32) -> Option<&ProcRow> {
    t.rows()?.iter().find(|r| r.pid == pid)
}

const SHELL: Proc = (100, "sh", -500.0, 5 * MIB, 0);

/// Listening since 9 s; a shell at the walk of 10 s; a dd born at 10.4 s that dirtied
/// 64 MiB and exited at 11 s; the walk of 12 s sees the shell's io jump by 64 MiB with its
/// reaped marks.
fn shell_and_dd(listening: bool) -> Tracker {
    let mut t = Tracker::default();
    let jumped = (100, "sh", -500.0, 69 * MIB, 1);
    let samples = [
        drain(9, None, vec![]),
        both(drain(10, Some(9), vec![]), walk(10, Some(8), &[SHELL])),
        drain(
            11,
            Some(10),
            vec![task(200, 200, 100, AGROUP, 0.6, 64 * MIB, 0)],
        ),
        both(drain(12, Some(11), vec![]), walk(12, Some(10), &[jumped])),
    ];
    for s in samples {
        if listening {
            t.update(&s);
        } else {
            t.update(&Snapshot { exits: None, ..s });
        }
    }
    t
}

#[test]
fn a_dd_that_lived_between_walks_is_its_own_row_and_the_shell_is_charged_nothing() {
    let t = shell_and_dd(true);
    let dd = row(&t, 200).expect("an exited row for dd");
    assert!(dd.exited && dd.comm == "dd" && dd.state == 'X', "{dd:?}");
    // 64 MiB over its 0.6 s of life, floored at 1 s: 64 MiB/s over a span of 1,000 ms.
    assert_eq!(dd.dirtied_bytes_per_s, Some((64 * MIB) as f64));
    assert_eq!((dd.walk_ms, dd.rates_from_walk_ms), (Some(1000), 12_000));
    let sh = row(&t, 100).unwrap();
    assert!(sh.reaped_children, "{sh:?}");
    assert_eq!(
        sh.dirtied_bytes_per_s,
        Some(0.0),
        "the shell's own: nothing"
    );
    assert_eq!(sh.reaped_dirtied_bytes, Some(64 * MIB));
    // Rolled up: dd's 64 MiB over the 2 s walk.
    let s = crate::source::test_samples("live-idle");
    let snap = Snapshot::parse(&s[0]).unwrap();
    let mut m = crate::model::Model::derive(None, &snap, crate::model::Options::default());
    t.fill(&mut m);
    let dd = m
        .commands
        .as_ref()
        .unwrap()
        .iter()
        .find(|c| c.comm == "dd")
        .unwrap();
    assert_eq!(dd.dirtied_bytes_per_s, Some((32 * MIB) as f64));
    let st = m.exits.unwrap();
    assert_eq!(
        (st.source.as_str(), st.state.as_str()),
        ("taskstats", "listening")
    );
}

#[test]
fn without_taskstats_the_dd_is_lost_and_the_shell_has_no_rate() {
    let t = shell_and_dd(false);
    assert!(row(&t, 200).is_none());
    let sh = row(&t, 100).unwrap();
    assert!(
        sh.reaped_children && sh.dirtied_bytes_per_s.is_none(),
        "{sh:?}"
    );
}

#[test]
fn a_process_a_walk_read_is_credited_what_it_did_since() {
    let mut t = Tracker::default();
    t.update(&drain(9, None, vec![]));
    // Born at 9.5 s, 20 MiB at the walk of 10 s (aged 0.5 s); exits aged 1.3 s with 50 MiB.
    let dd = (300, "dd", 9.5, 20 * MIB, 0);
    t.update(&both(
        drain(10, Some(9), vec![]),
        walk(10, Some(8), &[SHELL, dd]),
    ));
    let exit = task(300, 300, 100, AGROUP, 1.3, 50 * MIB, 0);
    t.update(&drain(11, Some(10), vec![exit]));
    t.update(&both(
        drain(12, Some(11), vec![]),
        walk(12, Some(10), &[SHELL]),
    ));
    let r = row(&t, 300).unwrap();
    // 30 MiB over 0.8 s, floored at 1 s; its cmdline kept from the walk.
    assert_eq!(r.dirtied_bytes_per_s, Some((30 * MIB) as f64), "{r:?}");
    assert_eq!(r.cmdline.as_deref(), Some("dd --from-the-walk"));
}

#[test]
fn threads_add_up_and_the_group_record_gives_the_delays_once() {
    let mut t = Tracker::default();
    t.update(&drain(9, None, vec![]));
    t.update(&both(
        drain(10, Some(9), vec![]),
        walk(10, Some(8), &[SHELL]),
    ));
    let thread = task(401, 400, 100, 0, 0.5, 10 * MIB, 7_000_000);
    t.update(&drain(11, Some(10), vec![thread]));
    let leader = task(400, 400, 100, AGROUP, 0.7, 5 * MIB, 3_000_000);
    let mut group = TaskExit {
        group: true,
        pid: 400,
        ..TaskExit::default()
    };
    group.delays[0] = Some((2, 10_000_000));
    t.update(&both(
        drain(12, Some(11), vec![leader, group]),
        walk(12, Some(10), &[SHELL]),
    ));
    let r = row(&t, 400).unwrap();
    assert_eq!(r.dirtied_bytes_per_s, Some((15 * MIB) as f64), "{r:?}");
    assert_eq!(r.exit_delays.as_ref().unwrap().blkio_ms, Some(10.0));
    // Delay accounting on and counted from zero: 10 ms over the 1 s span.
    assert_eq!(r.iowait_ms_per_s, Some(10.0));
    assert!(row(&t, 401).is_none(), "a thread is no row of its own");
}

#[test]
fn a_child_older_than_the_listener_leaves_the_parent_unrated() {
    let mut t = Tracker::default();
    t.update(&drain(9, None, vec![]));
    t.update(&both(
        drain(10, Some(9), vec![]),
        walk(10, Some(8), &[SHELL]),
    ));
    // Aged 5 s at an exit after 10 s: started before 9 s, when the listener registered,
    // and never written by a walk: its base is unknown, no row; the shell's jump unrated.
    let old = task(200, 200, 100, AGROUP, 5.0, 64 * MIB, 0);
    t.update(&drain(11, Some(10), vec![old]));
    let jumped = (100, "sh", -500.0, 69 * MIB, 1);
    t.update(&both(
        drain(12, Some(11), vec![]),
        walk(12, Some(10), &[jumped]),
    ));
    assert!(row(&t, 200).is_none());
    assert!(row(&t, 100).unwrap().dirtied_bytes_per_s.is_none());
}

#[test]
fn a_pending_charge_waits_for_the_reap_then_expires() {
    let mut t = Tracker::default();
    t.update(&drain(9, None, vec![]));
    t.update(&both(
        drain(10, Some(9), vec![]),
        walk(10, Some(8), &[SHELL]),
    ));
    t.update(&drain(
        11,
        Some(10),
        vec![task(200, 200, 100, AGROUP, 0.6, 64 * MIB, 0)],
    ));
    // Not reaped by the walk of 12 s (no marks): the shell's own 1 MiB is its rate.
    let own = (100, "sh", -500.0, 6 * MIB, 0);
    t.update(&both(
        drain(12, Some(11), vec![]),
        walk(12, Some(10), &[own]),
    ));
    assert_eq!(
        row(&t, 100).unwrap().dirtied_bytes_per_s,
        Some((MIB / 2) as f64)
    );
    // Reaped by 14 s: charged then.
    let jumped = (100, "sh", -500.0, 70 * MIB, 1);
    t.update(&both(
        drain(14, Some(12), vec![]),
        walk(14, Some(12), &[jumped]),
    ));
    let sh = row(&t, 100).unwrap();
    assert_eq!(sh.dirtied_bytes_per_s, Some(0.0), "{sh:?}");
    // Another child never reaped (SIGCHLD ignored): dropped after two walks, so a later
    // reap of an unknown child leaves the shell unrated rather than charged wrongly.
    t.update(&drain(
        15,
        Some(14),
        vec![task(201, 201, 100, AGROUP, 0.3, MIB, 0)],
    ));
    for (at, w) in [(16, 70), (18, 70), (20, 70)] {
        t.update(&both(
            drain(at, Some(at - 1), vec![]),
            walk(at, Some(at - 2), &[(100, "sh", -500.0, w * MIB, 1)]),
        ));
    }
    let jumped = (100, "sh", -500.0, 80 * MIB, 2);
    t.update(&both(
        drain(22, Some(20), vec![]),
        walk(22, Some(20), &[jumped]),
    ));
    assert!(row(&t, 100).unwrap().dirtied_bytes_per_s.is_none());
}

#[test]
fn a_walk_scoped_to_a_cgroup_credits_only_the_processes_it_read() {
    let scoped = |s: Snapshot| {
        let mut w = (**s.procs.as_ref().unwrap()).clone();
        w.scope = Some("/box".into());
        Snapshot {
            procs: Some(Arc::new(w)),
            ..s
        }
    };
    let mut t = Tracker::default();
    t.update(&drain(9, None, vec![]));
    let dd = (300, "dd", 9.5, 20 * MIB, 0);
    t.update(&both(
        drain(10, Some(9), vec![]),
        scoped(walk(10, Some(8), &[SHELL, dd])),
    ));
    // The walked dd exits, and one of another cgroup that no walk read.
    let exits = vec![
        task(300, 300, 100, AGROUP, 1.3, 50 * MIB, 0),
        task(200, 200, 1, AGROUP, 0.6, 64 * MIB, 0),
    ];
    t.update(&drain(11, Some(10), exits));
    t.update(&both(
        drain(12, Some(11), vec![]),
        scoped(walk(12, Some(10), &[SHELL])),
    ));
    assert!(row(&t, 300).is_some_and(|r| r.exited));
    assert!(row(&t, 200).is_none());
}

/// Bytes dirtied by the rows of comm `comm` at the last walk (rate × the span each covers).
fn dirtied(t: &Tracker, comm: &str) -> f64 {
    let rows = t.rows().unwrap().iter().filter(|r| r.comm == comm);
    rows.map(|r| r.dirtied_bytes_per_s.unwrap_or(0.0) * r.walk_ms.unwrap_or(0) as f64 / 1000.0)
        .sum()
}

/// A dd of 0.1 s that dirtied 200 MiB, a child of the shell.
fn short_dd(pid: u32) -> TaskExit {
    task(pid, pid, 100, AGROUP, 0.1, 200 * MIB, 0)
}

#[test]
fn exits_before_the_first_walk_wait_for_its_first_interval() {
    // A quiet machine: listening from 1 s, no walk. Two dd exit by 3 s, one by 4 s when the
    // first walk (no rates) comes, one more by 6 s; the walk of 9 s is the first with rates.
    let mut t = Tracker::default();
    t.update(&drain(1, None, vec![]));
    t.update(&drain(2, Some(1), vec![]));
    t.update(&drain(3, Some(2), vec![short_dd(201), short_dd(202)]));
    t.update(&both(
        drain(4, Some(3), vec![short_dd(203)]),
        walk(4, None, &[SHELL]),
    ));
    assert!(row(&t, 201).is_none(), "a first walk has no rates");
    t.update(&drain(6, Some(4), vec![short_dd(204)]));
    t.update(&both(drain(9, Some(6), vec![]), walk(9, Some(4), &[SHELL])));
    // Each: 200 MiB over its 0.1 s floored at 1 s, so 200 MiB/s over 1,000 ms.
    for pid in 201..=204 {
        let r = row(&t, pid).unwrap_or_else(|| panic!("dd {pid} credited"));
        assert_eq!(r.dirtied_bytes_per_s, Some((200 * MIB) as f64), "{r:?}");
        assert_eq!(r.walk_ms, Some(1000));
    }
    assert_eq!(dirtied(&t, "dd").round() as u64, 800 * MIB);
    // Rolled up over the 5 s walk: 4 pids, 800 MiB / 5 s = 160 MiB/s.
    let s = crate::source::test_samples("live-idle");
    let mut m = crate::model::Model::derive(
        None,
        &Snapshot::parse(&s[0]).unwrap(),
        crate::model::Options::default(),
    );
    t.fill(&mut m);
    let dd = m.commands.as_ref().unwrap();
    let dd = dd.iter().find(|c| c.comm == "dd").unwrap();
    assert_eq!((dd.pids, dd.exited), (4, 4));
    assert_eq!(dd.dirtied_bytes_per_s, Some((160 * MIB) as f64));
    assert_eq!(dd.walk_ms, Some(5000));
}

#[test]
fn exits_while_the_walks_paused_are_credited_when_they_resume() {
    let mut t = Tracker::default();
    t.update(&drain(9, None, vec![]));
    t.update(&both(
        drain(10, Some(9), vec![]),
        walk(10, Some(8), &[SHELL]),
    ));
    // No walk from 10 s to 30 s (the rows go stale after 5 s); a dd exits at 20 s.
    for at in 11..30 {
        let exits = if at == 20 {
            vec![short_dd(205)]
        } else {
            vec![]
        };
        t.update(&drain(at, Some(at - 1), exits));
    }
    assert!(t.rows().is_none(), "stale");
    t.update(&both(drain(30, Some(29), vec![]), walk(30, None, &[SHELL])));
    t.update(&both(
        drain(35, Some(30), vec![]),
        walk(35, Some(30), &[SHELL]),
    ));
    let r = row(&t, 205).expect("the paused walks' exit is credited");
    assert_eq!(r.dirtied_bytes_per_s, Some((200 * MIB) as f64), "{r:?}");
}

#[test]
fn a_process_one_walk_read_then_exiting_counts_its_whole_life_once() {
    let mut t = Tracker::default();
    t.update(&drain(1, None, vec![]));
    t.update(&drain(2, Some(1), vec![]));
    // Born at 2.5 s, after the listener; the first walk (no rates) reads 80 MiB; it exits at
    // 3.8 s (aged 1.3 s) with 200 MiB. The walk credited nothing: the exit row is all 200 MiB
    // (its reading less would lose the 80 MiB before the first walk).
    let dd = (300, "dd", 2.5, 80 * MIB, 0);
    t.update(&both(
        drain(3, Some(2), vec![]),
        walk(3, None, &[SHELL, dd]),
    ));
    let exit = task(300, 300, 100, AGROUP, 1.3, 200 * MIB, 0);
    t.update(&drain(4, Some(3), vec![exit]));
    t.update(&both(drain(8, Some(4), vec![]), walk(8, Some(3), &[SHELL])));
    let r = row(&t, 300).unwrap();
    // 200 MiB over 1.3 − 0.5 = 0.8 s since the walk, floored at 1 s.
    assert_eq!(r.dirtied_bytes_per_s, Some((200 * MIB) as f64), "{r:?}");
    assert_eq!(dirtied(&t, "dd").round() as u64, 200 * MIB);
}

#[test]
fn a_process_two_walks_read_then_exiting_counts_the_rest_after_their_rates() {
    let mut t = Tracker::default();
    t.update(&drain(1, None, vec![]));
    t.update(&drain(2, Some(1), vec![]));
    // Born at 2.5 s: 80 MiB at the first walk (3 s), 150 MiB at the walk of 8 s, whose rate
    // credits it (150 − 80) / 5 s = 14 MiB/s over 5 s = 70 MiB.
    t.update(&both(
        drain(3, Some(2), vec![]),
        walk(3, None, &[SHELL, (300, "dd", 2.5, 80 * MIB, 0)]),
    ));
    t.update(&both(
        drain(8, Some(3), vec![]),
        walk(8, Some(3), &[SHELL, (300, "dd", 2.5, 150 * MIB, 0)]),
    ));
    assert_eq!(dirtied(&t, "dd").round() as u64, 70 * MIB);
    // It exits at 9 s (aged 6.5 s) with 200 MiB: the rest is 200 − 70 = 130 MiB (the 80 MiB
    // before the first walk included), over 6.5 − 5.5 = 1 s. 70 + 130 = its 200 MiB, once.
    let exit = task(300, 300, 100, AGROUP, 6.5, 200 * MIB, 0);
    t.update(&drain(9, Some(8), vec![exit]));
    t.update(&both(
        drain(13, Some(9), vec![]),
        walk(13, Some(8), &[SHELL]),
    ));
    let r = row(&t, 300).unwrap();
    assert_eq!(r.dirtied_bytes_per_s, Some((130 * MIB) as f64), "{r:?}");
    assert_eq!(r.walk_ms, Some(1000));
}

#[test]
fn a_process_older_than_the_listener_is_credited_from_its_last_reading() {
    let mut t = Tracker::default();
    t.update(&drain(9, None, vec![]));
    // Started at −100 s, before the listener: 120 MiB at the walk of 10 s (no rate: the
    // tracker has no walk before it), 500 MiB at its exit at 11 s (aged 111 s). What it did
    // before the listener is unknown: its row is 500 − 120 = 380 MiB over 1 s.
    let old = (300, "dd", -100.0, 120 * MIB, 0);
    t.update(&both(
        drain(10, Some(9), vec![]),
        walk(10, Some(8), &[SHELL, old]),
    ));
    let exit = task(300, 300, 100, AGROUP, 111.0, 500 * MIB, 0);
    t.update(&drain(11, Some(10), vec![exit]));
    t.update(&both(
        drain(12, Some(11), vec![]),
        walk(12, Some(10), &[SHELL]),
    ));
    let r = row(&t, 300).unwrap();
    assert_eq!(r.dirtied_bytes_per_s, Some((380 * MIB) as f64), "{r:?}");
}

/// A mode that never walks (`serve`), or a screen between busy spells, keeps only the exits
/// of the last `MAX_WAIT_NS`: ten minutes of 30 short processes a second once kept every
/// one of them up to `MAX_DEAD` (issue 52: 3.8 MB in `serve`), and gives back the room a
/// burst took.
#[test]
fn exits_wait_for_a_walk_a_minute_at_most() {
    let mut x = super::Exits::default();
    let first = drain(1, None, vec![]);
    x.take(first.exits.as_ref().unwrap());
    let mut pid = 1000;
    for at in 2..=600 {
        let burst = if at == 300 { 2_000 } else { 30 };
        let records = (0..burst)
            .map(|_| {
                pid += 1;
                short_dd(pid)
            })
            .collect();
        x.take(drain(at, Some(at - 1), records).exits.as_ref().unwrap());
    }
    let window = (super::MAX_WAIT_NS / S) as usize;
    let (waiting, room) = x.waiting();
    assert!(
        (window * 30..=(window + 1) * 30).contains(&waiting),
        "{waiting} exits waiting, want the last {window} s of 30 a second"
    );
    assert!(room <= 4 * waiting, "{room} kept for {waiting}");
}
