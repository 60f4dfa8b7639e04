//! Throttled writers from the `writeback:balance_dirty_pages` tracepoint, live (root, tracefs
//! and fio; each test says why it skipped otherwise): two buffered fio writers under
//! `vm.dirty_bytes` = 64 MiB are listed in batch JSON's `throttled[]` from the tracepoint with
//! pauses; pagewatch's tracefs instance is gone after a normal end and after a SIGKILL (its
//! guard); the top-level instance's `enable` of the event is never changed.
//!
//! `vm.dirty_bytes` and `vm.dirty_ratio` are restored afterwards, also on failure (`DirtyKnobs`).
//! fio writes into a temporary directory under /var/tmp made here, removed at the end.
//! The screen too: at 160x48 in tmux the throttled-writers table shows the fio workers from the
//! tracepoint, and `q` removes the instance.
//! `cost_of_the_armed_tracepoint` (ignored; run with `--ignored --nocapture`) prints
//! pagewatch's CPU per second with the tracepoint armed under the two writers.
#![allow(clippy::unwrap_used)]

#[path = "common/live.rs"]
mod live;
#[path = "common/sysctl.rs"]
mod sysctl;
#[path = "common/tmux.rs"]
mod tmux;
#[path = "common/tracefs.rs"]
mod tracefs;

use live::{cannot_trace, lock};
use sysctl::DirtyKnobs;
use tracefs::gone_within;

fn instance(pid: u32) -> PathBuf {
    tracefs::instance(pid, "")
}

fn top_level_enable() -> String {
    tracefs::top_level_enables(&[EVENT.trim_start_matches("events/")]).remove(0)
}

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const EVENT: &str = "events/writeback/balance_dirty_pages";
const VM: &str = "/proc/sys/vm";

/// Why these tests cannot run here, if they cannot.
fn cannot_run() -> Option<String> {
    if let Some(why) = cannot_trace(&[EVENT], &["fio"]) {
        return Some(why);
    }
    if std::fs::write(
        Path::new(VM).join("dirty_expire_centisecs"),
        read_knob("dirty_expire_centisecs").to_string(),
    )
    .is_err()
    {
        return Some("cannot write /proc/sys/vm".into());
    }
    None
}

fn read_knob(knob: &str) -> u64 {
    std::fs::read_to_string(Path::new(VM).join(knob))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Two buffered fio writers in a temporary directory; killed and removed when dropped.
struct Writers {
    fio: Child,
    dir: tempfile::TempDir,
}

impl Writers {
    fn start(secs: u32) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("pagewatch-throttle-test")
            .tempdir_in("/var/tmp")
            .unwrap();
        let fio = Command::new("fio")
            .args([
                "--name=w",
                "--rw=write",
                "--bs=1M",
                "--size=1G",
                "--ioengine=psync",
                "--numjobs=2",
                "--time_based",
                &format!("--runtime={secs}"),
            ])
            .arg(format!("--directory={}", dir.path().display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Writers { fio, dir }
    }

    /// The writing processes: fio's children named fio (its job workers).
    fn workers(&self) -> Vec<u32> {
        let main = self.fio.id();
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            let Some(close) = stat.rfind(')') else {
                continue;
            };
            let comm = stat.find('(').map(|o| &stat[o + 1..close]);
            let parent: Option<u32> = stat[close + 1..]
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse().ok());
            if comm == Some("fio") && parent == Some(main) {
                out.push(pid);
            }
        }
        out.sort_unstable();
        out
    }
}

impl Drop for Writers {
    fn drop(&mut self) {
        let pid = rustix::process::Pid::from_raw(i32::try_from(self.fio.id()).unwrap()).unwrap();
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.fio.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.fio.kill();
        let _ = self.fio.wait();
        let _ = &self.dir;
    }
}

fn batch(count: u32) -> Child {
    Command::new(std::env::var("PAGEWATCH_BIN").unwrap_or_else(|_| EXE.into()))
        .args(["--batch", "--format", "json", "--interval", "1", "--count"])
        .arg(count.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Reads JSON records from pagewatch until `done` says so or the output ends.
fn records(
    child: &mut Child,
    mut done: impl FnMut(&serde_json::Value) -> bool,
) -> Vec<serde_json::Value> {
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut all = Vec::new();
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        let stop = done(&v);
        all.push(v);
        if stop {
            break;
        }
    }
    all
}

fn armed(v: &serde_json::Value) -> bool {
    v["tracer"]["state"] == "armed"
}

#[test]
fn two_throttled_writers_are_listed_and_the_instance_is_removed() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let before = top_level_enable();
    let _restore = DirtyKnobs::set_dirty_bytes(64 << 20);
    let writers = Writers::start(60);
    std::thread::sleep(Duration::from_secs(2));
    let workers = writers.workers();
    assert_eq!(workers.len(), 2, "fio's two workers: {workers:?}");
    let mut pw = batch(14);
    let pid = pw.id();
    let mut during = None;
    let all = records(&mut pw, |v| {
        if armed(v) && during.is_none() {
            during = Some((top_level_enable(), instance(pid).is_dir()));
        }
        false
    });
    assert!(pw.wait().unwrap().success());
    assert!(
        !instance(pid).exists(),
        "the instance is removed at a normal end"
    );
    let (enable_during, existed) = during.expect("the tracepoint was armed at some record");
    assert!(existed, "pagewatch-{pid} existed while armed");
    assert_eq!(
        enable_during, before,
        "the top-level enable was not touched while armed"
    );
    assert_eq!(top_level_enable(), before, "nor after");
    for w in &workers {
        // A record taken before the tracepoint armed lists writers from the process walk's
        // wchan only (the gate can open the walk a sample before the tracepoint); once armed,
        // a wchan row stands only for a task the tracepoint did not report in that record.
        for v in &all {
            let rows = v["throttled"].as_array().unwrap();
            for r in rows {
                if !armed(v) {
                    assert_eq!(r["source"], "wchan", "not armed: {v}");
                } else if r["source"] == "wchan" {
                    assert!(
                        !rows
                            .iter()
                            .any(|t| t["source"] == "tracepoint" && t["pid"] == r["pid"]),
                        "a task listed twice: {v}"
                    );
                }
            }
        }
        let rows: Vec<&serde_json::Value> = all
            .iter()
            .flat_map(|v| v["throttled"].as_array().unwrap())
            .filter(|r| r["pid"] == *w && r["source"] == "tracepoint")
            .collect();
        assert!(!rows.is_empty(), "worker {w} listed: {all:?}");
        assert!(rows.iter().all(|r| r["comm"] == "fio"), "{rows:?}");
        let most = rows
            .iter()
            .filter_map(|r| r["pause_ms_per_s"].as_f64())
            .fold(0.0, f64::max);
        println!(
            "worker {w}: {} rows, at most {most:.0} ms/s paused",
            rows.len()
        );
        assert!(most > 0.0, "worker {w} paused");
        assert!(rows.iter().all(|r| r["is_self"] == false));
    }
    kernel_limit_against_ours(&all);
}

/// The kernel's own figures in the events against ours (spec §7, §1.10): the tracepoint's
/// `setpoint` is `(limit + freerun) / 2` with the kernel's freerun `(thresh + bg_thresh) / 2`,
/// so `2·setpoint − limit` is the kernel's freerun (or one less, the division's rounding) and
/// must equal the derived one; and the hard limit is never below the threshold. With
/// `vm.dirty_bytes` fixed, both thresholds are fixed over the run, so each record's event and
/// its derived figures agree exactly.
fn kernel_limit_against_ours(all: &[serde_json::Value]) {
    let mut checked = 0;
    for v in all {
        let d = &v["dirty"];
        let (Some(limit), Some(setpoint)) = (
            d["kernel_limit_pages"].as_u64(),
            d["kernel_setpoint_pages"].as_u64(),
        ) else {
            continue;
        };
        let (freerun, thresh) = (
            d["freerun_pages"].as_u64().unwrap(),
            d["thresh_pages"].as_u64().unwrap(),
        );
        let kernel_freerun = (2 * setpoint)
            .checked_sub(limit)
            .unwrap_or_else(|| panic!("setpoint {setpoint} under half the limit {limit}"));
        assert!(
            kernel_freerun == freerun || kernel_freerun + 1 == freerun,
            "kernel freerun {kernel_freerun} (2·{setpoint} − {limit}) vs derived {freerun}"
        );
        assert!(limit >= thresh, "hard limit {limit} under thresh {thresh}");
        checked += 1;
    }
    println!("kernel limit and setpoint checked against ours in {checked} records");
    assert!(checked > 0, "no record had the kernel's limit");
}

#[test]
fn a_sigkilled_pagewatch_leaves_no_instance_behind() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let before = top_level_enable();
    let _restore = DirtyKnobs::set_dirty_bytes(64 << 20);
    let _writers = Writers::start(40);
    let mut pw = batch(100);
    let pid = pw.id();
    let seen = records(&mut pw, armed);
    assert!(
        seen.last().is_some_and(armed),
        "armed within the run: {seen:?}"
    );
    assert!(instance(pid).is_dir());
    pw.kill().unwrap();
    pw.wait().unwrap();
    assert!(
        gone_within(&instance(pid), 3),
        "the guard removed pagewatch-{pid} within 3 s"
    );
    assert_eq!(
        top_level_enable(),
        before,
        "the top-level enable was not touched"
    );
}

/// pagewatch's CPU time so far, ms: its main thread's run time from `schedstat` (batch mode
/// has one thread), in ns; else utime + stime from `stat`, in clock ticks.
fn cpu_ms(pid: u32) -> f64 {
    if let Some(ns) = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
    {
        return ns as f64 / 1e6;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15, i.e. 11 and 12 after the state.
    let ticks = f[11] + f[12];
    ticks as f64 * 1000.0 / rustix::param::clock_ticks_per_second() as f64
}

#[test]
#[ignore = "a 30 s measurement; run with --ignored --nocapture (PAGEWATCH_BIN=target/release/pagewatch)"]
fn cost_of_the_armed_tracepoint() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let _restore = DirtyKnobs::set_dirty_bytes(64 << 20);
    let _writers = Writers::start(60);
    let mut pw = batch(40);
    let pid = pw.id();
    let mut out = BufReader::new(pw.stdout.take().unwrap()).lines();
    let mut events = 0u64;
    // Wait until armed with events coming, then measure over 20 records.
    for line in out.by_ref() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if armed(&v) && v["tracer"]["events"].as_u64().unwrap_or(0) > 0 {
            break;
        }
    }
    let (c0, t0) = (cpu_ms(pid), Instant::now());
    let mut armed_all = true;
    for line in out.by_ref().take(20) {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        armed_all &= armed(&v);
        events += v["tracer"]["events"].as_u64().unwrap_or(0);
    }
    let (c1, secs) = (cpu_ms(pid), t0.elapsed().as_secs_f64());
    let _ = pw.kill();
    let _ = pw.wait();
    println!(
        "pagewatch --batch, tracepoint armed{}: {:.2} ms CPU per second over {secs:.1} s ({:.0} events/s)",
        if armed_all { "" } else { " (not every record)" },
        (c1 - c0) / secs,
        events as f64 / secs
    );
}

#[test]
fn the_screen_lists_them_and_q_removes_the_instance() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("skipped: tmux is not installed");
        return;
    }
    let before = top_level_enable();
    let _restore = DirtyKnobs::set_dirty_bytes(64 << 20);
    let writers = Writers::start(60);
    std::thread::sleep(Duration::from_secs(2));
    let workers = writers.workers();
    let name = format!("pagewatch-throttle-{}", std::process::id());
    let s = tmux::Session::start(name, 160, 48, &format!("{EXE}; echo \"exit=$?\""));
    let screen = s.wait_for("Throttled writers (tracepoint)", 30);
    let pid = s.pagewatch_pid();
    assert!(instance(pid).is_dir(), "armed: pagewatch-{pid} exists");
    // Both workers show up in the table within a few samples (rows come and go as they sleep).
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = std::collections::BTreeSet::new();
    let mut last = screen;
    while seen.len() < workers.len() && Instant::now() < deadline {
        last = s.screen();
        for w in &workers {
            if last.contains(&format!(" {w} fio")) {
                seen.insert(*w);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        seen.len(),
        workers.len(),
        "workers {workers:?} listed:\n{last}"
    );
    s.keys(&["q"]);
    s.wait_for("exit=0", 10);
    assert!(gone_within(&instance(pid), 3), "q removed pagewatch-{pid}");
    assert_eq!(
        top_level_enable(),
        before,
        "the top-level enable was not touched"
    );
}
