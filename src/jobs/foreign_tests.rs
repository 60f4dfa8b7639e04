//! Tests for `foreign.rs`: grouping, pairing rates and a scan of a hand-made /proc tree.

use super::*;

fn proc_(pid: u32, parent: u32, rchar: Option<u64>) -> FioProc {
    FioProc {
        pid,
        ppid: parent,
        state: 'S',
        reaped_marks: 0,
        io: rchar.map(|r| IoCounters {
            rchar: r,
            ..IoCounters::default()
        }),
        files: Vec::new(),
    }
}

#[test]
fn workers_group_under_their_main_process() {
    let procs = vec![
        proc_(12, 10, None),
        proc_(10, 1, None),
        proc_(11, 10, None),
        proc_(20, 99, None),
    ];
    let cmd = BTreeMap::from([(10, vec!["fio".to_owned(), "a.fio".to_owned()])]);
    let runs = group(procs.clone(), cmd, &BTreeSet::new());
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].pid, 10);
    assert_eq!(runs[0].cmdline, vec!["fio", "a.fio"]);
    let pids: Vec<u32> = runs[0].procs.iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![10, 11, 12]);
    assert_eq!((runs[1].pid, runs[1].ppid), (20, 99));
    assert!(runs[1].cmdline.is_empty());
    // Excluding by the main pid or by its parent (pagewatch's guard) drops the whole run.
    let by_main = group(procs.clone(), BTreeMap::new(), &BTreeSet::from([10]));
    assert_eq!(by_main.iter().map(|r| r.pid).collect::<Vec<_>>(), vec![20]);
    let by_parent = group(procs, BTreeMap::new(), &BTreeSet::from([99]));
    assert_eq!(
        by_parent.iter().map(|r| r.pid).collect::<Vec<_>>(),
        vec![10]
    );
}

#[test]
fn pairing_gives_rates_over_the_given_time_and_forgets_the_gone() {
    let mut p = FioPairing::default();
    let run = |w: Option<u64>| ForeignFio {
        pid: 10,
        ppid: 1,
        cmdline: Vec::new(),
        procs: vec![proc_(10, 1, Some(0)), proc_(11, 10, w)],
        cwd: None,
    };
    let first = p.update(&[run(Some(1_000))], 1_000_000_000);
    assert_eq!(first[0].total, None);
    let second = p.update(&[run(Some(501_000))], 1_500_000_000);
    let r = second[0].procs[1].rates.unwrap();
    assert!((r.rchar_s - 1_000_000.0).abs() < 1e-6, "{r:?}");
    assert!((second[0].total.unwrap().rchar_s - 1_000_000.0).abs() < 1e-6);
    // io unreadable this time: no rate, and it starts over afterwards.
    let third = p.update(&[run(None)], 2_000_000_000);
    assert_eq!(third[0].procs[1].rates, None);
    let fourth = p.update(&[run(Some(600_000))], 3_000_000_000);
    assert_eq!(fourth[0].procs[1].rates, None);
    // Counter went back (pid reused): no rate rather than a wrong one.
    let fifth = p.update(&[run(Some(5))], 4_000_000_000);
    assert_eq!(fifth[0].procs[1].rates, None);
    // Same time twice: no rate.
    assert_eq!(
        p.update(&[run(Some(5))], 4_000_000_000)[0].procs[1].rates,
        None
    );
}

#[test]
fn a_main_process_that_reaped_its_workers_has_no_rate_that_scan() {
    // fio's workers wrote 1 GB/s each; at the end of the run the main process reaps them and
    // the kernel adds their io totals to its counters: a jump that is not its own IO.
    let mut p = FioPairing::default();
    let with = |main_rchar: u64, marks: u64, worker: Option<u64>| {
        let mut main = proc_(10, 1, Some(main_rchar));
        main.reaped_marks = marks;
        let mut procs = vec![main];
        procs.extend(worker.map(|w| proc_(11, 10, Some(w))));
        ForeignFio {
            pid: 10,
            ppid: 1,
            cmdline: Vec::new(),
            procs,
            cwd: None,
        }
    };
    p.update(&[with(1_000, 3, Some(0))], 1_000_000_000);
    let running = p.update(&[with(2_000, 3, Some(1_000_000_000))], 2_000_000_000);
    let total = running[0].total.unwrap();
    assert!((total.rchar_s - 1_000_001_000.0).abs() < 1e-3, "{total:?}");
    assert!(!running[0].procs[0].reaped);
    // The worker is gone; the main process's counters jumped by its 5 GB and its marks moved.
    let reaped = p.update(&[with(5_000_003_000, 650, None)], 3_000_000_000);
    assert!(reaped[0].procs[0].reaped);
    assert_eq!((reaped[0].procs[0].rates, reaped[0].total), (None, None));
    // From the next scan on, its own rate again.
    let after = p.update(&[with(5_000_004_000, 650, None)], 4_000_000_000);
    assert!((after[0].total.unwrap().rchar_s - 1_000.0).abs() < 1e-6);
    assert!(!after[0].procs[0].reaped);
}

#[test]
fn scan_reads_a_hand_made_proc_tree() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::write(&data, b"x").unwrap();
    let mk = |pid: u32, comm: &str, ppid: u32, cmdline: &[u8]| {
        let d = root.path().join(pid.to_string());
        std::fs::create_dir_all(d.join("fd")).unwrap();
        std::fs::write(
            d.join("stat"),
            // The main process (30) has reaped children: cminflt 635, cutime 15.
            format!("{pid} ({comm}) R {ppid} 1 1 0 -1 0 0 {} 0 0 0 0 {} 0 20 0 1 0 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
                if pid == 30 { 635 } else { 0 }, if pid == 30 { 15 } else { 0 }),
        )
        .unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        std::fs::write(d.join("cmdline"), cmdline).unwrap();
        std::fs::write(
            d.join("io"),
            "rchar: 100\nwchar: 2\nsyscr: 1\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n",
        )
        .unwrap();
        d
    };
    mk(30, "fio", 1, b"fio\0--name=t\0");
    let w = mk(31, "fio", 30, b"fio\0--name=t\0");
    std::os::unix::fs::symlink(&data, w.join("fd/3")).unwrap();
    std::os::unix::fs::symlink(&data, w.join("fd/1")).unwrap();
    std::os::unix::fs::symlink(root.path(), w.join("fd/4")).unwrap();
    mk(40, "bash", 1, b"bash\0");
    // Only comm decides: a look-alike name is not fio, and a fio whose stat vanished
    // between the two reads is skipped.
    mk(41, "fio-3.33", 1, b"fio-3.33\0");
    let gone = mk(42, "fio", 1, b"fio\0");
    std::fs::remove_file(gone.join("stat")).unwrap();
    std::fs::create_dir(root.path().join("self")).unwrap();

    let runs = scan(root.path(), &BTreeSet::new());
    assert_eq!(runs.len(), 1, "{runs:?}");
    let r = &runs[0];
    assert_eq!((r.pid, r.procs.len()), (30, 2));
    assert_eq!(r.cmdline, vec!["fio", "--name=t"]);
    assert_eq!(r.procs[1].io.unwrap().read_bytes, 4096);
    assert_eq!(r.procs[1].state, 'R');
    assert_eq!((r.procs[0].reaped_marks, r.procs[1].reaped_marks), (650, 0));
    // fd 1 (below 3) and the directory on fd 4 are not targets.
    let files = r.files();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, data);
    assert_eq!(files[0].via, w.join("fd/3"));
    assert!(scan(&root.path().join("missing"), &BTreeSet::new()).is_empty());
    // From a walk's fio pids: the same run, without reading any comm (the comm files are
    // gone); a pid reused by another program (40 is bash) or gone (99) is skipped.
    for pid in [30, 31, 40, 41] {
        std::fs::remove_file(root.path().join(pid.to_string()).join("comm")).unwrap();
    }
    assert!(
        scan(root.path(), &BTreeSet::new()).is_empty(),
        "comm decides"
    );
    assert_eq!(
        scan_pids(root.path(), [30, 31, 40, 99], &BTreeSet::new()),
        runs
    );
}
