use super::*;

#[test]
fn partition_heuristic() {
    for w in [
        "sda", "vda", "nvme0n1", "loop0", "md0", "dm-0", "zram0", "mmcblk0", "sr0",
    ] {
        assert!(is_whole(w, None, &HashSet::new()), "{w}");
    }
    for p in ["sda1", "vdb2", "nvme0n1p1", "mmcblk0p2"] {
        assert!(!is_whole(p, None, &HashSet::new()), "{p}");
    }
}

fn of(n: &str) -> Vec<&str> {
    parents(n).collect()
}

#[test]
fn a_disk_newer_than_the_listing_is_whole_its_partitions_are_not() {
    // /sys/block was read before sdc, md1 and md10 came: they are whole disks; partitions
    // are known by the kernel's naming against the devices of this diskstats.
    let block = BlockDevices::from([("sda".to_owned(), QueueSettings::default().into())]);
    let all = HashSet::from([
        "sda",
        "sda1",
        "sdc",
        "sdc2",
        "md1",
        "md10",
        "md1p1",
        "cciss/c0d0",
        "cciss/c0d0p1",
    ]);
    for w in ["sda", "sdc", "md1", "md10", "cciss/c0d0"] {
        assert!(is_whole(w, Some(&block), &all), "{w}");
    }
    for p in ["sda1", "sdc2", "md1p1", "cciss/c0d0p1"] {
        assert!(!is_whole(p, Some(&block), &all), "{p}");
    }
    // nvme0n12 is no partition of nvme0n1 (that would be nvme0n1p2), md10 none of md1.
    assert_eq!(
        (of("nvme0n1p2"), of("nvme0n12")),
        (vec!["nvme0n1p", "nvme0n1"], vec!["nvme0n"])
    );
    assert_eq!(
        (of("sda"), of("sda12"), of("md10")),
        (vec![], vec!["sda"], vec!["md"])
    );
    assert_eq!(of("ab1p3"), ["ab1p", "ab1"]);
}

fn named(name: &str, reads: u64) -> DiskCounters {
    DiskCounters {
        name: name.into(),
        reads,
        ..DiskCounters::default()
    }
}

fn snap(disks: &[DiskCounters], skipped: &[(usize, Option<&str>)]) -> Snapshot {
    Snapshot {
        disks: disks.iter().cloned().map(std::sync::Arc::new).collect(),
        disks_skipped: skipped
            .iter()
            .map(|&(line, name)| Skipped {
                line,
                name: name.map(str::to_owned),
                error: format!("proc/diskstats:{line}: skipped"),
            })
            .collect(),
        ..Snapshot::default()
    }
}

#[test]
fn new_devices_count_from_zero_unless_their_line_was_skipped() {
    let cur = snap(
        &[named("sda", 100), named("sdb", 40), named("sdc", 10)],
        &[],
    );
    // sdb new: 40 reads in 2 s. sdc's line was skipped last time: no figure.
    let prev = snap(&[named("sda", 50)], &[(2, Some("sdc"))]);
    let d = derive(Some(&prev), &cur, Some(2.0), false);
    let r: Vec<_> = d.iter().map(|d| d.cols.r_s).collect();
    assert_eq!(r, [Some(25.0), Some(20.0), None]);
    // A skipped line without a name could have been any of them: only the known stand.
    let prev = snap(&[named("sda", 50)], &[(2, None)]);
    let d = derive(Some(&prev), &cur, Some(2.0), false);
    let r: Vec<_> = d.iter().map(|d| d.cols.r_s).collect();
    assert_eq!(r, [Some(25.0), None, None]);
    // Another device number under the same name: created since, counted from 0.
    let mut other = named("sda", 30);
    other.minor = 16;
    let d = derive(Some(&prev), &snap(&[other], &[]), Some(2.0), false);
    assert_eq!(d[0].cols.r_s, Some(15.0));
    // First tick: nothing.
    assert!(
        derive(None, &cur, None, false)
            .iter()
            .all(|d| d.cols == Columns::default())
    );
}

#[test]
fn a_carried_line_takes_its_own_interval() {
    const S: u64 = 1_000_000_000;
    // sdb's line in prev was carried from a read 3 s before prev (`source::disk_lines`):
    // its 80 new reads span 1 + 3 s. sda, read with each sample, spans the tick.
    let mut prev = snap(&[named("sda", 10), named("sdb", 20)], &[]);
    prev.mono_ns = 10 * S;
    prev.disks_carried = vec![("sdb".into(), 7 * S)].into();
    let mut cur = snap(&[named("sda", 20), named("sdb", 100)], &[]);
    cur.mono_ns = 11 * S;
    let d = derive(Some(&prev), &cur, Some(1.0), false);
    let r: Vec<_> = d.iter().map(|d| d.cols.r_s).collect();
    assert_eq!(r, [Some(10.0), Some(20.0)]);
    assert_eq!((d[0].span_s, d[1].span_s), (None, Some(4.0)));
    // Carried in both from the same read: unchanged, no I/O over the tick.
    let mut cur = snap(&[named("sda", 20), named("sdb", 20)], &[]);
    cur.mono_ns = 11 * S;
    cur.disks_carried = vec![("sdb".into(), 7 * S)].into();
    let d = derive(Some(&prev), &cur, Some(1.0), false);
    assert_eq!(d[1].cols.r_s, Some(0.0));
    assert_eq!(
        crate::parse::diskstats::carried("sdb\t7\nbad\nsdc\tx\n"),
        [("sdb".to_owned(), 7)]
    );
}

#[test]
fn skipped_lines_make_one_note() {
    let s = snap(&[], &[(3, Some("sdt")), (9, None)]);
    assert_eq!(skipped_note(&[]), None);
    assert_eq!(
        skipped_note(&s.disks_skipped[..1]).as_deref(),
        Some("proc/diskstats:3: skipped")
    );
    assert_eq!(
        skipped_note(&s.disks_skipped).as_deref(),
        Some("proc/diskstats:3: skipped (and 1 more lines skipped)")
    );
}

fn dev(reads: u64, read_ms: u64, ticks: u64) -> DiskCounters {
    DiskCounters {
        name: "sda".into(),
        reads,
        sectors_read: reads * 16,
        read_ms,
        io_ticks_ms: ticks,
        weighted_ms: read_ms,
        ..DiskCounters::default()
    }
}

#[test]
fn hand_computed_columns() {
    // 200 reads of 8 KiB in 0.5 s, 600 ms of latency, device busy 250 ms.
    let c = columns(&dev(1000, 4000, 10_000), &dev(1200, 4600, 10_250), 0.5).unwrap();
    assert_eq!(c.r_s, Some(400.0));
    assert_eq!(c.rkB_s, Some(3200.0));
    assert_eq!(c.r_await, Some(3.0));
    assert_eq!(c.rareq_sz, Some(8.0));
    assert_eq!(c.aqu_sz, Some(1.2));
    assert_eq!(c.util_pct, Some(50.0));
    assert_eq!(c.w_await, Some(0.0));
    assert_eq!(c.d_s, None);
}

#[test]
fn impossible_util_is_no_figure() {
    // io_ticks 1,000 s ahead in one second: 100,000 %, a garbled counter.
    let c = columns(&dev(1000, 4000, 0), &dev(1001, 4001, 1_000_000), 1.0).unwrap();
    assert_eq!(c.util_pct, None);
    assert_eq!(c.r_s, Some(1.0), "the other columns stand");
    let c = columns(&dev(1000, 4000, 0), &dev(1001, 4001, 1_003), 1.0).unwrap();
    assert!(
        (c.util_pct.unwrap() - 100.3).abs() < 1e-9,
        "skew: as iostat"
    );
}

#[test]
fn wrapped_u32_fields_are_taken_modulo_and_reinserted_devices_count_from_zero() {
    // io_ticks and read_ms are u32 in the kernel: across a wrap the difference is still
    // right (16 ms busy, 5 ms for the one read).
    let max = u64::from(u32::MAX);
    let c = columns(&dev(1000, max - 2, max - 10), &dev(1001, 2, 5), 1.0).unwrap();
    assert_eq!(c.util_pct, Some(1.6));
    assert_eq!(c.r_await, Some(5.0));
    // A re-inserted device (every count went backwards, iostat's rule): counted from 0,
    // 3 reads of 1 ms in 1 s, 20 ms busy.
    let c = columns(&dev(1000, 4000, 10), &dev(3, 1, 20), 1.0).unwrap();
    assert_eq!(
        (c.r_s, c.r_await, c.util_pct),
        (Some(3.0), Some(1.0 / 3.0), Some(2.0))
    );
    // The I/O count went back but sectors written went on: not a re-insertion (a wrapped
    // 32-bit count), no figures.
    let (mut p, mut c) = (dev(1000, 4000, 10), dev(3, 1, 20));
    (p.sectors_written, c.sectors_written) = (500, 600);
    assert!(!reinserted(&p, &c));
    assert!(columns(&p, &c, 1.0).is_none());
    // Only the writes went backwards: the reads stand.
    let mut p = dev(1000, 4000, 10);
    p.writes = 50;
    let c = columns(&p, &dev(1100, 4100, 20), 1.0).unwrap();
    assert_eq!((c.r_s, c.r_await), (Some(100.0), Some(1.0)));
    assert_eq!((c.w_s, c.w_await, c.wkB_s), (None, None, None));
}
