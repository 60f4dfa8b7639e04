//! Hand-built records in this VM's formats (kernel 6.18, `tests/fixtures/trace/sync-6.18`),
//! put in pages as the ring buffer lays them out, decoded and paired.

use super::*;
use crate::parse::trace::parse_format;
use crate::parse::trace_raw::{PageLayout, walk_page};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/trace/sync-6.18"
);

fn formats() -> Vec<TraceFormat> {
    EVENTS
        .iter()
        .map(|e| {
            let name = e.strip_prefix("syscalls/").unwrap();
            parse_format(&std::fs::read_to_string(format!("{DIR}/{name}")).unwrap()).unwrap()
        })
        .collect()
}

/// A record of event `i` (in `EVENTS` order) for `tid`, with `arg` in its first field after
/// `__syscall_nr` (offset 16: `fd`/`ret`) and `flags` at offset 32 (msync's).
fn record(f: &[TraceFormat], i: usize, tid: i32, flags: u64) -> Vec<u8> {
    let mut r = vec![0u8; 40];
    let id = u16::try_from(f[i].id.unwrap()).unwrap();
    r[..2].copy_from_slice(&id.to_ne_bytes());
    r[4..8].copy_from_slice(&tid.to_ne_bytes());
    r[32..40].copy_from_slice(&flags.to_ne_bytes());
    r
}

/// One page: records at (time delta from the page's stamp, bytes).
fn page(start: u64, recs: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut data = Vec::new();
    for (delta, r) in recs {
        assert_eq!(r.len() % 4, 0);
        let word = ((r.len() / 4) as u32) | (delta << 5);
        data.extend_from_slice(&word.to_ne_bytes());
        data.extend_from_slice(r);
    }
    let mut p = start.to_ne_bytes().to_vec();
    p.extend_from_slice(&(data.len() as u64).to_ne_bytes());
    p.extend_from_slice(&data);
    p.resize(4096, 0);
    p
}

fn decode(layout: &SyncLayout, p: &[u8]) -> Vec<Call> {
    let mut out = Vec::new();
    let mut lost = 0;
    walk_page(p, &PageLayout::default(), 0, &mut lost, |ts, rec| {
        out.extend(layout.decode(rec, ts));
        Ok(())
    })
    .unwrap();
    out
}

fn enter(tid: u32, ts: u64, call: u8) -> Call {
    Call {
        tid,
        ts,
        call,
        enter: true,
        counted: true,
    }
}

fn exit(tid: u32, ts: u64, call: u8) -> Call {
    Call {
        enter: false,
        ..enter(tid, ts, call)
    }
}

#[test]
fn records_decode_to_calls_and_msync_counts_only_with_ms_sync() {
    let f = formats();
    let layout = SyncLayout::new(&f).unwrap();
    let p = page(
        1_000,
        &[
            (0, record(&f, 0, 42, 0)),
            (500, record(&f, 1, 42, 0)),
            (10, record(&f, 6, 43, 1)),
            (10, record(&f, 6, 44, 4 | 2)),
            (10, record(&f, 5, 45, 0)),
        ],
    );
    let calls = decode(&layout, &p);
    assert_eq!(
        calls,
        [
            enter(42, 1_000, 0),
            exit(42, 1_500, 0),
            Call {
                counted: false,
                ..enter(43, 1_510, 3)
            },
            enter(44, 1_520, 3),
            exit(45, 1_530, 2),
        ]
    );
    let mut other = record(&f, 0, 1, 0);
    other[0] ^= 0xff;
    assert_eq!(layout.decode(&other, 0), None, "another event's record");
    assert_eq!(layout.decode(&other[..3], 0), None, "too short");
    assert!(SyncLayout::new(&f[..7]).is_err());
}

#[test]
fn a_task_that_migrates_pairs_across_cpus_and_reads() {
    let mut p = Pairer::default();
    let mut done = Vec::new();
    // Entered on cpu1 at 100, left on cpu0 at 900: cpu0's page is read first.
    p.pair(vec![exit(7, 900, 0), enter(7, 100, 0)], None, &mut done);
    assert_eq!(
        done,
        [Done {
            tid: 7,
            call: 0,
            ns: 800
        }]
    );
    // The read cap left cpu1's entry for the next read: the exit waits one read for it.
    done.clear();
    p.pair(
        vec![enter(7, 2_000, 1), exit(7, 2_300, 1), exit(8, 1_500, 0)],
        None,
        &mut done,
    );
    assert_eq!(done.len(), 1);
    p.pair(vec![enter(8, 1_000, 0)], None, &mut done);
    assert_eq!(
        done[1],
        Done {
            tid: 8,
            call: 0,
            ns: 500
        }
    );
    assert_eq!(p.take_unpaired(), 0);
}

#[test]
fn an_exit_without_entry_is_dropped_after_one_more_read() {
    let mut p = Pairer::default();
    let mut done = Vec::new();
    p.pair(vec![exit(9, 50, 0)], None, &mut done);
    assert_eq!(p.take_unpaired(), 0, "held once");
    p.pair(Vec::new(), None, &mut done);
    assert!(done.is_empty());
    assert_eq!(p.take_unpaired(), 1);
    // An exit of another syscall does not close the open call.
    p.pair(vec![enter(3, 10, 0), exit(3, 20, 1)], None, &mut done);
    p.pair(Vec::new(), None, &mut done);
    assert!(done.is_empty());
    assert_eq!(p.take_unpaired(), 1);
    // A second entry means the first one's exit was lost.
    p.pair(vec![enter(3, 30, 0), exit(3, 40, 0)], None, &mut done);
    assert_eq!(
        done,
        [Done {
            tid: 3,
            call: 0,
            ns: 10
        }]
    );
    assert_eq!(p.take_unpaired(), 1);
}

#[test]
fn an_open_call_shows_its_wait_and_ages_out() {
    let mut p = Pairer::default();
    let mut done = Vec::new();
    p.pair(vec![enter(5, 1_000, 1)], Some(3_000_001_000), &mut done);
    assert_eq!(
        p.open(),
        [Open {
            tid: 5,
            age_ns: 3_000_000_000
        }]
    );
    // A msync(MS_ASYNC) in progress is no wait.
    p.pair(
        vec![Call {
            counted: false,
            ..enter(6, 2_000, 3)
        }],
        Some(3_000_001_000),
        &mut done,
    );
    assert_eq!(p.open().len(), 1);
    p.pair(Vec::new(), Some(OPEN_MAX_NS + 1_000), &mut done);
    assert_eq!(p.open().len(), 1, "still within the limit");
    p.pair(Vec::new(), Some(OPEN_MAX_NS + 2_001), &mut done);
    assert!(p.open().is_empty(), "aged out");
    assert_eq!(p.take_unpaired(), 2);
    // Its exit, read after it aged out, pairs with nothing.
    p.pair(vec![exit(5, OPEN_MAX_NS + 3_000, 1)], None, &mut done);
    p.pair(Vec::new(), None, &mut done);
    assert!(done.is_empty());
}

#[test]
fn an_open_call_of_a_task_gone_is_dropped() {
    // Tasks 5 and 7 enter fsync; 5's exit is lost in a wrapped buffer and 5 exits.
    let mut p = Pairer::default();
    let mut done = Vec::new();
    p.pair(
        vec![enter(5, 1_000, 0), enter(7, 2_000, 0)],
        Some(1_000_000_000),
        &mut done,
    );
    p.forget_gone(|tid| tid == 5);
    let open: Vec<u32> = p.open().iter().map(|o| o.tid).collect();
    assert_eq!(open, [7], "task 5's wait does not grow on after it is gone");
    assert_eq!(p.take_unpaired(), 1);
    // 7's call completes as before.
    p.pair(vec![exit(7, 5_000, 0)], None, &mut done);
    assert_eq!(done.len(), 1);
    assert_eq!((done[0].tid, done[0].ns), (7, 3_000));
}

#[test]
fn reduce_sums_by_process() {
    let done = [
        Done {
            tid: 11,
            call: 0,
            ns: 4,
        },
        Done {
            tid: 12,
            call: 1,
            ns: 10,
        },
        Done {
            tid: 20,
            call: 0,
            ns: 1,
        },
        Done {
            tid: 99,
            call: 0,
            ns: 2,
        },
    ];
    let open = [Open {
        tid: 12,
        age_ns: 50,
    }];
    let rows = reduce(&done, &open, |tid| match tid {
        11 | 12 => Some((10, "db".into())),
        20 => Some((20, "sh".into())),
        _ => None,
    });
    assert_eq!(
        rows,
        [
            SyncRow {
                tgid: 10,
                comm: "db".into(),
                calls: 2,
                total_ns: 14,
                max_ns: 10,
                open_ns: 50
            },
            SyncRow {
                tgid: 20,
                comm: "sh".into(),
                calls: 1,
                total_ns: 1,
                max_ns: 1,
                open_ns: 0
            },
            SyncRow {
                tgid: 99,
                comm: String::new(),
                calls: 1,
                total_ns: 2,
                max_ns: 2,
                open_ns: 0
            },
        ]
    );
}
