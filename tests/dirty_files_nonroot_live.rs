//! Run as non-root (issue 53): `pagewatch --batch --format json` runs as `nobody`
//! (`setpriv --reuid=nobody --regid=nogroup --clear-groups`), and so does a writer of its own,
//! a `dd` fed 128 MiB every 0.8 s (1 GiB, 6.4 s or more: long enough for the process walk,
//! gated on load and every 5 s, to see it writing) into a file in a directory under
//! `/var/tmp` given to nobody (on the disk, not a tmpfs; removed after, and its dirty pages
//! with it). Then:
//! - the file is in `dirty_files.files`, its owner `dd`, within 2 samples after dd returned
//!   (the walk lists a user's own processes' fds; cachestat(2) measures a file its caller
//!   owns);
//! - the disks' dirty and writeback bytes are `apportioned`, and `dirty_from_why` says that
//!   the kernel's own per-device figures need root (debugfs is root's), and debugfs mounted
//!   when it is not.
//!
//! Needs root (to become nobody), setpriv, a `nobody` user and cachestat (Linux 6.5+); skips,
//! saying why, otherwise. Changes no setting.
//! By hand: `flock -o /tmp/pw-live.lock cargo test --test dirty_files_nonroot_live -- --nocapture`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[path = "common/live.rs"]
mod live;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const AS_NOBODY: [&str; 4] = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"];

/// Why the test cannot run here, if it cannot.
fn cannot_run() -> Option<String> {
    if !live::is_root() {
        return Some("not running as root (needed to become nobody)".into());
    }
    if !live::have("setpriv") {
        return Some("no setpriv (util-linux)".into());
    }
    let nobody = Command::new("setpriv").args(AS_NOBODY).arg("true").status();
    if !nobody.is_ok_and(|s| s.success()) {
        return Some("setpriv cannot become nobody:nogroup here".into());
    }
    None
}

/// `pagewatch --batch` as nobody for 16 s and the dd, as nobody, 2 s into it, into `file`:
/// the JSON records, and when dd started and returned (s after pagewatch started).
fn run(file: &Path) -> (Vec<serde_json::Value>, f64, f64) {
    let out_path = file.with_extension("json");
    let started = Instant::now();
    let mut pw = Command::new("setpriv")
        .args(AS_NOBODY)
        .args([EXE, "--batch", "--format", "json", "--interval", "1"])
        .args(["--count", "16"])
        // Into a file (root's, opened here): a full pipe would stop pagewatch's samples.
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let script = format!(
        "for i in $(seq 8); do head -c 128M /dev/zero; sleep 0.8; done \
         | dd of={} bs=1M iflag=fullblock status=none",
        file.display()
    );
    let dd_start = started.elapsed().as_secs_f64();
    let ok = Command::new("setpriv")
        .args(AS_NOBODY)
        .args(["sh", "-c", &script])
        .status()
        .unwrap();
    let dd_end = started.elapsed().as_secs_f64();
    assert!(ok.success(), "dd as nobody failed");
    assert!(pw.wait().unwrap().success(), "pagewatch as nobody failed");
    let text = std::fs::read_to_string(&out_path).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(records.len() >= 14, "{} records", records.len());
    (records, dd_start, dd_end)
}

#[test]
fn as_nobody_its_own_writers_file_is_listed_and_the_disks_say_they_need_root() {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: {why}");
        return;
    }
    let _lock = live::lock();
    // On the disk (/var/tmp, not a tmpfs /tmp), in a directory nobody owns.
    let dir = tempfile::Builder::new()
        .prefix("pagewatch-nonroot-")
        .tempdir_in("/var/tmp")
        .unwrap();
    std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
    let file = dir.path().join("own.bin");
    let (records, dd_start, dd_end) = run(&file);
    let path = file.to_string_lossy().into_owned();
    let mut first_listed = None;
    let mut why_seen = None;
    for (i, r) in records.iter().enumerate() {
        // Record i covers the second ending ~i + 1 s after pagewatch started.
        let t = i as f64 + 1.0;
        if let Some(note) = r["dirty_files"]["note"].as_str()
            && note.contains("cachestat(2) is missing")
        {
            eprintln!("skipped: {note}");
            return;
        }
        let files = r["dirty_files"]["files"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let listed = files.iter().find(|f| f["path"] == path.as_str());
        if let Some(f) = listed {
            assert_eq!(f["comm"], "dd", "{f}");
            first_listed.get_or_insert(t);
        }
        let disks: Vec<&serde_json::Value> = r["disks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["dirty_from"].is_string())
            .collect();
        for d in &disks {
            // Never the kernel's figures as nobody; and, apportioned, always saying why.
            assert_eq!(d["dirty_from"], "apportioned", "{d}");
            let why = d["dirty_from_why"]
                .as_str()
                .unwrap_or_else(|| panic!("{d}"));
            why_seen.get_or_insert_with(|| why.to_owned());
        }
        eprintln!(
            "t {t:>2.0} s: listed {:?}, {} files, dirty_from_why {:?}",
            listed.map(|f| f["dirty_bytes"].as_u64().unwrap_or(0)
                + f["writeback_bytes"].as_u64().unwrap_or(0)),
            files.len(),
            disks.first().map(|d| &d["dirty_from_why"])
        );
    }
    eprintln!("dd ran {dd_start:.1}..{dd_end:.1} s; first listed at {first_listed:?} s");
    let first = first_listed.unwrap_or_else(|| panic!("{path} never listed"));
    assert!(
        first <= dd_end.ceil() + 1.0,
        "listed at {first} s, dd returned at {dd_end:.1} s: more than 2 samples"
    );
    // Root's view decides which: debugfs mounted (then nobody is denied it), or not.
    let why = why_seen.expect("no disk row with dirty figures");
    let expected = if Path::new("/sys/kernel/debug/bdi").is_dir() {
        "needs root for the kernel's own per-device figures"
    } else {
        "needs debugfs mounted at /sys/kernel/debug, and root,"
    };
    assert!(why.starts_with(expected), "{why}");
}
