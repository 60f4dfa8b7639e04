use super::*;

/// A stat line in the 6.x 52-field layout with the fields a walk uses set.
pub fn stat_line(
    pid: u32,
    comm: &str,
    state: char,
    threads: u64,
    start: u64,
    blkio: u64,
) -> String {
    let mut f: Vec<String> = (3..=52).map(|_| "0".to_owned()).collect();
    f[0] = state.to_string();
    f[4 - 3] = "1".into();
    f[20 - 3] = threads.to_string();
    f[22 - 3] = start.to_string();
    f[42 - 3] = blkio.to_string();
    format!("{pid} ({comm}) {}", f.join(" "))
}

const IO: &str = "rchar: 1540000000\nwchar: 200\nsyscr: 10\nsyscw: 2\nread_bytes: 8192\n\
                  write_bytes: 4096\ncancelled_write_bytes: 0\n";

#[test]
fn stat_fields_come_after_the_last_paren() {
    let s = parse_stat(&stat_line(7, "a) b) (c", 'D', 3, 12345, 77)).unwrap();
    assert_eq!(
        s,
        StatLine {
            pid: 7,
            comm: "a) b) (c".into(),
            state: 'D',
            ppid: 1,
            majflt: 0,
            cpu_ticks: 0,
            num_threads: 3,
            rss_pages: 0,
            starttime: 12345,
            blkio_ticks: Some(77),
            reaped_marks: 0,
        }
    );
    // A real line from this VM (pid 1, 6.18): 52 fields, 13 threads.
    let real = "1 (process_api) S 0 0 0 0 -1 4194560 48443 13019016 0 1497 71 318 40957 6767 20 0 \
                13 0 25 43892736 3332 18446744073709551615 1 1 0 0 0 0 0 4096 1256 0 0 0 17 1 0 0 \
                0 0 0 0 0 0 0 0 0 0 0 0 0\n";
    let s = parse_stat(real).unwrap();
    assert_eq!(
        (s.majflt, s.cpu_ticks),
        (0, 71 + 318),
        "fields 12, 14 and 15"
    );
    assert_eq!(
        s.reaped_marks,
        13_019_016 + 1497 + 40957 + 6767,
        "fields 11, 13, 16 and 17: what reaped children add"
    );
    assert_eq!(
        (s.state, s.starttime, s.blkio_ticks, s.num_threads),
        ('S', 25, Some(0), 13)
    );
    // An older kernel whose line stops before field 42.
    let short: String = real.split(' ').take(41).collect::<Vec<_>>().join(" ");
    assert_eq!(parse_stat(&short).unwrap().blkio_ticks, None);
    for bad in [
        "",
        "garbage",
        "1 (x) SS 1",
        "x (y) S 1",
        "1 (y) S",
        "1 (y) S -1 1",
    ] {
        assert!(parse_stat(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn io_needs_its_four_counters() {
    let io = parse_io(IO).unwrap();
    assert_eq!(
        io,
        IoCounters {
            rchar: 1_540_000_000,
            wchar: 200,
            read_bytes: 8192,
            write_bytes: 4096
        }
    );
    assert!(parse_io("rchar: 1\n").unwrap_err().contains("no wchar"));
    assert!(parse_io("rchar: x\n").unwrap_err().contains("not a number"));
    assert!(parse_io("what: 1\n").is_err());
}

fn walk_text() -> String {
    format!(
        "walk 4000000000\nprev 2000000000\nclk_tck 100\ntask_delayacct 1\nscope -\n\
         P 42 500\nstat {}\n{IO}wchan balance_dirty_pages\ncgroup /user.slice/a b\n\
         p 42 500\nstat {}\n{IO}\
         P 43 600\nstat {}\nio denied\nwchan 0\nblkio_tasks 9\n",
        stat_line(42, "dd", 'D', 1, 500, 30),
        stat_line(42, "dd", 'R', 1, 500, 10),
        stat_line(43, "other (x)", 'S', 4, 600, 0),
    )
}

#[test]
fn a_walk_parses_into_records() {
    let w = parse(&walk_text()).unwrap();
    assert_eq!(w.mono_ns, 4_000_000_000);
    assert_eq!(w.prev_mono_ns, Some(2_000_000_000));
    assert_eq!(
        (w.clk_tck, w.task_delayacct, w.scope.as_deref()),
        (100, Some(true), None)
    );
    assert_eq!(w.records.len(), 3);
    let r = &w.records[0];
    assert_eq!((r.pid, r.starttime, r.carried), (42, 500, false));
    assert_eq!(r.wchan.as_deref(), Some("balance_dirty_pages"));
    assert_eq!(r.cgroup.as_deref(), Some("/user.slice/a b"));
    assert!(matches!(r.io, ProcIo::Counters(c) if c.write_bytes == 4096));
    assert!(w.records[1].carried);
    assert_eq!(w.records[1].stat.blkio_ticks, Some(10));
    let o = &w.records[2];
    assert_eq!((o.io, o.blkio_tasks), (ProcIo::Denied, Some(9)));
    assert_eq!(
        o.wchan, None,
        "the kernel's 0 (running, or no symbol) is no function"
    );
    assert_eq!(o.stat.comm, "other (x)");
    assert!(w.fio.is_empty(), "no fio line: no fio process");
    let with_fio = walk_text().replace("scope -\n", "scope -\nfio 7 8\n");
    assert_eq!(parse(&with_fio).unwrap().fio, [7, 8]);
    let bad = walk_text().replace("scope -\n", "scope -\nfio 7 x\n");
    assert!(
        parse(&bad)
            .unwrap_err()
            .to_string()
            .starts_with("proc/pids:6:")
    );
}

#[test]
fn bad_walks_name_the_line() {
    let text = walk_text();
    let cases = [
        (text.replace("P 43 600", "P 43"), "proc/pids:26:"),
        (
            text.replace("rchar: 1540000000\nwchar", "rchar: x\nwchar"),
            "proc/pids:8:",
        ),
        (text.replace("io denied", "io maybe"), "proc/pids:28:"),
        (text.replace("clk_tck 100", "clk_tck many"), "proc/pids:3:"),
        (text.replace("P 43 600", "P 43 601"), "proc/pids:26:"),
        (text.replace("io denied\n", ""), "proc/pids:26:"),
        (text.replace("walk 4000000000\n", ""), "proc/pids:0:"),
        (format!("{text}bogus line\n"), "proc/pids:31:"),
    ];
    for (t, want) in cases {
        let e = parse(&t).unwrap_err().to_string();
        assert!(e.starts_with(want), "{want}: {e}");
    }
}
