//! Live cross-checks against the running kernel (Linux; the sysctl test needs root): the dirty
//! thresholds pagewatch derives from MemFree, the file LRU and the zoneinfo reserves must equal
//! the kernel's own `nr_dirty_threshold` / `nr_dirty_background_threshold` exactly (spec §1.2,
//! §9.3), in ratio, bytes and mixed modes as the vm.dirty_* sysctls are changed (and restored),
//! and the derived MemAvailable must be within 1 % of the kernel's (spec §2, §9.4).
//! Every test here takes one static lock, so the sysctl changes never race the other checks.

#[path = "common/live.rs"]
mod live;
#[path = "common/sysctl.rs"]
mod sysctl;

use std::path::Path;

use pagewatch::model::dirty::Mode;
use pagewatch::model::{Model, Options};
use pagewatch::parse::Snapshot;
use pagewatch::source::FsSource;
use sysctl::DirtyKnobs;

use live::lock;

const ATTEMPTS: usize = 50;

fn live_snapshot(src: &mut FsSource) -> Snapshot {
    let raw = src.read().expect("read live /proc");
    Snapshot::parse(&raw).expect("parse live /proc")
}

/// Why the live dirty checks cannot run here, if they cannot.
fn no_kernel_thresholds() -> Option<String> {
    match std::fs::read_to_string("/proc/vmstat") {
        Err(e) => Some(format!("cannot read /proc/vmstat: {e}")),
        Ok(t) if !t.lines().any(|l| l.starts_with("nr_dirty_threshold ")) => {
            Some("/proc/vmstat has no nr_dirty_threshold (kernel older than 2.6.37)".to_owned())
        }
        Ok(_) => None,
    }
}

/// Outcome of one attempt: MemFree before/after and the two (kernel, derived) pairs.
struct Attempt {
    stable: bool,
    memfree_delta_kb: i128,
    thresh: (Option<u64>, Option<u64>),
    bg: (Option<u64>, Option<u64>),
    thresh_mode: Option<Mode>,
    bg_mode: Option<Mode>,
}

impl Attempt {
    fn exact(&self) -> bool {
        self.thresh.0.is_some()
            && self.thresh.0 == self.thresh.1
            && self.bg.0.is_some()
            && self.bg.0 == self.bg.1
    }

    fn describe(&self) -> String {
        let diff = |(k, d): (Option<u64>, Option<u64>)| match (k, d) {
            (Some(k), Some(d)) => format!(
                "kernel {k} derived {d} (derived−kernel {})",
                i128::from(d) - i128::from(k)
            ),
            _ => format!("kernel {k:?} derived {d:?}"),
        };
        format!(
            "MemFree Δ {} kB{}; thresh: {}; bg: {}",
            self.memfree_delta_kb,
            if self.stable { " (stable)" } else { "" },
            diff(self.thresh),
            diff(self.bg)
        )
    }
}

/// One attempt: two back-to-back samples; the first is checked, the second tells whether
/// MemFree moved while the first sample's meminfo and vmstat were being read.
fn attempt(src: &mut FsSource) -> Attempt {
    let a = live_snapshot(src);
    let b = live_snapshot(src);
    let m = Model::derive(None, &a, Options::default());
    // MemFree in kB, from the model (whatever unit the parsed snapshot keeps).
    let free_b = Model::derive(None, &b, Options::default()).memory.MemFree;
    let d = m.dirty;
    Attempt {
        stable: m.memory.MemFree == free_b,
        memfree_delta_kb: i128::from(free_b) - i128::from(m.memory.MemFree),
        thresh: (d.thresh_pages, d.derived_thresh_pages),
        bg: (d.bg_thresh_pages, d.derived_bg_thresh_pages),
        thresh_mode: d.thresh_mode,
        bg_mode: d.bg_thresh_mode,
    }
}

/// Retries until an attempt with a stable MemFree matches the kernel exactly; panics with
/// every difference seen if none does. Returns the matching attempt.
fn exact_match(what: &str) -> Attempt {
    let mut src = FsSource::live();
    let mut seen = Vec::new();
    let mut stable = 0;
    for i in 0..ATTEMPTS {
        let a = attempt(&mut src);
        if a.stable {
            stable += 1;
            if a.exact() {
                println!(
                    "{what}: exact on attempt {} ({} earlier differences): {}",
                    i + 1,
                    seen.len(),
                    a.describe()
                );
                for s in &seen {
                    println!("  earlier: {s}");
                }
                return a;
            }
        }
        seen.push(a.describe());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!(
        "{what}: no exact match in {ATTEMPTS} attempts ({stable} with a stable MemFree):\n  {}",
        seen.join("\n  ")
    );
}

#[test]
fn derived_thresholds_equal_kernel() {
    let _g = lock();
    if let Some(why) = no_kernel_thresholds() {
        println!("skipped: {why}");
        return;
    }
    exact_match("current sysctls");
}

#[test]
fn derived_mem_available_within_1pct() {
    let _g = lock();
    let mut src = FsSource::live();
    let snap = live_snapshot(&mut src);
    let m = Model::derive(None, &snap, Options::default()).memory;
    let Some(kernel) = m.MemAvailable else {
        println!("skipped: /proc/meminfo has no MemAvailable (kernel older than 3.14)");
        return;
    };
    let derived = m
        .derived_MemAvailable
        .expect("derived MemAvailable needs /proc/zoneinfo and the file LRU fields");
    let diff = i128::from(derived) - i128::from(kernel);
    println!(
        "MemAvailable: kernel {kernel} kB, derived {derived} kB, derived−kernel {diff} kB ({:.4} %)",
        diff as f64 / kernel as f64 * 100.0
    );
    assert!(
        diff.unsigned_abs() * 100 <= u128::from(kernel),
        "derived MemAvailable {derived} kB is more than 1 % from the kernel's {kernel} kB"
    );
}

// ---------------------------------------------------------------------------------------------
// sysctl changes

const VM: &str = "/proc/sys/vm";
fn read_knob(knob: &str) -> u64 {
    let path = Path::new(VM).join(knob);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write_knob(knob: &str, value: u64) -> std::io::Result<()> {
    std::fs::write(Path::new(VM).join(knob), format!("{value}\n"))
}

fn set(knob: &str, value: u64) {
    write_knob(knob, value).unwrap_or_else(|e| panic!("write {value} to vm.{knob}: {e}"));
    assert_eq!(read_knob(knob), value, "vm.{knob} did not take {value}");
}

/// Why the sysctl test cannot run here, if it cannot.
fn cannot_write_sysctls() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1));
    if euid != Some("0") {
        return Some(format!("not running as root (euid {euid:?})"));
    }
    // Rewrite a knob with its own value: fails on a read-only /proc/sys (containers).
    let path = Path::new(VM).join("dirty_expire_centisecs");
    let cur = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => return Some(format!("cannot read {}: {e}", path.display())),
    };
    std::fs::write(&path, cur)
        .err()
        .map(|e| format!("/proc/sys is not writable: {e}"))
}

#[test]
fn derived_thresholds_follow_sysctl_changes() {
    let _g = lock();
    if let Some(why) = no_kernel_thresholds() {
        println!("skipped: {why}");
        return;
    }
    if let Some(why) = cannot_write_sysctls() {
        println!("skipped: {why}");
        return;
    }
    let restore = DirtyKnobs::take();
    println!(
        "original {}",
        sysctl::DIRTY
            .iter()
            .zip(restore.taken())
            .map(|(k, v)| format!("vm.{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let page = rustix::param::page_size() as u64;

    // Ratio mode, twice.
    for (r, bg) in [(30, 5), (7, 3)] {
        set("dirty_ratio", r);
        set("dirty_background_ratio", bg);
        assert_eq!(read_knob("dirty_bytes"), 0);
        assert_eq!(read_knob("dirty_background_bytes"), 0);
        let a = exact_match(&format!("ratio {r}/{bg}"));
        assert_eq!(
            (a.thresh_mode, a.bg_mode),
            (Some(Mode::Ratio), Some(Mode::Ratio))
        );
    }

    // Bytes mode: 512 MiB + 1 byte rounds up to one more page; bg 1 GiB ≥ thresh → thresh / 2.
    let dirty_bytes = (512 << 20) + 1;
    set("dirty_bytes", dirty_bytes);
    set("dirty_background_bytes", 1 << 30);
    assert_eq!(
        read_knob("dirty_ratio"),
        0,
        "writing dirty_bytes zeroes dirty_ratio"
    );
    assert_eq!(read_knob("dirty_background_ratio"), 0);
    let a = exact_match("bytes 512MiB+1 / 1GiB");
    let thresh = (512 << 20) / page + 1;
    assert_eq!(
        a.thresh.0,
        Some(thresh),
        "kernel thresh for dirty_bytes = 512 MiB + 1"
    );
    assert_eq!(a.bg.0, Some(thresh / 2), "kernel bg ≥ thresh → thresh/2");
    assert_eq!(
        (a.thresh_mode, a.bg_mode),
        (Some(Mode::Bytes), Some(Mode::Bytes))
    );

    // Mixed: dirty_ratio 20 (zeroes dirty_bytes) with dirty_background_bytes 64 MiB.
    set("dirty_ratio", 20);
    assert_eq!(
        read_knob("dirty_bytes"),
        0,
        "writing dirty_ratio zeroes dirty_bytes"
    );
    set("dirty_background_bytes", 64 << 20);
    let a = exact_match("mixed ratio 20 / bg 64MiB");
    let bg = (64 << 20) / page;
    if a.thresh.0.is_some_and(|t| t > bg) {
        assert_eq!(
            a.bg.0,
            Some(bg),
            "kernel bg for dirty_background_bytes = 64 MiB"
        );
    }
    assert_eq!(
        (a.thresh_mode, a.bg_mode),
        (Some(Mode::Ratio), Some(Mode::Bytes))
    );

    drop(restore);
}
