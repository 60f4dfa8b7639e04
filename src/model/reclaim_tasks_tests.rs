use super::*;
use crate::parse::reclaim_trace::{Record, Task};

const MS: u64 = 1_000_000;

fn rec(ms: u64, tid: u32, mark: Mark) -> Record {
    Record {
        ts: ms * MS,
        tid,
        mark,
        memcg: false,
        reclaimed: if mark == Mark::End { 10 } else { 0 },
    }
}

/// A read spanning 1000 ms → 2000 ms (one second).
fn read(records: Vec<Record>) -> Records {
    Records {
        since_ns: 1000 * MS,
        now_ns: 2000 * MS,
        records,
        tasks: [
            (100, task(100, "fio")),
            (101, task(100, "fio")),
            (200, task(200, "pagewatch-eat")),
        ]
        .into(),
        ..Records::default()
    }
}

fn task(tgid: u32, comm: &str) -> Task {
    Task {
        tgid,
        comm: comm.into(),
    }
}

#[test]
fn pairs_sum_by_process_over_the_span() {
    // fio's two threads: 1100→1150 and 1200→1300 (thread 100), 1500→1530 (thread 101):
    // 50 + 100 + 30 = 180 ms in a second. The eater: 1400→1440, 40 ms.
    let t = pair(&read(vec![
        rec(1100, 100, Mark::Begin),
        rec(1150, 100, Mark::End),
        rec(1200, 100, Mark::Begin),
        rec(1300, 100, Mark::End),
        rec(1400, 200, Mark::Begin),
        rec(1440, 200, Mark::End),
        rec(1500, 101, Mark::Begin),
        rec(1530, 101, Mark::End),
    ]));
    assert_eq!(t.rows.len(), 2);
    let (fio, eat) = (&t.rows[0], &t.rows[1]);
    assert_eq!((fio.pid, fio.comm.as_str(), fio.stalls), (100, "fio", 3));
    assert!((fio.ms_per_s - 180.0).abs() < 1e-9, "{}", fio.ms_per_s);
    assert_eq!(fio.reclaimed_pages, 30);
    assert!((eat.ms_per_s - 40.0).abs() < 1e-9);
    assert!(!fio.in_reclaim && !eat.in_reclaim);
    assert_eq!(t.unpaired, 0);
    assert_eq!(
        t.named(3).as_deref(),
        Some("fio[100] 180 ms/s, pagewatch-eat[200] 40 ms/s")
    );
}

#[test]
fn an_entry_without_its_exit_counts_to_the_read_and_is_in_reclaim() {
    // Entered at 1750, still inside at the read (2000): 250 ms, in reclaim.
    let t = pair(&read(vec![rec(1750, 200, Mark::Begin)]));
    assert!((t.rows[0].ms_per_s - 250.0).abs() < 1e-9);
    assert!(t.rows[0].in_reclaim);
    // Carried from the last read (entered at 600): counts from the span's start, 1000 ms.
    let t = pair(&read(vec![rec(600, 200, Mark::Open)]));
    assert!((t.rows[0].ms_per_s - 1000.0).abs() < 1e-9);
    // ... and left at 1300: 300 ms, out of reclaim.
    let t = pair(&read(vec![
        rec(600, 200, Mark::Open),
        rec(1300, 200, Mark::End),
    ]));
    assert!((t.rows[0].ms_per_s - 300.0).abs() < 1e-9);
    assert!(!t.rows[0].in_reclaim);
}

#[test]
fn an_exit_without_its_entry_counts_only_on_the_first_read() {
    // Just armed: the task was inside when it was; 1000 → 1200, 200 ms.
    let mut r = read(vec![rec(1200, 100, Mark::End)]);
    r.fresh = true;
    let t = pair(&r);
    assert!((t.rows[0].ms_per_s - 200.0).abs() < 1e-9);
    assert_eq!(t.unpaired, 0);
    // Later its entry was lost: not timed, counted unpaired.
    r.fresh = false;
    let t = pair(&r);
    assert!(t.rows.is_empty());
    assert_eq!(t.unpaired, 1);
}

#[test]
fn a_wrapped_ring_loses_pairs_and_never_overcounts() {
    // The ring wrapped: thread 100's exit at 1100 lost its entry; a begin at 1200 lost its
    // exit (a second begin at 1400 sits over it); 1400 → 1450 pairs: 50 ms only.
    let mut r = read(vec![
        rec(1100, 100, Mark::End),
        rec(1200, 100, Mark::Begin),
        rec(1400, 100, Mark::Begin),
        rec(1450, 100, Mark::End),
    ]);
    r.lost = 120;
    let t = pair(&r);
    assert!((t.rows[0].ms_per_s - 50.0).abs() < 1e-9, "{:?}", t.rows);
    assert_eq!((t.unpaired, t.lost), (2, 120));
}

#[test]
fn a_reused_task_id_drops_the_old_entry() {
    // Task 200 was carried open from the last read, then was gone and its id reused by a
    // new task that entered at 1500 and left at 1520: the carried entry is dropped (its exit
    // never came), only the new pair counts, 20 ms.
    let t = pair(&read(vec![
        rec(500, 200, Mark::Open),
        rec(1500, 200, Mark::Begin),
        rec(1520, 200, Mark::End),
    ]));
    assert!((t.rows[0].ms_per_s - 20.0).abs() < 1e-9);
    assert_eq!(t.unpaired, 1);
    assert!(!t.rows[0].in_reclaim);
}

#[test]
fn memory_rows_take_the_figures_while_armed_and_none_otherwise() {
    use crate::model::procs_memory::MemRow;
    let row = |pid, rss| MemRow {
        state: 'R',
        rss_bytes: Some(rss),
        ..MemRow::blank(pid, "")
    };
    let samples = crate::source::test_samples("live-idle");
    let mut m = crate::pipeline::derive_all(&samples, crate::model::Options::default())
        .models
        .remove(0);
    m.processes_by_memory = Some(vec![row(200, 1 << 30), row(100, 1 << 20)]);
    annotate(m.reclaim_tasks.as_ref(), m.processes_by_memory.as_mut());
    let rows = m.processes_by_memory.clone().unwrap();
    assert!(rows.iter().all(|r| r.reclaim_ms_per_s.is_none()));
    m.reclaim_tasks = Some(pair(&read(vec![rec(1900, 100, Mark::Begin)])));
    annotate(m.reclaim_tasks.as_ref(), m.processes_by_memory.as_mut());
    let rows = m.processes_by_memory.unwrap();
    // fio inside reclaim at the read sorts first, with its 100 ms/s; the eater 0.
    assert_eq!((rows[0].pid, rows[0].in_reclaim), (100, true));
    assert!((rows[0].reclaim_ms_per_s.unwrap() - 100.0).abs() < 1e-9);
    assert_eq!(rows[1].reclaim_ms_per_s, Some(0.0));
}

#[test]
fn the_direct_reclaim_answer_names_who_stalled_in_it() {
    let samples = crate::source::test_samples("live-idle");
    let mut m = crate::pipeline::derive_all(&samples, crate::model::Options::default())
        .models
        .remove(0);
    m.reclaim.allocstall_s = Some(50.0);
    m.reclaim.pgscan_direct_s = Some(4000.0);
    let before = crate::model::verdict::derive(&m).reclaim;
    assert_eq!(
        before.why,
        "direct reclaim: 50 allocstall/s, scanning 4000 pages/s"
    );
    assert!(before.who.is_empty());
    // fio 180 ms/s, the eater 40, a shell 0.2 (under the floor: not named).
    m.reclaim_tasks = Some(pair(&read(vec![
        rec(1100, 100, Mark::Begin),
        rec(1280, 100, Mark::End),
        rec(1400, 200, Mark::Begin),
        rec(1440, 200, Mark::End),
    ])));
    m.reclaim_tasks.as_mut().unwrap().rows.push(TaskRow {
        pid: 5,
        comm: "bash".into(),
        ms_per_s: 0.2,
        in_reclaim: false,
        stalls: 1,
        reclaimed_pages: 0,
        memcg: false,
    });
    let r = crate::model::verdict::derive(&m).reclaim;
    assert_eq!(
        r.why,
        "direct reclaim: fio[100] 180 ms/s, pagewatch-eat[200] 40 ms/s; 50 allocstall/s, \
         scanning 4000 pages/s"
    );
    assert_eq!(r.who.iter().map(|w| w.pid).collect::<Vec<_>>(), [100, 200]);
}
