use super::*;

#[test]
fn buckets_are_log2_microseconds() {
    assert_eq!(bucket(0), 0);
    assert_eq!(bucket(1), 1);
    assert_eq!((bucket(2), bucket(3), bucket(4), bucket(7)), (2, 2, 3, 3));
    assert_eq!(bucket(1000), 10, "1 ms is in [512, 1024)");
    assert_eq!(
        bucket(u64::MAX),
        BUCKETS - 1,
        "the last bucket is open-ended"
    );
    assert_eq!(bounds(10), (512.0, 1024.0));
    for us in [0u64, 1, 5, 100, 999, 1 << 20] {
        let (lo, hi) = bounds(bucket(us));
        assert!(lo <= us as f64 && (us as f64) < hi, "{us}");
    }
}

#[test]
fn quantiles_fall_in_the_true_bucket_and_within_2x() {
    // 1..=1000 µs, one of each: the true p50 is 500, p99 990, p90 900.
    let mut h = Hist::default();
    for us in 1..=1000 {
        h.add(us);
    }
    assert_eq!(h.total(), 1000);
    assert_eq!(h.max_us, 1000);
    for (q, truth) in [(0.5, 500.0), (0.9, 900.0), (0.99, 990.0)] {
        let est = h.quantile(q).unwrap();
        assert_eq!(bucket(est as u64), bucket(truth as u64), "q {q}: {est}");
        assert!(est / truth < 2.0 && truth / est < 2.0, "q {q}: {est}");
    }
    assert_eq!(h.quantile(1.0), Some(1000.0), "capped at the largest seen");
    assert_eq!(Hist::default().quantile(0.5), None);
    // All in one bucket at 100 µs: every quantile stays inside [64, 100].
    let mut one = Hist::default();
    for _ in 0..10 {
        one.add(100);
    }
    for q in [0.0, 0.5, 0.99] {
        let v = one.quantile(q).unwrap();
        assert!((64.0..=100.0).contains(&v), "{q}: {v}");
    }
}

#[test]
fn the_pseudo_file_round_trips_and_stays_small() {
    let mut d = DevLat {
        dev: 254 << 20,
        name: "vda".into(),
        events: 30_000,
        unpaired: 2,
        sample_every: 8,
        ..DevLat::default()
    };
    for us in [90, 120, 130, 250, 4000, 100_000] {
        d.read_dev.add(us);
        d.write_queue.add(us / 10);
    }
    let l = Latency {
        lost: 7,
        devices: vec![
            d,
            DevLat {
                dev: 7 << 20 | 3,
                name: "loop3".into(),
                queue_off: true,
                ..DevLat::default()
            },
        ],
    };
    let text = render(&l);
    assert!(text.contains("dev 254:0 vda\n"), "{text}");
    assert!(text.contains("dev 7:3 loop3\n"), "{text}");
    assert!(text.contains("\nsample 8\n"), "one in 8 timed: {text}");
    assert_eq!(
        text.matches("sample").count(),
        1,
        "left out when all are: {text}"
    );
    assert!(
        !text.contains("\nwd "),
        "an empty histogram is left out: {text}"
    );
    assert!(
        text.ends_with("dev 7:3 loop3\nevents 0\nunpaired 0\nqueue off\n"),
        "queue time not measured, said: {text}"
    );
    assert_eq!(text.matches("queue off").count(), 1, "{text}");
    assert!(text.len() < 300, "{} bytes: {text}", text.len());
    assert_eq!(parse(&text).unwrap(), l);
    assert_eq!(l.devices[0].maj_min(), "254:0");
    // A recording from before `--queue-time` always timed the queue.
    assert!(!parse("dev 8:0 sda\nevents 4\n").unwrap().devices[0].queue_off);
}

#[test]
fn bad_lines_are_named() {
    for bad in [
        "lost x\n",
        "dev 8\n",
        "dev 8:0 sda\nrd 5 9 99:1\n",
        "dev 8:0 sda\nrd 5\n",
        "dev 8:0 sda\nrd 5 9 3-1\n",
        "dev 9999:0 x\n",
    ] {
        let e = parse(bad).unwrap_err().to_string();
        assert!(e.contains(names::BLK_LATENCY), "{bad:?}: {e}");
    }
    // Unknown keys and lines before any device are skipped.
    assert_eq!(parse("zz 1\nevents 3\n").unwrap(), Latency::default());
}

#[test]
fn status_round_trips() {
    let s = BlkStatus {
        state: "armed".into(),
        why: Some("a\nb".into()),
        devices: vec!["vda".into(), "loop3".into(), "nosuch".into()],
        unresolved: vec!["nosuch".into()],
        buffer_kb: 1024,
        bytes: 123,
        reads: 10,
        ticks: 4,
    };
    let back = parse_status(&render_status(&s)).unwrap();
    assert_eq!(back.why.as_deref(), Some("a b"));
    assert_eq!(
        back,
        BlkStatus {
            why: Some("a b".into()),
            ..s
        }
    );
    assert!(parse_status("bytes 3\n").is_err());
    assert!(parse_status("state armed\nbytes x\n").is_err());
}

#[test]
fn huge_counts_from_a_damaged_recording_saturate() {
    let l = parse(&format!("dev 8:0 sda\nrd 5 9 3:{m} 4:{m}\n", m = u64::MAX)).unwrap();
    let h = l.devices[0].read_dev;
    assert_eq!(h.total(), u64::MAX);
    assert!(h.quantile(0.99).is_some());
}
