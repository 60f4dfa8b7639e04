//! Devices that appear, are re-inserted, carry an odd diskstats line or a `!` sysfs name,
//! replayed from the captured-tree fixture `tests/fixtures/trees/disks-appear-reset` and
//! checked against iostat's semantics worked by hand (spec §5.2; sysstat's
//! `read_diskstats_stat_work()` and `write_stats()`), and against the installed iostat run on
//! the same roots under bind mounts in a private mount namespace (skipped where it cannot be).

use std::path::{Path, PathBuf};

use pagewatch::model::disk::Columns;
use pagewatch::model::{Disk, Model, Options};
use pagewatch::parse::Snapshot;
use pagewatch::source::{Source, TreeSource};

fn fixture_tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/trees")
        .join(name)
}

/// Every sample of a tree, parsed, with the model derived against the previous sample.
fn walk_with(dir: &Path, opts: Options) -> Vec<(Snapshot, Model)> {
    let mut src = TreeSource::open(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut out: Vec<(Snapshot, Model)> = Vec::new();
    while let Some(raw) = src
        .next_sample()
        .unwrap_or_else(|e| panic!("{}: sample {}: {e}", dir.display(), out.len()))
    {
        let snap = Snapshot::parse(&raw)
            .unwrap_or_else(|e| panic!("{}: root {:03}: {e}", dir.display(), out.len()));
        let model = Model::derive(out.last().map(|(s, _)| s), &snap, opts);
        out.push((snap, model));
    }
    out
}

/// The models of `disks-appear-reset`, one per root.
fn models() -> Vec<Model> {
    let ms: Vec<Model> = walk_with(&fixture_tree("disks-appear-reset"), Options::default())
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    assert_eq!(ms.len(), 3, "one model per root");
    ms
}

fn disk<'a>(m: &'a Model, name: &str) -> &'a Disk {
    m.disks.iter().find(|d| d.name == name).unwrap_or_else(|| {
        panic!(
            "no disk {name} in {:?}",
            m.disks.iter().map(|d| &d.name).collect::<Vec<_>>()
        )
    })
}

fn names(m: &Model) -> Vec<String> {
    m.disks.iter().map(|d| d.name.clone()).collect()
}

/// Checks `d`'s columns: each named one equal to the hand-computed figure (to 1e-9), each of
/// `none` without a figure.
fn figures(d: &Disk, want: &[(&str, f64)], none: &[&str]) {
    for &(col, v) in want {
        let got = d
            .cols
            .get(col)
            .unwrap_or_else(|| panic!("unknown column {col}"));
        assert!(
            got.is_some_and(|g| (g - v).abs() <= 1e-9 * v.abs().max(1.0)),
            "{} {col}: want {v}, got {got:?}",
            d.name
        );
    }
    for col in none {
        assert_eq!(d.cols.get(col), Some(None), "{} {col}", d.name);
    }
}

/// `tests/fixtures/trees/disks-appear-reset` (its README has the lines and the arithmetic):
/// sysstat's `iostat -x` reads every diskstats line with at least 14 fields for the counters it
/// has, counts a device that appeared between two reads from 0, and takes a device whose I/O
/// count and every sector count went back as re-inserted, counted from 0 (`write_stats()`).
/// Every figure below is worked by hand from the files, as iostat computes it (spec §5.2:
/// Δ/dt per second, kB = sectors / 2, await = Δms / Δios, aqu-sz = Δweighted / (dt·1000),
/// %util = Δio_ticks / (dt·1000) · 100).
#[test]
fn first_read_skips_the_short_line_and_shows_the_cciss_disk() {
    let ms = models();
    // Root 000: the first read, no figures. sdz's line has 13 fields (10 counters): skipped
    // and named; the other six devices stand (before: the whole sample was rejected). The
    // cciss disk is a whole disk (`cciss!c0d0` in sysfs), its partition is not listed.
    let m = &ms[0];
    assert_eq!(names(m), ["sda", "sdb", "sds", "cciss/c0d0"]);
    assert!(m.disks.iter().all(|d| d.cols == Columns::default()));
    let skipped = m.diskstats_skipped.as_deref().expect("sdz's line is named");
    assert!(
        skipped.contains("proc/diskstats:7:") && skipped.contains("sdz"),
        "{skipped}"
    );
}

/// Root 000 → 001: sda, sdb, the 17-field sds and the 14-field cciss disk.
#[test]
fn second_read_reads_the_17_and_14_field_lines() {
    let ms = models();
    // Root 001, dt = 502.00 − 500.00 = 2.00 s.
    let m = &ms[1];
    assert_eq!(m.interval_s, Some(2.0));
    assert_eq!(m.diskstats_skipped, None);
    assert_eq!(
        names(m),
        ["sda", "sdb", "sds", "cciss/c0d0", "sdz", "loop0", "sdc"]
    );
    // sda (20 fields): Δ reads 200, merges 20, sectors 3200, ms 400; writes 100, merges 10,
    // sectors 1600, ms 300; discards all 0; flushes 2, ms 6; io_ticks 500; weighted 700.
    // r/s 200/2 = 100, rkB/s 3200/2/2 = 800, rrqm/s 10, %rrqm 20/220 = 9.0909…,
    // r_await 400/200 = 2, rareq-sz 3200/200/2 = 8; w/s 50, wkB/s 400, wrqm/s 5,
    // %wrqm 10/110, w_await 3, wareq-sz 8; d/s 0, d_await 0 (no discard); f/s 1, f_await 3;
    // aqu-sz 700/2000 = 0.35; %util 500/2000 = 25 %.
    let d = disk(m, "sda");
    figures(
        d,
        &[
            ("r/s", 100.0),
            ("rkB/s", 800.0),
            ("rrqm/s", 10.0),
            ("%rrqm", 2000.0 / 220.0),
            ("r_await", 2.0),
            ("rareq-sz", 8.0),
            ("w/s", 50.0),
            ("wkB/s", 400.0),
            ("wrqm/s", 5.0),
            ("%wrqm", 1000.0 / 110.0),
            ("w_await", 3.0),
            ("wareq-sz", 8.0),
            ("d/s", 0.0),
            ("d_await", 0.0),
            ("f/s", 1.0),
            ("f_await", 3.0),
            ("aqu-sz", 0.35),
            ("%util", 25.0),
        ],
        &[],
    );
    // sdb: Δ reads 100, sectors 1600, ms 200; writes 50, sectors 800, ms 100; flushes 1, ms 2;
    // ticks 200; weighted 300. r/s 50, rkB/s 400, r_await 2; w/s 25, wkB/s 200, w_await 2;
    // f/s 0.5, f_await 2; aqu-sz 0.15; %util 10.
    figures(
        disk(m, "sdb"),
        &[
            ("r/s", 50.0),
            ("rkB/s", 400.0),
            ("r_await", 2.0),
            ("w/s", 25.0),
            ("wkB/s", 200.0),
            ("w_await", 2.0),
            ("f/s", 0.5),
            ("f_await", 2.0),
            ("aqu-sz", 0.15),
            ("%util", 10.0),
        ],
        &[],
    );
    // sds, 17 fields (14 counters: the 11 classic ones and 3 of the 4 discard fields): read
    // for its 11 classic counters, as iostat does (sscanf converts 14 → the `i >= 14` branch,
    // not `i >= 18`). Δ reads 100, merges 10, sectors 1600, ms 300; writes 50, merges 5,
    // sectors 800, ms 200; ticks 200; weighted 300. r/s 50, rkB/s 400, rrqm/s 5,
    // r_await 3, rareq-sz 8; w/s 25, wkB/s 200, w_await 4, wareq-sz 8; aqu-sz 0.15;
    // %util 10. No discard or flush figures (iostat prints 0.00: it has no counters either).
    figures(
        disk(m, "sds"),
        &[
            ("r/s", 50.0),
            ("rkB/s", 400.0),
            ("rrqm/s", 5.0),
            ("r_await", 3.0),
            ("rareq-sz", 8.0),
            ("w/s", 25.0),
            ("wkB/s", 200.0),
            ("w_await", 4.0),
            ("wareq-sz", 8.0),
            ("aqu-sz", 0.15),
            ("%util", 10.0),
        ],
        &["d/s", "d_await", "f/s", "f_await"],
    );
    // cciss/c0d0, 14 fields: Δ reads 200, sectors 3200, ms 400; writes 100, sectors 1600,
    // ms 300; ticks 300; weighted 500. r/s 100, rkB/s 800, r_await 2; w/s 50, wkB/s 400,
    // w_await 3; aqu-sz 0.25; %util 15. A whole disk, not a partition.
    let d = disk(m, "cciss/c0d0");
    assert!(!d.partition);
    figures(
        d,
        &[
            ("r/s", 100.0),
            ("rkB/s", 800.0),
            ("r_await", 2.0),
            ("w/s", 50.0),
            ("wkB/s", 400.0),
            ("w_await", 3.0),
            ("aqu-sz", 0.25),
            ("%util", 15.0),
        ],
        &["d/s", "f/s"],
    );
}

/// Root 000 → 001: devices that appeared, and one whose last line was skipped.
#[test]
fn second_read_counts_new_devices_from_zero() {
    let m = &models()[1];
    // sdz: its line of root 000 was skipped, so its counters then are unknown: no figures
    // (counting it from 0 would report every I/O since boot as this interval's).
    assert_eq!(disk(m, "sdz").cols, Columns::default());
    // loop0 and sdc appeared: counted from 0, as iostat does (their counters started at 0
    // inside the interval). loop0: 64 reads, 512 sectors, 32 ms; ticks 40; weighted 32 →
    // r/s 32, rkB/s 512/2/2 = 128, r_await 0.5, rareq-sz 4; w/s 0; aqu-sz 0.016; %util 2.
    figures(
        disk(m, "loop0"),
        &[
            ("r/s", 32.0),
            ("rkB/s", 128.0),
            ("r_await", 0.5),
            ("rareq-sz", 4.0),
            ("w/s", 0.0),
            ("w_await", 0.0),
            ("d/s", 0.0),
            ("f/s", 0.0),
            ("aqu-sz", 0.016),
            ("%util", 2.0),
        ],
        &[],
    );
    // sdc (hot-plugged): 10 reads, 2048 sectors, 20 ms; ticks 20; weighted 20 → r/s 5,
    // rkB/s 512, r_await 2, rareq-sz 102.4; aqu-sz 0.01; %util 1.
    figures(
        disk(m, "sdc"),
        &[
            ("r/s", 5.0),
            ("rkB/s", 512.0),
            ("r_await", 2.0),
            ("rareq-sz", 102.4),
            ("aqu-sz", 0.01),
            ("%util", 1.0),
        ],
        &[],
    );
}

/// Root 001 → 002: sdb was removed and re-added; the others go on.
#[test]
fn third_read_counts_the_reinserted_device_from_zero() {
    let ms = models();
    // Root 002, dt = 504.50 − 502.00 = 2.50 s.
    let m = &ms[2];
    assert_eq!(m.interval_s, Some(2.5));
    // sda: Δ reads 250, sectors 4000, ms 500; no writes; ticks 250; weighted 500.
    // r/s 100, rkB/s 800, rrqm/s 0, %rrqm 0, r_await 2; w/s 0, w_await 0, wareq-sz 0;
    // aqu-sz 0.2; %util 10; f/s 0.
    figures(
        disk(m, "sda"),
        &[
            ("r/s", 100.0),
            ("rkB/s", 800.0),
            ("rrqm/s", 0.0),
            ("%rrqm", 0.0),
            ("r_await", 2.0),
            ("w/s", 0.0),
            ("w_await", 0.0),
            ("wareq-sz", 0.0),
            ("aqu-sz", 0.2),
            ("%util", 10.0),
            ("f/s", 0.0),
        ],
        &[],
    );
    // sdb was removed and re-added: I/O count 50+25+0 = 75 < 4100+2050+41 = 6191, sectors read
    // 800 < 65600, written 400 < 32800, discarded 0 before. iostat takes it as re-inserted and
    // counts from 0: reads 50, merges 5, sectors 800, ms 100; writes 25, sectors 400, ms 50;
    // ticks 100; weighted 150. r/s 20, rkB/s 160, rrqm/s 2, %rrqm 5/55, r_await 2,
    // rareq-sz 8; w/s 10, wkB/s 80, w_await 2, wareq-sz 8; f/s 0; aqu-sz 0.06; %util 4.
    figures(
        disk(m, "sdb"),
        &[
            ("r/s", 20.0),
            ("rkB/s", 160.0),
            ("rrqm/s", 2.0),
            ("%rrqm", 500.0 / 55.0),
            ("r_await", 2.0),
            ("rareq-sz", 8.0),
            ("w/s", 10.0),
            ("wkB/s", 80.0),
            ("w_await", 2.0),
            ("wareq-sz", 8.0),
            ("f/s", 0.0),
            ("aqu-sz", 0.06),
            ("%util", 4.0),
        ],
        &[],
    );
    // sds: Δ as in root 001 over 2.5 s: r/s 40, rkB/s 320, r_await 3; w/s 20, wkB/s 160,
    // w_await 4; aqu-sz 300/2500 = 0.12; %util 200/2500 = 8.
    figures(
        disk(m, "sds"),
        &[
            ("r/s", 40.0),
            ("rkB/s", 320.0),
            ("r_await", 3.0),
            ("w/s", 20.0),
            ("wkB/s", 160.0),
            ("w_await", 4.0),
            ("aqu-sz", 0.12),
            ("%util", 8.0),
        ],
        &["d/s", "f/s"],
    );
    // cciss/c0d0: Δ reads 200, sectors 3200, ms 400; writes 100, sectors 1600, ms 300;
    // ticks 300; weighted 500 → r/s 80, rkB/s 640, r_await 2; w/s 40, wkB/s 320,
    // w_await 3; aqu-sz 0.2; %util 12.
    figures(
        disk(m, "cciss/c0d0"),
        &[
            ("r/s", 80.0),
            ("rkB/s", 640.0),
            ("r_await", 2.0),
            ("w/s", 40.0),
            ("wkB/s", 320.0),
            ("w_await", 3.0),
            ("aqu-sz", 0.2),
            ("%util", 12.0),
        ],
        &[],
    );
}

/// Root 001 → 002: the devices that appeared, and sdz, now read twice, go on.
#[test]
fn third_read_goes_on_for_the_new_devices() {
    let m = &models()[2];
    // sdz, now read twice: Δ reads 20, sectors 160, ms 10; ticks 10; weighted 10 → r/s 8,
    // rkB/s 32, r_await 0.5, rareq-sz 4; aqu-sz 0.004; %util 0.4.
    figures(
        disk(m, "sdz"),
        &[
            ("r/s", 8.0),
            ("rkB/s", 32.0),
            ("r_await", 0.5),
            ("rareq-sz", 4.0),
            ("aqu-sz", 0.004),
            ("%util", 0.4),
        ],
        &[],
    );
    // loop0: Δ reads 64, sectors 512, ms 32; ticks 40; weighted 32 → r/s 25.6,
    // rkB/s 102.4, r_await 0.5; aqu-sz 0.0128; %util 1.6. sdc: Δ reads 20, sectors 4096,
    // ms 40; ticks 40; weighted 40 → r/s 8, rkB/s 819.2, r_await 2, rareq-sz 102.4;
    // aqu-sz 0.016; %util 1.6.
    figures(
        disk(m, "loop0"),
        &[
            ("r/s", 25.6),
            ("rkB/s", 102.4),
            ("r_await", 0.5),
            ("aqu-sz", 0.0128),
            ("%util", 1.6),
        ],
        &[],
    );
    figures(
        disk(m, "sdc"),
        &[
            ("r/s", 8.0),
            ("rkB/s", 819.2),
            ("r_await", 2.0),
            ("rareq-sz", 102.4),
            ("aqu-sz", 0.016),
            ("%util", 1.6),
        ],
        &[],
    );
}

#[test]
fn with_partitions_the_cciss_partition_is_a_partition() {
    // With partitions: cciss/c0d0p1 (a partition of the cciss disk) and sda1 are listed as
    // partitions, the disks as disks.
    let all = walk_with(
        &fixture_tree("disks-appear-reset"),
        Options { partitions: true },
    );
    let m = &all[2].1;
    assert!(disk(m, "cciss/c0d0p1").partition && disk(m, "sda1").partition);
    assert!(!disk(m, "cciss/c0d0").partition && !disk(m, "sdz").partition);
}

/// `cciss!c0d0` under /sys/block is `cciss/c0d0` in /proc/diskstats (the kernel writes a
/// device name's `/` as `!` in sysfs): the disk must not be taken for a partition and hidden.
#[test]
fn sysfs_bang_names_are_the_diskstats_slash_names() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = fixture_tree("disks-appear-reset").join("002");
    let copy = |rel: &str| {
        let to = tmp.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(rel), to).unwrap();
    };
    for f in ["meminfo", "vmstat", "stat", "uptime"] {
        copy(&format!("proc/{f}"));
    }
    copy("sys/block/cciss!c0d0/queue/rotational");
    std::fs::write(
        tmp.path().join("proc/diskstats"),
        " 104 0 cciss/c0d0 1000 100 16000 2000 500 50 8000 1500 0 2100 3100\n \
         104 1 cciss/c0d0p1 1000 100 16000 2000 500 50 8000 1500 0 2100 3100\n",
    )
    .unwrap();
    let (_, m) = walk_with(tmp.path(), Options::default())
        .pop()
        .expect("one root");
    let names: Vec<&str> = m.disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["cciss/c0d0"], "the disk shown, its partition not");
    let d = disk(&m, "cciss/c0d0");
    assert!(!d.partition);
    assert_eq!(d.queue.as_ref().and_then(|q| q.rotational), Some(true));
}

// ---------------------------------------------------------------------------------------------
// the installed iostat on the same roots

#[path = "common/iostat.rs"]
mod iostat;

/// The second report of `iostat -dx -p ALL 3 2` run while `/proc/diskstats` and
/// `/proc/uptime` are bind-mounted from root `a` of the fixture, then (once the first report
/// is out, so the first read is done) from root `b`: the interval report a → b. In a private
/// mount namespace, so nothing outside this command sees the mounts. `None` when that cannot
/// be done here (not root, no `unshare` or `iostat`).
fn iostat_between(a: &str, b: &str) -> Option<String> {
    let dir = fixture_tree("disks-appear-reset");
    let out = tempfile::NamedTempFile::new().expect("temp file");
    let script = r#"
        set -e
        bind() { mount --bind "$1/proc/diskstats" /proc/diskstats; mount --bind "$1/proc/uptime" /proc/uptime; }
        bind "$A"
        LC_ALL=C S_TIME_FORMAT=ISO iostat -dx -p ALL 3 2 > "$OUT" &
        i=0
        until grep -q '^Device' "$OUT" && grep -q '^$' "$OUT"; do
            i=$((i+1)); [ $i -lt 100 ] || exit 3; sleep 0.05
        done
        umount /proc/diskstats /proc/uptime
        bind "$B"
        wait
    "#;
    let status = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script])
        .env("A", dir.join(a))
        .env("B", dir.join(b))
        .env("OUT", out.path())
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let text = std::fs::read_to_string(out.path()).expect("read iostat's output");
    let second = text.match_indices("\nDevice").nth(1)?.0 + 1;
    Some(text[second..].to_owned())
}

/// The installed iostat, fed the fixture's roots, prints every figure pagewatch does for the
/// same interval (at its rounding), but for sdz over 000 → 001: iostat skipped its short line
/// at 000 as well, then takes it for a new device and counts its I/O since boot as this
/// interval's; pagewatch gives no figure for that one interval.
#[test]
fn the_installed_iostat_agrees_on_the_fixture() {
    let ms = models();
    let mut compared = 0;
    for (k, (a, b)) in [("000", "001"), ("001", "002")].into_iter().enumerate() {
        let Some(text) = iostat_between(a, b) else {
            println!("skipped: cannot run iostat under bind mounts here (root, unshare, iostat)");
            return;
        };
        let r = iostat::first_report(&text);
        let m = &ms[k + 1];
        let mut rows = 0;
        for (name, vals) in &r.rows {
            let Some(d) = m.disks.iter().find(|d| &d.name == name) else {
                // Partitions: pagewatch shows them only with --partitions.
                assert!(name.ends_with('1'), "{a}→{b}: {name} not shown");
                continue;
            };
            rows += 1;
            if (a, name.as_str()) == ("000", "sdz") {
                assert_eq!(d.cols, Columns::default());
                assert_eq!(vals[0], "10.00", "iostat's sdz r/s from 0");
                continue;
            }
            for (col, want) in r.header.iter().zip(vals) {
                let got = iostat::printed(iostat::column(&d.cols, col));
                assert_eq!(&got, want, "{a}→{b}: {name} {col}");
                compared += 1;
            }
        }
        assert_eq!(rows, m.disks.len(), "{a}→{b}: every device we show");
    }
    println!("compared {compared} figures with the installed iostat");
}

/// The screen says a diskstats line was skipped (in the disk table's title) while it is, and
/// still shows the other devices.
#[test]
fn the_disk_table_says_a_line_was_skipped() {
    use pagewatch::app::{App, Look, Msg};
    use pagewatch::source::HostInfo;
    let mut src = TreeSource::open(&fixture_tree("disks-appear-reset")).expect("open tree");
    let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
    let screen = |app: &App| {
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 48))
            .expect("test terminal");
        t.draw(|f| pagewatch::ui::draw(f, app)).expect("draw");
        t.backend().to_string()
    };
    let first = src.next_sample().expect("read root").expect("root 000");
    app.update(Msg::Sample(first));
    let s = screen(&app);
    assert!(s.contains("Disks (a diskstats line skipped)"), "{s}");
    assert!(s.contains("cciss/c0d0") && s.contains("sds"), "{s}");
    while let Some(raw) = src.next_sample().expect("read root") {
        app.update(Msg::Sample(raw));
    }
    assert!(!screen(&app).contains("skipped"));
}

/// The `drain` tree's models (`tests/fixtures/trees/drain/README.md`).
fn drain_models() -> Vec<Model> {
    walk_with(&fixture_tree("drain"), Options::default())
        .into_iter()
        .map(|(_, m)| m)
        .collect()
}

#[test]
fn drain_from_debugfs_bdi_stats() {
    let ms = drain_models();
    assert_eq!(ms.len(), 3);
    // 001, root with debugfs: vdb's BdiReclaimable 98,304 kB and BdiWriteback 8,192 kB; with
    // ≥ 1 MiB under writeback it drains at its measured 20,480 kB/s (81,920 sectors in 2 s;
    // BdiWriteBandwidth says the same here): (98304 + 8192) / 20480 = 5.2 s (spec §15.5).
    let d = &disk(&ms[1], "vdb").drain;
    assert_eq!(d.dirty_bytes, Some(98_304 * 1024));
    assert_eq!(d.writeback_bytes, Some(8_192 * 1024));
    assert_eq!(
        (d.dirty_from, d.drain_from),
        (Some("kernel"), Some("measured"))
    );
    assert_eq!(d.kernel_write_bytes_per_s, Some(20_480.0 * 1024.0));
    assert!((d.drain_eta_s.unwrap() - 5.2).abs() < 1e-9, "{d:?}");
    // vda: the kernel's starting guess is no rate, and vda wrote nothing: no ETA.
    let a = &disk(&ms[1], "vda").drain;
    assert_eq!(a.dirty_bytes, Some(22_576 * 1024));
    assert_eq!((a.kernel_write_bytes_per_s, a.drain_eta_s), (None, None));
    // The same figures in the batch JSON's disks[].
    let j = serde_json::to_value(&ms[1]).unwrap();
    let vdb = j["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "vdb")
        .unwrap();
    assert_eq!(vdb["dirty_bytes"], 98_304 * 1024);
    assert_eq!(vdb["writeback_bytes"], 8_192 * 1024);
    assert_eq!(vdb["drain_bytes_per_s"], 20_480.0 * 1024.0);
    assert!((vdb["drain_eta_s"].as_f64().unwrap() - 5.2).abs() < 1e-9);
}

#[test]
fn drain_apportioned_without_debugfs() {
    let ms = drain_models();
    // 002, no debugfs: vdb wrote all 20,480 kB/s of the interval, so it gets all of the
    // machine's 38,412 dirty and 2,110 writeback pages; ETA at its measured rate:
    // (38412 + 2110) × 4096 / (20480 × 1024) = 7.9145 s.
    let d = &disk(&ms[2], "vdb").drain;
    assert_eq!(d.dirty_bytes, Some(38_412 * 4096));
    assert_eq!(d.writeback_bytes, Some(2_110 * 4096));
    assert_eq!(
        (d.dirty_from, d.drain_from),
        (Some("apportioned"), Some("measured"))
    );
    let eta = d.drain_eta_s.unwrap();
    assert!(
        (eta - 40_522.0 * 4096.0 / 20_971_520.0).abs() < 1e-9,
        "{eta}"
    );
    let a = &disk(&ms[2], "vda").drain;
    assert_eq!((a.dirty_bytes, a.drain_eta_s), (Some(0), Some(0.0)));
    // And says why: the tree has no debugfs (`names::BDI_STATS_STATUS` `absent`).
    assert_eq!(
        d.dirty_from_why,
        Some(pagewatch::model::drain::WHY_ABSENT),
        "{d:?}"
    );
    // With debugfs (001), nothing to say.
    assert_eq!(disk(&ms[1], "vdb").drain.dirty_from_why, None);
}
