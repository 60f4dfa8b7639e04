//! When is it on disk, live (issue 53, spec §15.4, §15.5): with `vm.dirty_bytes` raised to
//! 4 GiB and `vm.dirty_background_bytes` to 3 GiB (both restored after, `DirtyKnobs`, on
//! every exit path: the background one so that the flusher leaves the data where it is and
//! the comparison holds still), a `dd` writes 2 GiB buffered into a file on the disk, fed
//! 256 MiB every 0.8 s: it lives 6.4 s or more, so that one 5 s process walk at least sees it
//! writing (a writer gone before any walk saw it is not found: a 2 GiB `dd` in one go lived
//! 1.2 s here).
//! `pagewatch --batch --format json` runs beside it. Then:
//! - the file is in `dirty_files.files` within 2 samples after dd returned (the process walk
//!   saw dd's `write_bytes` rise and put its file in the sample, `proc/writer-files`; the
//!   scan measures it by path after dd is gone);
//! - while dd's data is what is dirty (Dirty + Writeback within 10 % of 2 GiB: dd the only
//!   writer), its dirty + writeback bytes are within 5 % of the machine's Dirty + Writeback,
//!   and so are the disk's `dirty_bytes + writeback_bytes`.
//!
//! Root only (the sysctls); skips, saying why, otherwise or without cachestat (Linux < 6.5).
//! By hand: `flock -o /tmp/pw-live.lock cargo test --test dirty_files_live -- --nocapture`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[path = "common/live.rs"]
mod live;
#[path = "common/sysctl.rs"]
mod sysctl;

use std::process::{Command, Stdio};
use std::time::Instant;

use sysctl::DirtyKnobs;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const GIB: u64 = 1 << 30;
/// The dirty-files scan's period (`source::dirty_files`), s.
const SCAN_S: f64 = 5.0;

fn within(a: f64, b: f64, pct: f64) -> bool {
    (a - b).abs() <= b * pct / 100.0
}

/// The disk rows' largest dirty + writeback bytes.
fn largest_disk(r: &serde_json::Value) -> u64 {
    r["disks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| Some(d["dirty_bytes"].as_u64()? + d["writeback_bytes"].as_u64()?))
        .max()
        .unwrap_or(0)
}

/// The thresholds raised, `pagewatch --batch` for 24 s and the dd 2 s into it, into `file`:
/// the JSON records, and when dd started and returned (s after pagewatch started).
fn run(file: &std::path::Path) -> (Vec<serde_json::Value>, f64, f64) {
    let knobs = DirtyKnobs::set_dirty_bytes(4 * GIB);
    sysctl::set_vm("dirty_background_bytes", &(3 * GIB).to_string());
    let out_path = file.with_extension("json");
    let started = Instant::now();
    let mut pw = Command::new(EXE)
        .args([
            "--batch",
            "--format",
            "json",
            "--interval",
            "1",
            "--count",
            "24",
        ])
        // Into a file, not a pipe read only at the end: a full pipe (64 KiB, a few records)
        // blocked pagewatch, which then took no sample, and walked no process, while dd ran.
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let script = format!(
        "for i in $(seq 8); do head -c 256M /dev/zero; sleep 0.8; done \
         | dd of={} bs=1M iflag=fullblock status=none",
        file.display()
    );
    let dd_start = started.elapsed().as_secs_f64();
    let ok = Command::new("sh").args(["-c", &script]).status().unwrap();
    let dd_end = started.elapsed().as_secs_f64();
    assert!(ok.success());
    assert!(pw.wait().unwrap().success());
    drop(knobs);
    let text = std::fs::read_to_string(&out_path).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(records.len() >= 20, "{} records", records.len());
    (records, dd_start, dd_end)
}

#[test]
fn a_2_gib_dd_is_listed_with_the_machines_dirty_bytes() {
    if !sysctl::is_root() {
        eprintln!("skipped: needs root (raises vm.dirty_bytes)");
        return;
    }
    let _lock = live::lock();
    // On the disk, not a tmpfs /tmp.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("two-gib.bin");
    let (records, dd_start, dd_end) = run(&file);
    let path = file.to_string_lossy().into_owned();
    // Record i covers the second ending ~i + 1 s after pagewatch started (its first read).
    let mut first_listed = None;
    let mut checked = 0;
    let mut before = u64::MAX;
    let mut full_at = None;
    for (i, r) in records.iter().enumerate() {
        let t = i as f64 + 1.0;
        let page = r["page_size"].as_u64().unwrap();
        let machine = (r["dirty"]["nr_dirty"].as_u64().unwrap()
            + r["dirty"]["nr_writeback"].as_u64().unwrap())
            * page;
        let files = r["dirty_files"]["files"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(note) = r["dirty_files"]["note"].as_str()
            && note.contains("cachestat(2) is missing")
        {
            eprintln!("skipped: {note}");
            return;
        }
        let bytes = files
            .iter()
            .find(|f| f["path"] == path.as_str())
            .map(|f| f["dirty_bytes"].as_u64().unwrap() + f["writeback_bytes"].as_u64().unwrap());
        if bytes.is_some() && first_listed.is_none() {
            first_listed = Some(t);
        }
        let disk = largest_disk(r);
        let walked = r["processes"].as_array().map_or(0, Vec::len);
        let dd_seen = r["processes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["comm"] == "dd");
        eprintln!(
            "t {t:>2.0} s: file {bytes:?} B, disk {disk} B, Dirty+Writeback {machine} B, \
             {} files listed, {walked} processes (dd among them: {dd_seen})",
            files.len()
        );
        if t < dd_start {
            before = before.min(machine);
        }
        // After dd returned, before the background threshold (3 GiB) was reached, the file's
        // pages are all still dirty or under writeback, 2 GiB: when the scan (every
        // `SCAN_S`) first measures that.
        if t >= dd_end
            && full_at.is_none()
            && machine < 3 * GIB
            && bytes.is_some_and(|b| within(b as f64, (2 * GIB) as f64, 5.0))
        {
            full_at = Some(t);
        }
        // dd done and its data what is dirty (dd the only writer: under 2 % of 2 GiB dirty
        // before it, and the machine holds 2 GiB within 10 %), from the second sample after
        // dd returned: compare.
        let dd_alone = before < 2 * GIB / 50 && within(machine as f64, (2 * GIB) as f64, 10.0);
        if t > dd_end.ceil() + 1.0 + SCAN_S && dd_alone {
            let bytes = bytes.unwrap_or_else(|| panic!("{path} not listed at {t} s: {files:?}"));
            assert!(
                within(bytes as f64, machine as f64, 5.0),
                "file {bytes} vs {machine}"
            );
            assert!(
                within(disk as f64, machine as f64, 5.0),
                "disk {disk} vs {machine}"
            );
            checked += 1;
        }
    }
    eprintln!(
        "dd ran {dd_start:.1}..{dd_end:.1} s; the file was first listed at {first_listed:?} s; \
         {checked} records compared after dd"
    );
    let first = first_listed.expect("never listed");
    // Record i covers the second ending at i + 1 s: the first after dd returned ends at
    // ceil(dd_end), the second a second later.
    assert!(
        first <= dd_end.ceil() + 1.0,
        "listed at {first} s, dd returned at {dd_end:.1} s: more than 2 samples"
    );
    // The file's bytes are the scan's, every `SCAN_S`: 2 GiB by the first scan after dd
    // returned (CI once read the scan of 1.8 s before dd's end, 1,879,048,192 B, at the
    // first record after it).
    let full = full_at.expect("the file never held 2 GiB after dd returned");
    assert!(
        full <= dd_end.ceil() + 1.0 + SCAN_S,
        "2 GiB at {full} s, dd returned at {dd_end:.1} s: later than a scan and 2 samples"
    );
    if checked == 0 {
        eprintln!(
            "not compared with the machine: {before} B were dirty before dd (another \
             writer's; shared machine)"
        );
    }
}
