//! Captured trees made hostile, run through the real binary in batch mode (issue "Hardening",
//! findings 2, 3 and 5): a FIFO or a link to /dev/zero in place of a /proc file, a sysctl that
//! never parses, an absurd `page_size` or uptime. Each run must end on its own with exit
//! status 1 and a message naming the file, never block, never grow without bound. Also a tree
//! whose sysctl changes under a running batch, which must show it on the next record.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");

/// A copy of `live-idle` (four roots) to spoil.
fn tree() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/trees/live-idle");
    let ok = Command::new("cp")
        .arg("-a")
        .arg(&src)
        .arg(tmp.path().join("t"))
        .status()
        .unwrap();
    assert!(ok.success());
    let t = tmp.path().join("t");
    (tmp, t)
}

/// Runs `pagewatch --batch ARGS` and returns (exit code, stderr); kills it after 20 s.
fn batch(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(EXE)
        .arg("--batch")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after 20 s: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn root_args(root: &Path) -> Vec<String> {
    vec![
        "--proc-root".into(),
        root.join("proc").display().to_string(),
        "--sys-root".into(),
        root.join("sys").display().to_string(),
        "--interval".into(),
        "0.1".into(),
    ]
}

#[test]
fn a_fifo_in_place_of_a_proc_file_is_an_error_not_a_hang() {
    let (_tmp, t) = tree();
    let meminfo = t.join("001/proc/meminfo");
    std::fs::remove_file(&meminfo).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&meminfo)
            .status()
            .unwrap()
            .success()
    );
    let mut args = root_args(&t.join("001"));
    args.extend(["--count".into(), "1".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, err) = batch(&args);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("meminfo") && err.contains("a FIFO"), "{err}");
    // The same tree walked with --tree: the other roots still give records.
    let (code, err) = batch(&["--tree", t.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not a regular file (a FIFO)"), "{err}");
}

#[test]
fn a_link_to_dev_zero_is_refused_before_it_is_read() {
    let (_tmp, t) = tree();
    let vmstat = t.join("001/proc/vmstat");
    std::fs::remove_file(&vmstat).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &vmstat).unwrap();
    let mut args = root_args(&t.join("001"));
    args.extend(["--count".into(), "1".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, err) = batch(&args);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("vmstat") && err.contains("a character device"),
        "{err}"
    );
}

#[test]
fn count_ends_the_run_when_every_sample_fails() {
    let (_tmp, t) = tree();
    std::fs::write(t.join("001/proc/sys/vm/dirty_ratio"), "twenty\n").unwrap();
    let mut args = root_args(&t.join("001"));
    args.extend(["--count".into(), "1".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, err) = batch(&args);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.matches("dirty_ratio").count(), 2, "two reads: {err}");
}

#[test]
fn absurd_page_size_and_uptime_are_rejected() {
    for bad in ["1", "3", "0", "99999999999999999999"] {
        let (_tmp, t) = tree();
        std::fs::write(t.join("page_size"), bad).unwrap();
        let (code, err) = batch(&["--tree", t.to_str().unwrap()]);
        assert_ne!(code, Some(0), "page_size {bad}: {err}");
        assert!(
            err.contains("page_size") && err.contains("not a page size"),
            "{err}"
        );
    }
    let (_tmp, t) = tree();
    std::fs::write(t.join("002/proc/uptime"), "18446744073709551615.99 1.00\n").unwrap();
    let (code, err) = batch(&["--tree", t.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("proc/uptime:1"), "{err}");
}

/// Batch mode re-reads the slow files as soon as the derived thresholds stop matching the
/// kernel's (issue "Correct on every kernel", 2: batch went stale for up to 14 samples).
#[test]
fn batch_sees_a_sysctl_change_on_the_next_record() {
    use pagewatch::cli::Format;
    use pagewatch::model::Options;
    use pagewatch::source::{FsSource, SystemClock};
    let (_tmp, t) = tree();
    let root = t.join("001");
    let ratio = root.join("proc/sys/vm/dirty_ratio");
    assert_eq!(std::fs::read_to_string(&ratio).unwrap().trim(), "20");
    let mut source = FsSource::new(root.join("proc"), root.join("sys"), Box::new(SystemClock));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut reads = 0;
    let mut wait = || {
        reads += 1;
        std::thread::sleep(Duration::from_millis(20));
        if reads == 2 {
            // The admin writes 40; the kernel's own threshold (vmstat) follows at once.
            std::fs::write(&ratio, "40\n").unwrap();
            let vmstat = std::fs::read_to_string(root.join("proc/vmstat")).unwrap();
            let doubled: String = vmstat
                .lines()
                .map(|l| match l.split_once(' ') {
                    Some(("nr_dirty_threshold", v)) => {
                        format!("nr_dirty_threshold {}\n", v.parse::<u64>().unwrap() * 2)
                    }
                    _ => format!("{l}\n"),
                })
                .collect();
            std::fs::write(root.join("proc/vmstat"), doubled).unwrap();
        }
    };
    pagewatch::batch::run(
        &mut source,
        Some(8),
        Format::Json,
        Options::default(),
        &mut out,
        &mut err,
        &mut wait,
    )
    .unwrap();
    let ratios: Vec<u64> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["sysctl"]["dirty_ratio"].as_u64().unwrap()
        })
        .collect();
    // The write comes before the third read. Record 2 (reads 2 and 3) sees the kernel's new
    // threshold beside the old sysctl and asks for the slow files; record 3 has the new
    // sysctl. Without the early refresh the sysctls are re-read every 15 samples: all 20.
    assert_eq!(ratios, [20, 20, 40, 40, 40, 40, 40, 40], "{ratios:?}");
}

/// A zoneinfo that does not parse leaves out only what needs it (issue "Correct on every
/// kernel", 2): before, the whole sample failed.
#[test]
fn a_bad_zoneinfo_degrades_only_what_depends_on_it() {
    let (_tmp, t) = tree();
    for root in ["000", "001", "002", "003"] {
        let z = t.join(root).join("proc/zoneinfo");
        let text = std::fs::read_to_string(&z).unwrap();
        std::fs::write(&z, text.replacen("        min", "        min   lots", 1)).unwrap();
    }
    let out = Command::new(EXE)
        .args(["--batch", "--format", "json", "--tree", t.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        err.matches("warning: proc/zoneinfo:").count(),
        1,
        "once: {err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "every record stands");
    for r in &records {
        assert!(r["memory"]["MemAvailable"].as_u64().is_some());
        assert!(r["memory"]["derived_MemAvailable"].is_null());
        assert!(r["dirty"]["thresh_pages"].as_u64().is_some());
        assert!(r["dirty"]["derived_thresh_pages"].is_null());
        assert!(r["disks"].as_array().is_some_and(|d| !d.is_empty()));
        assert!(r["cpu"]["user_pct"].as_f64().is_some());
        let e = r["zoneinfo_error"].as_str().unwrap();
        assert!(e.starts_with("proc/zoneinfo:"), "{e}");
    }
}
