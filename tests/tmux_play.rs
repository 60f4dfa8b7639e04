//! A playbook from the screen, end to end in tmux, keys only: `P` opens the picker (the
//! built-ins, and a small playbook file given with `--playbook`), the file's playbook is
//! picked and confirmed, its phases appear as `P` markers on the charts and in the jobs pane,
//! it tunes `vm.dirty_bytes`, and `q` in the middle puts the setting back.
//! Root only (it tunes a sysctl); skips with a message otherwise, or when tmux or fio is
//! missing (`.ci/run` installs both). The test's own guard restores the thresholds too, in
//! case it fails. A second test lets a two-second playbook end: its phase table opens over
//! the screen at 80x24 and Esc closes it (tmux only, no root).

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[path = "common/tmux.rs"]
mod tmux;

use std::process::Command;
use std::time::{Duration, Instant};

use tmux::Session;

#[path = "common/sysctl.rs"]
mod sysctl;

use sysctl::{DirtyKnobs, vm as sysctl};

/// Puts the dirty thresholds back as they were, and removes the fio directory, whatever
/// the test did.
struct Restore {
    _knobs: DirtyKnobs,
    dir: std::path::PathBuf,
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One playbook at a time per machine: the tests here take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn ready() -> bool {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipping: tuning vm.dirty_bytes from the screen needs root");
        return false;
    }
    for (tool, flag) in [("tmux", "-V"), ("fio", "--version")] {
        if Command::new(tool).arg(flag).output().is_err() {
            eprintln!("skipping: {tool} is not installed (bash .ci/run installs it)");
            return false;
        }
    }
    true
}

/// The most `letter` markers (the letter with the marker's dotted line right under it) on
/// one row of the left-hand charts.
fn marked(screen: &str, letter: char) -> usize {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    (lines.windows(2))
        .map(|w| {
            (w[0].iter().enumerate().take(80))
                .filter(|(x, c)| **c == letter && w[1].get(*x) == Some(&'┊'))
                .count()
        })
        .max()
        .unwrap_or(0)
}

const BOOK: &str = r#"
name = "tuned-fsync"
description = "a small fsync writer, then dirty_bytes at 15M for a minute"
[[step]]
phase = "default"
[[step]]
fio = "randwrite"
set = { size = "16M", bs = "16k", fsync = 1, runtime = 2 }
[[step]]
phase = "dirty_bytes 15M"
[[step]]
tune = "vm.dirty_bytes"
value = "15M"
[[step]]
wait = "60s"
[[step]]
phase = "restored"
[[step]]
tune = "vm.dirty_bytes"
value = "original"
"#;

#[test]
fn picker_runs_a_playbook_and_q_restores_its_setting() {
    if !ready() {
        return;
    }
    let _s = serial();
    let dir = std::path::PathBuf::from(format!("/var/tmp/pw-tmux-play-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let guard = Restore {
        _knobs: DirtyKnobs::take(),
        dir: dir.clone(),
    };
    let before = (sysctl("dirty_bytes"), sysctl("dirty_ratio"));
    assert_ne!(
        before.0, "15728640",
        "dirty_bytes is already 15M: cannot tell a change"
    );
    // A small fsync writer, then the same with dirty_bytes at 15M, held for a minute (q comes
    // in that minute), then restored.
    let book = dir.join("book.toml");
    std::fs::write(&book, BOOK).unwrap();
    let bin = env!("CARGO_BIN_EXE_pagewatch");
    let cmd = format!(
        "{bin} -i 0.5 --playbook {} --fio-dir {}; echo \"exit=$?\"",
        book.display(),
        dir.display()
    );
    let s = Session::start(
        format!("pagewatch-play-{}", std::process::id()),
        160,
        48,
        &cmd,
    );
    s.wait_for("MemAvailable", 20);
    s.keys(&["P"]);
    s.wait_for("Run a playbook", 10);
    // The file's playbook comes first, then the built-ins.
    let screen = s.wait_for("> tuned-fsync", 5);
    assert!(screen.contains("util-vs-saturation"), "{screen}");
    s.keys(&["Enter"]);
    // The confirmation shows the setting with its value now and the one to be.
    let screen = s.wait_for("Run a playbook: confirm", 30);
    assert!(
        screen.contains("vm.dirty_bytes:") && screen.contains("-> 15728640"),
        "{screen}"
    );
    s.keys(&["y"]);
    s.wait_for("phase default", 20);
    // The second phase tunes dirty_bytes.
    let end = Instant::now() + Duration::from_secs(120);
    while sysctl("dirty_bytes") != "15728640" {
        assert!(Instant::now() < end, "never tuned:\n{}", s.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
    // The tuned phase's line in the jobs pane and both phases' markers on the charts.
    let end = Instant::now() + Duration::from_secs(15);
    let mut screen = s.screen();
    while !(screen.contains("phase dirty_bytes 15M") && marked(&screen, 'P') >= 2) {
        assert!(Instant::now() < end, "no phase line or markers:\n{screen}");
        std::thread::sleep(Duration::from_millis(100));
        screen = s.screen();
    }
    // The tuning is said in the jobs pane (its `T` marker shares the phase's column).
    assert!(
        screen.contains("tuned vm.dirty_bytes: ") && screen.contains("-> 15728640"),
        "{screen}"
    );
    assert_eq!(
        sysctl("dirty_bytes"),
        "15728640",
        "the phase ended before q"
    );
    // q in the middle: pagewatch leaves and dirty_bytes is back.
    s.keys(&["q"]);
    s.wait_for("exit=0", 30);
    assert_eq!(
        (sysctl("dirty_bytes"), sysctl("dirty_ratio")),
        before,
        "the thresholds were not restored"
    );
    drop(guard);
}

const SHORT: &str = r#"
name = "two-waits"
description = "two one-second phases"
[[step]]
phase = "first"
[[step]]
wait = "1s"
[[step]]
phase = "second"
[[step]]
wait = "1s"
"#;

#[test]
fn a_finished_playbook_shows_its_phase_table_until_esc() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipping: tmux is not installed (bash .ci/run installs it)");
        return;
    }
    let _s = serial();
    let dir = tempfile::Builder::new()
        .prefix("pw-tmux-phases")
        .tempdir_in("/var/tmp")
        .unwrap();
    let book = dir.path().join("book.toml");
    std::fs::write(&book, SHORT).unwrap();
    let cmd = format!(
        "{} -i 0.5 --no-config --playbook {} --fio-dir {}; echo \"exit=$?\"",
        env!("CARGO_BIN_EXE_pagewatch"),
        book.display(),
        dir.path().display()
    );
    let s = Session::start(
        format!("pagewatch-phases-{}", std::process::id()),
        80,
        24,
        &cmd,
    );
    s.wait_for("Available", 20);
    s.keys(&["P"]);
    s.wait_for("> two-waits", 10);
    s.keys(&["Enter"]);
    s.wait_for("Run a playbook: confirm", 30);
    s.keys(&["y"]);
    let screen = s.wait_for("Phase table: playbook two-waits ends", 30);
    for row in ["first ", "second "] {
        assert!(
            screen.lines().any(|l| l.contains(&format!("│{row}"))),
            "no {row:?} row:\n{screen}"
        );
    }
    assert!(screen.contains("Esc or Enter: close"), "{screen}");
    // It stays until closed.
    std::thread::sleep(Duration::from_millis(1200));
    assert!(s.screen().contains("Phase table"), "{}", s.screen());
    s.keys(&["Escape"]);
    s.wait_for_not("Phase table", 10);
    s.keys(&["q"]);
    s.wait_for("exit=0", 20);
}
