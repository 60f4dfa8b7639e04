//! zswap, live (issue 56, spec §14.1): `zswap_figures_are_the_kernels`.
//!
//! The test turns zswap on (put back as it was when the test ends, however it ends), swaps on
//! a 1 GiB swap file of its own (in cargo's target tmp dir, at a higher priority than any
//! other; swapped off and removed at the end) and runs `pagewatch eat 500M` in a memory
//! cgroup of 96 MiB, so about 400 MiB go through zswap. `pagewatch --batch --format json -i 1`
//! runs from before the eater starts until two intervals after it holds: its stores
//! (`zswpout`) and writebacks (`zswpwb`) per second, times each interval, summed over the
//! intervals after the test's first `/proc/vmstat` read, equal the test's own deltas over the
//! same span within a page. Then, in a record read between two equal `/proc/meminfo` reads,
//! the pool equals `Zswap` and what it stores `Zswapped`. Needs root, a kernel with zswap
//! (`/sys/module/zswap`, meminfo's `Zswap`, 5.19+), a memory cgroup and the swap tools;
//! skips, saying why, otherwise. About 20 s; hold `flock -o /tmp/pw-live.lock`.
//!
//! The eater's pages are one repeated byte, so the pool stays far under its limit and the
//! kernel writes nothing back here (6.18, cgroup v1: zswpwb stayed 0 even with a pool of
//! random tmpfs pages held at max_pool_percent 1): the writeback sum is checked against a
//! delta of 0 on such a host, the store sum against hundreds of MiB.
#![allow(clippy::unwrap_used)]

#[path = "common/live.rs"]
mod live;
#[path = "common/memcg.rs"]
mod memcg;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const ENABLED: &str = "/sys/module/zswap/parameters/enabled";

/// A field of a `name value` file (`/proc/vmstat`) or `Name:  value kB` (`/proc/meminfo`).
fn field(path: &str, name: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next()?.trim_end_matches(':') == name).then(|| w.next()?.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no {name} in {path}"))
}

/// zswap turned on, a swap file swapped on, the eater's group and the eater: all undone when
/// dropped, in that order backwards.
struct ZswapSwap {
    enabled_was: String,
    dir: tempfile::TempDir,
    swapped_on: bool,
    group: Option<PathBuf>,
    eater: Option<Child>,
}

impl ZswapSwap {
    fn file(&self) -> PathBuf {
        self.dir.path().join("swap")
    }
}

impl Drop for ZswapSwap {
    fn drop(&mut self) {
        if let Some(mut e) = self.eater.take() {
            let _ = e.kill();
            let _ = e.wait();
        }
        if self.swapped_on {
            let _ = Command::new("swapoff").arg(self.file()).status();
        }
        let _ = std::fs::remove_file(self.file());
        if let Some(g) = &self.group {
            let _ = std::fs::remove_dir(g);
        }
        let _ = std::fs::write(ENABLED, &self.enabled_was);
    }
}

fn why_not() -> Option<&'static str> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    if !live::is_root() {
        Some("not running as root")
    } else if !std::path::Path::new(ENABLED).exists() {
        Some("no /sys/module/zswap (no CONFIG_ZSWAP)")
    } else if !meminfo.contains("\nZswap:") {
        Some("no Zswap line in /proc/meminfo (before 5.19)")
    } else if !memcg::have_swap_tools() || !live::have("fallocate") {
        Some("mkswap, swapon, swapoff or fallocate missing")
    } else {
        None
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {out:?}");
}

/// zswap on and the swap file swapped on; `None` (after saying why, and undoing it) when no
/// memory cgroup can be made.
fn set_up() -> Option<ZswapSwap> {
    let was = std::fs::read_to_string(ENABLED).unwrap().trim().to_owned();
    let mut z = ZswapSwap {
        enabled_was: was,
        dir: tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap(),
        swapped_on: false,
        group: None,
        eater: None,
    };
    std::fs::write(ENABLED, "Y").unwrap();
    let file = z.file();
    run(Command::new("fallocate").args(["-l", "1G"]).arg(&file));
    run(Command::new("chmod").arg("600").arg(&file));
    run(Command::new("mkswap").arg(&file));
    run(Command::new("swapon").args(["-p", "32000"]).arg(&file));
    z.swapped_on = true;
    let Some(group) = memcg::memory_group("pw-zswap-test", 96 << 20) else {
        eprintln!("skipped: no memory cgroup could be made for the eater");
        return None;
    };
    z.group = Some(group);
    Some(z)
}

/// Starts the eater in the group; the flag turns true once it holds all it asked for.
fn start_eater(z: &mut ZswapSwap) -> Arc<AtomicBool> {
    let mut eater = memcg::eater_in(z.group.as_ref().unwrap(), "500M");
    let out = BufReader::new(eater.stdout.take().unwrap());
    z.eater = Some(eater);
    let held = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&held);
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if line.contains("\"holding\"") {
                flag.store(true, Ordering::SeqCst);
            }
        }
    });
    held
}

fn batch(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pagewatch"));
    c.args(["--batch", "--format", "json", "--no-config"])
        .args(args);
    c
}

/// Σ rate × interval of the stores and writebacks, in pages, over the records after the first,
/// with the test's own `zswpout` and `zswpwb` deltas over the same span.
fn rates_across_the_eater(z: &mut ZswapSwap) -> ([f64; 2], [u64; 2], usize) {
    let (_child, mut lines) = live::json_stream(&["-i", "1"]);
    let _first = lines.next().unwrap().unwrap();
    let counts = || {
        [
            field("/proc/vmstat", "zswpout"),
            field("/proc/vmstat", "zswpwb"),
        ]
    };
    let before = counts();
    let held = start_eater(z);
    let (mut sums, mut n, mut after_held) = ([0.0; 2], 0, 0);
    for line in lines {
        let j: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        let zs = &j["compressed"]["zswap"];
        let dt = j["interval_s"].as_f64().unwrap();
        let page = j["page_size"].as_f64().unwrap();
        for (s, key) in sums
            .iter_mut()
            .zip(["store_bytes_per_s", "writeback_bytes_per_s"])
        {
            *s += zs[key].as_f64().unwrap() * dt / page;
        }
        n += 1;
        if held.load(Ordering::SeqCst) {
            after_held += 1;
        }
        assert!(
            n < 60,
            "the eater did not hold its 500M within 60 intervals"
        );
        if after_held == 2 {
            break;
        }
    }
    let after = counts();
    (sums, [after[0] - before[0], after[1] - before[1]], n)
}

#[test]
fn zswap_figures_are_the_kernels() {
    let _one = live::lock();
    if let Some(why) = why_not() {
        eprintln!("skipped: {why}");
        return;
    }
    let was = std::fs::read_to_string(ENABLED).unwrap().trim().to_owned();
    let Some(mut z) = set_up() else {
        return;
    };
    let (sums, deltas, n) = rates_across_the_eater(&mut z);
    eprintln!(
        "over {n} intervals: zswpout ours {} pagewatch {:.1}; zswpwb ours {} pagewatch {:.1}",
        deltas[0], sums[0], deltas[1], sums[1]
    );
    assert!(deltas[0] > 16_384, "only {} pages went to zswap", deltas[0]);
    for (sum, delta) in sums.into_iter().zip(deltas) {
        assert!((sum - delta as f64).abs() <= 1.0, "{sum} against {delta}");
    }
    let mem = || {
        [
            field("/proc/meminfo", "Zswap"),
            field("/proc/meminfo", "Zswapped"),
        ]
    };
    let (record, kb) = (0..5)
        .find_map(|_| {
            let before = mem();
            let out = batch(&["-i", "0.5", "-n", "1"]).output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            let last = text.lines().last()?.to_owned();
            (mem() == before).then_some((last, before))
        })
        .expect("Zswap kept changing across five records");
    let j: serde_json::Value = serde_json::from_str(&record).unwrap();
    let zs = &j["compressed"]["zswap"];
    eprintln!(
        "meminfo Zswap {} kB Zswapped {} kB; pagewatch {zs}",
        kb[0], kb[1]
    );
    assert!(kb[1] > 64 << 10, "zswap stores only {} kB", kb[1]);
    assert_eq!(zs["pool_bytes"].as_u64(), Some(kb[0] * 1024));
    assert_eq!(zs["stored_bytes"].as_u64(), Some(kb[1] * 1024));
    drop(z);
    assert_eq!(
        std::fs::read_to_string(ENABLED).unwrap().trim(),
        was,
        "zswap's enabled put back"
    );
}
