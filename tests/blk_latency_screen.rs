//! Block latency per device (issue 25) on the screen and in recordings, live: root, tracefs
//! with the block events, fio, losetup and tmux (each test prints why it skipped otherwise).
//! Reads only, from a loop device of the test's own (`common/blk.rs`).
//!
//! - `a_recording_replays_the_distribution_and_the_report_draws_it`: `pagewatch record
//!   --latency loopN` beside fio; `replay --batch` gives the device's percentiles, `report`
//!   writes `latency-loopN.svg` and links it, and the screen's replay shows the detail view's
//!   percentiles and shaded heat map.
//! - `the_detail_view_arms_and_esc_disarms`: `Enter` on the disk creates `pagewatch-<pid>-blk`
//!   filtered on its `dev`; `Esc` takes it out.
//! - `cost_of_the_armed_block_tracer` (ignored; `--ignored --nocapture`, set
//!   `PAGEWATCH_BIN=target/release/pagewatch`): whole-process CPU of the screen with
//!   `--latency` under fio randread at 20k IOPS, and htop's in the same run, both in tmux at
//!   160x48, 1 Hz.
#![allow(clippy::unwrap_used)]

#[path = "common/tracefs.rs"]
mod tracefs;

#[path = "common/blk.rs"]
mod blk;
#[path = "common/live.rs"]
mod live;
#[path = "common/tmux.rs"]
mod tmux;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use blk::{EXE, Loop, cannot_run, instance, lock};

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
    blk::stop(&mut fio);
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
