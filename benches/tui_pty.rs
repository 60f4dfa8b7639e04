//! Whole-process cost of the TUI, measured through a pseudo-terminal as a user's SSH session
//! would see it: CPU time per second, resident memory, and terminal bytes per second.
//!
//! Budget (issue #3, 1 Hz, 160x48, idle machine): CPU ≤ 0.5 ms/s, RSS ≤ 8 MB, output ≤ 1000 B/s.
//! Loaded scenarios (`PW_BENCH_SCENARIO`, only under `cargo bench`): `procs1000` (1,000
//! sleeping processes, the processes view open: ≤ 3 ms/s) and `throttle` (root: vm.dirty_bytes
//! 64M and two buffered fio writers, the tracepoint armed: ≤ 2 ms/s) and `record` (the idle
//! screen, then `pagewatch record` to a temporary file: ≤ the screen's CPU, issue 27). Under `cargo bench`,
//! htop (`htop -d 10`, 1 Hz) is measured after pagewatch under the same load, in the same run.
//!
//! Run: `cargo bench --bench tui_pty` (30 s measured after 5 s of warm-up; set
//! `PW_BENCH_SECS` to change). Under `cargo test` it runs a 3 s smoke measurement.
//! With `PW_BENCH_CMD="htop -d 10"` it measures another program the same way, for comparison.
//! CPU is the process's CPU clock (ns, read through python3): exact rather than rounded to
//! clock ticks, and it counts threads that started and exited inside the window, which a sum
//! over `/proc/<pid>/task/*/schedstat` misses. `/proc/<pid>/stat`'s utime + stime (10 ms
//! ticks) is printed beside it as a cross-check, and each live thread's schedstat share.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: failing loudly is the point

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// On-CPU nanoseconds of the whole process `pid`, threads that already exited included: its
/// process CPU clock (the id `clock_getcpuclockid` gives for another process, `(~pid << 3) |
/// CPUCLOCK_SCHED`), exact where utime + stime are 10 ms ticks. Read through python3, since
/// the crate has no unsafe code; without python3, the live threads' schedstat sum.
fn cpu_ns(pid: u32) -> u64 {
    let clock = Command::new("python3")
        .args([
            "-c",
            "import sys,time; p=int(sys.argv[1]); print(time.clock_gettime_ns(((~p)<<3)|2))",
            &pid.to_string(),
        ])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok());
    clock.unwrap_or_else(|| live_threads_ns(pid))
}

/// On-CPU nanoseconds of the live threads of `pid` (schedstat).
fn live_threads_ns(pid: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    dir.filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| {
            s.split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
        })
        .sum()
}

/// On-CPU nanoseconds of each thread of `pid`, by thread name (`/proc/<pid>/task/<tid>/comm`).
fn cpu_ns_by_thread(pid: u32) -> Vec<(String, u64)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, u64)> = dir
        .filter_map(Result::ok)
        .filter_map(|t| {
            let ns = std::fs::read_to_string(t.path().join("schedstat"))
                .ok()?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?;
            let name = std::fs::read_to_string(t.path().join("comm")).ok()?;
            Some((
                format!("{}/{}", name.trim(), t.file_name().to_string_lossy()),
                ns,
            ))
        })
        .collect();
    out.sort();
    out
}

/// utime + stime of the whole process in clock ticks (`/proc/<pid>/stat`): coarse, but it
/// includes threads that have exited, which the per-thread schedstat sum misses.
fn stat_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which ends at the last ')'.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    // utime and stime are fields 14 and 15; `rest` starts at field 3 (state, not a number).
    f.get(10).copied().unwrap_or(0) + f.get(11).copied().unwrap_or(0)
}

/// A fixed piece of work (4 passes over 4 MiB, 50 reads of /proc/meminfo) and the thread CPU
/// time it took, µs. Run once a second beside the measured program, it shows how much this
/// machine inflates CPU time in the window (a VM whose host is busy emulating IO charges the
/// guest's threads for time they did not run).
fn reference_work(mem: &mut [u64]) -> u64 {
    use rustix::time::{ClockId, clock_gettime};
    let now = || {
        let t = clock_gettime(ClockId::ThreadCPUTime);
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    };
    let a = now();
    let mut acc = 0u64;
    for r in 0..4u64 {
        for (j, x) in mem.iter_mut().enumerate() {
            *x = x.wrapping_mul(31).wrapping_add(j as u64 ^ r);
            acc = acc.wrapping_add(*x);
        }
    }
    for _ in 0..50 {
        acc = acc
            .wrapping_add(std::fs::read_to_string("/proc/meminfo").map_or(0, |s| s.len()) as u64);
    }
    std::hint::black_box(acc);
    (now() - a) / 1000
}

/// Runs `reference_work` once a second until `stop`; the µs of each run.
fn reference_thread(stop: Arc<std::sync::atomic::AtomicBool>) -> std::thread::JoinHandle<Vec<u64>> {
    std::thread::spawn(move || {
        let mut mem = vec![1u64; 1 << 19];
        let mut runs = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_secs(1));
            runs.push(reference_work(&mut mem));
        }
        runs
    })
}

/// `VmRSS` and `VmHWM` of `pid`, kB.
fn rss_kb(pid: u32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let get = |k: &str| {
        s.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (get("VmRSS:"), get("VmHWM:"))
}

struct Result_ {
    cpu_ms_per_s: f64,
    rss_kb: u64,
    hwm_kb: u64,
    bytes_per_s: f64,
    /// (thread, ms/s) for each thread alive at both ends of the window.
    threads: Vec<(String, f64)>,
    /// CPU ms/s from `/proc/<pid>/stat` (10 ms ticks; counts exited threads too).
    stat_ms_per_s: f64,
    /// The reference work's runs in the window, µs each.
    reference_us: Vec<u64>,
    /// A pagewatch tracefs instance of this process existed at the end of the window.
    traced: bool,
}

fn measure(cmd: &[String], cols: u16, rows: u16, warm: Duration, window: Duration) -> Result_ {
    let master: OwnedFd = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let slave = File::options()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .expect("open pts");
    tcsetwinsize(
        &slave,
        Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .expect("winsize");
    let mut child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .env("TERM", "xterm-256color")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .expect("spawn");
    let pid = child.id();
    MEASURED.store(pid, Ordering::SeqCst);
    let bytes = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&bytes);
    let mut reader = File::from(master.try_clone().unwrap());
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            counter.fetch_add(n as u64, Ordering::Relaxed);
        }
    });
    std::thread::sleep(warm);
    let (b0, c0, t0) = (bytes.load(Ordering::Relaxed), cpu_ns(pid), Instant::now());
    let th0 = cpu_ns_by_thread(pid);
    let k0 = stat_ticks(pid);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reference = reference_thread(Arc::clone(&stop));
    std::thread::sleep(window);
    stop.store(true, Ordering::Relaxed);
    let (b1, c1, secs) = (
        bytes.load(Ordering::Relaxed),
        cpu_ns(pid),
        t0.elapsed().as_secs_f64(),
    );
    let th1 = cpu_ns_by_thread(pid);
    let k1 = stat_ticks(pid);
    // pagewatch's tracefs instance, if it has the tracepoint armed at the end of the window.
    let traced = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .any(|t| std::path::Path::new(&format!("{t}/instances/pagewatch-{pid}")).exists());
    let (rss, hwm) = rss_kb(pid);
    let threads = th1
        .iter()
        .filter_map(|(n, c1)| {
            let (_, c0) = th0.iter().find(|(m, _)| m == n)?;
            Some((n.clone(), (c1 - c0) as f64 / 1e6 / secs))
        })
        .collect();
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::TERM,
    );
    let _ = child.wait();
    MEASURED.store(0, Ordering::SeqCst);
    drop(master);
    let mut reference_us = reference.join().unwrap_or_default();
    reference_us.sort_unstable();
    Result_ {
        cpu_ms_per_s: (c1 - c0) as f64 / 1e6 / secs,
        rss_kb: rss,
        hwm_kb: hwm,
        bytes_per_s: (b1 - b0) as f64 / secs,
        threads,
        stat_ms_per_s: (k1 - k0) as f64 * 1000.0 / tick_hz() / secs,
        reference_us,
        traced,
    }
}

/// Clock ticks per second (`_SC_CLK_TCK`).
fn tick_hz() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

/// What the machine does while the TUI is measured (`PW_BENCH_SCENARIO`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scenario {
    /// Nothing: the idle budget (0.5 ms/s).
    Idle,
    /// 1,000 sleeping processes and the processes view open (`--view processes`): 3 ms/s.
    Procs1000,
    /// `vm.dirty_bytes` at 64M and two buffered fio writers on ext4 over a loop device backed
    /// by `/dev/shm`, so writers are throttled and the tracepoint is armed (root): 2 ms/s. In
    /// memory, because on this VM the host's emulation of heavy disk IO inflates every guest
    /// thread's CPU time (the reference work below reads up to 16x its idle cost under
    /// `ThrottleDisk`, not at all under this one).
    Throttle,
    /// The same writers on the VM's disk (`std::env::temp_dir()`), as before.
    ThrottleDisk,
    /// An idle machine: the screen, then `pagewatch record` (headless, 1 Hz) in the same run;
    /// the recorder's budget is the screen's measured CPU (issue 27).
    Record,
    /// The processes view open on an idle machine (`--view processes`): ≤ 0.2x htop (issue 27).
    Procs,
    /// 100 more loop devices, each attached to a sparse file in /dev/shm (root), removed
    /// afterwards; the default screen: ≤ 0.2x htop (issue 27).
    Loops100,
}

impl Scenario {
    fn from_env() -> Self {
        match std::env::var("PW_BENCH_SCENARIO").as_deref() {
            Ok("procs1000") => Self::Procs1000,
            Ok("throttle") => Self::Throttle,
            Ok("throttle-disk") => Self::ThrottleDisk,
            Ok("record") => Self::Record,
            Ok("procs") => Self::Procs,
            Ok("loops100") => Self::Loops100,
            _ => Self::Idle,
        }
    }

    fn budget_ms(self) -> f64 {
        match self {
            Self::Idle | Self::Record | Self::Procs | Self::Loops100 => 0.5,
            Self::Procs1000 => 3.0,
            Self::Throttle | Self::ThrottleDisk => 2.0,
        }
    }

    fn pagewatch_args(self) -> Vec<String> {
        match self {
            Self::Procs1000 | Self::Procs => vec!["--view".into(), "processes".into()],
            Self::Idle | Self::Record | Self::Throttle | Self::ThrottleDisk | Self::Loops100 => {
                Vec::new()
            }
        }
    }
}

/// The load a scenario puts on the machine; undone on drop.
struct Load {
    children: Vec<std::process::Child>,
    dirty: Option<(String, String)>,
    dir: Option<std::path::PathBuf>,
    /// The loop device, its mount point and its backing file in /dev/shm (`Throttle`).
    looped: Option<(String, std::path::PathBuf, std::path::PathBuf)>,
    /// The loop devices attached for `Loops100`: minor number, whether this created it, and
    /// the backing file.
    loops: Vec<(u32, bool, std::path::PathBuf)>,
}

/// Runs a setup command; panics with its output when it fails.
fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).output().expect(cmd);
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A 3 GiB ext4 on a loop device over a file in /dev/shm, mounted on a fresh directory:
/// (device, mount point, backing file).
fn memory_disk() -> (String, std::path::PathBuf, std::path::PathBuf) {
    let id = std::process::id();
    let img = std::path::PathBuf::from(format!("/dev/shm/pw-bench-{id}.img"));
    let mnt = std::env::temp_dir().join(format!("pw-bench-mnt-{id}"));
    File::create(&img).unwrap().set_len(3 << 30).unwrap();
    run("mkfs.ext4", &["-q", "-F", img.to_str().unwrap()]);
    let dev = run("losetup", &["-f", "--show", img.to_str().unwrap()]);
    std::fs::create_dir(&mnt).unwrap();
    run("mount", &[&dev, mnt.to_str().unwrap()]);
    (dev, mnt, img)
}

/// The load in force, where a signal's handler can undo it: `main`'s `Undo` (any return or
/// panic) and `undo_on_signal` (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) both take it from here, so
/// every exit but SIGKILL puts the machine back; `sweep_stale_loops` handles that one at the
/// next run.
static LOAD: Mutex<Option<Load>> = Mutex::new(None);

/// The slot of the load in force, also after a panic while it was held (setup is done holding
/// it, so a signal waits for a setup step to finish and then undoes all of it).
fn load_slot() -> MutexGuard<'static, Option<Load>> {
    LOAD.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The program being measured (0: none). It is not in the pty's session, so nothing stops it
/// when this process dies: `Undo` and `undo_on_signal` stop it.
static MEASURED: AtomicU32 = AtomicU32::new(0);

/// Sends SIGTERM to the program being measured, if any.
fn stop_measured() {
    let pid = MEASURED.swap(0, Ordering::SeqCst);
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
}

/// Undoes the load in force when dropped: on `main`'s return and while a panic unwinds.
struct Undo;

impl Drop for Undo {
    fn drop(&mut self) {
        stop_measured();
        let mut slot = load_slot();
        // Dropped while the slot is held, so a signal arriving now waits and finds nothing.
        drop(slot.take());
    }
}

/// Stops the program being measured, undoes the load in force and exits on Ctrl-C, SIGTERM,
/// SIGHUP or SIGQUIT: without it an interrupted `loops100` run left its loop devices attached
/// (92 were found on one machine), and the measured pagewatch running.
fn undo_on_signal() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])
        .expect("signal handlers");
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            stop_measured();
            drop(load_slot().take());
            eprintln!("tui_pty: signal {sig}: the load is undone");
            std::process::exit(128 + sig);
        }
    });
}

/// The loop devices and backing files a run killed by SIGKILL left (`/dev/shm/pw-bench-PID-
/// loopN.img`, PID no longer running): each device still backed by one is detached and, past
/// the 8 the kernel makes at boot (`CONFIG_BLK_DEV_LOOP_MIN_COUNT`), removed; then the file.
fn sweep_stale_loops() {
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return;
    };
    for entry in dir.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("pw-bench-")
            .and_then(|r| r.split_once("-loop"))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || running(pid) {
            continue;
        }
        let img = entry.path();
        let out = Command::new("losetup")
            .args(["-j", &img.display().to_string()])
            .output();
        let listed = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        for line in listed.unwrap_or_default().lines() {
            let dev = line.split_once(':').map_or("", |(dev, _)| dev);
            if let Ok(minor) = dev.trim_start_matches("/dev/loop").parse::<u32>() {
                remove_loops(&[(minor, minor >= 8, img.clone())]);
                eprintln!("tui_pty: detached {dev}, left by run {pid}");
            }
        }
        let _ = std::fs::remove_file(&img);
    }
}

/// Whether process `pid` runs: its `/proc/PID/stat` is there and says neither zombie (a killed
/// run its parent has not reaped yet) nor dead.
fn running(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, r)| r.trim_start().chars().next());
    state.is_some_and(|c| c != 'Z' && c != 'X')
}

impl Load {
    /// Puts scenario `s`'s load in `LOAD`, each part recorded there before it is made, so
    /// that a failure half-way (a panic) or a signal undoes what was made.
    fn start(s: Scenario) {
        let mut slot = load_slot();
        let load = slot.insert(Load {
            children: Vec::new(),
            dirty: None,
            dir: None,
            looped: None,
            loops: Vec::new(),
        });
        match s {
            Scenario::Idle | Scenario::Record | Scenario::Procs => {}
            Scenario::Loops100 => {
                sweep_stale_loops();
                // Devices that existed before (loop0–7 at boot, others' devices) stay.
                let before: Vec<String> = std::fs::read_dir("/sys/block")
                    .unwrap()
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect();
                let existed = |minor: u32| before.contains(&format!("loop{minor}"));
                for i in 0..100 {
                    let img = format!("/dev/shm/pw-bench-{}-loop{i}.img", std::process::id());
                    // `losetup -f` adds a device when none is free: recorded before the file
                    // and the attach, so a failure in either still removes it.
                    let free = run("losetup", &["-f"]);
                    let minor: u32 = free.trim_start_matches("/dev/loop").parse().unwrap();
                    load.loops
                        .push((minor, !existed(minor), img.clone().into()));
                    File::create(&img).unwrap().set_len(64 << 20).unwrap();
                    run("losetup", &[&free, &img]);
                }
            }
            Scenario::Procs1000 => {
                for _ in 0..1000 {
                    load.children.push(
                        Command::new("sleep")
                            .arg("600")
                            .stdin(Stdio::null())
                            .spawn()
                            .expect("sleep"),
                    );
                }
            }
            Scenario::Throttle | Scenario::ThrottleDisk => {
                let vm = |k: &str| std::fs::read_to_string(format!("/proc/sys/vm/{k}")).unwrap();
                load.dirty = Some((vm("dirty_bytes"), vm("dirty_ratio")));
                std::fs::write("/proc/sys/vm/dirty_bytes", "67108864").expect("root");
                let (dir, size) = if s == Scenario::Throttle {
                    let (dev, mnt, img) = memory_disk();
                    load.looped = Some((dev, mnt.clone(), img));
                    (mnt.join("fio"), "1G")
                } else {
                    let d = std::env::temp_dir().join(format!("pw-bench-{}", std::process::id()));
                    (d, "4G")
                };
                std::fs::create_dir(&dir).unwrap();
                for i in 0..2 {
                    load.children.push(
                        Command::new("fio")
                            .args([
                                &format!("--name=w{i}"),
                                "--rw=write",
                                "--bs=1M",
                                &format!("--size={size}"),
                                "--time_based",
                                "--runtime=600",
                                "--ioengine=psync",
                                &format!("--directory={}", dir.display()),
                            ])
                            .stdout(Stdio::null())
                            .spawn()
                            .expect("fio"),
                    );
                }
                load.dir = Some(dir);
            }
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        // SIGTERM first: fio's main process stops its workers (which setsid() and would
        // outlive a SIGKILL of the main process), then SIGKILL whatever is left.
        for c in &self.children {
            if let Some(pid) = i32::try_from(c.id())
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        for c in &mut self.children {
            while Instant::now() < deadline && c.try_wait().ok().flatten().is_none() {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some((bytes, ratio)) = &self.dirty {
            // Writing one of the pair zeroes the other: write back the one that was in force.
            if bytes.trim() == "0" {
                let _ = std::fs::write("/proc/sys/vm/dirty_ratio", ratio.trim());
            } else {
                let _ = std::fs::write("/proc/sys/vm/dirty_bytes", bytes.trim());
            }
        }
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
        if let Some((dev, mnt, img)) = &self.looped {
            let _ = Command::new("umount").arg(mnt).status();
            let _ = Command::new("losetup").args(["-d", dev]).status();
            let _ = std::fs::remove_dir(mnt);
            let _ = std::fs::remove_file(img);
        }
        remove_loops(&self.loops);
    }
}

/// Detaches the loop devices `loops` attached, removes those it created (`LOOP_CTL_REMOVE`,
/// 0x4C81, through python3: the crate has no unsafe code), then their backing files.
fn remove_loops(loops: &[(u32, bool, std::path::PathBuf)]) {
    for (minor, created, img) in loops {
        let _ = Command::new("losetup")
            .args(["-d", &format!("/dev/loop{minor}")])
            .status();
        if *created {
            let remove = format!(
                "import fcntl, os; fcntl.ioctl(os.open('/dev/loop-control', os.O_RDWR), 0x4C81, {minor})"
            );
            let _ = Command::new("python3").args(["-c", &remove]).status();
        }
        let _ = std::fs::remove_file(img);
    }
}

fn report(label: &str, cmd: &[String], r: &Result_, secs: u64, budget: f64) {
    let over = |v: f64, b: f64| if v <= b { "within" } else { "OVER" };
    println!(
        "  load average at the end: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "tui_pty {label} {:?} 160x48 over {secs} s: cpu {:.3} ms/s ({} {budget}), rss {:.1} MB (peak {:.1}; {} 8), output {:.0} B/s ({} 1000)",
        cmd.join(" "),
        r.cpu_ms_per_s,
        over(r.cpu_ms_per_s, budget),
        r.rss_kb as f64 / 1024.0,
        r.hwm_kb as f64 / 1024.0,
        over(r.rss_kb as f64 / 1024.0, 8.0),
        r.bytes_per_s,
        over(r.bytes_per_s, 1000.0),
    );
    let per: Vec<String> = r
        .threads
        .iter()
        .map(|(n, ms)| format!("{n} {ms:.3}"))
        .collect();
    println!("  per thread, ms/s: {}", per.join(", "));
    println!(
        "  cross-check from /proc/<pid>/stat (10 ms ticks, counts exited threads): {:.2} ms/s",
        r.stat_ms_per_s
    );
    if r.traced {
        println!(
            "  the tracepoint was armed at the end of the window (its tracefs instance existed)"
        );
    }
    let q = |f: f64| {
        r.reference_us
            .get(((r.reference_us.len() as f64 - 1.0) * f) as usize)
    };
    if let (Some(min), Some(med), Some(max)) = (q(0.0), q(0.5), q(1.0)) {
        println!(
            "  reference work beside it (fixed, once a second): min {min} / median {med} / max {max} µs a run; \
             a max far above the min means this machine inflated CPU time in the window"
        );
    }
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let secs: u64 = std::env::var("PW_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if bench { 30 } else { 3 });
    let warm = Duration::from_secs(if bench { 5 } else { 2 });
    // The loaded scenarios only under `cargo bench`: they need root, fio and time.
    let scenario = if bench {
        Scenario::from_env()
    } else {
        Scenario::Idle
    };
    let cmd: Vec<String> = match std::env::var("PW_BENCH_CMD") {
        Ok(c) => c.split_whitespace().map(str::to_owned).collect(),
        // No config file: the user's saved view or interval would change what is measured.
        Err(_) => [
            env!("CARGO_BIN_EXE_pagewatch").to_owned(),
            "--no-config".into(),
        ]
        .into_iter()
        .chain(scenario.pagewatch_args())
        .collect(),
    };
    undo_on_signal();
    let undo = Undo;
    Load::start(scenario);
    let r = measure(&cmd, 160, 48, warm, Duration::from_secs(secs));
    if !bench {
        println!(
            "tui_pty: smoke run under `cargo test` (debug build, {secs} s); the budget figures come from `cargo bench --bench tui_pty`"
        );
    }
    let label = format!("{scenario:?}");
    report(&label, &cmd, &r, secs, scenario.budget_ms());
    if scenario == Scenario::Record {
        // The recorder in the same run, its budget the screen's figure just measured.
        let file = std::env::temp_dir().join(format!("pw-bench-{}.pwrec", std::process::id()));
        let rec = [
            env!("CARGO_BIN_EXE_pagewatch").to_owned(),
            "record".into(),
            file.display().to_string(),
        ];
        let m = measure(&rec, 160, 48, warm, Duration::from_secs(secs));
        let size = std::fs::metadata(&file).map_or(0, |m| m.len());
        let _ = std::fs::remove_file(&file);
        report(&label, &rec, &m, secs, r.cpu_ms_per_s);
        println!(
            "  record / screen: {:.2}x; the recording grew to {size} bytes",
            m.cpu_ms_per_s / r.cpu_ms_per_s
        );
    }
    // htop at 1 Hz under the same load, in the same run, for comparison.
    let htop = ["htop".to_owned(), "-d".to_owned(), "10".to_owned()];
    if bench
        && std::env::var_os("PW_BENCH_CMD").is_none()
        && Command::new("htop").arg("--version").output().is_ok()
    {
        let h = measure(&htop, 160, 48, warm, Duration::from_secs(secs));
        report(&label, &htop, &h, secs, scenario.budget_ms());
        println!(
            "  pagewatch / htop: {:.2}x",
            r.cpu_ms_per_s / h.cpu_ms_per_s
        );
    }
    drop(undo);
}
