//! The memory eater for real: `pagewatch eat` run as a child, checked through /proc — its RSS,
//! MemAvailable, oom_score_adj, release on stdin EOF or SIGTERM, refusal of oversize targets,
//! death with its parent — and the parent-side `Eater` API. Every test takes one static lock so
//! the MemAvailable figures of one are not disturbed by another's eater.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/live.rs"]
mod live;

use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use pagewatch::jobs::eat_plan::{EatLine, EatState};
use pagewatch::jobs::eater::{EatUpdate, Eater};

use live::lock;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const MIB: u64 = 1 << 20;

/// (MemTotal, MemAvailable) in bytes.
fn meminfo() -> (u64, u64) {
    let t = std::fs::read_to_string("/proc/meminfo").unwrap();
    let get = |k: &str| -> u64 {
        let l = t.lines().find(|l| l.starts_with(k)).unwrap();
        l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    };
    (get("MemTotal:"), get("MemAvailable:"))
}

/// MemAvailable plus the free pages parked on per-CPU lists (/proc/zoneinfo pagesets `count`).
/// Those are not in MemFree, and the kernel hands them out first: on this 2-CPU box they held
/// ~290 MiB, so an eater of 256 MiB could leave MemAvailable itself almost unmoved.
fn available_with_pcp() -> u64 {
    let (_, a) = meminfo();
    let zi = std::fs::read_to_string("/proc/zoneinfo").unwrap();
    let pcp: u64 = zi
        .lines()
        .filter_map(|l| l.trim().strip_prefix("count:"))
        .map(|v| v.trim().parse::<u64>().unwrap())
        .sum();
    a + pcp * rustix::param::page_size() as u64
}

/// Polls `available_with_pcp` for up to 3 s until `ok` holds; returns the last reading (other
/// processes on the box move it too).
fn mem_available_until(ok: impl Fn(u64) -> bool) -> u64 {
    let t0 = Instant::now();
    loop {
        let a = available_with_pcp();
        if ok(a) || t0.elapsed() > Duration::from_secs(3) {
            return a;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status_kb(pid: u32, key: &str) -> u64 {
    let t = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let l = t.lines().find(|l| l.starts_with(key)).unwrap();
    l.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// True once /proc/PID is gone or a zombie (a container's pid 1 may not reap).
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
    }
}

fn wait_dead(pid: u32, within: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < within {
        if dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn spawn_eat(args: &[&str], stdin: Stdio) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut c = Command::new(EXE)
        .arg("eat")
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = BufReader::new(c.stdout.take().unwrap()).lines();
    (c, out)
}

/// Reads JSON lines until one in `state`; returns it.
fn until(lines: &mut Lines<BufReader<ChildStdout>>, state: EatState) -> EatLine {
    for l in lines {
        let l: EatLine = serde_json::from_str(&l.unwrap()).unwrap();
        if l.state == state {
            return l;
        }
        assert_eq!(l.state, EatState::Ramping, "{l:?}");
    }
    panic!("eater ended before {state:?}");
}

#[test]
fn eats_256m_holds_it_and_gives_it_back_when_stdin_closes() {
    let _g = lock();
    let before = available_with_pcp();
    let (mut c, mut lines) = spawn_eat(&["256M"], Stdio::piped());
    let pid = c.id();
    let h = until(&mut lines, EatState::Holding);
    assert_eq!((h.touched, h.target), (256 * MIB, 256 * MIB));
    // Other processes on the box move MemAvailable too: ask for 60% of the eaten amount.
    let holding = mem_available_until(|a| before.saturating_sub(a) >= 256 * MIB * 6 / 10);
    let rss = status_kb(pid, "VmRSS:") * 1024;
    println!(
        "VmRSS {} MiB, MemAvailable + per-CPU free lists {} → {} MiB",
        rss / MIB,
        before / MIB,
        holding / MIB
    );
    assert!(rss >= 256 * MIB, "VmRSS {rss}");
    let adj = std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap();
    assert_eq!(adj.trim(), "1000");
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim(), "pagewatch-eat");
    assert!(
        before.saturating_sub(holding) >= 256 * MIB * 6 / 10,
        "MemAvailable {before} → {holding}"
    );

    drop(c.stdin.take());
    let r = until(&mut lines, EatState::Released);
    assert_eq!(r.reason.as_deref(), Some("stdin closed"));
    assert!(c.wait().unwrap().success());
    let after = mem_available_until(|a| a.saturating_sub(holding) >= 256 * MIB * 6 / 10);
    println!("after release MemAvailable {} MiB", after / MIB);
    assert!(
        after.saturating_sub(holding) >= 256 * MIB * 6 / 10,
        "MemAvailable {holding} → {after}"
    );
}

#[test]
fn with_stdin_null_it_holds_until_sigterm() {
    let _g = lock();
    let (mut c, mut lines) = spawn_eat(&["64M", "--step", "16M"], Stdio::null());
    let h = until(&mut lines, EatState::Holding);
    assert_eq!(h.touched, 64 * MIB);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        c.try_wait().unwrap().is_none(),
        "/dev/null's EOF released it"
    );
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&c),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let r = until(&mut lines, EatState::Released);
    assert_eq!(r.reason.as_deref(), Some("signal SIGTERM"));
    assert!(c.wait().unwrap().success());
}

#[test]
fn percent_is_of_mem_total() {
    let _g = lock();
    let (total, _) = meminfo();
    let (mut c, mut lines) = spawn_eat(&["1%"], Stdio::piped());
    let h = until(&mut lines, EatState::Holding);
    assert_eq!(h.target, total / 100);
    assert_eq!(h.touched, total / 100);
    drop(c.stdin.take());
    assert!(c.wait().unwrap().success());
}

#[test]
fn oversize_is_refused_naming_mem_available() {
    let _g = lock();
    for size in ["100%", "200%", "lots"] {
        let out = Command::new(EXE)
            .args(["eat", size])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{size}: {err}");
        assert_eq!(out.status.code(), Some(1), "{size}");
        assert!(out.stdout.is_empty(), "{size} ate something");
        assert_eq!(err.lines().count(), 1, "{err}");
        if size == "100%" {
            assert!(err.contains("MemAvailable is"), "{err}");
            assert!(err.contains("--force"), "{err}");
        }
    }
}

#[test]
fn dies_with_its_parent() {
    let _g = lock();
    // sh is the parent; it passes its own pid so the eater can check it on start.
    let mut sh = Command::new("sh")
        .arg("-c")
        .arg("PAGEWATCH_PARENT_PID=$$ \"$0\" eat 64M </dev/null >/dev/null & echo $!; wait")
        .arg(EXE)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(sh.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    let eater: u32 = first.trim().parse().unwrap();
    // Wait until it holds all 64 MiB, then kill the parent outright.
    let t0 = Instant::now();
    while std::fs::read_to_string(format!("/proc/{eater}/status")).is_ok()
        && status_kb(eater, "RssAnon:") < 64 * 1024
    {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "eater never held 64M"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!dead(eater));
    sh.kill().unwrap();
    sh.wait().unwrap();
    assert!(
        wait_dead(eater, Duration::from_secs(5)),
        "eater {eater} outlived its parent"
    );
}

#[test]
fn refuses_to_start_when_the_named_parent_is_not_its_parent() {
    let _g = lock();
    let out = Command::new(EXE)
        .args(["eat", "16M"])
        .env("PAGEWATCH_PARENT_PID", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("parent 1 is gone"));
}

fn api_eater(size: &str) -> (Eater, mpsc::Receiver<EatUpdate>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let notify = Arc::new(move |u: EatUpdate| {
        let _ = tx.lock().unwrap().send(u);
    });
    let e = Eater::spawn(std::path::Path::new(EXE), size, false, notify).unwrap();
    (e, rx)
}

fn next(rx: &mpsc::Receiver<EatUpdate>) -> EatUpdate {
    rx.recv_timeout(Duration::from_secs(30)).unwrap()
}

#[test]
fn the_eater_api_spawns_reports_and_releases() {
    let _g = lock();
    let (e, rx) = api_eater("128M");
    let pid = e.pid();
    loop {
        match next(&rx) {
            EatUpdate::Progress {
                state: EatState::Holding,
                touched,
                ..
            } => {
                assert_eq!(touched, 128 * MIB);
                break;
            }
            EatUpdate::Progress {
                state: EatState::Ramping,
                ..
            } => {}
            u => panic!("{u:?}"),
        }
    }
    assert!(status_kb(pid, "VmRSS:") >= 128 * 1024);
    let t0 = Instant::now();
    e.release();
    assert!(t0.elapsed() < Duration::from_millis(100), "release blocked");
    let EatUpdate::Progress {
        state: EatState::Released,
        ..
    } = next(&rx)
    else {
        panic!()
    };
    let EatUpdate::Exited { code, reason, .. } = next(&rx) else {
        panic!()
    };
    assert_eq!((code, reason.as_str()), (Some(0), "released"));
    assert!(wait_dead(pid, Duration::from_secs(2)));
    drop(e);
}

#[test]
fn the_eater_api_reports_a_refusal_and_drop_releases() {
    let _g = lock();
    let (e, rx) = api_eater("100%");
    let EatUpdate::Exited {
        code,
        reason,
        stderr_tail,
        ..
    } = next(&rx)
    else {
        panic!()
    };
    println!("{reason}");
    assert_eq!(code, Some(1));
    assert!(reason.starts_with("failed: refusing to eat"), "{reason}");
    assert!(stderr_tail.contains("MemAvailable"));
    drop(e);

    // Dropping a holding eater releases it.
    let (e, rx) = api_eater("32M");
    let pid = e.pid();
    while !matches!(
        next(&rx),
        EatUpdate::Progress {
            state: EatState::Holding,
            ..
        }
    ) {}
    drop(e);
    assert!(wait_dead(pid, Duration::from_secs(5)));
    let mut last = None;
    while let Ok(u) = rx.recv_timeout(Duration::from_secs(5)) {
        last = Some(u);
    }
    assert!(
        matches!(last, Some(EatUpdate::Exited { code: Some(0), .. })),
        "{last:?}"
    );
}
