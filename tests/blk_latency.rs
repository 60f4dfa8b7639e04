//! Block latency per device (issue 25), live: root, tracefs with the block events, fio and
//! losetup (each test prints why it skipped otherwise). Every test reads only: a loop device
//! over a sparse file made here under /var/tmp (detached and removed at the end), read with
//! `fio --direct=1 --rw=randread`; nothing is written to any block device.
//!
//! - `device_time_agrees_with_fio`: `pagewatch --batch --format json --latency loopN` beside
//!   fio at a fixed queue depth; pagewatch's read device-time p50 and p99 agree with fio's
//!   completion-latency percentiles within the factor stated there, and the events that could
//!   not be paired are counted (`lat_lost`) and shown (the text line).
//! - `a_sigkilled_pagewatch_leaves_no_blk_instance`: the `pagewatch-<pid>-blk` instance with
//!   its three events enabled and filtered on the device exists while armed, and is gone
//!   within 3 s of a SIGKILL (its guard); the top-level block events are never touched.
//! - `nothing_is_armed_without_a_reason`: with no `--latency` and no disk flagged saturated,
//!   no status, no latency and no instance.
//! - `cost_of_the_armed_block_tracer` (ignored; `--ignored --nocapture`, set
//!   `PAGEWATCH_BIN=target/release/pagewatch`): whole-process CPU of the screen with
//!   `--latency` under fio randread at 20k IOPS, and htop's in the same run, both in tmux at
//!   160x48, 1 Hz.
#![allow(clippy::unwrap_used)]

#[path = "common/tmux.rs"]
mod tmux;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const TRACEFS: &str = "/sys/kernel/tracing";
const EVENTS: [&str; 3] = ["block_rq_insert", "block_rq_issue", "block_rq_complete"];

/// One test at a time: they share the CPU with fio.
fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Why these tests cannot run here, if they cannot.
fn cannot_run() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("not running as root".into());
    }
    for e in EVENTS {
        let f = Path::new(TRACEFS)
            .join("events/block")
            .join(e)
            .join("format");
        if !f.exists() {
            return Some(format!("no {} (tracefs not mounted there?)", f.display()));
        }
    }
    for tool in ["fio", "losetup"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Some(format!("{tool} is not installed"));
        }
    }
    None
}

/// A loop device over a sparse file of our own under /var/tmp; detached and removed when
/// dropped. Reads of its holes cost no disk IO, so fio reaches tens of thousands of IOPS.
struct Loop {
    dev: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn new() -> Option<Self> {
        let dir = tempfile::Builder::new()
            .prefix("pagewatch-blk-test")
            .tempdir_in("/var/tmp")
            .unwrap();
        let img = dir.path().join("img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .unwrap();
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !out.status.success() || !dev.starts_with("/dev/loop") {
            println!("skipped: losetup: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        Some(Self { dev, _dir: dir })
    }

    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    /// fio reading it at random, `--direct=1`, 4 KiB, `depth` deep, for `secs`.
    fn fio(&self, depth: u32, secs: u32, rate_iops: Option<u32>, json: bool) -> Child {
        let mut c = Command::new("fio");
        c.args(["--name=r", "--rw=randread", "--bs=4k", "--direct=1"])
            .args(["--ioengine=libaio", "--time_based"])
            .arg(format!("--filename={}", self.dev))
            .arg(format!("--iodepth={depth}"))
            .arg(format!("--runtime={secs}"));
        if let Some(r) = rate_iops {
            c.arg(format!("--rate_iops={r}"));
        }
        if json {
            c.arg("--output-format=json");
        }
        c.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).output();
    }
}

fn batch(args: &[&str]) -> Child {
    Command::new(EXE)
        .args(["--batch", "--format", "json"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn instance(pid: u32) -> PathBuf {
    Path::new(TRACEFS).join(format!("instances/pagewatch-{pid}-blk"))
}

/// The top-level `enable` of the three block events.
fn top_level_enables() -> Vec<String> {
    EVENTS
        .iter()
        .map(|e| {
            std::fs::read_to_string(
                Path::new(TRACEFS)
                    .join("events/block")
                    .join(e)
                    .join("enable"),
            )
            .unwrap()
        })
        .collect()
}

fn gone_within(p: &Path, secs: u64) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if !p.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    !p.exists()
}

/// The `q` quantile (ms) of log2-µs bucket counts (`lat_read_hist`), interpolated inside
/// the bucket holding the rank as pagewatch does.
fn quantile_ms(counts: &[u64], q: f64) -> f64 {
    let total: u64 = counts.iter().sum();
    let rank = q * total as f64;
    let mut below = 0u64;
    for (k, &c) in counts.iter().enumerate() {
        if c > 0 && (below + c) as f64 >= rank {
            let lo = if k == 0 {
                0.0
            } else {
                (1u64 << (k - 1)) as f64
            };
            let hi = if k == 0 { 1.0 } else { lo * 2.0 };
            return (lo + (hi - lo) * (rank - below as f64) / c as f64) / 1000.0;
        }
        below += c;
    }
    f64::NAN
}

/// Comparing pagewatch's device time with fio's completion latency. Two effects, each at
/// most 2x: (1) pagewatch keeps log2 buckets and interpolates inside the one holding the
/// rank, so its percentile lies in the true one's bucket, within 2x of it; (2) fio's clat
/// runs from the submission to the reaping of the IO, so it adds the block layer's and the
/// completion path's time (a few µs, against ~20-50 µs here) to the device time pagewatch
/// measures from `block_rq_issue`, and at the tail the wait of fio's thread for a CPU (on this
/// loaded 2-CPU VM its p99 ran 1.1-2x pagewatch's). So pagewatch/fio must lie in [1/4, 2]: below 1 by up to
/// 2x for (2) and 2x for (1), above 1 only by (1). fio's percentiles are of its whole run, so
/// pagewatch's are taken from its per-interval histograms (`lat_read_hist`) summed over the
/// intervals inside fio's run; the per-interval p50 is checked too, by its median.
const LOW: f64 = 0.25;
const HIGH: f64 = 2.0;

#[test]
fn device_time_agrees_with_fio() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let Some(lp) = Loop::new() else { return };
    let name = lp.name().to_owned();
    let mut pw = batch(&["-n", "9", "--latency", &name]);
    let out = BufReader::new(pw.stdout.take().unwrap());
    std::thread::sleep(Duration::from_millis(1500));
    // 20k IOPS: over the 10k of the issue, under what a debug build reads without losing
    // pages on this 2-CPU VM (the drops come in bursts, with the slow IOs of those moments).
    let fio = lp.fio(4, 6, Some(20_000), true);
    let mut rows = Vec::new();
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(d) = v["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name.as_str())
        {
            rows.push(d.clone());
        }
    }
    pw.wait().unwrap();
    let fio_out = fio.wait_with_output().unwrap();
    let j: serde_json::Value = serde_json::from_slice(&fio_out.stdout).unwrap();
    let read = &j["jobs"][0]["read"];
    let pct = |p: &str| read["clat_ns"]["percentile"][p].as_f64().unwrap() / 1e6;
    let (fio_p50, fio_p99) = (pct("50.000000"), pct("99.000000"));
    let fio_iops = read["iops"].as_f64().unwrap();
    // Every record while armed says how many events could not be paired (null: not armed).
    let armed: Vec<&serde_json::Value> =
        rows.iter().filter(|d| !d["lat_events"].is_null()).collect();
    assert!(!armed.is_empty(), "armed with --latency: {rows:?}");
    assert!(armed.iter().all(|d| d["lat_lost"].is_u64()), "{armed:?}");
    let peak = armed
        .iter()
        .map(|d| d["r_s"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max);
    let busy: Vec<&&serde_json::Value> = armed
        .iter()
        .filter(|d| d["r_s"].as_f64().unwrap_or(0.0) >= peak / 3.0)
        .collect();
    let r_s: Vec<&serde_json::Value> = armed.iter().map(|d| &d["r_s"]).collect();
    assert!(busy.len() >= 3, "3 intervals inside fio's run: r/s {r_s:?}");
    let mut sum = vec![0u64; 28];
    for d in &busy {
        for (k, c) in d["lat_read_hist"].as_array().unwrap().iter().enumerate() {
            sum[k] += c.as_u64().unwrap();
        }
    }
    let (p50, p99) = (quantile_ms(&sum, 0.5), quantile_ms(&sum, 0.99));
    let mut each: Vec<f64> = busy
        .iter()
        .map(|d| d["lat_read_p50_ms"].as_f64().unwrap())
        .collect();
    each.sort_by(f64::total_cmp);
    let each_p50 = each[each.len() / 2];
    let events: u64 = armed
        .iter()
        .map(|d| d["lat_events"].as_u64().unwrap())
        .sum();
    let lost: u64 = armed.iter().map(|d| d["lat_lost"].as_u64().unwrap()).sum();
    println!(
        "fio {fio_iops:.0} IOPS, clat p50 {fio_p50:.4} ms p99 {fio_p99:.4} ms; pagewatch \
         device time p50 {p50:.4} ms ({:.2}x) p99 {p99:.4} ms ({:.2}x); {events} events, \
         {lost} lost",
        p50 / fio_p50,
        p99 / fio_p99
    );
    let checks = [
        ("p50", p50, fio_p50),
        ("p99", p99, fio_p99),
        ("median of the intervals' p50", each_p50, fio_p50),
    ];
    for (what, ours, theirs) in checks {
        let r = ours / theirs;
        assert!(
            (LOW..=HIGH).contains(&r),
            "{what}: pagewatch {ours} ms vs fio {theirs} ms ({r:.2}x)"
        );
    }
    // The text line shows the percentiles and the lost count.
    let mut fio = lp.fio(1, 3, Some(2000), false);
    let text = Command::new(EXE)
        .args(["--batch", "-n", "2", "--latency", &name])
        .output()
        .unwrap();
    let _ = fio.wait();
    let text = String::from_utf8_lossy(&text.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("latency {name} ms")))
        .unwrap_or_else(|| panic!("a latency line for {name}:\n{text}"));
    assert!(
        line.contains("read p50") && line.contains(" lost "),
        "{line}"
    );
}

#[test]
fn a_sigkilled_pagewatch_leaves_no_blk_instance() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let Some(lp) = Loop::new() else { return };
    let before = top_level_enables();
    let mut pw = batch(&["-n", "100", "--latency", lp.name()]);
    let pid = pw.id();
    let inst = instance(pid);
    let end = Instant::now() + Duration::from_secs(15);
    while !inst.join("events/block/block_rq_complete/enable").exists() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(inst.is_dir(), "armed: {} exists", inst.display());
    let dev = std::fs::read_to_string(format!("/sys/class/block/{}/dev", lp.name())).unwrap();
    let (maj, min) = dev.trim().split_once(':').unwrap();
    let want = (maj.parse::<u32>().unwrap() << 20) | min.parse::<u32>().unwrap();
    for e in EVENTS {
        let dir = inst.join("events/block").join(e);
        assert_eq!(
            std::fs::read_to_string(dir.join("enable")).unwrap().trim(),
            "1",
            "{e}"
        );
        let filter = std::fs::read_to_string(dir.join("filter")).unwrap();
        assert!(filter.contains(&format!("dev == {want}")), "{e}: {filter}");
    }
    let clock = std::fs::read_to_string(inst.join("trace_clock")).unwrap();
    assert!(clock.contains("[mono]"), "the mono clock: {clock}");
    pw.kill().unwrap();
    pw.wait().unwrap();
    assert!(
        gone_within(&inst, 3),
        "the guard removed {}",
        inst.display()
    );
    assert_eq!(
        top_level_enables(),
        before,
        "the top-level events were not touched"
    );
}

#[test]
fn nothing_is_armed_without_a_reason() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let mut pw = batch(&["-n", "4"]);
    let pid = pw.id();
    let out = BufReader::new(pw.stdout.take().unwrap());
    let (mut saturated, mut seen_instance) = (false, false);
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        seen_instance |= instance(pid).exists();
        saturated |= v["disks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["saturated"] == true);
        if saturated {
            break;
        }
        assert!(
            v.get("latency_tracer").is_none(),
            "never wanted: {}",
            v["latency_tracer"]
        );
        assert!(
            v["disks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["lat_events"].is_null()),
            "no latency figures"
        );
    }
    let _ = pw.kill();
    let _ = pw.wait();
    if saturated {
        println!("skipped: a disk is saturated here (its latency is then timed, by design)");
        return;
    }
    assert!(!seen_instance, "no pagewatch-{pid}-blk instance at idle");
}

/// CPU ns of `pid`, every thread (utime + stime of `stat`, which counts threads that have
/// exited: the reader thread is replaced when the set of timed devices changes), and each
/// live `pagewatch-blk` thread's by thread id (`schedstat`).
fn cpu_ns(pid: u32) -> (u64, Vec<(String, u64)>) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rfind(')').map_or("", |i| &stat[i + 2..]);
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let tick_ns = 1e9 / rustix::param::clock_ticks_per_second() as f64;
    let all = (f.get(11).unwrap_or(&0) + f.get(12).unwrap_or(&0)) as f64 * tick_ns;
    let mut blk = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let ns: u64 = std::fs::read_to_string(t.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        if std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "pagewatch-blk")
        {
            blk.push((t.file_name().to_string_lossy().into_owned(), ns));
        }
    }
    (all as u64, blk)
}

/// The CPU ms per second of the program in the tmux pane over `secs`, after `warm` s: all
/// threads, and its block reader threads alive at the end (one started inside the window
/// counts from 0).
fn measure(s: &tmux::Session, warm: u64, secs: u64) -> (f64, f64) {
    std::thread::sleep(Duration::from_secs(warm));
    let pid = s.pagewatch_pid();
    let (a0, b0) = cpu_ns(pid);
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let (a1, b1) = cpu_ns(pid);
    let dt = t0.elapsed().as_secs_f64();
    assert!(
        Path::new(&format!("/proc/{pid}")).exists(),
        "still running:\n{}",
        s.screen()
    );
    let blk: u64 = b1
        .iter()
        .map(|(tid, ns)| {
            let before = b0.iter().find(|b| b.0 == *tid).map_or(0, |b| b.1);
            ns.saturating_sub(before)
        })
        .sum();
    (
        a1.saturating_sub(a0) as f64 / 1e6 / dt,
        blk as f64 / 1e6 / dt,
    )
}

#[test]
#[ignore = "a 60 s measurement; run with --ignored --nocapture (PAGEWATCH_BIN=target/release/pagewatch)"]
fn cost_of_the_armed_block_tracer() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    if Command::new("htop").arg("--version").output().is_err()
        || Command::new("tmux").arg("-V").output().is_err()
    {
        println!("skipped: htop or tmux is not installed");
        return;
    }
    let Some(lp) = Loop::new() else { return };
    let exe = std::env::var("PAGEWATCH_BIN").map_or_else(
        |_| EXE.to_owned(),
        |p| std::fs::canonicalize(p).unwrap().display().to_string(),
    );
    let secs = 20;
    // Runs through both measurements (about 50 s) and ends by itself, to print its IOPS.
    let fio = lp.fio(8, 2 * secs as u32 + 12, Some(20_000), true);
    let tag = std::process::id();
    let cmd = format!("{exe} --no-config --latency {}", lp.name());
    let s = tmux::Session::start(format!("pagewatch-blkcost-{tag}"), 160, 48, &cmd);
    let (pw, blk) = measure(&s, 5, secs);
    let pid = s.pagewatch_pid();
    let armed = instance(pid).is_dir();
    let filter = std::fs::read_to_string(instance(pid).join("events/block/block_rq_issue/filter"))
        .unwrap_or_default();
    println!("the instance's filter at the end: {}", filter.trim());
    drop(s);
    let s = tmux::Session::start(
        format!("pagewatch-blkcost-htop-{tag}"),
        160,
        48,
        "htop -d 10",
    );
    let (htop, _) = measure(&s, 3, secs);
    drop(s);
    let out = fio.wait_with_output().unwrap();
    let iops = serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .ok()
        .and_then(|j| j["jobs"][0]["read"]["iops"].as_f64());
    println!(
        "fio randread on {} at {} IOPS: pagewatch --latency{} {pw:.2} ms CPU/s (its block \
         reader thread {blk:.2}); htop -d 10, same run: {htop:.2} ms CPU/s",
        lp.name(),
        iops.map_or("?".to_owned(), |i| format!("{i:.0}")),
        if armed { " (armed)" } else { " (NOT armed)" },
    );
}

#[test]
fn a_recording_replays_the_distribution_and_the_report_draws_it() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let Some(lp) = Loop::new() else { return };
    let name = lp.name().to_owned();
    let dir = tempfile::Builder::new()
        .prefix("pagewatch-blk-rec")
        .tempdir_in("/var/tmp")
        .unwrap();
    let file = dir.path().join("rec.pwr");
    let fio = lp.fio(2, 7, Some(2000), false);
    let rec = Command::new(EXE)
        .args(["record", "--duration", "5", "--latency", &name])
        .arg(&file)
        .output()
        .unwrap();
    let _ = fio.wait_with_output();
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    // Replayed through the same derivation: the device's distribution is there.
    let out = Command::new(EXE)
        .args(["replay", "--batch", "--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    let timed = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| {
            v["disks"].as_array().unwrap().iter().any(|d| {
                d["name"] == name.as_str() && d["lat_read_p50_ms"].as_f64().is_some_and(|p| p > 0.0)
            })
        })
        .count();
    assert!(
        timed >= 2,
        "{timed} replayed records with {name}'s read p50"
    );
    // The report draws it.
    let rep = dir.path().join("report");
    let r = Command::new(EXE)
        .arg("report")
        .arg(&file)
        .arg("-o")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let svg = std::fs::read_to_string(rep.join(format!("latency-{name}.svg"))).unwrap();
    assert!(
        svg.contains("<rect") && svg.contains("read p99"),
        "a heat map with p99"
    );
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    assert!(
        md.contains(&format!("(latency-{name}.svg)")),
        "linked from report.md"
    );
    replay_screen_shows_the_heat_map(&file, &name);
}

/// The screen replays `file`: the detail view of `name` shows its percentiles and a shaded
/// heat map.
fn replay_screen_shows_the_heat_map(file: &Path, name: &str) {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("skipped the screen: tmux is not installed");
        return;
    }
    let cmd = format!("{EXE} --no-config replay {}", file.display());
    let s = tmux::Session::start(
        format!("pagewatch-blkreplay-{}", std::process::id()),
        160,
        48,
        &cmd,
    );
    s.wait_for("every", 20);
    std::thread::sleep(Duration::from_secs(6));
    let screen = open_detail(&s, name);
    assert!(screen.contains("device time (heat map)"), "{screen}");
    assert!(
        screen.contains("lat ms       p50"),
        "the percentiles:\n{screen}"
    );
    // A row of the map: a bucket label (`16us`, `2ms`), then shaded cells.
    let map_row = |l: &str| {
        l.split('│').any(|cell| {
            let t = cell.trim_start();
            let label = t.split(' ').next().unwrap_or("");
            let unit = label.trim_start_matches(|c: char| c.is_ascii_digit());
            unit.len() < label.len()
                && ["us", "ms", "s"].contains(&unit)
                && t[label.len()..].contains(['█', '▓', '▒', '░'])
        })
    };
    assert!(
        screen.lines().any(map_row),
        "shaded heat map rows:\n{screen}"
    );

    s.keys(&["q"]);
}

#[test]
fn the_detail_view_arms_and_esc_disarms() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("skipped: tmux is not installed");
        return;
    }
    let Some(lp) = Loop::new() else { return };
    let name = lp.name().to_owned();
    // IO throughout: a disk without any since boot is not listed (as iostat), and one with
    // some sorts near the top (by %util).
    let fio = lp.fio(1, 40, Some(2000), false);
    let cmd = format!("{EXE} --no-config");
    let tag = std::process::id();
    let s = tmux::Session::start(format!("pagewatch-blkdetail-{tag}"), 160, 48, &cmd);
    s.wait_for("every", 20);
    std::thread::sleep(Duration::from_secs(2));
    let pid = s.pagewatch_pid();
    let inst = instance(pid);
    open_detail(&s, &name);
    let end = Instant::now() + Duration::from_secs(5);
    while !inst.is_dir() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        inst.is_dir(),
        "Enter on {name} armed {}:\n{}",
        inst.display(),
        s.screen()
    );
    let dev = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).unwrap();
    let (maj, min) = dev.trim().split_once(':').unwrap();
    let want = format!(
        "dev == {}",
        (maj.parse::<u32>().unwrap() << 20) | min.parse::<u32>().unwrap()
    );
    // The instance is made afresh when the set of devices changes (another disk flagged
    // saturated): its filter is written just after it is created.
    let filter = || {
        std::fs::read_to_string(inst.join("events/block/block_rq_issue/filter")).unwrap_or_default()
    };
    let end = Instant::now() + Duration::from_secs(5);
    while !filter().contains(&want) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(filter().contains(&want), "{}", filter());
    s.keys(&["Escape"]);
    // No longer timed with the next sample's wants: the instance is gone, or (another disk
    // flagged saturated is still timed) made afresh without this device in its filter. 15 s
    // because a disk the verdict flagged saturated (a burst as fio starts) stays timed for
    // 10 s after (`who::LINGER_S`).
    let end = Instant::now() + Duration::from_secs(15);
    let timed = || inst.exists() && filter().contains(&want);
    while timed() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!timed(), "Esc disarmed {name}:\n{}", s.screen());
    println!(
        "after Esc: {}",
        if inst.exists() {
            format!("still armed for another disk: {}", filter().trim())
        } else {
            "no instance".to_owned()
        }
    );
    s.keys(&["q"]);
    let mut fio = fio;
    let _ = fio.kill();
    let _ = fio.wait();
}

/// Opens the detail view of disk `name` (Enter; if another disk's opens, Esc and Down to the
/// next), and returns the screen showing it.
fn open_detail(s: &tmux::Session, name: &str) -> String {
    let title = format!("{name} (Esc: back)");
    let mut screen = String::new();
    for _ in 0..30 {
        s.keys(&["Enter"]);
        std::thread::sleep(Duration::from_millis(400));
        screen = s.screen();
        if screen.contains(&title) {
            return screen;
        }
        // Apart: ESC and an arrow's sequence at once would read as Alt and the arrow.
        s.keys(&["Escape"]);
        std::thread::sleep(Duration::from_millis(200));
        s.keys(&["Down"]);
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("no detail view of {name}:\n{screen}");
}
