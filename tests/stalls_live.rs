//! The stalls the kernel hides, live (issue 56): direct compaction (spec §13).
//!
//! `compaction_stalls_per_second_are_the_vmstat_delta`: with THP `enabled` and `defrag` at
//! `always` (both put back when the test ends, however it ends), memory full of page cache
//! (as it is on a machine that has read its disks; the test reads nothing in), the test
//! allocates and touches 1 GiB more anonymous memory than MemFree (at least 1.5 GiB, at most
//! half of MemAvailable), so huge-page faults reclaim scattered cache and compact directly.
//! `pagewatch --batch --format json` runs across it. Its compact stalls per second, times each
//! interval, summed over the intervals read after the test's first `/proc/vmstat` read, are
//! at least the test's own `compact_stall` delta over the allocation, and equal to it unless
//! another task compacted in the quiet seconds around it. Needs root and a kernel with
//! `CONFIG_COMPACTION` and THP; skips, saying why, otherwise. About 12 s.
//!
//! `zram_sizes_are_mm_stats` (spec §14.2): see its doc. Hold `flock -o /tmp/pw-live.lock`
//! around both.
#![allow(clippy::unwrap_used)]

#[path = "common/live.rs"]
mod live;
#[path = "common/memcg.rs"]
mod memcg;

use std::io::{BufRead, BufReader};
use std::process::Command;

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

/// A meminfo field, kB.
fn meminfo_kb(key: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap()
}

/// How much to allocate: past MemFree by 1 GiB, so that the huge pages must come from
/// reclaimed page cache, scattered over memory, through compaction (with MemFree alone, whole
/// free blocks serve them); at least 1.5 GiB, at most half of MemAvailable.
fn past_free_bytes() -> usize {
    let free = meminfo_kb("MemFree:") * 1024;
    let avail = meminfo_kb("MemAvailable:") * 1024;
    let want = (free + (1 << 30)).max(1536 << 20).min(avail / 2);
    usize::try_from(want).unwrap()
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
    let (mut child, mut lines) = live::json_stream(&["-i", "1", "-n", "8"]);
    // The first interval is done: its closing read was before ours.
    let first = lines.next().unwrap().unwrap();
    let bytes = past_free_bytes();
    let before = compact_stall().unwrap();
    allocate_and_touch(bytes);
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
        "{} MiB touched; compact_stall: ours {ours} ({before} → {after}); pagewatch Σ rate·dt over {n} \
         intervals {sum:.1}, highest {most:.1}/s; first interval {first:.80}",
        bytes >> 20
    );
    assert!(n >= 2, "pagewatch printed {n} intervals after the first");
    if ours == 0 {
        // Free memory came in whole huge pages (a machine with much of it free and little
        // page cache: the clean-clone CI run): nothing to compare, and said so.
        eprintln!("skipped: the THP faults found whole huge pages and never compacted");
        return;
    }
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

/// A zram device this test added (`hot_add`) and swaps on, an eater's memory cgroup, and the
/// eater: all undone when dropped (the eater killed, swapoff, the group removed, the device
/// reset and removed). Never touches a device or swap it did not make.
struct ZramSwap {
    id: String,
    group: Option<std::path::PathBuf>,
    eater: Option<std::process::Child>,
    swapped_on: bool,
}

impl Drop for ZramSwap {
    fn drop(&mut self) {
        if let Some(mut e) = self.eater.take() {
            let _ = e.kill();
            let _ = e.wait();
        }
        let dev = format!("/dev/zram{}", self.id);
        if self.swapped_on {
            let _ = Command::new("swapoff").arg(&dev).status();
        }
        if let Some(g) = &self.group {
            let _ = std::fs::remove_dir(g);
        }
        let sys = format!("/sys/block/zram{}", self.id);
        let _ = std::fs::write(format!("{sys}/reset"), "1");
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.id);
    }
}

/// Makes the device, swaps on it and starts the eater in its cgroup, until it holds; `None`
/// (after saying why, and undoing what was done) when no memory cgroup can be made.
fn zram_swap_with_eater(control: &std::path::Path) -> Option<(ZramSwap, String)> {
    // Reading hot_add makes a device and says its number.
    let id = std::fs::read_to_string(control).unwrap().trim().to_owned();
    let mut z = ZramSwap {
        id: id.clone(),
        group: None,
        eater: None,
        swapped_on: false,
    };
    let name = format!("zram{id}");
    let sys = format!("/sys/block/{name}");
    std::fs::write(format!("{sys}/disksize"), "512M").unwrap();
    let dev = format!("/dev/{name}");
    assert!(
        Command::new("mkswap")
            .arg(&dev)
            .output()
            .unwrap()
            .status
            .success()
    );
    assert!(
        Command::new("swapon")
            .args(["-p", "32000", &dev])
            .status()
            .unwrap()
            .success()
    );
    z.swapped_on = true;
    let Some(group) = memcg::memory_group("pw-zram-test", 96 << 20) else {
        eprintln!("skipped: no memory cgroup could be made for the eater");
        return None;
    };
    z.group = Some(group.clone());
    let eater = memcg::eater_in(&group, "256M");
    let eater = z.eater.insert(eater);
    let out = BufReader::new(eater.stdout.take().unwrap());
    let held = out
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("\"holding\""));
    assert!(held, "the eater never held its 256M");
    Some((z, name))
}

/// `zram_sizes_are_mm_stats`: a zram device of 512 MiB made by the test, swap on it at a
/// higher priority than any other, and `pagewatch eat 256M` in a memory cgroup of 96 MiB, so
/// that about 160 MiB go to it. While the eater holds, `mm_stat` read before and after a
/// `pagewatch --batch --format json` record that did not change: the record's original and
/// compressed sizes equal its fields, and the device among the disks is labelled memory, not
/// judged. About 30 s.
#[test]
fn zram_sizes_are_mm_stats() {
    let _one = live::lock();
    let control = std::path::Path::new("/sys/class/zram-control/hot_add");
    let why = if !live::is_root() {
        Some("not running as root")
    } else if !control.exists() {
        Some("no /sys/class/zram-control (zram not built in nor loaded: modprobe zram)")
    } else if !memcg::have_swap_tools() {
        Some("mkswap, swapon or swapoff missing")
    } else {
        None
    };
    if let Some(why) = why {
        eprintln!("skipped: {why}");
        return;
    }
    let Some((z, name)) = zram_swap_with_eater(control) else {
        return;
    };
    let sys = format!("/sys/block/{name}");
    let mm = || std::fs::read_to_string(format!("{sys}/mm_stat")).unwrap();
    let fields =
        |t: &str| -> Vec<u64> { t.split_whitespace().map(|w| w.parse().unwrap()).collect() };
    // A record read between two equal mm_stat reads saw those figures.
    let (record, stat) = (0..5)
        .find_map(|_| {
            let before = mm();
            let out = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
                .args([
                    "--batch",
                    "--format",
                    "json",
                    "-i",
                    "1",
                    "-n",
                    "1",
                    "--no-config",
                ])
                .output()
                .unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            let last = text.lines().last()?.to_owned();
            (mm() == before).then_some((last, before))
        })
        .expect("mm_stat kept changing across five records");
    let j: serde_json::Value = serde_json::from_str(&record).unwrap();
    let f = fields(&stat);
    let ours = j["compressed"]["zram"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name.as_str())
        .unwrap_or_else(|| panic!("no {name} in {}", j["compressed"]))
        .clone();
    eprintln!("mm_stat {stat:?}; pagewatch {ours}");
    assert!(f[0] > 64 << 20, "only {} bytes went to {name}", f[0]);
    assert_eq!(ours["orig_bytes"].as_u64(), Some(f[0]));
    assert_eq!(ours["compr_bytes"].as_u64(), Some(f[1]));
    assert_eq!(ours["mem_used_bytes"].as_u64(), Some(f[2]));
    assert!(ours["limit_bytes"].is_null(), "mem_limit 0 is no limit");
    let disk = j["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name.as_str())
        .unwrap_or_else(|| panic!("{name} not among the disks"))
        .clone();
    assert_eq!(
        disk["saturation_why"].as_str(),
        Some(pagewatch::model::disk::MEMORY_WHY)
    );
    assert_eq!(disk["saturated"], false);
    drop(z);
    assert!(!std::path::Path::new(&sys).exists(), "{name} removed");
}
