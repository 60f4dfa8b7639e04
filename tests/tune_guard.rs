//! Tuning that always puts things back, through the binary, as root: a SIGKILLed `pagewatch
//! play` has its restore guard write back the state from before the first change of each
//! dirty pair, in every order of changes of both forms (and SIGTERM restores the same); a
//! second tuner is refused while one holds the tuning lock, also in the window after a
//! SIGKILL; the guard is not named `pagewatch`, so killing every `pagewatch` leaves it to do
//! its work.
//!
//! These change the real vm.dirty_* sysctls: every test holds `SERIAL` and a `Host` that puts
//! all four back as they were, even when the test fails. Skipped without root.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pagewatch::jobs::tune::{Setting, Tuner};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
#[path = "common/sysctl.rs"]
mod sysctl;

use sysctl::{DirtyKnobs as Host, is_root, vm as sysctl};

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn set_sysctl(name: &str, v: &str) {
    sysctl::try_set_vm(name, v).unwrap();
}

/// The four dirty files as they read now.
fn state() -> Vec<String> {
    sysctl::DIRTY.iter().map(|f| sysctl(f)).collect()
}

fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A playbook that tunes `steps` (sysctl file, value) in order, then waits a minute.
fn book(dir: &Path, steps: &[(&str, &str)]) -> PathBuf {
    let mut t = String::from("name = \"t\"\ndescription = \"d\"\n");
    for (f, v) in steps {
        let _ = write!(t, "[[step]]\ntune = \"vm.{f}\"\nvalue = \"{v}\"\n");
    }
    t.push_str("[[step]]\nwait = \"60s\"\n");
    let p = dir.join("book.toml");
    std::fs::write(&p, t).unwrap();
    p
}

fn spawn_play(book: &Path) -> Child {
    Command::new(EXE)
        .arg("play")
        .arg(book)
        .args(["--fio-dir", "/var/tmp"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `steps` in a headless play and waits until the last step is in force. Another
/// engineer's playbook may hold the one-playbook lock for a while: then it tries again.
fn play_until_tuned(dir: &Path, steps: &[(&str, &str)]) -> Child {
    let p = book(dir, steps);
    let (file, value) = *steps.last().unwrap();
    let end = Instant::now() + Duration::from_secs(120);
    loop {
        let mut child = spawn_play(&p);
        let started = Instant::now();
        loop {
            if sysctl(file) == value {
                return child;
            }
            if let Some(st) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    err.contains("another playbook is running") && Instant::now() < end,
                    "play {steps:?} ended ({st}) before it tuned: {err}"
                );
                std::thread::sleep(Duration::from_millis(500));
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "play {steps:?} never tuned {file} to {value}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn signal(pid: u32, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    let _ = rustix::process::kill_process(pid, sig);
}

type Steps = &'static [(&'static str, &'static str)];

/// Every order of changes of the two forms of each pair, and both pairs mixed. Values differ
/// from both starting states, so a value left behind shows.
const SEQUENCES: &[Steps] = &[
    &[("dirty_ratio", "5"), ("dirty_bytes", "67108864")],
    &[("dirty_bytes", "67108864"), ("dirty_ratio", "5")],
    &[("dirty_ratio", "5"), ("dirty_ratio", "6")],
    &[("dirty_bytes", "67108864"), ("dirty_bytes", "100663296")],
    &[
        ("dirty_ratio", "5"),
        ("dirty_bytes", "67108864"),
        ("dirty_ratio", "6"),
    ],
    &[
        ("dirty_background_ratio", "3"),
        ("dirty_background_bytes", "33554432"),
    ],
    &[
        ("dirty_background_bytes", "33554432"),
        ("dirty_background_ratio", "3"),
    ],
    &[
        ("dirty_background_ratio", "3"),
        ("dirty_background_ratio", "4"),
    ],
    &[
        ("dirty_background_bytes", "33554432"),
        ("dirty_background_bytes", "50331648"),
    ],
    &[
        ("dirty_ratio", "5"),
        ("dirty_background_bytes", "33554432"),
        ("dirty_bytes", "67108864"),
        ("dirty_background_ratio", "3"),
    ],
];

/// The two starting states: both pairs in ratio form, both in bytes form.
const STARTS: [[(&str, &str); 2]; 2] = [
    [("dirty_ratio", "21"), ("dirty_background_ratio", "9")],
    [
        ("dirty_bytes", "209715200"),
        ("dirty_background_bytes", "104857600"),
    ],
];

#[test]
fn sigkill_after_each_step_brings_back_the_state_before_the_first_change() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let _s = serial();
    let _host = Host::take();
    let dir = tempfile::tempdir().unwrap();
    for start in STARTS {
        for (f, v) in start {
            set_sysctl(f, v);
        }
        let before = state();
        let mut done = BTreeSet::new();
        for seq in SEQUENCES {
            for k in 1..=seq.len() {
                let steps = &seq[..k];
                if !done.insert(steps.to_vec()) {
                    continue;
                }
                let mut child = play_until_tuned(dir.path(), steps);
                child.kill().unwrap();
                child.wait().unwrap();
                let ok = (0..250).any(|_| {
                    std::thread::sleep(Duration::from_millis(20));
                    state() == before
                });
                assert!(
                    ok,
                    "SIGKILL after {steps:?} from {before:?}: the guard left {:?}",
                    state()
                );
            }
        }
    }
}

#[test]
fn sigterm_puts_back_the_state_before_the_first_change() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let _s = serial();
    let _host = Host::take();
    let dir = tempfile::tempdir().unwrap();
    for start in STARTS {
        for (f, v) in start {
            set_sysctl(f, v);
        }
        let before = state();
        for seq in [SEQUENCES[0], SEQUENCES[1], SEQUENCES[4], SEQUENCES[9]] {
            let child = play_until_tuned(dir.path(), seq);
            signal(child.id(), rustix::process::Signal::TERM);
            let out = child.wait_with_output().unwrap();
            assert_eq!(
                state(),
                before,
                "SIGTERM after {seq:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

fn knob(name: &str) -> pagewatch::jobs::tune::Knob {
    Setting::parse(name).unwrap().resolve(None).unwrap()
}

#[test]
fn a_second_tuner_is_refused_while_a_playbook_tunes_and_nothing_is_left_behind() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let _s = serial();
    let _host = Host::take();
    set_sysctl("dirty_ratio", "21");
    let before = state();
    let dir = tempfile::tempdir().unwrap();
    // The headless playbook tunes first; the screen's `T` (the same `Tuner`) comes second.
    let mut play = play_until_tuned(dir.path(), &[("dirty_bytes", "67108864")]);
    let mut screen = Tuner::new(Some(PathBuf::from(EXE)));
    let e = format!(
        "{:#}",
        screen
            .set(&knob("vm.dirty_bytes"), "100663296")
            .expect_err("a second tuner was let in beside a playbook that tunes")
    );
    assert!(
        e.contains("is tuning kernel settings") && e.contains(&format!("pid {}", play.id())),
        "{e}"
    );
    assert_eq!(sysctl("dirty_bytes"), "67108864");
    // SIGKILL: the lock is free only once the guard has put the original back, so the next
    // tuner reads the true original (it waits for a holder that is gone).
    play.kill().unwrap();
    play.wait().unwrap();
    let c = screen
        .set(&knob("vm.dirty_bytes"), "100663296")
        .expect("the lock outlived the playbook and its guard");
    assert_eq!(
        c.old, "0",
        "the second tuner read a value the first left: {c:?}"
    );
    drop(screen);
    assert_eq!(state(), before);

    // The other way round: the screen tunes first, and the playbook refuses before it starts.
    let mut screen = Tuner::new(Some(PathBuf::from(EXE)));
    screen.set(&knob("vm.dirty_ratio"), "5").unwrap();
    let out = Command::new(EXE)
        .arg("play")
        .arg(book(dir.path(), &[("dirty_bytes", "67108864")]))
        .args(["--fio-dir", "/var/tmp"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("is tuning kernel settings")
            && err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    assert_eq!(sysctl("dirty_bytes"), "0");
    assert_eq!(sysctl("dirty_ratio"), "5");
    drop(screen);
    assert_eq!(state(), before);
}

/// Pids of `root` and its descendants.
fn tree(root: u32) -> Vec<u32> {
    let mut all = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let ppid: u32 = rest.split(' ').nth(1).unwrap().parse().unwrap();
        all.push((child, ppid));
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(all.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        i += 1;
    }
    found
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_owned()
}

#[test]
fn killing_every_process_named_pagewatch_leaves_the_guard_to_restore() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let _s = serial();
    let _host = Host::take();
    set_sysctl("dirty_ratio", "21");
    let before = state();
    let dir = tempfile::tempdir().unwrap();
    let mut play = play_until_tuned(dir.path(), &[("dirty_ratio", "5")]);
    let procs = tree(play.id());
    let guards: Vec<u32> = procs
        .iter()
        .copied()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == b"--restore"))
        })
        .collect();
    assert_eq!(guards.len(), 1, "one restore guard under the playbook");
    assert_eq!(comm(guards[0]), "pagewatch-guard");
    assert_eq!(comm(play.id()), "pagewatch");
    // `killall -9 pagewatch`, limited to this playbook's processes (others may be running).
    for p in procs.iter().filter(|p| comm(**p) == "pagewatch") {
        signal(*p, rustix::process::Signal::KILL);
    }
    play.wait().unwrap();
    wait_for("the guard to restore", 5, || state() == before);
}

#[test]
fn every_guard_is_named_pagewatch_guard() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("private");
    std::fs::create_dir(&clean).unwrap();
    std::fs::set_permissions(&clean, std::fs::Permissions::from_mode(0o700)).unwrap();
    // Not on tracefs: at its end that guard refuses to remove anything there.
    let instance = dir
        .path()
        .join("instances")
        .join(format!("pagewatch-{}", std::process::id()));
    let kinds: [Vec<std::ffi::OsString>; 4] = [
        vec!["--".into(), "sleep".into(), "5".into()],
        vec!["--clean-dir".into(), clean.into()],
        vec!["--tracefs-instance".into(), instance.into()],
        vec!["--restore".into()],
    ];
    for args in kinds {
        let mut g = Command::new(EXE)
            .arg("__guard")
            .args(&args)
            .env("PAGEWATCH_PARENT_PID", std::process::id().to_string())
            .stdin(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = g.id();
        wait_for(&format!("__guard {args:?} to name itself"), 5, || {
            comm(pid) == "pagewatch-guard"
        });
        if args[0] == "--" {
            wait_for("the guard's program", 5, || tree(pid).len() > 1);
        }
        // The end of stdin ends the waiting guards; SIGTERM the one running a program (it
        // takes the program down with it).
        drop(g.stdin.take());
        signal(pid, rustix::process::Signal::TERM);
        g.wait().unwrap();
    }
}
