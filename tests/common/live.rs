//! What every live test needs: one test of the file at a time, whether it may run here (root,
//! a tracefs event, a tool), and children that take their process group down when dropped.
//! Include it as `#[path = "common/live.rs"] mod live;` (docs/TESTS.md lists the others).

#![allow(clippy::unwrap_used, dead_code)]

use std::path::Path;
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard, PoisonError};

pub const TRACEFS: &str = "/sys/kernel/tracing";

/// One test of this test binary at a time: they share the machine's settings, its CPUs and
/// its disk with each other. Machine-wide, hold `flock -o /tmp/pw-live.lock` as well.
pub fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `tool --version` runs (its status aside: some tools answer `--version` with 1).
pub fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

/// Why a tracer test cannot run here, if it cannot: not root, one of `events`
/// (`events/SYSTEM/NAME` under tracefs) missing, or one of `tools` not installed.
pub fn cannot_trace(events: &[&str], tools: &[&str]) -> Option<String> {
    if !is_root() {
        return Some("not running as root".into());
    }
    for e in events {
        let f = Path::new(TRACEFS).join(e).join("format");
        if !f.exists() {
            return Some(format!("no {} (tracefs not mounted there?)", f.display()));
        }
    }
    tools
        .iter()
        .find(|t| !have(t))
        .map(|t| format!("{t} is not installed"))
}

/// A child started in a process group of its own (`.process_group(0)`), the whole group
/// killed and the child reaped when dropped: a shell and its dd, fio and its workers.
pub struct Group(pub Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = i32::try_from(self.0.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.0.wait();
    }
}

/// A fio job `name` on a 256 MiB file in `dir`, direct and time based over `secs`, with `args`
/// (the pattern, the engine, the depth), in a process group of its own: dropped, it stops.
pub fn fio_job(dir: &Path, name: &str, args: &[&str], secs: f64) -> Group {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    Group(
        Command::new("fio")
            .process_group(0)
            .arg(format!("--name={name}"))
            .args(["--size=256M", "--direct=1", "--time_based"])
            .arg(format!("--runtime={secs}"))
            .arg(format!("--directory={}", dir.display()))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Lays out `fio_job`'s file for job `name` in `dir` (so that a job does not start with its
/// allocation), then syncs: earlier tests' dirty pages would be written back during the job,
/// on the same disk.
pub fn fio_layout(dir: &Path, name: &str) {
    let layout = Command::new("fio")
        .arg(format!("--name={name}"))
        .args(["--size=256M", "--rw=write", "--bs=1M", "--direct=1"])
        .arg(format!("--directory={}", dir.display()))
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(layout.success());
    let _ = Command::new("sync").status();
}

/// A child killed and reaped when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `pagewatch --batch --format json --no-config ARGS` running, and its records line by line.
pub fn json_stream(
    args: &[&str],
) -> (
    Killed,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
) {
    use std::io::BufRead;
    let child = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args(["--batch", "--format", "json", "--no-config"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let out = std::io::BufReader::new(child.0.stdout.take().unwrap());
    (child, out.lines())
}

/// Detaches the loop device `dev` (`/dev/loopN`) and removes it (`LOOP_CTL_REMOVE`): only
/// detached, it stays in /sys/block and /proc/diskstats, an idle device in every later test
/// and measurement (a full CI run left loop0 and loop1). `losetup -d` lets go
/// asynchronously, so the removal is tried for up to 2 s.
#[allow(dead_code)]
pub fn remove_loop(dev: &str) {
    use std::os::fd::AsRawFd;
    const LOOP_CTL_REMOVE: libc::c_ulong = 0x4C81;
    let _ = Command::new("losetup").args(["-d", dev]).output();
    let Some(n) = dev
        .strip_prefix("/dev/loop")
        .and_then(|n| n.parse::<libc::c_ulong>().ok())
    else {
        return;
    };
    let Ok(ctl) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/loop-control")
    else {
        return;
    };
    for _ in 0..20 {
        // SAFETY: an ioctl on an fd this function owns, its argument a plain integer.
        #[allow(unsafe_code)]
        let r = unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_REMOVE, n) };
        if r >= 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
