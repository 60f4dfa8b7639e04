use super::*;
use crate::parse::trace_raw::{parse_header_page, walk_page};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trace/below");

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{DIR}/{name}")).unwrap()
}

fn layouts() -> Layouts {
    let f: Vec<(String, String)> = [
        ("wbt/wbt_step", "wbt_step"),
        ("wbt/wbt_stat", "wbt_stat"),
        ("wbt/wbt_lat", "wbt_lat"),
        ("vmscan/mm_vmscan_throttled", "mm_vmscan_throttled"),
        ("vmscan/mm_vmscan_write_folio", "mm_vmscan_write_folio"),
    ]
    .iter()
    .map(|(d, f)| ((*d).to_owned(), read(&format!("{f}.format"))))
    .collect();
    let pairs: Vec<(&str, &str)> = f.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    Layouts::new(&pairs).unwrap()
}

/// A record of the event `fmt` with the given integer fields set (the common header's type
/// from the format's ID), in the host's byte order.
fn record(fmt_name: &str, name: Option<&str>, set: &[(&str, i64)]) -> Vec<u8> {
    let fmt = parse_format(&read(&format!("{fmt_name}.format"))).unwrap();
    let len = fmt.fields.iter().map(|f| f.offset + f.size).max().unwrap() as usize;
    let mut rec = vec![0u8; len];
    rec[..2].copy_from_slice(&u16::try_from(fmt.id.unwrap()).unwrap().to_ne_bytes());
    if let Some(n) = name {
        let f = fmt.fields.iter().find(|f| f.name == "name").unwrap();
        let at = f.offset as usize;
        rec[at..at + n.len()].copy_from_slice(n.as_bytes());
    }
    for (k, v) in set {
        let f = fmt.fields.iter().find(|f| f.name == *k).unwrap();
        let at = f.offset as usize;
        let b = v.to_ne_bytes();
        rec[at..at + f.size as usize].copy_from_slice(&b[..f.size as usize]);
    }
    rec
}

#[test]
fn captured_pages_of_a_flood_on_a_loop_device_and_vda() {
    // Captured on 6.18 (`tests/fixtures/trace/below`): a buffered fio flood on an ext4 loop
    // device beside a direct random reader, with wbt_step, wbt_stat and wbt_lat enabled;
    // `trace` showed e.g. `wbt_step: 254:0: scale up: step=-4, window=100000us,
    // background=48, normal=96, max=192` and `wbt_stat: 7:100: rmean=8783, … rsamples=5781`.
    let page = parse_header_page(&read("header_page")).unwrap();
    let mut r = Reducer::new(layouts());
    for cpu in 0..2 {
        let bytes = std::fs::read(format!("{DIR}/wbt-cpu{cpu}.page")).unwrap();
        let mut lost = 0;
        walk_page(&bytes, &page, cpu, &mut lost, |_, rec| {
            r.record(rec);
            Ok(())
        })
        .unwrap();
        r.lost(lost);
    }
    assert_eq!(r.other, 0);
    let e = r.take();
    let devs: Vec<&str> = e.wbt.iter().map(|w| w.dev.as_str()).collect();
    assert_eq!(devs, ["254:0", "7:100"]);
    let vda = &e.wbt[0];
    assert!(vda.steps >= 3 && vda.stat >= 3, "{vda:?}");
    // Every step of that run was between -1 and -4, the depths 2^-step times the default's.
    let s = vda.step.unwrap();
    assert!((-4..=-1).contains(&s), "{vda:?}");
    assert_eq!(vda.window_us, 100_000);
    assert!(vda.bg < vda.normal && vda.normal < vda.max, "{vda:?}");
    let lo = &e.wbt[1];
    assert!(lo.rsamples > 0 && lo.rmax_ns >= 20_770_776, "{lo:?}");
    // The first step of a device is not counted as either direction.
    for w in &e.wbt {
        assert!(w.steps == 0 || w.down + w.up < w.steps, "{w:?}");
    }
    // The text reads back.
    assert_eq!(
        super::super::below::parse_events(&super::super::below::render(&e)).unwrap(),
        e
    );
}

#[test]
fn steps_count_directions_and_the_depths_stay_across_intervals() {
    let mut r = Reducer::new(layouts());
    let step = |s: i64, bg: i64| {
        record(
            "wbt_step",
            Some("8:0"),
            &[
                ("step", s),
                ("window", 50_000),
                ("bg", bg),
                ("normal", 2 * bg),
                ("max", 4 * bg),
            ],
        )
    };
    for (s, bg) in [(1, 8), (2, 4), (3, 2), (2, 4)] {
        r.record(&step(s, bg));
    }
    r.record(&record("wbt_lat", Some("8:0"), &[("lat", 91_000)]));
    r.record(&record("wbt_lat", Some("8:0"), &[("lat", 80_000)]));
    r.record(&record(
        "wbt_stat",
        Some("8:0"),
        &[
            ("rmean", 90_000_000),
            ("rmax", 120_000_000),
            ("rnr_samples", 3),
            ("wmean", 5),
            ("wnr_samples", 7),
        ],
    ));
    let e = r.take();
    let w = &e.wbt[0];
    assert_eq!((w.steps, w.down, w.up, w.step), (4, 2, 1, Some(2)));
    assert_eq!((w.bg, w.normal, w.max, w.window_us), (4, 8, 16, 50_000));
    assert_eq!((w.lat, w.lat_max_us), (2, 91_000));
    assert_eq!(
        (w.stat, w.rmean_ns, w.rmax_ns, w.rsamples, w.wsamples),
        (1, 90_000_000, 120_000_000, 3, 7)
    );
    let next = r.take();
    let w = &next.wbt[0];
    assert_eq!(
        (w.steps, w.lat, w.stat, w.step, w.bg),
        (0, 0, 0, Some(2), 4)
    );
}

#[test]
fn reclaim_sleeps_by_reason_and_pages_written_by_reclaim() {
    let mut r = Reducer::new(layouts());
    let thr = |us: i64, bit: i64| {
        record(
            "mm_vmscan_throttled",
            None,
            &[
                ("usec_delayed", us),
                ("reason", 1 << bit),
                ("usec_timeout", 100_000),
            ],
        )
    };
    r.record(&thr(100_000, 0));
    r.record(&thr(20_000, 0));
    r.record(&thr(1_000, 2));
    for flags in [2, 2 | 8, 1 | 4] {
        r.record(&record(
            "mm_vmscan_write_folio",
            None,
            &[("reclaim_flags", flags)],
        ));
    }
    r.record(&[0xff, 0xff, 0, 0]);
    r.record(&[1]);
    r.lost(3);
    let e = r.take();
    assert_eq!(e.throttled.len(), 2);
    let (wb, np) = (&e.throttled[0], &e.throttled[1]);
    assert_eq!(
        (wb.reason.as_str(), wb.count, wb.delayed_us, wb.max_us),
        ("writeback", 2, 120_000, 100_000)
    );
    assert_eq!((np.reason.as_str(), np.count), ("noprogress", 1));
    assert_eq!((e.written.file, e.written.anon), (2, 1));
    assert_eq!((e.lost, r.other), (3, 2));
    let e = r.take();
    assert!(e.throttled.is_empty() && e.lost == 0 && e.written.file == 0);
}

#[test]
fn a_format_without_a_needed_field_is_refused() {
    let f =
        read("wbt_lat.format").replace("field:unsigned long lat;", "field:unsigned long latency;");
    let e = Layouts::new(&[("wbt/wbt_lat", &f)]).unwrap_err();
    assert!(e.contains("no integer lat"), "{e}");
    assert!(Layouts::new(&[("wbt/other", &read("wbt_lat.format"))]).is_err());
}

#[test]
fn a_damaged_name_stays_one_word() {
    let mut r = Reducer::new(layouts());
    r.record(&record("wbt_lat", Some("25 :\u{7}0"), &[("lat", 1)]));
    r.record(&record("wbt_lat", None, &[("lat", 2)]));
    let e = r.take();
    let devs: Vec<&str> = e.wbt.iter().map(|w| w.dev.as_str()).collect();
    assert_eq!(devs, ["25?:?0", "?"]);
    assert_eq!(
        super::super::below::parse_events(&super::super::below::render(&e)).unwrap(),
        e
    );
}
