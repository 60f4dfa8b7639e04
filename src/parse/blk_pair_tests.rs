use super::*;

const ISSUE: &str = "name: block_rq_issue
ID: 2104
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;

print fmt: \"%d,%d\", REC->dev
";

/// The formats of 6.18: insert as issue with another id, complete without `bytes`.
pub(crate) fn formats() -> (String, String, String) {
    let insert = ISSUE
        .replace("block_rq_issue", "block_rq_insert")
        .replace("ID: 2104", "ID: 2105");
    let complete = ISSUE
        .replace("block_rq_issue", "block_rq_complete")
        .replace("ID: 2104", "ID: 2107")
        .replace("unsigned int bytes", "int error");
    (insert, ISSUE.to_owned(), complete)
}

/// A record as the kernel writes it.
pub(crate) fn record(id: u16, dev: u32, sector: u64, nr: u32, rwbs: &str) -> Vec<u8> {
    let mut r = vec![0u8; 64];
    r[..2].copy_from_slice(&id.to_ne_bytes());
    r[8..12].copy_from_slice(&dev.to_ne_bytes());
    r[16..24].copy_from_slice(&sector.to_ne_bytes());
    r[24..28].copy_from_slice(&nr.to_ne_bytes());
    r[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
    r
}

fn layout() -> BlkLayout {
    let (i, s, c) = formats();
    BlkLayout::new(&i, &s, &c).unwrap()
}

fn ev(ts: u64, kind: Kind, sector: u64, dir: Dir) -> BlkEvent {
    BlkEvent {
        ts,
        kind,
        dev: 8 << 20,
        sector,
        nr_sector: 8,
        dir,
    }
}

#[test]
fn decodes_the_three_events() {
    let l = layout();
    let e = l
        .decode(&record(2104, 254 << 20, 4096, 8, "RA"), 5)
        .unwrap();
    assert_eq!(
        e,
        BlkEvent {
            ts: 5,
            kind: Kind::Issue,
            dev: 254 << 20,
            sector: 4096,
            nr_sector: 8,
            dir: Dir::Read
        }
    );
    let c = l.decode(&record(2107, 1, 2, 8, "WS"), 9).unwrap();
    assert_eq!((c.kind, c.dir), (Kind::Complete, Dir::Write));
    let i = l.decode(&record(2105, 1, 2, 8, "FWFS"), 9).unwrap();
    assert_eq!((i.kind, i.dir), (Kind::Insert, Dir::Write));
    assert_eq!(
        l.decode(&record(2107, 1, 2, 8, "D"), 9).unwrap().dir,
        Dir::Other
    );
    assert_eq!(
        l.decode(&record(999, 1, 2, 8, "R"), 9),
        None,
        "another event"
    );
    assert_eq!(l.decode(&record(2104, 1, 2, 8, "R")[..30], 9), None, "cut");
    assert!(BlkLayout::new("name: x\nID: 3\nformat:\n", ISSUE, ISSUE).is_err());
}

#[test]
fn pairs_queue_and_device_time_across_cpus_by_timestamp() {
    let mut p = Pairer::default();
    // CPU 1's completion listed before CPU 0's issue: merged by time.
    let mut evs = vec![
        ev(1_300_000, Kind::Complete, 100, Dir::Read),
        ev(1_000_000, Kind::Insert, 100, Dir::Read),
        ev(1_100_000, Kind::Issue, 100, Dir::Read),
        ev(2_000_000, Kind::Issue, 200, Dir::Write),
        ev(6_000_000, Kind::Complete, 200, Dir::Write),
    ];
    p.feed(&mut evs);
    assert!(evs.is_empty());
    let d = p.take();
    assert_eq!(d.len(), 1);
    let d = &d[0];
    assert_eq!(d.events, 5);
    assert_eq!((d.read_dev.total(), d.read_dev.max_us), (1, 200));
    assert_eq!((d.read_queue.total(), d.read_queue.max_us), (1, 100));
    assert_eq!((d.write_dev.total(), d.write_dev.max_us), (1, 4000));
    assert_eq!(d.write_queue.total(), 0, "no insert, no queue time");
    assert_eq!(d.unpaired, 0);
    assert_eq!(p.pending(), 0);
    assert!(p.take().is_empty(), "taken");
}

#[test]
fn a_completion_read_before_its_issue_waits_one_read() {
    let mut p = Pairer::default();
    // The first read: a lone completion is of a request issued before arming.
    p.feed(&mut vec![ev(1_000_000, Kind::Complete, 9, Dir::Read)]);
    assert_eq!((p.pending(), p.take()[0].unpaired), (0, 0));
    p.feed(&mut vec![ev(5_000_000, Kind::Complete, 1, Dir::Read)]);
    assert_eq!(p.pending(), 1);
    // The issue (on a CPU read earlier) comes with the next read.
    p.feed(&mut vec![ev(4_000_000, Kind::Issue, 1, Dir::Read)]);
    let d = p.take();
    assert_eq!(d[0].read_dev.total(), 1);
    assert_eq!(d[0].read_dev.max_us, 1000);
    assert_eq!((d[0].events, d[0].unpaired), (2, 0));
    // A completion whose issue never comes: unpaired after one more read.
    p.feed(&mut vec![ev(9_000_000, Kind::Complete, 7, Dir::Write)]);
    p.feed(&mut Vec::new());
    let d = p.take();
    assert_eq!(
        (d[0].events, d[0].unpaired, d[0].write_dev.total()),
        (1, 1, 0)
    );
    assert_eq!(p.pending(), 0);
}

#[test]
fn issues_without_completion_age_out_and_count() {
    let mut p = Pairer::default();
    p.feed(&mut vec![ev(1_000, Kind::Issue, 1, Dir::Read)]);
    p.feed(&mut vec![ev(AGE_NS / 2, Kind::Issue, 2, Dir::Read)]);
    assert_eq!(p.take()[0].unpaired, 0);
    p.feed(&mut vec![ev(AGE_NS + 2_000, Kind::Issue, 3, Dir::Read)]);
    assert_eq!(p.take()[0].unpaired, 1, "the first issue is 30 s old");
    assert_eq!(p.pending(), 2);
    // Flushes without data are counted as events and never paired.
    let mut f = ev(AGE_NS + 3_000, Kind::Issue, 0, Dir::Other);
    f.nr_sector = 0;
    p.feed(&mut vec![f]);
    assert_eq!(p.pending(), 2);
}

/// Pages `trace_pipe_raw` handed over on 6.18 (`tests/fixtures/blk`): loop0 (7:0) read by
/// `fio --rw=randread --iodepth=4 --rate_iops=300` for 1 s, both CPUs, the `mono` clock.
#[test]
fn real_pages_pair_into_reads() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blk");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let page = super::super::trace_raw::parse_header_page(&read("header_page")).unwrap();
    let l = BlkLayout::new(
        &read("block_rq_insert.format"),
        &read("block_rq_issue.format"),
        &read("block_rq_complete.format"),
    )
    .unwrap();
    let mut events = Vec::new();
    let mut lost = 0;
    for cpu in 0..2u32 {
        let bytes = std::fs::read(dir.join(format!("cpu{cpu}.raw"))).unwrap();
        for p in bytes.chunks(page.page_size) {
            super::super::trace_raw::walk_page(p, &page, cpu, &mut lost, |ts, rec| {
                events.extend(l.decode(rec, ts));
                Ok(())
            })
            .unwrap();
        }
    }
    assert_eq!(lost, 0);
    assert!(
        events
            .iter()
            .all(|e| e.dev == 7 << 20 && e.dir == Dir::Read)
    );
    let n = events.len() as u64;
    let mut p = Pairer::default();
    p.feed(&mut events);
    p.feed(&mut Vec::new());
    let d = p.take();
    assert_eq!(d.len(), 1);
    let d = &d[0];
    let reads = d.read_dev.total();
    println!(
        "{n} events, {reads} reads timed, max {} µs",
        d.read_dev.max_us
    );
    assert_eq!(d.events, n);
    assert!(
        (250..=320).contains(&reads),
        "{reads} reads in 1 s at 300 IOPS"
    );
    assert!(d.unpaired <= 8, "{} unpaired", d.unpaired);
    assert_eq!(d.write_dev.total(), 0);
    let p50 = d.read_dev.quantile(0.5).unwrap();
    assert!((1.0..10_000.0).contains(&p50), "{p50} µs");
}

#[test]
fn a_requeued_request_is_timed_from_its_last_issue() {
    let mut p = Pairer::default();
    p.feed(&mut vec![
        ev(1_000_000, Kind::Issue, 5, Dir::Read),
        ev(3_000_000, Kind::Issue, 5, Dir::Read),
        ev(3_500_000, Kind::Complete, 5, Dir::Read),
    ]);
    let d = p.take();
    assert_eq!((d[0].unpaired, d[0].read_dev.total()), (0, 1), "not lost");
    assert_eq!(d[0].read_dev.max_us, 500);
}

/// After a flood, `trim` gives back what the read grew (the merge buffer and the maps of
/// pending requests), and a later read pairs as before.
#[test]
fn a_floods_buffers_are_given_back() {
    let mut p = Pairer::default();
    let mut flood: Vec<BlkEvent> = (0..40_000u64)
        .map(|i| ev(i * 1000, Kind::Issue, i * 8, Dir::Read))
        .collect();
    p.feed(&mut flood);
    let grown = p.scratch.capacity() + p.issued.capacity();
    assert!(grown >= 40_000, "{grown}");
    let mut done: Vec<BlkEvent> = (0..40_000u64)
        .map(|i| ev(40_000_000 + i, Kind::Complete, i * 8, Dir::Read))
        .collect();
    p.feed(&mut done);
    p.trim(4096, |_| {});
    assert!(p.scratch.capacity() <= 4096, "{}", p.scratch.capacity());
    assert!(p.issued.capacity() <= 4096, "{}", p.issued.capacity());
    let mut next = vec![
        ev(50_000_000, Kind::Issue, 7, Dir::Read),
        ev(50_100_000, Kind::Complete, 7, Dir::Read),
    ];
    p.feed(&mut next);
    let total: u64 = p.take().iter().map(|d| d.read_dev.total()).sum();
    assert_eq!(total, 40_001, "every request paired");
}

/// Below a flood, the merge buffer keeps no more room than `malloc::fit` allows: the first
/// read after arming (7,000 events: 280 KB of room) is not kept for the reads of a few
/// hundred that follow at 0.1 s (issue 52: RSS).
#[test]
fn a_first_reads_room_is_given_back_by_the_fit_rule() {
    let mut p = Pairer::default();
    let mut first: Vec<BlkEvent> = (0..7_000u64)
        .map(|i| ev(i * 1000, Kind::Issue, i * 8, Dir::Read))
        .collect();
    p.feed(&mut first);
    p.trim(16_384, crate::malloc::fit);
    assert!(p.scratch.capacity() >= 7_000, "{}", p.scratch.capacity());
    let mut next: Vec<BlkEvent> = (0..300u64)
        .map(|i| ev(10_000_000 + i, Kind::Complete, i * 8, Dir::Read))
        .collect();
    p.feed(&mut next);
    p.trim(16_384, crate::malloc::fit);
    assert!(p.scratch.capacity() <= 600, "{}", p.scratch.capacity());
    let total: u64 = p.take().iter().map(|d| d.read_dev.total()).sum();
    assert_eq!(total, 300, "the reads pair as before");
}
