//! A burst of short writers counted in full, against the live kernel (root; needs dd): issue
//! 50's acceptance line "20 `dd` of 200 MB each in a bash loop, under `record`: the report's
//! By command and the summed batch `commands[]` read dd ×20 and 4.0 GB ± 5 %", smaller.
//!
//! `pagewatch record` and plain `pagewatch --batch --format json` start on a machine that may
//! be quiet (then neither walks the processes: the walk starts a sample after the load that
//! asks for it). 6 s later a shell runs 20 `dd bs=1M count=40 conv=fsync`, one after another,
//! each living a fraction of a second. The dd runs under its own name, `dd-burst` (a symlink),
//! so that no other dd on the machine counts. Then:
//! - every batch record says where exits come from, listening from the first (`exits.state`),
//!   walk or not;
//! - summed over the batch's walks (each walk once: `rates_from_walk_ms`), `commands[]` has
//!   20 `exited` dd-burst and their 20 × 40 MiB = 800 MiB ± 5 % (rate × `walk_ms`);
//! - the report's By command reads `dd-burst ×20` and 800M ± 5 %.
//!
//! Before issue 50 the listener started with the walk, and on a quiet machine 20 dd of 200 MB
//! read `dd ×4, 600M` in the report.
#![allow(clippy::unwrap_used)]

#[path = "common/live.rs"]
mod live;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use live::{Killed, have, is_root};

/// The dd processes and what each dirties.
const DD: usize = 20;
const DD_MIB: u64 = 40;
const COMM: &str = "dd-burst";

/// The dirtied cell of the report's By command (`800M`, binary units) in bytes.
fn bytes_of(cell: &str) -> f64 {
    let cell = cell.trim();
    let (num, unit) = cell.split_at(cell.len() - 1);
    let mult = match unit {
        "K" => 1u64 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => panic!("no unit in {cell}"),
    };
    num.parse::<f64>().unwrap() * mult as f64
}

/// The batch's `commands[]` row for `COMM` at each walk (records repeat a walk's rows).
fn walks(records: &[Value]) -> BTreeMap<u64, Value> {
    let mut walks = BTreeMap::new();
    for c in records
        .iter()
        .filter_map(|m| m["commands"].as_array())
        .flatten()
    {
        if c["comm"] == COMM {
            walks.insert(c["rates_from_walk_ms"].as_u64().unwrap(), c.clone());
        }
    }
    walks
}

#[test]
fn twenty_short_dd_on_a_quiet_machine_are_twenty_in_batch_and_report_with_all_their_bytes() {
    if !is_root() || !have("dd") {
        println!("skipped: needs root (taskstats exit notifications) and dd");
        return;
    }
    let _lock = live::lock();
    let dir = tempfile::Builder::new()
        .prefix("pagewatch-exits-burst")
        .tempdir_in("/var/tmp")
        .unwrap();
    let dd = dir.path().join(COMM);
    let real = Command::new("sh").args(["-c", "command -v dd"]).output();
    let real = String::from_utf8(real.unwrap().stdout).unwrap();
    std::os::unix::fs::symlink(real.trim(), &dd).unwrap();
    let exe = env!("CARGO_BIN_EXE_pagewatch");
    let rec = dir.path().join("burst.pwr");
    let mut record = Killed(
        Command::new(exe)
            .args(["--no-config", "record"])
            .arg(&rec)
            .args(["--duration", "22s"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let batch = Command::new(exe)
        .args([
            "--no-config",
            "--batch",
            "--format",
            "json",
            "--count",
            "20",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(6));
    let d = dir.path().display();
    let script = format!(
        "for i in $(seq 1 {DD}); do {d}/{COMM} if=/dev/zero of={d}/f$i bs=1M count={DD_MIB} \
         conv=fsync status=none || exit 1; done; rm -f {d}/f*"
    );
    let st = Command::new("sh").args(["-c", &script]).status().unwrap();
    assert!(st.success(), "the dd loop failed");
    let out = batch.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(record.0.wait().unwrap().success(), "record failed");
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let want = ((DD as u64 * DD_MIB) << 20) as f64;
    batch_counts_them(&records, want);
    report_counts_them(exe, dir.path(), &rec, want);
}

/// Every record listening, and `commands[]` summed over the walks: `DD` exited, `want` bytes.
fn batch_counts_them(records: &[Value], want: f64) {
    // Listening from the first record, whether or not a walk ran.
    for m in records {
        assert_eq!(m["exits"]["state"], "listening", "{}", m["exits"]);
    }
    let walks = walks(records);
    let sum = |key: &str| -> u64 { walks.values().map(|c| c[key].as_u64().unwrap()).sum() };
    let (exited, pids) = (sum("exited"), sum("pids"));
    let dirtied: f64 = walks
        .values()
        .map(|c| {
            let rate = c["dirtied_bytes_per_s"].as_f64().unwrap_or(0.0);
            rate * c["walk_ms"].as_f64().unwrap_or(0.0) / 1000.0
        })
        .sum();
    println!(
        "batch: {COMM} exited {exited}, pids {pids}, {dirtied:.0} bytes of {want:.0} over {} walks",
        walks.len()
    );
    assert_eq!(exited, DD as u64, "{walks:?}");
    assert!(pids >= DD as u64, "{walks:?}");
    assert!(
        (dirtied / want - 1.0).abs() <= 0.05,
        "{dirtied} of {want}: {walks:?}"
    );
}

/// The report of `rec`, written under `dir`: By command reads `COMM ×DD` and `want` bytes.
fn report_counts_them(exe: &str, dir: &Path, rec: &Path, want: f64) {
    let st = Command::new(exe)
        .args(["--no-config", "report", "-o"])
        .arg(dir.join("report"))
        .arg(rec)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let md = std::fs::read_to_string(dir.join("report/report.md")).unwrap();
    let line = md
        .lines()
        .find(|l| l.starts_with(&format!("| {COMM} ×")))
        .unwrap_or_else(|| panic!("no {COMM} in By command:\n{md}"));
    println!("report: {line}");
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    assert_eq!(cells[1], format!("{COMM} ×{DD}"), "{line}");
    let reported = bytes_of(cells[3]);
    assert!(
        (reported / want - 1.0).abs() <= 0.05,
        "{reported} of {want}: {line}"
    );
}
