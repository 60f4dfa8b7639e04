//! The memory "who" against the live kernel (root, to read every process): an eater taking
//! 4 GiB (`pagewatch eat 4G`, held for under 30 s) leads batch JSON `processes_by_memory[]`
//! within two walks once it holds it. Changes no kernel setting.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const GIB: u64 = 1 << 30;

fn vm_rss(pid: u32) -> u64 {
    let t = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    t.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[test]
fn an_eater_taking_4_gib_leads_the_memory_sort_within_two_walks() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: needs root to read every process");
        return;
    }
    // Batch mode walks while memory is taken fast (and 10 s after): 14 records, 1 s apart.
    let mut batch = Command::new(EXE)
        .args([
            "--batch",
            "--format",
            "json",
            "--interval",
            "1",
            "--count",
            "14",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = batch.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            if tx.send((Instant::now(), v)).is_err() {
                return;
            }
        }
    });
    std::thread::sleep(Duration::from_secs(2));
    let mut eater = Command::new(EXE)
        .args(["eat", "4G"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = eater.id();
    let t0 = Instant::now();
    while vm_rss(pid) < 4 * GIB * 95 / 100 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let full = Instant::now();
    let took = vm_rss(pid);
    let _ = batch.wait();
    drop(eater.stdin.take()); // EOF: the eater lets go and exits
    let _ = eater.wait();
    reader.join().unwrap();
    assert!(
        took >= 4 * GIB * 95 / 100,
        "the eater took only {took} bytes (refused? {:?})",
        eater.stderr.take().map(std::io::read_to_string)
    );
    assert!(full.duration_since(t0) < Duration::from_secs(30));
    // The walks after the eater holds its 4 GiB: each new list of rows is a new walk (the
    // records between walks repeat the last one's).
    let records: Vec<(Instant, serde_json::Value)> = rx.try_iter().collect();
    let mut walks: Vec<&serde_json::Value> = Vec::new();
    let mut last: Option<&serde_json::Value> = None;
    for (at, v) in &records {
        let Some(rows) = v.get("processes_by_memory") else {
            continue;
        };
        if last != Some(rows) && *at > full {
            walks.push(rows);
        }
        last = Some(rows);
    }
    assert!(
        !walks.is_empty(),
        "no walk after the eater took its memory ({} records)",
        records.len()
    );
    let leads = |rows: &serde_json::Value| {
        let first = &rows[0];
        first["pid"] == pid && first["rss_bytes"].as_u64().unwrap_or(0) >= 4 * GIB * 95 / 100
    };
    assert!(
        walks.iter().take(2).any(|w| leads(w)),
        "the eater {pid} does not lead the first two walks after it took 4 GiB: {}",
        serde_json::to_string_pretty(&walks.iter().take(2).collect::<Vec<_>>()).unwrap()
    );
    let row = walks
        .iter()
        .flat_map(|w| w.as_array().unwrap())
        .find(|r| r["pid"] == pid)
        .unwrap();
    for key in [
        "rss_bytes",
        "anon_bytes",
        "rss_growth_bytes_per_s",
        "majflt_per_s",
        "oom_score_adj",
    ] {
        assert!(row.get(key).is_some(), "no {key} in {row}");
    }
    assert!(
        row["anon_bytes"].as_u64().unwrap() >= 4 * GIB * 9 / 10,
        "{row}"
    );
}
