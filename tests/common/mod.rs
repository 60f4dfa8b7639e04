//! Recordings for report and export tests, built from the captured trees in assets/trees.
//!
//! `captured` wraps a tree's real samples in a `Recording` (the trees carry no wall clock, so
//! wall time is rebased to the capture time their README documents). `storm` is SYNTHETIC:
//! it takes one real root of live-fio-randwrite as a template and scripts 24 one-second
//! samples around it (dirty pages climbing past the freerun ceiling to the hard limit, a burst
//! of direct reclaim, vda at 95 %util), editing only the counters named below. Every edit
//! is a deterministic function of the sample number.

#![allow(clippy::unwrap_used, dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use pagewatch::event::{Event, EventKind, FioDir, FioSummary};
use pagewatch::record::{DeviceFacts, FORMAT_VERSION, Header, Recording};
use pagewatch::sample::{RawSample, names};
use pagewatch::source::{HostInfo, Source, TreeSource};

/// 2026-11-22 07:09:22 UTC: when live-fio-randwrite's capture began (its README).
pub const START_MS: i64 = 1_795_331_362_000;

pub fn tree_dir(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/trees")
        .join(name)
}

pub fn tree_samples(name: &str) -> Vec<RawSample> {
    let mut src = TreeSource::open(&tree_dir(name)).unwrap();
    let mut out = Vec::new();
    while let Some(s) = src.next_sample().unwrap() {
        out.push(s);
    }
    out
}

fn header(first: &RawSample, provenance: &str) -> Header {
    let sysctls = names::VM_SYSCTLS
        .iter()
        .filter_map(|k| {
            let v = first.file(&names::vm_sysctl(k))?;
            Some(((*k).to_owned(), v.trim().to_owned()))
        })
        .collect::<BTreeMap<_, _>>();
    let devices = first
        .file(names::BLOCK_DEVICES)
        .unwrap_or("")
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let g = |i: usize| f.get(i).map_or(String::new(), |s| s.trim().to_owned());
            DeviceFacts {
                name: g(0),
                rotational: g(1),
                scheduler: g(2),
                nr_requests: g(3),
                write_cache: g(4),
                dm_name: g(5),
            }
        })
        .collect();
    Header {
        format: FORMAT_VERSION,
        pagewatch: "0.1.0".into(),
        started_ms: first.wall_ms,
        interval_s: 1.0,
        host: HostInfo {
            hostname: "vm".into(),
            kernel: "6.18.44-fc-v657".into(),
            cpus: 2,
        },
        page_size: first.page_size,
        sysctls,
        devices,
        provenance: provenance.into(),
        privilege: None,
    }
}

/// Real samples of a tree, wall time rebased so the first sample is at `START_MS`.
pub fn captured(name: &str, events: Vec<Event>) -> Recording {
    let mut samples = tree_samples(name);
    let mono0 = samples[0].mono_ns;
    for s in &mut samples {
        s.wall_ms = START_MS + i64::try_from((s.mono_ns - mono0) / 1_000_000).unwrap();
    }
    Recording {
        header: header(&samples[0], &format!("captured tree assets/trees/{name}")),
        samples,
        events,
        warnings: Vec::new(),
        damaged: false,
    }
}

pub fn event(at_ms: i64, kind: EventKind) -> Event {
    Event {
        wall_ms: START_MS + at_ms,
        kind,
    }
}

fn set_line(text: &str, key: &str, f: impl Fn(u64) -> u64) -> String {
    let mut hit = false;
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            let mut it = l.split_whitespace();
            let k = it.next().unwrap_or("");
            if k == key || k == format!("{key}:") {
                hit = true;
                let v: u64 = it.next().unwrap().parse().unwrap();
                l.replacen(&v.to_string(), &f(v).to_string(), 1)
            } else {
                l.to_owned()
            }
        })
        .collect();
    assert!(hit, "{key} not found");
    out.join("\n") + "\n"
}

/// Adds `add[i]` to whitespace field `i` (0-based, after the name) of the line named `name`.
fn add_fields(text: &str, name: &str, skip: usize, add: &[(usize, u64)]) -> String {
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.get(skip - 1) != Some(&name) {
                return l.to_owned();
            }
            let mut f: Vec<String> = f.iter().map(|s| (*s).to_owned()).collect();
            for &(i, a) in add {
                let v: u64 = f[skip + i].parse().unwrap();
                f[skip + i] = (v + a).to_string();
            }
            f.join(" ")
        })
        .collect();
    out.join("\n") + "\n"
}

/// nr_dirty + nr_writeback per second, thousands of pages (thresh 1 218 856, freerun 913 770).
const DIRTY_K: [u64; 24] = [
    20, 20, 20, 60, 300, 600, 800, 920, 950, 1000, 1100, 1219, 1230, 1225, 1100, 950, 900, 700,
    500, 300, 100, 50, 30, 20,
];
/// Direct-reclaim pages scanned per second.
const DIRECT: [u64; 24] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4000, 9000, 12000, 3000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];
/// vda %util per second.
const UTIL: [u64; 24] = [
    30, 30, 30, 40, 60, 80, 95, 97, 99, 99, 99, 99, 99, 99, 98, 92, 85, 60, 40, 30, 30, 30, 30, 30,
];

/// The synthetic storm (see the module doc).
pub fn storm(events: Vec<Event>) -> Recording {
    let template = tree_samples("live-fio-randwrite").pop().unwrap();
    let mut samples = Vec::new();
    let mut cur = template.clone();
    for k in 0..24 {
        let mut s = cur.clone();
        s.mono_ns = template.mono_ns + k as u64 * 1_000_000_000;
        s.wall_ms = START_MS + i64::try_from(k).unwrap() * 1000;
        let total = DIRTY_K[k] * 1000;
        let vm = s.files[names::VMSTAT].clone();
        let vm = set_line(&vm, "nr_dirty", |_| total - total / 10);
        let vm = set_line(&vm, "nr_writeback", |_| total / 10);
        let dirtied = if k < 16 { 128_000 } else { 5_000 };
        let vm = set_line(&vm, "nr_dirtied", |v| v + dirtied);
        let vm = set_line(&vm, "nr_written", |v| v + 120_000);
        let vm = set_line(&vm, "pgscan_direct", |v| v + DIRECT[k]);
        let vm = set_line(&vm, "pgsteal_direct", |v| v + DIRECT[k] / 2);
        let vm = set_line(&vm, "allocstall_normal", |v| v + DIRECT[k] / 1000);
        let kswapd = if (8..18).contains(&k) { 40_000 } else { 0 };
        let vm = set_line(&vm, "pgscan_kswapd", |v| v + kswapd);
        let vm = set_line(&vm, "pgsteal_kswapd", |v| v + kswapd * 9 / 10);
        let vm = set_line(&vm, "pgmajfault", |v| v + DIRECT[k] / 100);
        s.files.insert(names::VMSTAT.into(), vm);
        // MemAvailable sinks by 150 MiB/s while the page cache fills, then recovers.
        let avail =
            24_343_120 - 153_600 * (k.min(14) as u64) + 153_600 * (k.saturating_sub(14) as u64);
        let mi = set_line(&s.files[names::MEMINFO], "MemAvailable", |_| avail);
        let mi = set_line(&mi, "MemFree", |_| avail - 531_476);
        s.files.insert(names::MEMINFO.into(), mi);
        // vda: w/s and await rise with the queue; 8 KiB writes.
        let w = 400 + UTIL[k] * 4;
        let await_ms = UTIL[k] / 2;
        let ds = add_fields(
            &s.files[names::DISKSTATS],
            "vda",
            3,
            &[
                (4, w),
                (6, w * 16),
                (7, w * await_ms),
                (9, UTIL[k] * 10),
                (10, w * await_ms),
            ],
        );
        s.files.insert(names::DISKSTATS.into(), ds);
        // 2 CPUs at 100 Hz: iowait follows the disk.
        let io = UTIL[k];
        let st = add_fields(
            &s.files[names::STAT],
            "cpu",
            1,
            &[(0, 20), (2, 30), (3, 150 - io), (4, io)],
        );
        s.files.insert(names::STAT.into(), st);
        samples.push(s.clone());
        cur = s;
    }
    Recording {
        header: header(
            &samples[0],
            "synthetic: tests/common storm() from live-fio-randwrite/003",
        ),
        samples,
        events,
        warnings: Vec::new(),
        damaged: false,
    }
}

/// The storm's hand-made events.
pub fn storm_events() -> Vec<Event> {
    vec![
        event(
            2_500,
            EventKind::JobStart {
                job: 1,
                what: "fio randwrite".into(),
                argv: vec!["fio".into(), "--rw=randwrite".into()],
                pid: Some(4242),
            },
        ),
        event(
            9_000,
            EventKind::Marker {
                text: "app latency | alerts".into(),
            },
        ),
        event(
            17_200,
            EventKind::FioResult {
                job: 1,
                result: FioSummary {
                    name: "randwrite".into(),
                    fio_version: "fio-3.33".into(),
                    runtime_ms: 14_700,
                    read: FioDir::default(),
                    write: FioDir {
                        io_bytes: 7_516_192_768,
                        ios: 917_504,
                        iops: 62_415.2,
                        bw_bytes_s: 511_305_333.0,
                        clat_mean_us: 14.9,
                        clat_p99_us: 8_848.0,
                    },
                    sync: FioDir::default(),
                    partial: false,
                    error: None,
                },
            },
        ),
        event(
            17_300,
            EventKind::JobStop {
                job: 1,
                how: "finished".into(),
            },
        ),
        event(
            20_000,
            EventKind::DropCaches {
                level: 1,
                took_ms: 840,
            },
        ),
    ]
}
