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
//!
//! The screen, recordings and the cost are in `blk_latency_screen.rs`.
#![allow(clippy::unwrap_used)]

#[path = "common/tracefs.rs"]
mod tracefs;

#[path = "common/blk.rs"]
mod blk;
#[path = "common/live.rs"]
mod live;

use std::io::{BufRead, BufReader};
use std::process::Command;
use std::time::{Duration, Instant};

use blk::{EVENTS, EXE, Loop, batch, cannot_run, gone_within, instance, lock, top_level_enables};

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

/// Comparing pagewatch's device time with fio's total latency (`lat_ns`: from the start of
/// the submission to the reaping). Two effects, each at most 2x: (1) pagewatch keeps log2
/// buckets and interpolates inside the one holding the rank, so its percentile lies in the
/// true one's bucket, within 2x of it; (2) fio's latency adds the submission, the block
/// layer's and the completion path's time (a few µs, against ~20-50 µs here) to the device
/// time pagewatch measures from `block_rq_issue`, and at the tail the wait of fio's thread for
/// a CPU (fio runs at nice -10 for that). fio's `clat` is not used: libaio starts it when
/// `io_submit` returns, and a loop device can complete the IO before that (a CI run read fio's
/// clat p50 8.2 µs against a device time of 16-32 µs, 2.31x). So pagewatch/fio must lie in
/// [1/4, 2]: below 1 by up to 2x for (2) and 2x for (1), above 1 only by (1). fio's
/// percentiles are of its whole run, so pagewatch's are taken from its per-interval histograms
/// (`lat_read_hist`) summed over the intervals inside fio's run; the per-interval p50 is
/// checked too, by its median.
const LOW: f64 = 0.25;
const HIGH: f64 = 2.0;

/// One run of fio beside pagewatch on `lp`: the checks' failure, if any. A run's p99 rests on
/// a few hundred requests of the busy intervals, and one stall of the loop worker in them
/// (the clean-clone CI run: 2.43x once, in range in every other run) moves it a bucket.
fn fio_against_pagewatch(lp: &Loop, name: &str) -> Result<(), String> {
    let mut pw = batch(&["-n", "9", "--latency", name]);
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
            .find(|d| d["name"] == name)
        {
            rows.push(d.clone());
        }
    }
    pw.wait().unwrap();
    let fio_out = fio.wait_with_output().unwrap();
    let j: serde_json::Value = serde_json::from_slice(&fio_out.stdout).unwrap();
    let read = &j["jobs"][0]["read"];
    let pct = |p: &str| read["lat_ns"]["percentile"][p].as_f64().unwrap() / 1e6;
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
        "fio {fio_iops:.0} IOPS, lat p50 {fio_p50:.4} ms p99 {fio_p99:.4} ms; pagewatch \
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
        if !(LOW..=HIGH).contains(&r) {
            return Err(format!(
                "{what}: pagewatch {ours} ms vs fio {theirs} ms ({r:.2}x)"
            ));
        }
    }
    Ok(())
}

#[test]
fn device_time_agrees_with_fio() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let Some(lp) = Loop::new() else { return };
    let name = lp.name().to_owned();
    // Measured twice at most: a second run out of range as well fails.
    if let Err(first) = fio_against_pagewatch(&lp, &name) {
        println!("first run out of range ({first}); once more");
        if let Err(second) = fio_against_pagewatch(&lp, &name) {
            panic!("{second} (first run: {first})");
        }
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
    // With --queue-time all three block events are armed (insert only then).
    let mut pw = batch(&["-n", "100", "--latency", lp.name(), "--queue-time"]);
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

/// Issue 51 item 4, "the block tracer sometimes counts nothing": a pagewatch in another pid
/// namespace (a container) sees this one's `pagewatch-<pid>-blk` (tracefs has one
/// superblock) but not its pid, took the instance for stale and removed it: its events were
/// disabled and the readers kept the directory, so the tracer stayed `armed`, with nothing
/// lost and no error, and read 0 events in every interval after. The instance's owner now
/// holds a `flock` on it, and a held instance is left alone.
#[test]
fn a_pagewatch_in_another_pid_namespace_does_not_blind_the_tracer() {
    let _l = lock();
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    if Command::new("unshare").arg("--version").output().is_err() {
        println!("skipped: unshare is not installed");
        return;
    }
    let Some(lp) = Loop::new() else { return };
    let name = lp.name().to_owned();
    // 500 IOPS, 1,000 events a second: under the rate the tracer samples above
    // (`source::blk::KEEP_PER_S`), so that every read is timed.
    let mut fio = lp.fio(1, 10, Some(500), false);
    let mut pw = batch(&["-n", "7", "--latency", &name]);
    let out = BufReader::new(pw.stdout.take().unwrap());
    let mut rows = Vec::new();
    let mut other = None;
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if rows.len() == 2 {
            // The other pagewatch, pid 1 in its namespace, arms and ends in about a second.
            let o = Command::new("unshare")
                .args(["-pf", "--mount-proc", blk::EXE, "--batch", "-n", "1"])
                .args(["--latency", &name])
                .output()
                .unwrap();
            other = Some(o.status);
        }
        let d = v["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name.as_str())
            .cloned();
        rows.push((d, v["latency_tracer"]["state"].clone()));
    }
    pw.wait().unwrap();
    blk::stop(&mut fio);
    assert!(
        other.is_some_and(|s| s.success()),
        "the other pagewatch ran"
    );
    // The intervals after the other one ran: each reads events, and together they count the
    // reads diskstats counted (an interval's edge can move a few into the next one on a
    // loaded host).
    let (mut timed, mut done) = (0u64, 0.0);
    for (i, (d, state)) in rows.iter().enumerate().skip(4) {
        let d = d
            .as_ref()
            .unwrap_or_else(|| panic!("interval {i}: no {name} row"));
        timed += d["lat_read_hist"]
            .as_array()
            .map_or(0, |h| h.iter().map(|c| c.as_u64().unwrap()).sum());
        done += d["r_s"].as_f64().unwrap_or(0.0);
        assert_eq!(state, "armed", "interval {i}");
        assert!(d["lat_events"].as_u64() > Some(0), "interval {i}: {rows:?}");
    }
    assert!(
        done > 1000.0 && timed as f64 >= done * 0.8,
        "{timed} reads timed, diskstats {done:.0}: {rows:?}"
    );
}
