//! Shared by the block latency tests (`blk_latency.rs`, `blk_latency_screen.rs`): the skip
//! reasons, a loop device of their own over a sparse file under /var/tmp (read only, detached
//! and removed when dropped), fio reading it, pagewatch in batch mode, and the tracefs paths.
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
pub const TRACEFS: &str = "/sys/kernel/tracing";
pub const EVENTS: [&str; 3] = ["block_rq_insert", "block_rq_issue", "block_rq_complete"];

/// One test at a time: they share the CPU with fio.
pub use super::live::lock;

/// Why these tests cannot run here, if they cannot.
pub fn cannot_run() -> Option<String> {
    let events = EVENTS.map(|e| format!("events/block/{e}"));
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    if let Some(why) = super::live::cannot_trace(&events, &["fio", "losetup"]) {
        return Some(why);
    }
    None
}

/// A loop device over a sparse file of our own under /var/tmp; detached and removed when
/// dropped. Reads of its holes cost no disk IO, so fio reaches tens of thousands of IOPS.
pub struct Loop {
    dev: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    pub fn new() -> Option<Self> {
        let dir = tempfile::Builder::new()
            .prefix("pagewatch-blk-test")
            .tempdir_in("/var/tmp")
            .unwrap();
        let img = dir.path().join("img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .unwrap();
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !out.status.success() || !dev.starts_with("/dev/loop") {
            println!("skipped: losetup: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        Some(Self { dev, _dir: dir })
    }

    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    /// fio reading it at random, `--direct=1`, 4 KiB, `depth` deep, for `secs`.
    pub fn fio(&self, depth: u32, secs: u32, rate_iops: Option<u32>, json: bool) -> Child {
        // At nice -10: its completions are reaped without waiting behind the host's other
        // work, so its clat is the device's plus the completion path, not the run queue's.
        let mut c = Command::new("nice");
        c.args(["-n", "-10", "fio"])
            .args(["--name=r", "--rw=randread", "--bs=4k", "--direct=1"])
            .args(["--ioengine=libaio", "--time_based"])
            .arg(format!("--filename={}", self.dev))
            .arg(format!("--iodepth={depth}"))
            .arg(format!("--runtime={secs}"));
        if let Some(r) = rate_iops {
            c.arg(format!("--rate_iops={r}"));
        }
        if json {
            // Total latency percentiles too (`lat_ns`), beside the default `clat_ns`.
            c.args(["--output-format=json", "--lat_percentiles=1"]);
        }
        c.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        super::live::remove_loop(&self.dev);
    }
}

pub fn batch(args: &[&str]) -> Child {
    Command::new(EXE)
        .args(["--batch", "--format", "json"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

pub fn instance(pid: u32) -> PathBuf {
    super::tracefs::instance(pid, "-blk")
}

#[allow(unused_imports)] // used by blk_latency, not blk_latency_screen
pub use super::tracefs::gone_within;

/// The top-level `enable` of the three block events.
pub fn top_level_enables() -> Vec<String> {
    let events: Vec<String> = EVENTS.iter().map(|e| format!("block/{e}")).collect();
    super::tracefs::top_level_enables(&events.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Stops fio started by `Loop::fio` and its job process, a child that fio puts in a session
/// of its own (`setsid`), so neither killing fio nor its process group reaches it; the loop
/// device cannot be detached while it reads.
pub fn stop(fio: &mut Child) {
    let parent = fio.id().to_string();
    let children: Vec<i32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let parent_of = stat[stat.rfind(')')? + 2..].split_whitespace().nth(1)?;
            (parent_of == parent).then_some(pid)
        })
        .collect();
    for pid in children {
        if let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    let _ = fio.kill();
    let _ = fio.wait();
}
