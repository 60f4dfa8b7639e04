//! iostat -x's first report (since boot) against our columns from the same /proc/diskstats:
//! shared by the host comparison (`iostat_vectors.rs`) and the kernel lab (`lab.rs`).
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;

use pagewatch::model::disk::{Columns, columns};
use pagewatch::parse::{DiskCounters, diskstats};

/// `/proc/uptime`'s first field in centiseconds, as sysstat's `read_uptime()` (`%lu.%lu`).
pub fn uptime_cs(text: &str) -> u64 {
    let first = text.split_whitespace().next().expect("empty uptime");
    let (s, frac) = first.split_once('.').unwrap_or((first, "0"));
    let s: u64 = s.parse().expect("uptime seconds");
    let cs: u64 = frac.parse().expect("uptime centiseconds");
    // `%lu.%lu` reads the digits as an integer: "7192.55" → 55, "7192.5" → 5.
    s * 100 + cs
}

/// An iostat column by its printed name; panics on a name this test does not know.
pub fn column(c: &Columns, name: &str) -> Option<f64> {
    c.get(name)
        .unwrap_or_else(|| panic!("unknown iostat column {name:?}"))
}

/// Columns that are per-I/O ratios and so do not depend on the interval.
pub const PER_IO: [&str; 10] = [
    "%rrqm", "%wrqm", "%drqm", "r_await", "w_await", "d_await", "f_await", "rareq-sz", "wareq-sz",
    "dareq-sz",
];

/// The first `Device …` block of an iostat report: column names and, per device, the
/// printed figures in order.
pub struct Report {
    pub header: Vec<String>,
    pub rows: Vec<(String, Vec<String>)>,
}

pub fn first_report(text: &str) -> Report {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("Device"));
    let header: Vec<String> = lines
        .next()
        .expect("no `Device` header in the iostat output")
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect();
    let rows = lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split_whitespace();
            let name = it.next().expect("non-empty row").to_owned();
            let vals: Vec<String> = it.map(str::to_owned).collect();
            assert_eq!(
                vals.len(),
                header.len(),
                "row {l:?} does not match the header"
            );
            (name, vals)
        })
        .collect();
    Report { header, rows }
}

/// All-zero counters shaped like `cur` (same optional fields present): iostat's "since boot".
pub fn zero_like(cur: &DiskCounters) -> DiskCounters {
    DiskCounters {
        major: cur.major,
        minor: cur.minor,
        name: cur.name.clone(),
        discards: cur.discards.map(|_| 0),
        discards_merged: cur.discards_merged.map(|_| 0),
        sectors_discarded: cur.sectors_discarded.map(|_| 0),
        discard_ms: cur.discard_ms.map(|_| 0),
        flushes: cur.flushes.map(|_| 0),
        flush_ms: cur.flush_ms.map(|_| 0),
        ..DiskCounters::default()
    }
}

/// Our figure as iostat prints it. A counter this kernel lacks is printed by iostat as 0.00.
pub fn printed(v: Option<f64>) -> String {
    format!("{:.2}", v.unwrap_or(0.0))
}

/// Each device's diskstats line, whitespace-normalised, by name.
pub fn lines_by_name(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 3).then(|| (f[2].to_owned(), f.join(" ")))
        })
        .collect()
}

/// Compares iostat's since-boot report `out` with our columns from `d1` (read just before it,
/// with `/proc/uptime` `u1`) and `d2` and `u2` (read just after). Per-I/O figures must be equal
/// at iostat's rounding on devices whose counters did not move meanwhile. Rates depend on
/// iostat's own uptime read, which falls between `u1` and `u2`: each must lie between our
/// rate over `u2` and over `u1` (at iostat's rounding). Returns how many figures were compared
/// and, per device, whether it was stable.
pub fn compare_since_boot(
    d1: &str,
    u1: &str,
    out: &str,
    d2: &str,
    u2: &str,
    what: &str,
) -> (usize, BTreeMap<String, bool>) {
    let (l1, l2) = (lines_by_name(d1), lines_by_name(d2));
    let disks = diskstats::parse(d1).disks;
    let dt1 = uptime_cs(u1) as f64 / 100.0;
    let dt2 = uptime_cs(u2) as f64 / 100.0;
    let report = first_report(out);
    let mut compared = 0;
    let mut stable_seen = BTreeMap::new();
    for (name, vals) in &report.rows {
        let Some(cur) = disks.iter().find(|d| &d.name == name) else {
            panic!("{what}: iostat printed {name}, which is not in /proc/diskstats");
        };
        let stable = l1.get(name) == l2.get(name);
        let early = columns(&zero_like(cur), cur, dt1).unwrap();
        let late = columns(&zero_like(cur), cur, dt2).unwrap();
        for (col, want) in report.header.iter().zip(vals) {
            let theirs: f64 = want.parse().unwrap();
            if PER_IO.contains(&col.as_str()) {
                // Independent of the interval: exact at iostat's rounding, if the counters
                // did not move while iostat ran.
                if stable {
                    assert_eq!(&printed(column(&early, col)), want, "{what}: {name} {col}");
                }
            } else {
                let hi = column(&early, col).unwrap_or(0.0);
                let lo = column(&late, col).unwrap_or(0.0);
                let (lo, hi) = (lo.min(hi), lo.max(hi));
                // The counters may also have moved while iostat ran: 0.5 % more room.
                assert!(
                    theirs >= lo * 0.995 - 0.006 && theirs <= hi * 1.005 + 0.006,
                    "{what}: {name} {col}: iostat {want}, ours {lo}..{hi} (dt {dt1}..{dt2} s)"
                );
            }
            compared += 1;
        }
        stable_seen.insert(name.clone(), stable);
    }
    (compared, stable_seen)
}
