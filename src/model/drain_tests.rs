use super::*;
use crate::parse::DiskCounters;

fn counters(name: &str, major: u32, minor: u32, sectors_written: u64) -> DiskCounters {
    DiskCounters {
        major,
        minor,
        name: name.into(),
        sectors_written,
        ..DiskCounters::default()
    }
}

fn row(name: &str, wkb_s: Option<f64>) -> Seen<'_> {
    Seen {
        name,
        partition: false,
        wkb_s,
    }
}

fn snap(disks: Vec<DiskCounters>, bdi: Vec<(&str, BdiStat)>) -> Snapshot {
    Snapshot {
        page_size: 4096,
        disks: disks.into_iter().map(std::sync::Arc::new).collect(),
        bdi_stats: bdi.into_iter().map(|(n, s)| (n.to_owned(), s)).collect(),
        ..Snapshot::default()
    }
}

#[test]
fn kernel_figures_and_eta_from_bdi_stats() {
    // vdb: 2,093,056 kB dirty + 512 kB writeback (not yet being written back) at 31,240
    // kBps (spec §15.5): (2093056 + 512) / 31240 = 67.016 s.
    let s = snap(
        vec![counters("vda", 254, 0, 10), counters("vdb", 254, 16, 10)],
        vec![(
            "254:16",
            BdiStat {
                writeback_kb: 512,
                reclaimable_kb: 2_093_056,
                written_kb: Some(5_000),
                write_bandwidth_kbps: Some(31_240),
            },
        )],
    );
    let disks = vec![row("vda", Some(0.0)), row("vdb", Some(300.0))];
    let out = derive(&disks, &s, Some(1), Some(1));
    assert_eq!(out[0], Drain::default(), "no BDI stats for vda");
    let d = out[1];
    assert_eq!(d.dirty_bytes, Some(2_093_056 * 1024));
    assert_eq!(d.writeback_bytes, Some(512 * 1024));
    assert_eq!(
        (d.dirty_from, d.drain_from),
        (Some("kernel"), Some("kernel"))
    );
    assert_eq!(d.drain_bytes_per_s, Some(31_240.0 * 1024.0));
    let eta = d.drain_eta_s.unwrap();
    assert!((eta - 67.016).abs() < 0.01, "{eta}");
    assert_eq!(
        d.text().unwrap(),
        "2.0G to write, ~67 s at 30.5M/s (kernel)"
    );
}

/// vda (254:0) as in the 6.12 lab: 135,168 kB dirty and `writeback_kb` under writeback, the
/// kernel's BdiWriteBandwidth still 102,400 kBps (the root wb's starting guess, having
/// written before).
fn lab_vda(writeback_kb: u64) -> Snapshot {
    snap(
        vec![counters("vda", 254, 0, 10)],
        vec![(
            "254:0",
            BdiStat {
                writeback_kb,
                reclaimable_kb: 135_168,
                written_kb: Some(90_000),
                write_bandwidth_kbps: Some(102_400),
            },
        )],
    )
}

#[test]
fn while_writing_back_the_device_drains_at_its_measured_rate() {
    // dd in /box capped at 20 MB/s by io.max: 135,168 kB dirty + 4,096 kB in writeback at the
    // measured 20,480 kB/s = 6.8 s, not 1.36 s at the kernel's figure.
    let d = derive(&[row("vda", Some(20_480.0))], &lab_vda(4_096), None, None)[0];
    assert_eq!(
        (d.dirty_from, d.drain_from),
        (Some("kernel"), Some("measured"))
    );
    assert_eq!(d.kernel_write_bytes_per_s, Some(102_400.0 * 1024.0));
    assert_eq!(d.drain_eta_s, Some(6.8));
    // Under 1 MiB in writeback (nothing being written yet): the kernel's rate.
    let d = derive(&[row("vda", Some(20.0))], &lab_vda(512), None, None)[0];
    assert_eq!(d.drain_from, Some("kernel"));
}

#[test]
fn the_kernels_starting_guess_is_not_a_rate() {
    // A BDI that never wrote back shows INIT_BW, 102400 kBps: the measured rate is used.
    let s = snap(
        vec![counters("sdb", 8, 16, 0)],
        vec![(
            "8:16",
            BdiStat {
                writeback_kb: 0,
                reclaimable_kb: 1024,
                written_kb: Some(0),
                write_bandwidth_kbps: Some(102_400),
            },
        )],
    );
    let disks = vec![row("sdb", Some(512.0))];
    let out = derive(&disks, &s, None, None);
    let d = out[0];
    assert_eq!(d.kernel_write_bytes_per_s, None);
    assert_eq!(d.drain_from, Some("measured"));
    assert_eq!(d.drain_eta_s, Some(2.0), "1024 kB at 512 kB/s");
}

#[test]
fn apportioned_by_the_intervals_writes_else_since_boot() {
    // 3000 dirty + 1000 writeback pages of 4 KiB; vda wrote 300 kB/s, vdb 100: 3/4 and 1/4.
    let s = snap(
        vec![counters("vda", 254, 0, 100), counters("vdb", 254, 16, 900)],
        vec![],
    );
    let disks = vec![row("vda", Some(300.0)), row("vdb", Some(100.0))];
    let out = derive(&disks, &s, Some(3000), Some(1000));
    let a = out[0];
    assert_eq!(a.dirty_bytes, Some(2250 * 4096));
    assert_eq!(a.writeback_bytes, Some(750 * 4096));
    assert_eq!(a.dirty_from, Some("apportioned"));
    // 3000 pages × 4096 at 300 kB/s = 12288000 / 307200 = 40 s.
    assert_eq!(a.drain_eta_s, Some(40.0));
    assert_eq!(out[1].dirty_bytes, Some(750 * 4096));
    // No disk wrote in the interval: by the sectors written since boot, 1/10 and 9/10; no
    // rate, no ETA.
    let disks = vec![row("vda", Some(0.0)), row("vdb", None)];
    let out = derive(&disks, &s, Some(3000), Some(1000));
    assert_eq!(out[0].dirty_bytes, Some(300 * 4096));
    assert_eq!(out[1].writeback_bytes, Some(900 * 4096));
    assert_eq!(out[1].drain_eta_s, None);
    assert_eq!(
        out[1].text().unwrap(),
        "14.1M to write, not draining (apportioned)"
    );
    // A partition gets nothing (the BDI is its disk's).
    let disks = vec![Seen {
        partition: true,
        ..row("vda", Some(10.0))
    }];
    let out = derive(&disks, &s, Some(3000), Some(1000));
    assert_eq!(out[0], Drain::default());
}

#[test]
fn apportioned_says_why_when_the_sample_does() {
    // 40000 dirty pages (156 MiB), all vda's.
    let mut s = snap(vec![counters("vda", 254, 0, 100)], vec![]);
    let disks = vec![row("vda", Some(300.0))];
    // Listed (or an older recording): no reason, no note.
    let quiet = derive(&disks, &s, Some(40_000), Some(0));
    assert_eq!(quiet[0].dirty_from_why, None);
    assert_eq!(apportioned_note(&quiet), None);
    for (unread, word) in [
        (StatsUnread::Denied, "needs root"),
        (StatsUnread::Absent, "debugfs mounted"),
        (StatsUnread::Error, "readable debugfs"),
    ] {
        s.bdi_stats_unread = Some(unread);
        let out = derive(&disks, &s, Some(40_000), Some(0));
        assert_eq!(out[0].dirty_from, Some("apportioned"));
        let why = out[0].dirty_from_why.unwrap();
        assert!(why.contains(word) && why.contains("root"), "{why}");
        let note = apportioned_note(&out).unwrap();
        assert_eq!(note, format!("apportioned: {why}"));
        // The detail view's note fits its 32 columns; the Dirty pane's title takes the
        // short one where the long does not fit.
        let (long, short) = screen_note(&out).unwrap();
        assert!(long.starts_with("needs root") && long.len() <= 32, "{long}");
        assert!(
            long.contains(word.split(' ').next_back().unwrap()),
            "{long}"
        );
        assert!(short.starts_with("needs ") && short.len() <= 13, "{short}");
        // Under `SHOWN_FROM` the screens name no drain: no note either.
        let small = derive(&disks, &s, Some(100), Some(0));
        assert_eq!(
            (apportioned_note(&small), screen_note(&small)),
            (None, None)
        );
    }
    // The kernel's figures read: they are the kernel's, whatever the status says.
    let stat = BdiStat {
        reclaimable_kb: 160_000,
        ..BdiStat::default()
    };
    s.bdi_stats = vec![("254:0".to_owned(), stat)];
    let out = derive(&disks, &s, Some(40_000), Some(0));
    assert_eq!(
        (out[0].dirty_from, out[0].dirty_from_why),
        (Some("kernel"), None)
    );
}

#[test]
fn eta_words() {
    assert_eq!(eta_text(0.36), "0.4 s");
    assert_eq!(eta_text(92.4), "92 s");
    assert_eq!(eta_text(240.0), "4.0 min");
    assert_eq!(eta_text(4680.0), "78.0 min");
    assert_eq!(eta_text(7200.0), "2.0 h");
}
