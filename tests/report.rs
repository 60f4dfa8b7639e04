//! `pagewatch report` over recordings built from the captured trees: golden Markdown
//! (snapshots/report_*.snap), headline figures checked by hand, ranges and the report
//! directory's safety rules. Deterministic: every time comes from the samples.

#![allow(clippy::unwrap_used)]

mod common;

use pagewatch::event::EventKind;
use pagewatch::model::Options;
use pagewatch::report::{self, Range};

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn storm_markdown() {
    let rec = common::storm(common::storm_events());
    let md = report::render_markdown(&rec, Range::ALL, Options::default()).unwrap();
    snapshot("report_storm", &md);
}

#[test]
fn captured_fio_randwrite_markdown() {
    let ev = vec![common::event(
        1_500,
        EventKind::Marker {
            text: "fio running since 07:09:14".into(),
        },
    )];
    let rec = common::captured("live-fio-randwrite", ev);
    let md = report::render_markdown(&rec, Range::ALL, Options::default()).unwrap();
    snapshot("report_fio_randwrite", &md);
}

#[test]
#[allow(clippy::float_cmp, reason = "whole seconds and exact quotients")]
fn storm_headline_figures_by_hand() {
    let rec = common::storm(common::storm_events());
    let a = report::analyse(&rec, Range::ALL, Options::default()).unwrap();
    let s = &a.summary;
    assert_eq!(s.records, 23);
    // nr_dirty + nr_writeback > freerun (913 770 pages) in samples 7..=15; ≥ thresh
    // (1 218 856) in 11..=13; every record covers exactly 1 s.
    assert_eq!(s.throttled_s, 9.0);
    assert_eq!(a.throttled.len(), 1);
    let p = a.throttled[0];
    assert_eq!(
        (p.start_ms, p.end_ms),
        (common::START_MS + 6_000, common::START_MS + 15_000)
    );
    assert!(p.severe);
    // 1 230 000 / 1 218 856 = 100.914… %.
    assert!((p.peak - 100.914_28).abs() < 1e-3, "{}", p.peak);
    // Direct reclaim in samples 10..=13, peak 12 000 pages/s.
    assert_eq!(s.direct_reclaim_s, 4.0);
    assert_eq!(a.direct[0].peak, 12_000.0);
    // vda is virtio-blk: judged by its queue and await against its calm baseline, whatever
    // its rotational=1 says, not by %util. Sample k writes w = 400 + 4·UTIL[k] per second at
    // UTIL[k]/2 ms each, so aqu-sz = w·await/1000: 7.8 at k = 1, never under 1, so vda has
    // no calm sample and no baseline, and only a queue ≥ 32 deep is saturation. That is
    // k = 6 (780·47/1000 = 36.7) to k = 15 (768·46/1000 = 35.3); k = 16 reads 740·42/1000 =
    // 31.1. Saturation is held HOLD = 3 samples more (16, 17, 18): 13 records of 1 s.
    // (The median baseline of the window used to follow the climbing await: 1 s.)
    assert_eq!(s.saturated_s, vec![("vda".to_owned(), 13.0)]);
    // MemAvailable lowest at sample 14: 24 343 120 − 14 · 153 600 kB = 22 192 720 kB.
    let m = s.min_mem_available_mib.unwrap();
    assert_eq!(m.value, 22_192_720.0 / 1024.0);
    assert_eq!(m.time_ms, common::START_MS + 14_000);
    // w_await = UTIL/2 ms: 99/2 = 49 (integer ms per write), first at sample 8.
    let w = s.worst_await.as_ref().unwrap();
    assert_eq!(
        (w.disk.as_str(), w.column, w.at.value),
        ("vda", "w_await", 49.0)
    );
    assert_eq!(w.at.time_ms, common::START_MS + 8_000);
}

#[test]
fn ranges_select_records_and_events() {
    let rec = common::storm(common::storm_events());
    let r = Range::parse(Some("5"), Some("0:15"), rec.header.started_ms).unwrap();
    let a = report::analyse(&rec, r, Options::default()).unwrap();
    assert_eq!(a.models.len(), 11);
    assert_eq!(a.models[0].time_ms, common::START_MS + 5_000);
    // Only the marker at +9 s lies inside.
    assert_eq!(a.events.len(), 1);
    // Wall clock: 07:09:22 is the start; 07:09:40 is +18 s.
    let r = Range::parse(Some("@07:09:40"), None, rec.header.started_ms).unwrap();
    assert_eq!(
        report::analyse(&rec, r, Options::default())
            .unwrap()
            .models
            .len(),
        6
    );
    let r = Range::parse(Some("10:00"), None, rec.header.started_ms).unwrap();
    let e = report::analyse(&rec, r, Options::default()).unwrap_err();
    assert!(format!("{e}").contains("no records between"), "{e}");
}

#[test]
fn writes_report_directory_and_refuses_foreign_ones() {
    let rec = common::storm(common::storm_events());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let s = report::write(&rec, Range::ALL, Options::default(), &out).unwrap();
    let names: Vec<String> = s
        .files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "memory.svg",
            "dirty.svg",
            "reclaim.svg",
            "disk-vda.svg",
            "report.md"
        ]
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for n in &names[..4] {
        assert!(md.contains(&format!("]({n})")), "{n} not referenced");
    }
    let svg = std::fs::read_to_string(out.join("dirty.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
    for label in [
        "E1",
        "E5",
        "Dirty+Writeback",
        "freerun (throttle start)",
        "background",
    ] {
        assert!(
            svg.contains(&format!(">\n{label}\n</text>")),
            "{label} missing"
        );
    }
    // Again into the same directory: refused, the first report.md untouched.
    let before = std::fs::read(out.join("report.md")).unwrap();
    let e = report::write(&rec, Range::ALL, Options::default(), &out).unwrap_err();
    assert!(format!("{e}").contains("never overwrites"), "{e}");
    assert_eq!(std::fs::read(out.join("report.md")).unwrap(), before);
    // Into a directory of someone else's files: refused.
    let foreign = tmp.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let e = report::write(&rec, Range::ALL, Options::default(), &foreign).unwrap_err();
    assert!(format!("{e}").contains("refusing"), "{e}");
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "mine"
    );
    // An empty directory is fine.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    report::write(&rec, Range::ALL, Options::default(), &empty).unwrap();
}

#[test]
fn too_short_a_recording_is_a_clear_error() {
    let mut rec = common::captured("live-idle", Vec::new());
    rec.samples.truncate(1);
    let e = report::render_markdown(&rec, Range::ALL, Options::default()).unwrap_err();
    assert!(format!("{e}").contains("at least two"), "{e}");
}

/// Runs pagewatch with `args` and its stdout a pipe whose reader is already gone (as in
/// `pagewatch … | head` after head exits): it must not panic.
fn with_closed_stdout(args: &[&std::ffi::OsStr]) -> std::process::Output {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills two fresh descriptors; the read end is closed at once and the
    // write end is owned by the `Stdio` handed to the child.
    #[allow(unsafe_code)]
    let stdout = unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        libc::close(fds[0]);
        std::process::Stdio::from_raw_fd(fds[1])
    };
    std::process::Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args(args)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn report_and_play_lists_stop_quietly_on_a_closed_pipe() {
    let rec = common::storm(common::storm_events());
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("storm.pwrec");
    let mut w = pagewatch::record::Recorder::create(&file, &rec.header).unwrap();
    for s in &rec.samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    let out_dir = tmp.path().join("rep");
    let report = [
        "report".as_ref(),
        file.as_os_str(),
        "--out".as_ref(),
        out_dir.as_os_str(),
    ];
    for args in [
        &report[..],
        &["play".as_ref(), "--list".as_ref()][..],
        &["play".as_ref(), "cache-reread".as_ref(), "--show".as_ref()][..],
    ] {
        let o = with_closed_stdout(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(o.status.success(), "{args:?}: {:?} {err}", o.status);
    }
    assert!(out_dir.join("report.md").exists());
}
