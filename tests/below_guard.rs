//! The throttles-below tracer and the wbt playbook leave nothing behind, through the binary,
//! as root: a SIGKILLed `pagewatch play wbt-vs-flood` has its restore guard put the fio
//! disk's `queue/wbt_lat_usec` back and its tracefs guard remove `pagewatch-<pid>-below`;
//! a SIGKILLed `pagewatch --batch --below` leaves no instance either, and neither touches the
//! top-level wbt and vmscan events.
//!
//! The playbook's disk is a loop device made here over a file in a temporary directory
//! (ext4, mounted in that directory), so the setting changed is one this test owns; it is
//! detached on drop, even when the test fails. Run with `--test-threads=1` beside other
//! tests that tune. Skipped without root, losetup or mkfs.ext4.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/live.rs"]
mod live;
#[path = "common/tracefs.rs"]
mod tracefs;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use live::is_root;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const TRACEFS: &str = "/sys/kernel/tracing";

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// An ext4 loop device over a file of this test's, mounted; detached on drop.
struct Loop {
    dev: String,
    mnt: PathBuf,
    /// The device's `wbt_lat_usec` when attached: a loop device outlives its file, so the
    /// value is put back before it is detached.
    wbt_then: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn make() -> Option<Loop> {
        let dir = tempfile::tempdir_in("/var/tmp").ok()?;
        let img = dir.path().join("disk.img");
        let f = std::fs::File::create(&img).ok()?;
        f.set_len(512 << 20).ok()?;
        run("mkfs.ext4", &["-q", "-F", img.to_str()?])?;
        let dev = run("losetup", &["-f", "--show", img.to_str()?])?;
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).ok()?;
        let wbt_then = read(
            &Path::new("/sys/block")
                .join(dev.trim_start_matches("/dev/"))
                .join("queue/wbt_lat_usec"),
        );
        let l = Loop {
            dev,
            mnt,
            wbt_then,
            _dir: dir,
        };
        run("mount", &[&l.dev, l.mnt.to_str()?])?;
        Some(l)
    }

    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    fn wbt(&self) -> PathBuf {
        Path::new("/sys/block")
            .join(self.name())
            .join("queue/wbt_lat_usec")
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        for _ in 0..50 {
            if run("umount", &[self.mnt.to_str().unwrap_or("")]).is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if !self.wbt_then.is_empty() {
            let _ = std::fs::write(self.wbt(), &self.wbt_then);
        }
        live::remove_loop(&self.dev);
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

fn instance(pid: u32) -> PathBuf {
    tracefs::instance(pid, "-below")
}

fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The top-level `enable` of the events the tracer uses (never touched: its events are the
/// instance's).
fn top_level_enables() -> Vec<String> {
    tracefs::top_level_enables(&["wbt", "vmscan"])
}

fn ready() -> bool {
    if !is_root() || !Path::new(TRACEFS).join("events/wbt").exists() {
        eprintln!("skipped: needs root and wbt tracepoints");
        return false;
    }
    true
}

/// Starts the playbook on the loop device until the tracer is armed and wbt is off; another
/// engineer's playbook may hold the one-playbook lock for a while: then it tries again.
fn play_until_tuned(l: &Loop) -> Child {
    let end = Instant::now() + Duration::from_secs(180);
    loop {
        let mut child = Command::new(EXE)
            .args(["play", "wbt-vs-flood", "--scale", "0.05", "--fio-dir"])
            .arg(&l.mnt)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        loop {
            let (w, armed) = (read(&l.wbt()), instance(child.id()).exists());
            if w == "0" && armed {
                return child;
            }
            if let Some(st) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    err.contains("another playbook is running") && Instant::now() < end,
                    "play ended ({st}) before it tuned: {err}"
                );
                std::thread::sleep(Duration::from_millis(500));
                break;
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "play never set {} to 0 with its instance armed",
                l.wbt().display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn sigkill_mid_playbook_puts_wbt_back_and_removes_the_below_instance() {
    if !ready() {
        return;
    }
    let Some(l) = Loop::make() else {
        eprintln!("skipped: no loop device or mkfs.ext4");
        return;
    };
    // A value of our own, so that the kernel's default left behind would show.
    std::fs::write(l.wbt(), "4321").unwrap();
    let before = read(&l.wbt());
    let events = top_level_enables();
    let mut child = play_until_tuned(&l);
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    wait_for("wbt_lat_usec back", 30, || read(&l.wbt()) == before);
    let gone = (0..1500).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !instance(pid).exists()
    });
    assert!(
        gone,
        "the -below instance is still there after 30 s: {}",
        who_holds(pid)
    );
    assert_eq!(top_level_enables(), events);
}

/// What may hold an instance: the guards and fio, their state, and the processes with a
/// `trace_pipe_raw` open (for a failure's message).
fn who_holds(pid: u32) -> String {
    let ps = run("ps", &["-eo", "pid,ppid,stat,wchan:24,args"]).unwrap_or_default();
    let mut out: Vec<String> = ps
        .lines()
        .filter(|l| l.contains("__guard") || l.contains("fio") || l.contains(&pid.to_string()))
        .map(|l| l.chars().take(140).collect())
        .collect();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let target = std::fs::read_link(fd.path()).unwrap_or_default();
            if target.to_string_lossy().contains("trace_pipe_raw") {
                out.push(format!("{} holds {}", e.path().display(), target.display()));
            }
        }
    }
    out.join("\n")
}

/// Kills its child if the test fails first.
struct Killer(Child);

impl Drop for Killer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sigkill_of_batch_below_leaves_no_instance() {
    if !ready() {
        return;
    }
    let mut cmd = Command::new(EXE);
    cmd.args(["--batch", "--below", "--format", "json", "-i", "0.2"]);
    armed_then_killed(cmd, |_| {});
}

/// Starts `cmd` (a pagewatch that arms the `-below` tracer, or what execs one), waits until
/// its events are enabled in its instance, and only there; runs `check(pid)`; SIGKILLs it and
/// waits for the instance to go, leaving the top-level `enable`s as they were.
fn armed_then_killed(mut cmd: Command, check: impl FnOnce(u32)) {
    let events = top_level_enables();
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut killer = Killer(child);
    for e in ["wbt/wbt_step", "vmscan/mm_vmscan_throttled"] {
        let enable = instance(pid).join("events").join(e).join("enable");
        wait_for(e, 10, || {
            if let Some(st) = killer.0.try_wait().unwrap() {
                panic!("pagewatch ended ({st}) before it armed");
            }
            read(&enable) == "1"
        });
    }
    check(pid);
    killer.0.kill().unwrap();
    killer.0.wait().unwrap();
    wait_for("the -below instance gone", 30, || !instance(pid).exists());
    assert_eq!(top_level_enables(), events);
}

/// Where tracefs is mounted nowhere (a private mount namespace with every tracefs mount
/// taken away: a container, a minimal VM), pagewatch arms its tracer through a detached mount
/// of its own: the instance shows in the machine's tracefs with its events enabled, nothing
/// is mounted in pagewatch's namespace, and after a SIGKILL the guard, which has no tracefs
/// mount either, still removes the instance.
#[test]
fn without_a_tracefs_mount_the_tracer_arms_and_a_sigkill_leaves_nothing() {
    if !ready() || run("unshare", &["--help"]).is_none() || run("findmnt", &["-V"]).is_none() {
        eprintln!("skipped: needs root, wbt tracepoints, unshare and findmnt");
        return;
    }
    // `exec`: pagewatch keeps the pid of the unshare it was started as.
    let script = format!(
        "findmnt -rn -t tracefs -o TARGET | while read m; do umount -l \"$m\" || exit 96; done; \
         grep -q ' - tracefs ' /proc/self/mountinfo && exit 97; \
         exec {EXE} --batch --below --format json -i 0.2"
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c", &script]);
    armed_then_killed(cmd, |pid| {
        let mounts = read(&Path::new("/proc").join(pid.to_string()).join("mountinfo"));
        assert!(
            !mounts.contains(" - tracefs "),
            "pagewatch's namespace has a tracefs mount:\n{mounts}"
        );
    });
}

#[test]
fn journal_counts_move_between_samples() {
    // The kernel copies a journal's counts into its `info` file when it is opened: a source
    // that held the file open saw the same counts for ever.
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let Some(l) = Loop::make() else {
        eprintln!("skipped: no loop device or mkfs.ext4");
        return;
    };
    let journal = format!("{}-8", l.name());
    let name = pagewatch::parse::jbd2::sample_name(&journal);
    let mut src = pagewatch::source::FsSource::live();
    let count = |s: &pagewatch::sample::RawSample| {
        let text = s.file(&name).expect("the journal's info in the sample");
        pagewatch::parse::jbd2::parse(&journal, text)
            .unwrap()
            .transactions
    };
    let before = count(&src.read().unwrap());
    for i in 0..5 {
        use std::io::Write;
        let mut f = std::fs::File::create(l.mnt.join(format!("f{i}"))).unwrap();
        f.write_all(&[1; 4096]).unwrap();
        f.sync_all().unwrap();
    }
    let after = count(&src.read().unwrap());
    assert!(after >= before + 5, "{before} -> {after} after 5 fsyncs");
}
