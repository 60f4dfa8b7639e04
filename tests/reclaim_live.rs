//! Who stalls in direct reclaim, against the live kernel (root, tracefs): an eater
//! (`pagewatch eat`) takes 60 % of MemAvailable beside
//! plain `--batch --format json`, which arms the reclaim tracer as allocstall rises. While it
//! is armed and direct reclaim runs, the verdict's reclaim answer names a task with its ms/s
//! and the memory rows carry `reclaim_ms_per_s`; after the run its tracefs instance is gone.
//! Skips (saying why) without root or the events, or when no direct reclaim happened (a
//! machine with free memory the eater could not exhaust within its bound). Under 55 s.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const EVENT: &str = "/sys/kernel/tracing/events/vmscan/mm_vmscan_direct_reclaim_begin";

fn vm_rss(pid: u32) -> u64 {
    let t = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    t.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn meminfo_kb(key: &str) -> u64 {
    let t = std::fs::read_to_string("/proc/meminfo").unwrap();
    t.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn the_task_in_direct_reclaim_is_named_with_its_ms_per_s() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: needs root for tracefs");
        return;
    }
    if !std::path::Path::new(EVENT).exists() {
        println!("skipped: no {EVENT}");
        return;
    }
    let (free, avail) = (meminfo_kb("MemFree"), meminfo_kb("MemAvailable"));
    let eat_mb = avail * 6 / 10 / 1024;
    let mut batch = Command::new(EXE)
        .args(["--batch", "--format", "json", "-i", "1", "-n", "48"])
        .args(["--no-config"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = batch.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(out)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(&l.unwrap()).unwrap())
            .collect::<Vec<_>>()
    });
    std::thread::sleep(Duration::from_secs(2));
    let mut eater = Command::new(EXE)
        .args(["eat", &format!("{eat_mb}M"), "--no-config"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // While it ramps (reclaim runs for all it takes past free memory), at most 36 s: it
    // touches ~300 MB/s as a debug build; then 4 s more holding it.
    let t0 = Instant::now();
    while vm_rss(eater.id()) < (eat_mb << 20) * 9 / 10 && t0.elapsed() < Duration::from_secs(36) {
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(4));
    drop(eater.stdin.take()); // EOF: the eater lets go and exits
    let _ = eater.wait();
    let _ = batch.wait();
    let records = reader.join().unwrap();
    let left = std::fs::read_dir("/sys/kernel/tracing/instances")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n == &format!("pagewatch-{}-reclaim", batch.id()))
        .count();
    assert_eq!(left, 0, "the batch's -reclaim instance outlived it");
    // The records where the tracer was armed and tasks entered direct reclaim.
    let armed: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| r.get("reclaim_tasks").is_some())
        .filter(|r| r["reclaim"]["allocstall_s"].as_f64().unwrap_or(0.0) >= 5.0)
        .collect();
    if armed.is_empty() {
        let any = records
            .iter()
            .any(|r| r["reclaim"]["allocstall_s"].as_f64().unwrap_or(0.0) > 0.0);
        println!(
            "skipped: no direct reclaim while armed (eater {eat_mb} MiB, MemFree {free} kB, \
             any allocstall: {any})"
        );
        return;
    }
    let named = armed.iter().find(|r| {
        let why = r["verdict"]["reclaim"]["why"].as_str().unwrap_or("");
        why.starts_with("direct reclaim: ") && why.contains(" ms/s") && why.contains('[')
    });
    let named = named.unwrap_or_else(|| {
        panic!(
            "{} records with direct reclaim while armed, none names a task: {:?}",
            armed.len(),
            armed
                .iter()
                .map(|r| &r["verdict"]["reclaim"])
                .collect::<Vec<_>>()
        )
    });
    let who = &named["verdict"]["reclaim"]["who"][0];
    assert!(who["ms_per_s"].as_f64().unwrap() >= 0.5, "{who}");
    assert!(who["pid"].as_u64().unwrap() > 0, "{who}");
    // The memory rows carry the figure (0 for those that did not reclaim) while armed: the
    // walk runs under direct reclaim.
    let walked: Vec<&serde_json::Value> = armed
        .iter()
        .filter_map(|r| r.get("processes_by_memory"))
        .collect();
    assert!(!walked.is_empty(), "no walk while direct reclaim ran");
    for rows in walked {
        let rows = rows.as_array().unwrap();
        assert!(
            rows.iter().all(|r| r["reclaim_ms_per_s"].is_number()),
            "{rows:?}"
        );
    }
}
