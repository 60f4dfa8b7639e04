use super::*;

/// The formats of 6.18 (this host's `events/vmscan/*/format`), trimmed to the fields.
const BEGIN: &str = "name: mm_vmscan_direct_reclaim_begin\nID: 637\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:int order;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:unsigned long gfp_flags;\toffset:16;\tsize:8;\tsigned:0;\n\nprint fmt: \"\"\n";
const END: &str = "name: mm_vmscan_direct_reclaim_end\nID: 634\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:unsigned long nr_reclaimed;\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: \"\"\n";

fn record(id: u16, pid: i32, tail: &[u8]) -> Vec<u8> {
    let mut r = id.to_ne_bytes().to_vec();
    r.extend([0, 0]);
    r.extend(pid.to_ne_bytes());
    r.extend(tail);
    r
}

#[test]
fn records_decode_by_the_fields_of_their_format() {
    let l = Layouts::new(&[
        ("vmscan/mm_vmscan_direct_reclaim_begin", BEGIN),
        ("vmscan/mm_vmscan_direct_reclaim_end", END),
    ])
    .unwrap();
    let mut tail = 0i32.to_ne_bytes().to_vec();
    tail.extend([0; 4]);
    tail.extend(0x0cc0u64.to_ne_bytes());
    let b = l.decode(&record(637, 4242, &tail), 10).unwrap();
    assert_eq!(
        (b.tid, b.mark, b.memcg, b.ts),
        (4242, Mark::Begin, false, 10)
    );
    let e = l
        .decode(&record(634, 4242, &37u64.to_ne_bytes()), 20)
        .unwrap();
    assert_eq!((e.mark, e.reclaimed), (Mark::End, 37));
    // Another event's record, or one cut short: nothing.
    assert_eq!(l.decode(&record(999, 1, &tail), 0), None);
    assert_eq!(l.decode(&record(634, 1, &[1, 2]), 0), None);
    // An exit without nr_reclaimed is refused, by name.
    let bad = END.replace("nr_reclaimed", "nr");
    let e = Layouts::new(&[("vmscan/mm_vmscan_direct_reclaim_end", &bad)]).unwrap_err();
    assert!(e.contains("nr_reclaimed"), "{e}");
}

#[test]
fn the_pseudo_file_reads_back_sorted_with_carried_entries_first() {
    let r = Records {
        since_ns: 1_000,
        now_ns: 5_000,
        fresh: true,
        lost: 3,
        records: vec![
            Record {
                ts: 2_000,
                tid: 7,
                mark: Mark::End,
                memcg: true,
                reclaimed: 12,
            },
            Record {
                ts: 1_500,
                tid: 8,
                mark: Mark::Begin,
                memcg: false,
                reclaimed: 0,
            },
            Record {
                ts: 900,
                tid: 9,
                mark: Mark::Open,
                memcg: false,
                reclaimed: 0,
            },
        ],
        tasks: [(
            7,
            Task {
                tgid: 6,
                comm: "kworker u8:2".into(),
            },
        )]
        .into(),
    };
    let back = parse_records(&render(&r)).unwrap();
    let mut want = r.clone();
    want.records.sort_by_key(|x| x.ts);
    assert_eq!(back, want);
    let e = parse_records("since_ns 1\nnow_ns 2\ne 1 2 x 3\n").unwrap_err();
    assert!(e.ends_with(":3: kind is neither g nor m"), "{e}");
    assert!(parse_records("since_ns 5\nnow_ns 2\n").is_err());
}

#[test]
fn a_read_leaves_open_the_tasks_whose_last_record_is_an_entry() {
    let rec = |ts, tid, mark| Record {
        ts,
        tid,
        mark,
        memcg: false,
        reclaimed: 0,
    };
    let open = still_open(&[
        rec(1, 5, Mark::Begin),
        rec(2, 5, Mark::End),
        rec(3, 6, Mark::Open),
        rec(4, 7, Mark::End),
        rec(5, 7, Mark::Begin),
    ]);
    assert_eq!(open, vec![rec(3, 6, Mark::Open), rec(5, 7, Mark::Open)]);
}
