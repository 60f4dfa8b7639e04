//! The iostat -x columns (spec §5) against sysstat itself: sysstat's own test vector
//! (`assets/trees/sysstat-root1`, a since-boot report compared column by column at iostat's
//! 2-decimal rounding), a live since-boot comparison with the installed `iostat -x -d -p ALL`,
//! and synthetic two-sample cases through `Model::derive`: a wrapped 32-bit ms field, a device
//! that vanishes while another appears, a jittered 1.37 s interval, and the four cases where
//! iostat printed a figure and pagewatch did not (issue 22): a device that appeared, one that
//! was re-inserted (both counted from 0), a 17-field line, a line too short to read. sysstat's
//! multi-root vectors are replayed in `iostat_vectors_replay.rs`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use pagewatch::model::disk::{Columns, columns};
use pagewatch::model::{Disk, Model, Options};
use pagewatch::parse::{Snapshot, diskstats};
use pagewatch::sample::{RawSample, names};
use pagewatch::source::FsSource;

#[path = "common/iostat.rs"]
mod iostat;
use iostat::{column, first_report, printed, uptime_cs, zero_like};

const ROOT1: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/trees/sysstat-root1");

#[test]
fn sysstat_root1_since_boot() {
    let root = Path::new(ROOT1);
    let read = |p: &str| {
        std::fs::read_to_string(root.join(p)).unwrap_or_else(|e| panic!("{ROOT1}/{p}: {e}"))
    };
    let disks = diskstats::parse(&read("000/proc/diskstats")).disks;
    let itv_cs = uptime_cs(&read("000/proc/uptime"));
    assert_eq!(itv_cs, 719_255, "spec §5.2: uptime 7192.55 → itv 719 255");
    let report = first_report(&read("expected.iostat-x-p-ALL"));
    let dt = itv_cs as f64 / 100.0;

    // -p ALL prints every /proc/diskstats device (zero-I/O ones too); -x skips 7-field lines,
    // as our parser does. So the two device lists must be the same, in the same order.
    let ours: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
    let theirs: Vec<&str> = report.rows.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(ours, theirs, "device list differs from iostat's");

    let mut mismatches = Vec::new();
    let mut checked = 0;
    for (name, vals) in &report.rows {
        let cur = disks.iter().find(|d| &d.name == name).unwrap();
        let c = columns(&zero_like(cur), cur, dt)
            .unwrap_or_else(|| panic!("{name}: no columns against all-zero counters"));
        for (col, want) in report.header.iter().zip(vals) {
            let got = printed(column(&c, col));
            checked += 1;
            if &got != want {
                mismatches.push(format!(
                    "{name} {col}: iostat {want}, ours {got} ({:?})",
                    column(&c, col)
                ));
            }
        }
        // The vector is an 18-field (4.18–5.4) kernel: discards present, flushes absent.
        assert!(
            c.d_s.is_some() && c.f_s.is_none(),
            "{name}: d/s {:?} f/s {:?}",
            c.d_s,
            c.f_s
        );
    }
    println!(
        "compared {checked} figures of {} devices",
        report.rows.len()
    );
    assert!(
        mismatches.is_empty(),
        "mismatches:\n  {}",
        mismatches.join("\n  ")
    );

    // The second report reads the same files again: every delta is 0, so every figure is 0.00
    // (not NaN: per-I/O figures are 0 when there was no I/O).
    let second = first_report(&read("expected.iostat-x-p-ALL").replacen("Device", "", 1));
    assert!(!second.rows.is_empty());
    for (name, vals) in &second.rows {
        let cur = disks.iter().find(|d| &d.name == name).unwrap();
        let c = columns(cur, cur, dt).unwrap();
        for (col, want) in second.header.iter().zip(vals) {
            assert_eq!(
                &printed(column(&c, col)),
                want,
                "second report {name} {col}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// live comparison with the installed iostat

/// Makes sure `iostat` is runnable, installing sysstat with apt-get if needed.
fn ensure_iostat() -> Result<(), String> {
    let works = || {
        Command::new("iostat")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works() {
        return Ok(());
    }
    let out = Command::new("apt-get")
        .args(["install", "-y", "sysstat"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|e| format!("iostat missing and apt-get could not run: {e}"))?;
    if !out.status.success() || !works() {
        return Err(format!(
            "iostat missing and `apt-get install -y sysstat` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

fn run_iostat() -> String {
    let out = Command::new("iostat")
        .args(["-x", "-d", "-p", "ALL"])
        .env("LC_ALL", "C")
        .env("S_TIME_FORMAT", "ISO")
        .output()
        .expect("run iostat");
    assert!(
        out.status.success(),
        "iostat failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("iostat output is not UTF-8")
}

#[test]
fn live_since_boot_matches_iostat() {
    if let Err(why) = ensure_iostat() {
        println!("skipped: {why}");
        return;
    }
    let mut stable_seen: BTreeMap<String, bool> = BTreeMap::new();
    let mut compared = 0;
    for attempt in 0..20 {
        let d1 = std::fs::read_to_string("/proc/diskstats").unwrap();
        let u1 = std::fs::read_to_string("/proc/uptime").unwrap();
        let out = run_iostat();
        let d2 = std::fs::read_to_string("/proc/diskstats").unwrap();
        let u2 = std::fs::read_to_string("/proc/uptime").unwrap();
        let what = format!("attempt {attempt}");
        let (n, stable) = iostat::compare_since_boot(&d1, &u1, &out, &d2, &u2, &what);
        compared += n;
        for (name, s) in stable {
            *stable_seen.entry(name).or_insert(false) |= s;
        }
        if stable_seen.values().all(|&s| s) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let never: Vec<&String> = stable_seen
        .iter()
        .filter(|(_, s)| !**s)
        .map(|(n, _)| n)
        .collect();
    println!(
        "compared {compared} figures over {} devices; per-I/O figures not checked (always busy): {never:?}",
        stable_seen.len()
    );
    assert!(!stable_seen.is_empty(), "iostat printed no devices");
}

// ---------------------------------------------------------------------------------------------
// synthetic two-sample cases through Model::derive

const T0: u64 = 1_000_000_000_000;

/// A live sample with its diskstats and time replaced. The /sys/block listing is dropped so
/// the name heuristic decides whole disks (`sda`, `sdb`, `sdc` are whole).
fn sample(diskstats: &str, mono_ns: u64) -> Snapshot {
    let mut raw: RawSample = FsSource::live().read().expect("read live /proc");
    raw.files
        .insert(names::DISKSTATS.to_owned(), diskstats.to_owned());
    raw.files.remove(names::BLOCK_DEVICES);
    raw.mono_ns = mono_ns;
    Snapshot::parse(&raw).expect("parse")
}

fn derive(prev: &str, cur: &str, dt_ns: u64) -> Model {
    let p = sample(prev, T0);
    let c = sample(cur, T0 + dt_ns);
    Model::derive(Some(&p), &c, Options::default())
}

fn disk<'a>(m: &'a Model, name: &str) -> Option<&'a Disk> {
    m.disks.iter().find(|d| d.name == name)
}

/// A 20-field diskstats line.
#[allow(clippy::too_many_arguments)]
fn line(
    minor: u32,
    name: &str,
    reads: u64,
    read_ms: u64,
    writes: u64,
    write_ms: u64,
    ticks: u64,
    weighted: u64,
) -> String {
    format!(
        "   8 {minor:7} {name} {reads} 10 {} {read_ms} {writes} 20 {} {write_ms} 0 {ticks} {weighted} 5 1 40 7 3 2\n",
        reads * 8,
        writes * 16
    )
}

#[test]
fn synthetic_u32_ms_wrap_is_taken_modulo_2_32() {
    let max = u64::from(u32::MAX);
    // sda: read_ms wraps. sdb: io_ticks wraps. sdc: weighted wraps. sdd: nothing wraps.
    let prev = [
        line(0, "sda", 1000, max - 5, 500, 100, 2000, 3000),
        line(16, "sdb", 1000, 100, 500, 100, max - 1, 3000),
        line(32, "sdc", 1000, 100, 500, 100, 2000, max - 100),
        line(48, "sdd", 1000, 100, 500, 100, 2000, 3000),
    ]
    .concat();
    let cur = [
        line(0, "sda", 1100, 20, 600, 200, 2500, 3500),
        line(16, "sdb", 1100, 200, 600, 200, 400, 3500),
        line(32, "sdc", 1100, 200, 600, 200, 2500, 50),
        line(48, "sdd", 1100, 200, 600, 200, 2500, 3500),
    ]
    .concat();
    let m = derive(&prev, &cur, 1_000_000_000);
    // As iostat takes them (unsigned int differences): 26 ms for 100 reads; 402 ms busy;
    // 151 ms of queue time.
    let d = disk(&m, "sda").unwrap();
    assert_eq!((d.cols.r_s, d.cols.r_await), (Some(100.0), Some(0.26)));
    let d = disk(&m, "sdb").unwrap();
    assert_eq!(
        d.cols.util_pct.map(|u| (u * 100.0).round() / 100.0),
        Some(40.2)
    );
    let d = disk(&m, "sdc").unwrap();
    assert_eq!(
        d.cols.aqu_sz.map(|a| (a * 1000.0).round() / 1000.0),
        Some(0.151)
    );
    let d = disk(&m, "sdd").unwrap();
    assert_eq!(d.cols.r_s, Some(100.0));
    assert_eq!(d.cols.r_await, Some(1.0));
    assert_eq!(d.cols.util_pct, Some(50.0));
    // The next tick after the wrap is normal too.
    let next = cur.replace("sda 1100 10 8800 20 ", "sda 1200 10 9600 120 ");
    let m = derive(&cur, &next, 1_000_000_000);
    let d = disk(&m, "sda").unwrap();
    assert_eq!((d.cols.r_s, d.cols.r_await), (Some(100.0), Some(1.0)));
}

#[test]
fn synthetic_hotplug_vanish_and_appear() {
    let prev = [
        line(0, "sda", 1000, 100, 500, 100, 2000, 3000),
        line(16, "sdb", 1000, 100, 500, 100, 2000, 3000),
    ]
    .concat();
    // sdb vanished; sdc appeared before sda (positions shifted).
    let cur = [
        line(32, "sdc", 50, 10, 5, 1, 20, 30),
        line(0, "sda", 1100, 200, 600, 200, 2500, 3500),
    ]
    .concat();
    let m = derive(&prev, &cur, 2_000_000_000);
    let names: Vec<&str> = m.disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["sdc", "sda"], "vanished sdb must be absent");
    // A new device is counted from 0 (its counters started inside the interval): 50 reads
    // in 2 s.
    assert_eq!(disk(&m, "sdc").unwrap().cols.r_s, Some(25.0));
    assert_eq!(disk(&m, "sda").unwrap().cols.r_s, Some(50.0));

    // A device re-inserted under the same name with a new minor: another device, created
    // after the last read, so counted from 0 whatever its counters (3 reads in 1 s).
    for reads in [3, 5000] {
        let reinserted = line(64, "sda", reads, 1, 0, 0, 1, 1);
        let m = derive(&cur, &reinserted, 1_000_000_000);
        assert_eq!(disk(&m, "sda").unwrap().cols.r_s, Some(reads as f64));
    }
    // Every device gone.
    let m = derive(&cur, "", 1_000_000_000);
    assert!(m.disks.is_empty());
}

#[test]
fn synthetic_jittered_interval_divides_by_exact_elapsed() {
    let prev = line(0, "sda", 1000, 100, 500, 100, 2000, 3000);
    let cur = line(0, "sda", 1137, 374, 637, 511, 2685, 4233);
    let m = derive(&prev, &cur, 1_370_000_000);
    assert_eq!(m.interval_s, Some(1.37));
    let c = disk(&m, "sda").unwrap().cols;
    let dt = 1.37_f64;
    // Counts: exactly Δ / 1.37.
    assert_eq!(c.r_s, Some(137.0 / dt));
    assert_eq!(c.w_s, Some(137.0 / dt));
    assert_eq!(c.d_s, Some(0.0));
    assert_eq!(c.f_s, Some(0.0));
    assert_eq!(c.rrqm_s, Some(0.0));
    // Derived rates: Δ / 1.37 scaled (to the last bit or two).
    let close = |got: Option<f64>, want: f64, what: &str| {
        let got = got.unwrap_or_else(|| panic!("{what} is None"));
        assert!(
            (got - want).abs() <= want.abs() * 1e-12,
            "{what}: got {got}, want {want}"
        );
    };
    close(c.rkB_s, 137.0 * 8.0 / dt / 2.0, "rkB/s");
    close(c.wkB_s, 137.0 * 16.0 / dt / 2.0, "wkB/s");
    close(c.aqu_sz, 1233.0 / (dt * 1000.0), "aqu-sz");
    close(c.util_pct, 685.0 / (dt * 1000.0) * 100.0, "%util");
    // Per-I/O figures do not depend on the interval.
    assert_eq!(c.r_await, Some(274.0 / 137.0));
    assert_eq!(c.w_await, Some(411.0 / 137.0));
    assert_eq!(c.rareq_sz, Some(4.0));
    assert_eq!(c.wareq_sz, Some(8.0));
}

// ---------------------------------------------------------------------------------------------
// the four cases where iostat printed a figure and pagewatch did not

/// A hot-plugged disk (or a new loop or dm device) appears between two reads: its counters
/// started at 0 inside the interval, so iostat counts it from 0, and so must we.
#[test]
fn synthetic_new_device_counts_from_zero() {
    let prev = line(0, "sda", 1000, 100, 500, 100, 2000, 3000);
    let cur = [
        line(0, "sda", 1100, 200, 600, 200, 2500, 3500),
        line(32, "sdc", 50, 10, 5, 1, 20, 30),
    ]
    .concat();
    let m = derive(&prev, &cur, 2_000_000_000);
    let c = disk(&m, "sdc").expect("the new disk is listed").cols;
    // 50 reads of 8 sectors, 10 ms in all, over 2 s: r/s 25, rkB/s 50·8/2/2 = 100,
    // r_await 0.2, rrqm/s 10/2 = 5; 5 writes of 16 sectors: w/s 2.5, wkB/s 20;
    // d/s 5/2 and f/s 3/2 (the line's own discard and flush counts, from 0);
    // aqu-sz 30/2000; %util 20/2000 = 1 %.
    assert_eq!(
        (c.r_s, c.rkB_s, c.r_await),
        (Some(25.0), Some(100.0), Some(0.2))
    );
    assert_eq!(
        (c.rrqm_s, c.w_s, c.wkB_s),
        (Some(5.0), Some(2.5), Some(20.0))
    );
    assert_eq!((c.d_s, c.f_s), (Some(2.5), Some(1.5)));
    assert_eq!((c.aqu_sz, c.util_pct), (Some(0.015), Some(1.0)));
    assert_eq!(disk(&m, "sda").unwrap().cols.r_s, Some(50.0));
}

/// A device removed and re-added under the same name: its I/O count and every sector count
/// went back. iostat (`write_stats()`) takes it as re-inserted and counts from 0; a count
/// that went back while the others went on (a 32-bit counter wrapped on an old kernel) is
/// not a re-insertion and still gives no figure for what went back.
#[test]
fn synthetic_reinserted_device_counts_from_zero() {
    let prev = line(0, "sda", 1000, 100, 500, 100, 2000, 3000);
    // Same name and number, every counter small again (the discards and flushes too).
    let cur = line(0, "sda", 40, 20, 10, 30, 50, 60).replace(" 5 1 40 7 3 2\n", " 0 0 0 0 0 0\n");
    let m = derive(&prev, &cur, 2_000_000_000);
    let c = disk(&m, "sda").unwrap().cols;
    // From 0: r/s 40/2 = 20, rkB/s 40·8/2/2 = 80, r_await 20/40 = 0.5; w/s 5,
    // w_await 3; aqu-sz 60/2000 = 0.03; %util 50/2000 = 2.5 %.
    assert_eq!(
        (c.r_s, c.rkB_s, c.r_await),
        (Some(20.0), Some(80.0), Some(0.5))
    );
    assert_eq!((c.w_s, c.w_await), (Some(5.0), Some(3.0)));
    assert_eq!((c.aqu_sz, c.util_pct), (Some(0.03), Some(2.5)));
    assert_eq!((c.d_s, c.f_s), (Some(0.0), Some(0.0)));

    // The I/O count went back but sectors written went on (a 32-bit read count wrapped):
    // not a re-insertion by iostat's rule, and not counted from 0 (that would report every
    // I/O since boot as this interval's). No figures, as before.
    let max = u64::from(u32::MAX);
    let prev = line(0, "sda", max - 10, 100, 500, 100, 2000, 3000);
    let cur = line(0, "sda", 5, 200, 600, 200, 2500, 3500);
    let m = derive(&prev, &cur, 1_000_000_000);
    assert_eq!(disk(&m, "sda").unwrap().cols, Columns::default());
}

/// One odd line must not cost every device its figures. A 17-field line (11 classic
/// counters and 3 of the 4 discard fields) is read for its 11 classic counters, as iostat
/// does; a line of fewer than 14 fields is skipped and named, and the other devices stand.
#[test]
fn synthetic_odd_lines_spare_the_other_devices() {
    let odd = "  65      32 sds 300 300 5000 100 700 800 8000 3000 0 700 7000 0 0 0\n  \
               65      48 sdt 1 2 3 4 5 6 7 8 9 10\n";
    let prev = [
        line(0, "sda", 1000, 100, 500, 100, 2000, 3000),
        odd.to_owned(),
    ]
    .concat();
    let odd2 = "  65      32 sds 400 400 6000 800 800 800 8200 4000 0 800 8100 0 0 0\n  \
                65      48 sdt 1 2 3 4 5 6 7 8 9 10\n";
    let cur = [
        line(0, "sda", 1100, 200, 600, 200, 2500, 3500),
        odd2.to_owned(),
    ]
    .concat();
    let m = derive(&prev, &cur, 1_000_000_000);
    assert_eq!(disk(&m, "sda").unwrap().cols.r_s, Some(100.0));
    let c = disk(&m, "sds").expect("the 17-field line is read").cols;
    // Δ reads 100, merges 100, sectors 1000, ms 700; writes 100, sectors 200, ms 1000;
    // ticks 100; weighted 1100: r/s 100, rkB/s 500, %rrqm 50, r_await 7, rareq-sz 5;
    // w/s 100, wkB/s 100, w_await 10; aqu-sz 1.1; %util 10. No discard or flush figures.
    assert_eq!(
        (c.r_s, c.rkB_s, c.rrqm_pct),
        (Some(100.0), Some(500.0), Some(50.0))
    );
    assert_eq!((c.r_await, c.rareq_sz), (Some(7.0), Some(5.0)));
    assert_eq!(
        (c.w_s, c.wkB_s, c.w_await),
        (Some(100.0), Some(100.0), Some(10.0))
    );
    assert_eq!((c.aqu_sz, c.util_pct), (Some(1.1), Some(10.0)));
    assert_eq!((c.d_s, c.f_s), (None, None));
    assert!(disk(&m, "sdt").is_none(), "a 13-field line is skipped");
    let skipped = m.diskstats_skipped.as_deref().unwrap_or_default();
    assert!(
        skipped.contains("proc/diskstats:3:") && skipped.contains("sdt"),
        "{skipped:?}"
    );
}
