//! Exited writers credited to themselves, against the live kernel (root; needs dd and fio),
//! issue #24's first acceptance line with taskstats exit notifications:
//!
//! A shell loop of buffered `dd if=/dev/zero` writers, each writing 128 MiB 128 bytes at a
//! time (about 1.5 s on an idle 2-vCPU VM, ~90 MB/s; the small blocks pace it by CPU, so the
//! loop needs no FIFO) into a fresh file that is removed as soon as dd exits (its dirty pages
//! are dropped, never written: the loop costs the disk nothing), beside a long-lived buffered
//! fio writing 20 MB/s. Over 16 records of plain `pagewatch --batch --format json` (which,
//! like `record`, walks every 5 s while there is something to attribute: `--view` only picks
//! the screen's view, issue 50) and a `pagewatch record` of the same time:
//! - the exits come from taskstats (`exits.source`) from the first walk on;
//! - `dd` (by comm) leads the scene's rows of `processes[]` by dirtied bytes in most records
//!   with rates;
//! - dd processes that exited are rows of their own (`exited: true`), and each dd that lived
//!   and exited between the first and the last walk is credited its 128 MiB in full (its
//!   live row's bytes plus its exited row's, rate × `walk_ms`);
//! - the shell never shows its children's IO as its own rate (charged exactly, its jumps
//!   read about 0; otherwise they have no rate);
//! - the report's by-command table names dd, rolled up over its pids.
//!
//! The vm.dirty_* settings are left alone.
#![allow(clippy::unwrap_used)]

#[path = "common/live.rs"]
mod live;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use live::{Group, Killed, have, is_root};

/// Batch records taken: three 5 s walks.
const RECORDS: usize = 16;
/// Bytes each dd writes.
const DD_BYTES: f64 = 128.0 * 1024.0 * 1024.0;

fn rows(m: &Value) -> &[Value] {
    m["processes"].as_array().map_or(&[], Vec::as_slice)
}

/// A row's dirtied bytes over the span its rates cover.
fn bytes(r: &Value) -> Option<f64> {
    Some(r["dirtied_bytes_per_s"].as_f64()? * r["walk_ms"].as_f64()? / 1000.0)
}

/// The scene in `dir`: the fio and the shell loop of dd.
fn scene(dir: &str) -> (Killed, Group) {
    let fio = Killed(
        Command::new("fio")
            .args(["--name=bg", "--rw=write", "--bs=1M", "--size=256M"])
            .args([
                "--rate=20m",
                "--time_based",
                "--runtime=60",
                "--ioengine=psync",
            ])
            .arg(format!("--filename={dir}/fio.dat"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let script = format!(
        "i=0; while :; do dd if=/dev/zero of={dir}/f$i bs=128 count=1048576 conv=notrunc \
         status=none; rm -f {dir}/f$i; i=$((i+1)); done"
    );
    let shell = Group({
        use std::os::unix::process::CommandExt;
        Command::new("sh")
            .args(["-c", &script])
            .process_group(0)
            .spawn()
            .unwrap()
    });
    (fio, shell)
}

/// `RECORDS` records of plain batch JSON.
fn batch(exe: &str) -> Vec<Value> {
    let out = Command::new(exe)
        .args([
            "--batch",
            "--format",
            "json",
            "--interval",
            "1",
            "--count",
            &RECORDS.to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The leading row of the scene's rows, record by record, by dirtied bytes.
fn leaders(records: &[Value], ours: impl Fn(&Value) -> bool) -> Vec<String> {
    records
        .iter()
        .map(|m| {
            rows(m)
                .iter()
                .filter(|r| ours(r) && bytes(r).is_some())
                .max_by(|a, b| bytes(a).unwrap().total_cmp(&bytes(b).unwrap()))
                .map_or("-".to_owned(), |r| r["comm"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Every dd's credited bytes (each walk's row once), whether it has an exited row, and
/// whether it was listed at the first walk with rates (then its start is not counted).
fn dd_credited(
    records: &[Value],
    ours: impl Fn(&Value) -> bool,
) -> BTreeMap<u64, (f64, bool, bool)> {
    let mut walks: BTreeMap<(u64, u64, bool), &Value> = BTreeMap::new();
    for r in records.iter().flat_map(rows) {
        let key = (
            r["pid"].as_u64().unwrap(),
            r["rates_from_walk_ms"].as_u64().unwrap(),
            r["exited"] == true,
        );
        walks.insert(key, r);
    }
    let first_walk = walks.keys().map(|k| k.1).min().unwrap();
    let mut per_dd: BTreeMap<u64, (f64, bool, bool)> = BTreeMap::new();
    for (&(pid, walk, exited), r) in &walks {
        if r["comm"] != "dd" || !ours(r) {
            continue;
        }
        let e = per_dd.entry(pid).or_insert((0.0, false, false));
        e.0 += bytes(r).unwrap_or(0.0);
        e.1 |= exited;
        e.2 |= walk == first_walk;
    }
    per_dd
}

/// The report's by-command row for dd, and its count of pids.
fn report_dd(exe: &str, rec: &std::path::Path, out: &std::path::Path) -> (String, usize) {
    let st = Command::new(exe)
        .args(["report", "--no-config", "-o"])
        .arg(out)
        .arg(rec)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.lines()
            .skip_while(|l| !l.starts_with("Top dirtiers"))
            .take(14)
            .any(|l| l.contains("| dd |")),
        "no dd among the top dirtiers:\n{md}"
    );
    let line = md
        .lines()
        .find(|l| l.starts_with("| dd ×"))
        .unwrap_or_else(|| panic!("no dd in the by-command table:\n{md}"))
        .to_owned();
    let pids = line["| dd ×".len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap();
    (line, pids)
}

#[test]
fn a_loop_of_short_dd_writers_is_credited_to_dd_not_to_the_shell() {
    if !is_root() || !have("fio") || !have("dd") {
        println!("skipped: needs root (taskstats exit notifications, every io file), dd and fio");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("pagewatch-exits")
        .tempdir_in("/var/tmp")
        .unwrap();
    let d = dir.path().display().to_string();
    let (_fio, shell) = scene(&d);
    std::thread::sleep(Duration::from_secs(2));
    let exe = env!("CARGO_BIN_EXE_pagewatch");
    let rec = dir.path().join("scene.pwr");
    let mut record = Killed(
        Command::new(exe)
            .args(["record", "--no-config", "--duration", "13"])
            .arg(&rec)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let records = batch(exe);
    assert_eq!(records.len(), RECORDS);
    let shell_pid = u64::from(shell.0.id());

    // The listener registers with the first walk, at the first record that gives a reason
    // (whose rows come with rates at the walk after).
    let before = |m: &Value| m["exits"]["source"].is_null();
    let sources: BTreeSet<String> = records
        .iter()
        .skip_while(|m| before(m))
        .map(|m| m["exits"]["source"].as_str().unwrap_or("-").to_owned())
        .collect();
    assert!(
        records.iter().take_while(|m| before(m)).count() <= 2,
        "the walk starts within 2 records"
    );
    assert_eq!(
        sources,
        BTreeSet::from(["taskstats".to_owned()]),
        "exits.source"
    );

    // The scene's rows: the dd (an exited one has no command line, it was never walked), the
    // fio and the shell; the machine is shared and other writers may outpace them.
    let ours = |r: &Value| {
        r["pid"] == shell_pid
            || r["cmdline"]
                .as_str()
                .map_or(r["comm"] == "dd", |c| c.contains(&d))
    };
    let leaders = leaders(&records, ours);
    eprintln!("leaders by dirtied bytes, record by record: {leaders:?}");
    let led = leaders.iter().filter(|c| *c == "dd").count();
    let rated = leaders.iter().filter(|c| *c != "-").count();
    assert!(
        rated >= 5 && led * 2 > rated,
        "dd led {led} of the {rated} records with rates: {leaders:?}"
    );

    let per_dd = dd_credited(&records, ours);
    eprintln!("dd credited (bytes, exited, at the first walk): {per_dd:?}");
    let exited = per_dd.values().filter(|d| d.1).count();
    assert!(exited >= 3, "exited dd rows: {per_dd:?}");
    let whole: Vec<f64> = per_dd
        .values()
        .filter(|(_, exited, first)| *exited && !*first)
        .map(|(b, _, _)| b / DD_BYTES)
        .collect();
    assert!(
        whole.len() >= 2,
        "dd that lived between the walks: {whole:?}"
    );
    for share in &whole {
        assert!(
            (0.9..=1.02).contains(share),
            "a dd credited {share:.3} of its 128 MiB: {whole:?}"
        );
    }

    // The shell: never a rate of its children's size (its jumps charged exactly read about
    // 0; those it cannot charge exactly have no rate). On a busy machine a shell at 0 ranks
    // below the top 20 and has few rows or none; one credited its children's ~90 MB/s would
    // lead them.
    let shell_rows: Vec<&Value> = records
        .iter()
        .flat_map(rows)
        .filter(|r| r["pid"] == shell_pid)
        .collect();
    for r in &shell_rows {
        let rate = r["dirtied_bytes_per_s"].as_f64();
        assert!(
            rate.is_none_or(|x| x < f64::from(1 << 20)),
            "the shell: {r:#}"
        );
    }
    let charged = shell_rows
        .iter()
        .filter(|r| r["reaped_children"] == true && r["dirtied_bytes_per_s"].is_number())
        .count();
    eprintln!(
        "shell rows: {}, charged exactly: {charged}",
        shell_rows.len()
    );

    // The report, from the recording of the same time: dd rolled up over its pids. Walks
    // every 5 s while recording: without exits, only the dd alive at a walk (2 in 13 s).
    let _ = record.0.wait();
    let (line, pids) = report_dd(exe, &rec, &dir.path().join("report"));
    eprintln!("report: {line}");
    assert!(pids >= 3, "dd rolled up over {pids} pids: {line}");
}
