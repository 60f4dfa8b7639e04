//! One answer from two instances started apart (root and dd; skipped otherwise): a batch
//! started before a flood of short `dd` writers and one started 8.5 s into it walk in the
//! same seconds once the second has made its first walks (`source::procs`: walks fall on the
//! wall clock's multiples of their period), so their process rates are over the same
//! interval, and in every second where they are, both name the same culprits with the same
//! number of processes at the same rate. The walks of the two are milliseconds apart, so a
//! `dd` that starts or exits between them falls in one interval for one and the next for the
//! other: the counts may differ by one, the rates by 5 %, and by one process's share more
//! when the counts differ (2026-12-01: 18 `dd`s at 717 MB/s against 17 at 676 MB/s in the
//! flood's last second, one `dd` being about 42 MB/s). Counted from each instance's own
//! first walk, the two rated over intervals seconds apart: `dd ×6 dirtying 398M/s` against
//! `dd ×4 dirtying 1.6G/s` in the same second, and their culprits differed in 22 of 45
//! seconds.
//!
//! The processes view is one more instance (a screen at 160x48 in tmux, started with the
//! first batch): its header's `who:` line names the first batch's culprits in the same
//! second. It walked every 2 s where every other mode walked every 5 s: in a flood of 20
//! `dd`s its line read `dd ×2 dirtying 227M/s` where batch said `dd ×4 dirtying 205M/s`, in
//! every one of 16 seconds.
//!
//! `vm.dirty_bytes` is 64 MiB while it runs (put back after, however the test ends), so the
//! writers are throttled and named. The `dd`s write a file in a temporary directory under
//! /var/tmp, removed at the end. About 40 s; hold `flock -o /tmp/pw-live.lock`.
#![allow(clippy::unwrap_used)]

#[path = "common/live.rs"]
mod live;
#[path = "common/sysctl.rs"]
mod sysctl;
#[path = "common/tmux.rs"]
mod tmux;

use std::collections::BTreeMap;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use live::{Killed, have, is_root};

/// The flood: back-to-back `dd`s of 200 MiB for this long.
const FLOOD_S: u64 = 35;
/// The second instance starts this long after the first (not a multiple of the 5 s pace).
const SECOND_AFTER_S: f64 = 8.5;
/// The second instance's records by which its walks fall on the shared seconds: its first
/// walk (from its second record, once a model says the disk is busy), one a second later,
/// then the next multiple of 5 s, whose interval is its own, and one whole period after it.
const SETTLE_RECORDS: usize = 13;

/// One instance's records by second (its `time_ms` rounded), sent from a thread of its own.
fn collect(args: &[String], tx: &mpsc::Sender<(usize, i64, serde_json::Value)>, who: usize) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_pw, lines) = live::json_stream(&args);
    for line in lines {
        let Ok(line) = line else { break };
        let r: serde_json::Value = serde_json::from_str(&line).unwrap();
        let s = (r["time_ms"].as_i64().unwrap() + 500) / 1000;
        if tx.send((who, s, r)).is_err() {
            break;
        }
    }
}

/// The screen's `who:` culprits by second of the day (its header's `HH:MM:SS UTC`), read
/// every 0.4 s until `stop`: (command, processes, bytes a second), the line as shown.
type Shown = BTreeMap<i64, (Vec<(String, u64, f64)>, String)>;

fn watch(screen: &tmux::Session, stop: &std::sync::atomic::AtomicBool) -> Shown {
    let mut out = Shown::new();
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let text = screen.screen();
        let head: Vec<&str> = text.lines().take(3).collect();
        let clock = head.first().and_then(|l| {
            let i = l.find(" UTC")?;
            let hms: Vec<i64> = l
                .get(i.checked_sub(8)?..i)?
                .split(':')
                .map(|x| x.parse().ok())
                .collect::<Option<_>>()?;
            (hms.len() == 3).then(|| hms[0] * 3600 + hms[1] * 60 + hms[2])
        });
        if let (Some(t), Some(line)) = (clock, head.get(2).filter(|l| l.starts_with("who: "))) {
            out.insert(t, (shown_culprits(line), line.trim().to_owned()));
        }
        std::thread::sleep(Duration::from_millis(400));
    }
    out
}

/// `who: culprit dd ×4 dirtying 211M/s, …` as (command, processes, bytes a second dirtied
/// and read), in the 1024-based units the screen shows.
fn shown_culprits(line: &str) -> Vec<(String, u64, f64)> {
    let Some(rest) = line.split("culprit").nth(1) else {
        return Vec::new();
    };
    let rest = rest.split(';').next().unwrap_or("");
    let bytes = |t: &str| -> f64 {
        let t = t.trim_end_matches("/s");
        let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
        let k = match unit {
            "K" => 1024f64,
            "M" => 1024f64.powi(2),
            "G" => 1024f64.powi(3),
            "T" => 1024f64.powi(4),
            _ => 1.0,
        };
        num.parse::<f64>().unwrap_or(f64::NAN) * k
    };
    let mut out: Vec<(String, u64, f64)> = Vec::new();
    let mut words = rest.split_whitespace().peekable();
    while let Some(w) = words.next() {
        let comm = w.trim_end_matches(',').to_owned();
        let mut pids = 1;
        if let Some(n) = words.peek().and_then(|x| x.strip_prefix('×')) {
            pids = n.trim_end_matches(',').parse().unwrap_or(0);
            words.next();
        }
        let mut rate = 0.0;
        while let Some(verb) = words.peek().copied() {
            if verb != "dirtying" && verb != "reading" {
                break;
            }
            words.next();
            rate += words
                .next()
                .map_or(f64::NAN, |r| bytes(r.trim_end_matches(',')));
        }
        out.push((comm, pids, rate));
    }
    out
}

/// The processes view in a tmux screen at 160x48, and a thread reading its header until the
/// flag is set (`watch`). The server goes with the last handle on the screen.
fn processes_view() -> (
    Arc<tmux::Session>,
    Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<Shown>,
) {
    let screen = Arc::new(tmux::Session::start(
        format!("pw-agree-{}", std::process::id()),
        160,
        48,
        &format!(
            "{} --no-config --view processes",
            env!("CARGO_BIN_EXE_pagewatch")
        ),
    ));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (screen, stop) = (Arc::clone(&screen), Arc::clone(&stop));
        std::thread::spawn(move || watch(&screen, &stop))
    };
    (screen, stop, watcher)
}

/// The culprits of a record: (command, processes, bytes a second dirtied and read).
fn culprits(r: &serde_json::Value) -> Vec<(String, u64, f64)> {
    let v = &r["verdict"]["culprits"];
    v.as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let rate = |k: &str| c[k].as_f64().unwrap_or(0.0);
            (
                c["comm"].as_str().unwrap().to_owned(),
                c["pids"].as_u64().unwrap(),
                rate("dirtied_bytes_per_s") + rate("read_bytes_per_s"),
            )
        })
        .collect()
}

/// Whether two instances' culprits of one second are the same: the same names in the same
/// order, counts within one, and rates within 5 %. A process counted by one walk and not the
/// other carries its own rate with it, so the rates may differ by one process's share more
/// when the counts differ.
fn same_culprits(a: &[(String, u64, f64)], b: &[(String, u64, f64)]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            let top = x.2.max(y.2);
            let one = if x.1 == y.1 {
                0.0
            } else {
                top / x.1.min(y.1).max(1) as f64
            };
            x.0 == y.0 && x.1.abs_diff(y.1) <= 1 && (x.2 - y.2).abs() <= 0.05 * top + one
        })
}

#[test]
fn instances_started_apart_name_the_same_culprits_in_the_same_second() {
    if !is_root() || !have("dd") {
        println!("skipped: needs root (sets vm.dirty_bytes) and dd");
        return;
    }
    let _lock = live::lock();
    let dir = tempfile::Builder::new()
        .prefix("pagewatch-agree")
        .tempdir_in("/var/tmp")
        .unwrap();
    let knobs = sysctl::DirtyKnobs::set_dirty_bytes(64 << 20);
    let (screen, stop, watcher) = processes_view();
    let (tx, rx) = mpsc::channel();
    let n = |s: f64| format!("{}", s as u64);
    let first = {
        let tx = tx.clone();
        let args = vec![
            "-i".into(),
            "1".into(),
            "-n".into(),
            n(FLOOD_S as f64 + 6.0),
        ];
        std::thread::spawn(move || collect(&args, &tx, 0))
    };
    std::thread::sleep(Duration::from_secs(2));
    let script = format!(
        "end=$(( $(date +%s) + {FLOOD_S} )); while [ $(date +%s) -lt $end ]; do \
         dd if=/dev/zero of={}/w bs=1M count=200 status=none; done",
        dir.path().display()
    );
    let flood = Killed(
        std::process::Command::new("sh")
            .args(["-c", &script])
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(SECOND_AFTER_S));
    let second = {
        let count = FLOOD_S as f64 - SECOND_AFTER_S - 1.0;
        let args = vec!["-i".into(), "1".into(), "-n".into(), n(count)];
        std::thread::spawn(move || collect(&args, &tx, 1))
    };
    let mut by: [BTreeMap<i64, serde_json::Value>; 2] = Default::default();
    let mut order: Vec<i64> = Vec::new();
    for (who, s, r) in rx {
        if who == 1 {
            order.push(s);
        }
        by[who].insert(s, r);
    }
    first.join().unwrap();
    second.join().unwrap();
    let flood_s = start.elapsed().as_secs_f64();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let shown = watcher.join().unwrap();
    drop(screen);
    drop(flood);
    let was = knobs.taken().clone();
    drop(knobs);
    assert_eq!(
        sysctl::DirtyKnobs::take().taken(),
        &was,
        "the knobs put back"
    );
    let mut compared = 0;
    let mut named = 0;
    for (i, s) in order.iter().enumerate() {
        let (Some(a), Some(b)) = (by[0].get(s), by[1].get(s)) else {
            continue;
        };
        let interval = |r: &serde_json::Value| r["walk_interval_ms"].as_i64();
        let (ia, ib) = (interval(a), interval(b));
        let same_interval = matches!((ia, ib), (Some(x), Some(y)) if x.abs_diff(y) <= 100);
        assert!(
            same_interval || i < SETTLE_RECORDS,
            "second {s}, the second instance's record {i}: walk intervals {ia:?} and {ib:?} ms"
        );
        if !same_interval {
            continue;
        }
        let (ca, cb) = (culprits(a), culprits(b));
        compared += 1;
        named += usize::from(!ca.is_empty());
        println!("{s}: {ca:?} | {cb:?}");
        let same = same_culprits(&ca, &cb);
        assert!(
            same,
            "second {s}: the first instance named {ca:?}, the second {cb:?} ({flood_s:.0} s in)"
        );
    }
    println!("{compared} seconds compared, {named} naming culprits");
    screen_agrees(&by[0], &shown);
    assert!(
        compared >= 10 && named >= 8,
        "too few seconds to compare: {compared} compared, {named} naming culprits"
    );
}

/// The processes view against the first batch, from 12 s into the flood (both walked first
/// when it began, then on the 5 s grid), where the first is on the grid and names culprits
/// and the screen's third line is the story. The screen rounds its rates to 3 figures
/// (`211M`, `1.6G`).
fn screen_agrees(first: &BTreeMap<i64, serde_json::Value>, shown: &Shown) {
    let flood_from = first.keys().next().copied().unwrap_or(0) + 2;
    let mut on_screen = 0;
    for (s, a) in first {
        let on_grid = a["walk_interval_ms"]
            .as_i64()
            .is_some_and(|i| i.abs_diff(5000) <= 100);
        let ca = culprits(a);
        let Some((cs, line)) = shown.get(&s.rem_euclid(86_400)) else {
            continue;
        };
        if *s < flood_from + 12 || !on_grid || ca.is_empty() {
            continue;
        }
        on_screen += 1;
        println!("{s}: {ca:?} | screen {line}");
        let same = ca.len() == cs.len()
            && ca.iter().zip(cs).all(|(x, y)| {
                x.0 == y.0 && x.1.abs_diff(y.1) <= 1 && (x.2 - y.2).abs() <= 0.08 * x.2.max(y.2)
            });
        assert!(
            same,
            "second {s}: the first batch named {ca:?}, the processes view `{line}`"
        );
    }
    println!("{on_screen} seconds compared with the processes view");
    assert!(
        on_screen >= 5,
        "too few seconds with the processes view's culprits: {on_screen} ({} read)",
        shown.len()
    );
}
