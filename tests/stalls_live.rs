//! The stalls the kernel hides, live (issue 56): direct compaction (spec §13).
//!
//! `compaction_stalls_per_second_are_the_vmstat_delta`: with THP `enabled` and `defrag` at
//! `always` (both put back when the test ends, however it ends), memory full of page cache
//! (as it is on a machine that has read its disks; the test reads nothing in), the test
//! allocates and touches 1.5 GiB of anonymous memory, so huge-page faults compact directly.
//! `pagewatch --batch --format json` runs across it. Its compact stalls per second, times each
//! interval, summed over the intervals read after the test's first `/proc/vmstat` read, are
//! at least the test's own `compact_stall` delta over the allocation, and equal to it unless
//! another task compacted in the quiet seconds around it. Needs root and a kernel with
//! `CONFIG_COMPACTION` and THP; skips, saying why, otherwise. About 12 s. Hold
//! `flock -o /tmp/pw-live.lock`.
#![allow(clippy::unwrap_used)]

#[path = "common/live.rs"]
mod live;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const THP: &str = "/sys/kernel/mm/transparent_hugepage";

/// `compact_stall` from `/proc/vmstat`, `None` without `CONFIG_COMPACTION`.
fn compact_stall() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/vmstat").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("compact_stall "))
        .map(|v| v.trim().parse().unwrap())
}

/// The setting in force of a THP file: the bracketed word of `always [madvise] never`.
fn thp_setting(name: &str) -> String {
    let text = std::fs::read_to_string(format!("{THP}/{name}")).unwrap();
    let open = text.find('[').unwrap();
    let close = text.find(']').unwrap();
    text[open + 1..close].to_owned()
}

/// THP `enabled` and `defrag` as they were, written back when dropped.
struct ThpSettings(Vec<(&'static str, String)>);

impl ThpSettings {
    fn set_always() -> Self {
        let saved = ["enabled", "defrag"].map(|n| (n, thp_setting(n))).to_vec();
        let guard = ThpSettings(saved);
        for (name, _) in &guard.0 {
            std::fs::write(format!("{THP}/{name}"), "always").unwrap();
        }
        guard
    }
}

impl Drop for ThpSettings {
    fn drop(&mut self) {
        for (name, was) in &self.0 {
            let _ = std::fs::write(format!("{THP}/{name}"), was);
        }
    }
}

fn why_not() -> Option<String> {
    if !live::is_root() {
        return Some("not running as root".into());
    }
    if compact_stall().is_none() {
        return Some("no compact_stall in /proc/vmstat (no CONFIG_COMPACTION)".into());
    }
    if !std::path::Path::new(THP).join("defrag").exists() {
        return Some(format!("no {THP} (no transparent huge pages)"));
    }
    None
}

/// Touches `bytes` of anonymous memory one page at a time, then frees it.
fn allocate_and_touch(bytes: usize) {
    // `vec![0; n]` maps fresh zero pages; each store faults one in.
    let mut v = vec![0u8; bytes];
    for i in (0..bytes).step_by(4096) {
        v[i] = 1;
    }
    drop(std::hint::black_box(v));
}

#[test]
fn compaction_stalls_per_second_are_the_vmstat_delta() {
    let _one = live::lock();
    if let Some(why) = why_not() {
        eprintln!("skipped: {why}");
        return;
    }
    let _thp = ThpSettings::set_always();
    let child = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args(["--batch", "--format", "json", "-i", "1", "-n", "8"])
        .arg("--no-config")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = live::Killed(child);
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    // The first interval is done: its closing read was before ours.
    let first = lines.next().unwrap().unwrap();
    let before = compact_stall().unwrap();
    allocate_and_touch(1536 << 20);
    let after = compact_stall().unwrap();
    let mut sum = 0.0;
    let mut most: f64 = 0.0;
    let mut n = 0;
    for line in lines {
        let j: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        let rate = j["reclaim"]["compact_stall_s"].as_f64().unwrap();
        let dt = j["interval_s"].as_f64().unwrap();
        sum += rate * dt;
        most = most.max(rate);
        n += 1;
    }
    let _ = child.0.wait();
    let ours = after - before;
    eprintln!(
        "compact_stall: ours {ours} ({before} → {after}); pagewatch Σ rate·dt over {n} \
         intervals {sum:.1}, highest {most:.1}/s; first interval {first:.80}"
    );
    assert!(n >= 2, "pagewatch printed {n} intervals after the first");
    assert!(
        ours > 0,
        "1.5 GiB of THP faults over a full page cache did not compact"
    );
    assert!(most > 0.0, "no interval showed compact stalls");
    let ours = ours as f64;
    assert!(
        sum >= ours - 0.5,
        "pagewatch counted {sum} stalls, fewer than the {ours} of the allocation"
    );
    // Another task's compaction in the quiet seconds around the allocation would add to
    // pagewatch's sum only: a tenth (or one stall) of slack for a shared machine.
    assert!(
        sum <= ours + (ours * 0.1).max(1.0),
        "pagewatch counted {sum} stalls against the {ours} of the allocation"
    );
}
