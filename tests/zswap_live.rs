//! zswap, live (issue 56, spec §14.1): `zswap_figures_are_the_kernels`.
//!
//! The test turns zswap on (its `enabled` and `max_pool_percent` put back as they were when
//! the test ends, however it ends), swaps on a swap file of its own (in cargo's target tmp
//! dir, at a higher priority than any other; swapped off and removed at the end) and runs
//! `pagewatch eat 500M` in a memory cgroup of 96 MiB, so about 400 MiB go through zswap.
//! `pagewatch --batch --format json -i 1` runs from before the eater starts until the counters
//! stop moving after it holds: its stores (`zswpout`) and writebacks (`zswpwb`) per second,
//! times each interval, summed between two records whose samples lie between equal
//! `/proc/vmstat` reads of the test's own, equal the test's deltas over that span within a
//! page. Then, in a record read
//! between two equal `/proc/meminfo` reads, the pool equals `Zswap` and what it stores
//! `Zswapped`. The eater's pages are one repeated byte and compress 50 to 1, so nothing is
//! written back there; the second half (`writeback`) puts random bytes in the pool and makes
//! the kernel write them back, and checks the writeback sum against a delta of thousands of
//! pages. Needs root, a kernel with zswap (`/sys/module/zswap`, meminfo's `Zswap`, 5.19+;
//! `zswpwb` 6.8+), a memory cgroup, tmpfs and the swap tools; skips, saying why, otherwise.
//! About 12 s; hold `flock -o /tmp/pw-live.lock`. (The lab's Debian cloud kernels have no
//! `CONFIG_ZSWAP`, so this runs on the host.)
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
const MAX_POOL: &str = "/sys/module/zswap/parameters/max_pool_percent";

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
    max_pool_was: String,
    dir: tempfile::TempDir,
    swapped_on: bool,
    group: Option<PathBuf>,
    /// The writeback half's: the second eater's group, and the tmpfs mounted in `dir`.
    group_b: Option<PathBuf>,
    tmpfs: bool,
    eater: Option<Child>,
}

impl ZswapSwap {
    fn file(&self) -> PathBuf {
        self.dir.path().join("swap")
    }

    fn tmpfs_dir(&self) -> PathBuf {
        self.dir.path().join("tmpfs")
    }

    fn stop_eater(&mut self) {
        if let Some(mut e) = self.eater.take() {
            let _ = e.kill();
            let _ = e.wait();
        }
    }
}

impl Drop for ZswapSwap {
    fn drop(&mut self) {
        self.stop_eater();
        if self.tmpfs {
            let _ = std::fs::remove_file(self.tmpfs_dir().join("random"));
            let _ = Command::new("umount").arg(self.tmpfs_dir()).status();
        }
        if self.swapped_on {
            let _ = Command::new("swapoff").arg(self.file()).status();
        }
        let _ = std::fs::remove_file(self.file());
        for g in [&self.group, &self.group_b].into_iter().flatten() {
            let _ = std::fs::remove_dir(g);
        }
        let _ = std::fs::write(ENABLED, &self.enabled_was);
        let _ = std::fs::write(MAX_POOL, &self.max_pool_was);
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
        max_pool_was: std::fs::read_to_string(MAX_POOL).unwrap().trim().to_owned(),
        dir: tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap(),
        swapped_on: false,
        group: None,
        group_b: None,
        tmpfs: false,
        eater: None,
    };
    std::fs::write(ENABLED, "Y").unwrap();
    let file = z.file();
    // The first eater's 500M and the writeback half's random fill and second eater.
    let size = (1536 << 20) + FILL;
    run(Command::new("fallocate")
        .args(["-l", &size.to_string()])
        .arg(&file));
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

/// Starts an eater of `size` in `group`; the flag turns true once it holds all it asked for.
fn start_eater(z: &mut ZswapSwap, group: &std::path::Path, size: &str) -> Arc<AtomicBool> {
    let mut eater = memcg::eater_in(group, size);
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

/// The kernel's `zswpout` and `zswpwb`.
fn counts() -> [u64; 2] {
    [
        field("/proc/vmstat", "zswpout"),
        field("/proc/vmstat", "zswpwb"),
    ]
}

/// Σ rate × interval of the stores and writebacks, in pages, with the test's own `zswpout` and
/// `zswpwb` deltas over the same span, across an eater of `size` in `group`. The span runs
/// between two records whose samples each lie between two equal reads of the counters (read
/// before the record's sample and after the record arrives), so the counters at those samples
/// are known exactly although the kernel stores and writes back from its own workers too (seen:
/// 120 stores in the second after the fill returned, and the shrink worker's writebacks after
/// the eater held). The span starts before the eater does and ends once it holds and the
/// counters stopped moving.
fn rates_across_an_eater(
    z: &mut ZswapSwap,
    group: &std::path::Path,
    size: &str,
) -> ([f64; 2], [u64; 2], usize) {
    let mut read = counts();
    let (_child, mut lines) = live::json_stream(&["-i", "1"]);
    let mut next = || {
        let line = lines.next().unwrap().unwrap();
        let (was, now) = (read, counts());
        read = now;
        (line, was == now, now)
    };
    let mut n = 0;
    let before = loop {
        let (_, still, now) = next();
        n += 1;
        assert!(
            n < 20,
            "zswpout or zswpwb moved in each of {n} intervals before the eater"
        );
        if still {
            break now;
        }
    };
    let held = start_eater(z, group, size);
    let (mut sums, mut held_before) = ([0.0; 2], false);
    let after = loop {
        let held_now = held.load(Ordering::SeqCst);
        let (line, still, now) = next();
        let j: serde_json::Value = serde_json::from_str(&line).unwrap();
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
        assert!(
            n < 60,
            "the eater did not hold its {size}, or the counters did not settle, within 60 \
             intervals (held: {held_now})"
        );
        if held_before && still {
            break now;
        }
        held_before = held_now;
    };
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
    let group = z.group.clone().unwrap();
    let (sums, deltas, n) = rates_across_an_eater(&mut z, &group, "500M");
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
    writeback(&mut z);
    drop(z);
    assert_eq!(
        std::fs::read_to_string(ENABLED).unwrap().trim(),
        was,
        "zswap's enabled put back"
    );
}

/// The random bytes the writeback half writes from within the first group (96 MiB): 16 MiB
/// more than its limit, so that a few thousand pages go to the pool.
const FILL: u64 = 112 << 20;

/// The writeback half: random bytes (which do not compress; 6.18 stores them as they are)
/// written to a tmpfs file of the test's own from within the first group put a few thousand
/// entries in the pool. The group's limit is then lifted (writing an entry back reads it into
/// the group first, which must be chargeable: under its limit the kernel wrote none back) and
/// the pool's limit set to 0 %, so that every store the second eater (in a group of its own)
/// tries finds the pool full and queues the kernel's shrink worker, which writes entries back
/// to the swap file until the pool is down to its accept threshold, here 0 (seen: 4 364 pages
/// within a second, 6.18, cgroup v1). With the limit at 1 % instead, a pool full of 61 000
/// entries, each stored once and so passed over once by the worker, which gives up after 16
/// entries passed over, wrote none back. pagewatch's writeback per second, summed over the
/// records across that eater, equals the `zswpwb` delta and is more than 0.
fn writeback(z: &mut ZswapSwap) {
    z.stop_eater();
    let dir = z.tmpfs_dir();
    std::fs::create_dir(&dir).unwrap();
    let size = format!("size={}", FILL + (64 << 20));
    run(Command::new("mount")
        .args(["-t", "tmpfs", "-o", &size, "pw-zswap-test"])
        .arg(&dir));
    z.tmpfs = true;
    let group = z.group.clone().unwrap();
    run(Command::new("sh").arg("-c").arg(format!(
        "echo $$ > {} && exec head -c {FILL} /dev/urandom > {}",
        group.join("cgroup.procs").display(),
        dir.join("random").display()
    )));
    let limit = ["memory.limit_in_bytes", "memory.max"]
        .map(|f| group.join(f))
        .into_iter()
        .find(|f| f.exists())
        .unwrap();
    std::fs::write(limit, (8u64 << 30).to_string()).unwrap();
    std::fs::write(MAX_POOL, "0").unwrap();
    let Some(b) = memcg::memory_group("pw-zswap-test-b", 64 << 20) else {
        eprintln!("writeback half skipped: no second memory cgroup could be made");
        return;
    };
    z.group_b = Some(b.clone());
    let (sums, deltas, n) = rates_across_an_eater(z, &b, "200M");
    eprintln!(
        "writeback: over {n} intervals zswpwb ours {} pagewatch {:.1} (zswpout ours {} \
         pagewatch {:.1}); pool {} kB",
        deltas[1],
        sums[1],
        deltas[0],
        sums[0],
        field("/proc/meminfo", "Zswap")
    );
    assert!(deltas[1] > 0, "the full pool wrote nothing back");
    for (sum, delta) in sums.into_iter().zip(deltas) {
        assert!((sum - delta as f64).abs() <= 1.0, "{sum} against {delta}");
    }
}
