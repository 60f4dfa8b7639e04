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
    // The worst latency under load is weighted by IOs over the loaded period: vda's queue is
    // at least 7.8 deep in every record, so records 1..=23 are one period of 23 s. w_await =
    // UTIL/2 ms (integer ms per write) at w = 400 + 4·UTIL writes/s: Σ w·await = 557 924 and
    // Σ w = 15 404 over the 23 records, 36.22 ms at 669.7 writes/s (the worst single record,
    // 49 ms at sample 8, is one second of the 23).
    let w = s.worst_await.as_ref().unwrap();
    assert_eq!(
        (w.disk.as_str(), w.column, w.at.value),
        ("vda", "w_await", 557_924.0 / 15_404.0)
    );
    assert_eq!((w.seconds, w.ops_per_s), (23.0, 15_404.0 / 23.0));
    assert_eq!(
        (w.at.time_ms, w.end_ms),
        (common::START_MS, common::START_MS + 23_000)
    );
    // The verdict line says the same: the global domain throttled all 9 s (no memcg of the
    // tree went past freerun), no tracepoint (no pause figure), and vda's evidence at its
    // deepest queue, k = 8 (the first of k = 8..=13 at UTIL 99): 796 writes/s × 49 ms =
    // 39.0 deep, await 49 ms, no calm baseline (above).
    assert_eq!(s.throttled_by_domain, vec![("global".to_owned(), 9.0)]);
    assert_eq!(s.paused_s, None);
    let why = "queue 39 deep (≥ 32), await 49.00 ms (≥ 1 ms), no calm baseline yet";
    assert_eq!(a.disks[0].worst_why.as_deref(), Some(why));
    assert_eq!(
        s.verdict,
        format!(
            "Verdict: writers throttled 9.0 s (global); vda saturated 13.0 s ({why}); vda not \
             judged 10.0 s (cannot judge yet: no calm baseline; queue 29, w_await 40.00 ms); \
             direct reclaim 4.0 s"
        )
    );
    let md = report::markdown_of(&rec, &a);
    let summary = &md[md.find("## Summary\n\n").unwrap() + 12..];
    assert!(
        summary.starts_with(&format!("**{}.**\n", s.verdict)),
        "{summary}"
    );
}

/// Checks that `svg` is well-formed XML as far as a chart needs: every element closed in
/// order, one root, and every `&` an entity.
fn assert_well_formed(name: &str, svg: &str) {
    let mut stack: Vec<&str> = Vec::new();
    let mut roots = 0;
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let text = &rest[..i];
        for (j, _) in text.match_indices('&') {
            let t = &text[j..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#"]
                    .iter()
                    .any(|e| t.starts_with(e)),
                "{name}: bare & in {text:?}"
            );
        }
        let end = rest[i..]
            .find('>')
            .unwrap_or_else(|| panic!("{name}: unclosed tag"));
        let tag = &rest[i + 1..i + end];
        rest = &rest[i + end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(close) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), tag_name(close), "{name}: </{close}>");
        } else if !tag.ends_with('/') {
            if stack.is_empty() {
                roots += 1;
            }
            stack.push(tag_name(tag).unwrap());
        } else if stack.is_empty() {
            roots += 1;
        }
    }
    assert!(stack.is_empty(), "{name}: unclosed {stack:?}");
    assert_eq!(roots, 1, "{name}");
}

fn tag_name(t: &str) -> Option<&str> {
    t.split(|c: char| c.is_whitespace() || c == '/').next()
}

/// The `(x, width)` of every rectangle of `svg` filled with `fill` at the shade's opacity.
fn shades(svg: &str, fill: &str) -> Vec<(f64, f64)> {
    let attr = |l: &str, a: &str| -> f64 {
        let at = l.find(&format!(" {a}=\"")).unwrap() + a.len() + 3;
        l[at..at + l[at..].find('"').unwrap()].parse().unwrap()
    };
    svg.lines()
        .filter(|l| {
            l.starts_with("<rect") && l.contains(&format!("opacity=\"0.2\" fill=\"{fill}\""))
        })
        .map(|l| (attr(l, "x"), attr(l, "width")))
        .collect()
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
            "psi.svg",
            "disk-vda.svg",
            "report.md"
        ]
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for n in &names[..5] {
        assert!(md.contains(&format!("]({n})")), "{n} not referenced");
        let svg = std::fs::read_to_string(out.join(n)).unwrap();
        assert!(svg.starts_with("<svg"), "{n}: {}", &svg[..40]);
        assert_well_formed(n, &svg);
    }
    let svg = std::fs::read_to_string(out.join("dirty.svg")).unwrap();
    for label in [
        "E1",
        "E5",
        "Dirty+Writeback",
        "freerun (throttle start)",
        "background",
        "writers throttled",
    ] {
        assert!(
            svg.contains(&format!(">\n{label}\n</text>")),
            "{label} missing"
        );
    }
    // The shades sit where the periods are. Each panel plots 0 to 23 s (the first record's
    // interval starts at +0 s, the last is read at +23 s) on the pixel columns 72 (8 px
    // margin, 64 px of y labels) to 891 (the last of 900 − 8): 819 px for 23 s, each end
    // truncated to a pixel. Writers throttled from +6 s to +15 s: x = 72 + 819·6/23 = 285.7,
    // 819·9/23 = 320.5 px wide; then its legend swatch.
    let near = |got: (f64, f64), want: (f64, f64)| {
        (got.0 - want.0).abs() <= 1.0 && (got.1 - want.1).abs() <= 1.0
    };
    let s = shades(&svg, "#9467BD");
    assert_eq!(s.len(), 2, "{s:?}");
    assert!(near(s[0], (285.7, 320.5)), "{s:?}");
    assert!((s[1].1 - 16.0).abs() < 1e-9, "legend swatch {s:?}");
    // vda saturated from +5 s to +18 s, on each of its three panels, each with a legend
    // entry: x = 72 + 819·5/23 = 250.0, 819·13/23 = 462.9 px wide.
    let svg = std::fs::read_to_string(out.join("disk-vda.svg")).unwrap();
    let s = shades(&svg, "#BC8C00");
    assert_eq!(s.len(), 6, "{s:?}");
    for panel in s.chunks(2) {
        assert!(near(panel[0], (250.0, 462.9)), "{s:?}");
        assert!((panel[1].1 - 16.0).abs() < 1e-9, "legend swatch {s:?}");
    }
    assert_eq!(svg.matches(">\nsaturated\n</text>").count(), 3);
    // The PSI chart: some and full for the three resources.
    let svg = std::fs::read_to_string(out.join("psi.svg")).unwrap();
    for label in [
        "cpu some",
        "memory some",
        "io some",
        "cpu full",
        "memory full",
        "io full",
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
    let tmp = tempfile::tempdir().unwrap();
    let file = storm_file(tmp.path());
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

/// The storm written as a recording file in `dir`.
fn storm_file(dir: &std::path::Path) -> std::path::PathBuf {
    let rec = common::storm(common::storm_events());
    let file = dir.join("storm.pwrec");
    let mut w = pagewatch::record::Recorder::create(&file, &rec.header).unwrap();
    for s in &rec.samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    file
}

#[test]
fn report_command_names_the_files_and_ends_with_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let file = storm_file(tmp.path());
    let out_dir = tmp.path().join("rep");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args([
            "report".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            out_dir.as_os_str(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(stdout.contains("report.md\n"), "{stdout}");
    assert!(
        stdout.ends_with("\nVerdict: writers throttled 9.0 s (global); vda saturated 13.0 s (queue 39 deep (≥ 32), await 49.00 ms (≥ 1 ms), no calm baseline yet); vda not judged 10.0 s (cannot judge yet: no calm baseline; queue 29, w_await 40.00 ms); direct reclaim 4.0 s\n"),
        "{stdout}"
    );
}

/// `assets/recordings/who-sync-exits.pwrec` (60 `dd conv=fsync` of 50 MB, one after another,
/// each fsyncing once for ~20 ms): the report's sync waits name them, one call each, the
/// rest rolled up by command.
#[test]
fn the_report_names_the_sync_waits() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/recordings/who-sync-exits.pwrec");
    let rec = pagewatch::record::read(&path).unwrap();
    let md = report::render_markdown(&rec, Range::ALL, Options::default()).unwrap();
    let table = &md[md.find("Sync waits").expect("a sync waits table")..];
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(4)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 10, "{table}");
    for r in &rows {
        assert_eq!((r[1], r[2]), ("dd", "1"), "{table}");
        let mean: f64 = r[4].trim_end_matches(" ms").parse().unwrap();
        assert!((5.0..100.0).contains(&mean), "{table}");
        assert_eq!(r[4], r[5], "one call: its mean is its longest");
    }
    let more = table
        .lines()
        .find(|l| l.contains("more processes:"))
        .unwrap();
    assert!(more.contains(": dd ×"), "{more}");
    // The loop ran 60 dd and the tracer timed each (`replay --batch --format json` lists 60
    // distinct dd pids in its sync rows): 10 rows and 50 more, one call each.
    assert!(more.contains(": dd ×50 (50 calls, "), "{more}");
}

/// Issue 51: a recording whose device has a 5,000-character name stopped `report` halfway
/// (four SVGs, then "File name too long", no report.md). A chart's file name is cut to fit,
/// with a hash of the whole name so two long names stay apart; the report completes.
#[test]
fn a_very_long_device_name_does_not_stop_the_report() {
    let long: String = "v".repeat(4_998) + "da";
    let other: String = "v".repeat(4_998) + "db";
    let mut rec = common::storm(common::storm_events());
    for s in &mut rec.samples {
        s.files = std::mem::take(&mut s.files)
            .into_iter()
            .map(|(k, v)| {
                let v = v.replace(" vda ", &format!(" {long} "));
                // A second device, its name differing from the first only at the end.
                let v = match v.lines().find(|l| l.contains(&format!(" {long} "))) {
                    Some(l) if k.ends_with("diskstats") => {
                        format!("{v}{}\n", l.replace(&long, &other))
                    }
                    _ => v,
                };
                (k.replace("/vda/", &format!("/{long}/")), v)
            })
            .collect();
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let s = report::write(&rec, Range::ALL, Options::default(), &out)
        .unwrap_or_else(|e| panic!("{e:#}"));
    let names: Vec<String> = s
        .files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.last().map(String::as_str), Some("report.md"));
    let disks: Vec<&String> = names.iter().filter(|n| n.starts_with("disk-")).collect();
    assert_eq!(disks.len(), 2, "{names:?}");
    assert_ne!(disks[0], disks[1]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for n in &names[..names.len() - 1] {
        assert!(n.len() <= 100, "{n}");
        assert!(md.contains(&format!("]({n})")), "{n} not referenced");
        assert!(out.join(n).exists());
    }
}

/// The Summary's first paragraph of a shipped recording's report, and its analysis.
fn first_paragraph(name: &str) -> (String, report::Analysis) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/recordings")
        .join(name);
    let rec = pagewatch::record::read(&path).unwrap();
    let a = report::analyse(&rec, Range::ALL, Options::default()).unwrap();
    let md = report::markdown_of(&rec, &a);
    let after = &md[md.find("## Summary\n\n").unwrap() + 12..];
    (after[..after.find("\n\n").unwrap()].to_owned(), a)
}

/// Issue 50: the report's first paragraph names the culprit. `who-throttled.pwrec` (two
/// buffered fio jobs and a dd under vm.dirty_bytes 64M): six records name fio (7 processes)
/// and dd culprits. By hand from `pagewatch replay who-throttled.pwrec --batch --format json`,
/// over each walk (`commands[].rates_from_walk_ms`) whose records name them: its
/// `dirtied_bytes_per_s` × the records' `interval_s` that named them, at most its `walk_ms`
/// (four 2 s walks, named for 1.000, 2.001, 2.004 and 0.995 s): fio 4 265 490 334 bytes
/// (3.97 GiB), dd 954 303 191 (Σ rate × `interval_s` read 4 268 844 997, as the walk
/// repeated by two records counted 2.004 s of a 2.001 s walk). Nobody suffered against a
/// calm of their own, nobody took memory.
#[test]
fn the_first_paragraph_names_the_culprit() {
    let (p, a) = first_paragraph("who-throttled.pwrec");
    let c = a.summary.story.culprit.as_ref().unwrap();
    assert_eq!((c.comm.as_str(), c.pids), ("fio", 7));
    assert!(
        (c.dirtied / 4_265_490_334.0 - 1.0).abs() < 1e-6,
        "{}",
        c.dirtied
    );
    assert!(a.summary.story.victim.is_none() && a.summary.story.memory_taker.is_none());
    assert!(p.starts_with("**Verdict: writers throttled"), "{p}");
    assert!(
        p.ends_with(".** Culprit: **fio** ×7, 4.0G dirtied while named the culprit."),
        "{p}"
    );
}

/// Issue 50: "the report's first paragraph names the eater". `who-memory.pwrec`
/// (`pagewatch-eat` taking memory beside a writer): five records (1.000026, 0.999960,
/// 1.000004, 1.000004 and 1.000021 s, the seconds after MemAvailable fell 4.4 GB) repeat one
/// walk that measured its growth at 859 481 019 bytes/s over its 4 998 ms, so it grew
/// 4 295 686 133 bytes (4.0 GiB) while named, the walk counted once, resident 4 308 049 920
/// bytes (4.0 GiB).
#[test]
fn the_first_paragraph_names_the_memory_taker() {
    let (p, a) = first_paragraph("who-memory.pwrec");
    let t = a.summary.story.memory_taker.as_ref().unwrap();
    assert_eq!((t.pid, t.comm.as_str()), (26_782, "pagewatch-eat"));
    assert!((t.grew / 4_295_686_133.0 - 1.0).abs() < 1e-6, "{}", t.grew);
    assert_eq!(t.rss_bytes, Some(4_308_049_920));
    assert!(
        p.ends_with(
            " Memory taker: **pagewatch-eat[26782]** grew 4.0G while memory ran short \
             (resident 4.0G at most)."
        ),
        "{p}"
    );
    assert!(
        a.summary.story.culprit.is_none(),
        "nothing was wrong with the writer"
    );
}

/// A recording in which no record named anybody keeps the verdict alone.
#[test]
fn the_first_paragraph_names_nobody_when_no_record_did() {
    let (p, a) = first_paragraph("who-sync-exits.pwrec");
    assert_eq!(a.summary.story, report::PeriodStory::default());
    assert!(p.starts_with("**Verdict: ") && p.ends_with(".**"), "{p}");
}

/// The `report` command prints the first paragraph's who and whom after its verdict line,
/// as plain text.
#[test]
fn report_command_ends_with_who_and_whom() {
    let tmp = tempfile::tempdir().unwrap();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/recordings/who-throttled.pwrec");
    let out_dir = tmp.path().join("rep");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args([
            "report".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            out_dir.as_os_str(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let stdout = String::from_utf8(o.stdout).unwrap();
    let last: Vec<&str> = stdout.lines().rev().take(2).collect();
    assert!(
        last[1].starts_with("Verdict: writers throttled"),
        "{stdout}"
    );
    assert_eq!(
        last[0],
        "Culprit: fio ×7, 4.0G dirtied while named the culprit."
    );
}
