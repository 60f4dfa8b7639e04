//! The experiments end to end in tmux, keys only, as a user would: eat memory with `m`, run a
//! small fio job from the `f` form, release with `x`, open the drop-caches and marker prompts,
//! quit, and check nothing is left running. Then the hard case: SIGKILL pagewatch while an
//! eater and fio run, and check both die with it. Skips only when tmux or fio is missing;
//! `.ci/run` installs both.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[path = "common/tmux.rs"]
mod tmux;

use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use tmux::Session;

fn tools_present() -> bool {
    for tool in ["tmux", "fio"] {
        if Command::new(tool).arg("--version").output().is_err()
            && Command::new(tool).arg("-V").output().is_err()
        {
            eprintln!("skipping: {tool} is not installed (bash .ci/run installs it)");
            return false;
        }
    }
    true
}

fn start(name: &str, args: &str) -> Session {
    let bin = env!("CARGO_BIN_EXE_pagewatch");
    let cmd = format!("{bin} {args}; echo \"exit=$?\"; echo shell-$((40+2))-ok");
    let name = format!("pagewatch-jobs-{}-{name}", std::process::id());
    Session::start(name, 160, 48, &cmd)
}

/// Pids of processes whose command line contains `needle` (our own test files' directory).
fn procs_with(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) && pid != std::process::id() {
            out.push(pid);
        }
    }
    out
}

/// Eaters whose parent is `parent`.
fn eaters_of(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let parent_of = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split(' ').nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if parent_of == Some(parent) && comm_is(pid, "pagewatch-eat") {
            out.push(pid);
        }
    }
    out
}

fn comm_is(pid: u32, comm: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm)
}

fn wait_until(secs: u64, ok: impl Fn() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if ok() {
            return true;
        }
        sleep(Duration::from_millis(100));
    }
    ok()
}

/// Test files in `dir` and in the private directories pagewatch makes inside it, plus those
/// private directories themselves.
fn fio_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            if e.file_type().unwrap().is_dir() {
                1 + fio_files(&e.path())
            } else {
                usize::from(e.file_name().to_string_lossy().ends_with(".fio"))
            }
        })
        .sum()
}

#[test]
fn experiments_from_hotkeys() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = start("keys", &format!("--fio-dir {}", dir.path().display()));
    s.wait_for("Available", 10);
    let pw = s.pagewatch_pid();

    // m: eat 64M, held.
    s.keys(&["m"]);
    s.wait_for("Base for %: MemTotal", 5);
    s.keys(&["64M", "Enter"]);
    s.wait_for("holding", 15);
    let eaters = eaters_of(pw);
    assert_eq!(eaters.len(), 1, "one eater expected: {eaters:?}");

    // f: randread of a 32M file for 3 s, edited in the form.
    s.keys(&["f"]);
    s.wait_for("Run fio", 5);
    s.keys(&["Down", "Down", "BSpace", "BSpace", "32M"]);
    s.keys(&["Down", "Down", "Down", "Down", "BSpace", "3", "Enter"]);
    s.wait_for("fio randread size=32M runtime=3 · pid", 10);
    s.wait_for("running", 30);
    assert_eq!(
        fio_files(dir.path()),
        2,
        "pagewatch lays out one test file in its private directory"
    );
    let done = s.wait_for("result: R ", 30);
    assert!(done.contains("finished"), "{done}");

    // x: the finished fio is not running, so x releases the newest active job: the eater.
    s.keys(&["x"]);
    s.wait_for("released", 15);
    assert!(wait_until(10, || eaters
        .iter()
        .all(|p| !comm_is(*p, "pagewatch-eat"))));

    // D and M open their prompts; Esc closes them.
    s.keys(&["D"]);
    s.wait_for("Drop caches", 5);
    s.keys(&["Escape"]);
    sleep(Duration::from_millis(300));
    s.keys(&["M"]);
    s.wait_for("shown on the charts", 5);
    s.keys(&["after", "Space", "fio", "Enter"]);
    sleep(Duration::from_millis(300));

    s.keys(&["q"]);
    let end = s.wait_for("shell-42-ok", 15);
    assert!(end.contains("exit=0"), "{end}");
    assert!(wait_until(5, || !Path::new(&format!("/proc/{pw}")).exists()));
    assert_eq!(
        fio_files(dir.path()),
        0,
        "test files and the private directory are removed on exit"
    );
}

#[test]
fn sigkill_leaves_no_eater_and_no_fio() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let d = dir.path().display().to_string();
    let s = start(
        "kill",
        &format!("--eat 64M --fio randread,size=32M,runtime=60 --fio-dir {d}"),
    );
    s.wait_for("holding", 20);
    s.wait_for("running", 30);
    let pw = s.pagewatch_pid();
    let fio = procs_with(&d);
    assert!(
        fio.iter().any(|p| comm_is(*p, "fio")),
        "fio should be running: {fio:?}"
    );
    let eaters = eaters_of(pw);
    assert_eq!(eaters.len(), 1, "one eater expected: {eaters:?}");
    Command::new("kill")
        .args(["-KILL", &pw.to_string()])
        .status()
        .unwrap();
    assert!(
        wait_until(10, || procs_with(&d).is_empty()),
        "left behind: {:?}",
        procs_with(&d)
    );
    assert!(
        wait_until(10, || eaters.iter().all(|p| !comm_is(*p, "pagewatch-eat"))),
        "eater outlived pagewatch"
    );
    assert!(
        wait_until(10, || fio_files(dir.path()) == 0),
        "the laid-out test file outlived pagewatch: {} entries",
        fio_files(dir.path())
    );
}
