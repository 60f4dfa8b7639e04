//! End-to-end in tmux, as a user would: start pagewatch in a real terminal, read the screen,
//! press keys (help, sort, pause, detail), resize the window, quit, and check the exit code and
//! that the shell is usable again. Skips (with a message) only when tmux is not installed;
//! `.ci/run` installs it.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[path = "common/tmux.rs"]
mod tmux;

use std::process::Command;

use tmux::Session;

fn start(name: &str, w: u16, h: u16, env: &str) -> Option<Session> {
    start_with(name, w, h, env, "")
}

/// `start` with arguments for pagewatch.
fn start_with(name: &str, w: u16, h: u16, env: &str, args: &str) -> Option<Session> {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipping: tmux is not installed (bash .ci/run installs it)");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_pagewatch");
    // A shell runs pagewatch, then prints its exit code, so we can see the shell is back.
    let cmd = format!(
        "{env} {bin} {args}; echo \"exit=$?\"; stty -a | head -1 >/dev/null && echo shell-$((40+2))-ok"
    );
    let name = format!("pagewatch-e2e-{}-{name}", std::process::id());
    Some(Session::start(name, w, h, &cmd))
}

#[test]
fn keys_resize_and_quit_at_80x24_and_160x48() {
    let Some(s) = start("keys", 80, 24, "TERM=xterm-256color") else {
        return;
    };
    let screen = s.wait_for("Available", 10);
    assert!(screen.contains("Dirty & writeback"), "{screen}");
    // Rates need two samples; the disk table fills in after the second.
    s.wait_for("%util", 10);
    s.keys(&["?"]);
    // At 80x24 the help is taller than the screen: its notes are one ↓ away.
    let help = s.wait_for("Help (↓ more, Esc or ? to close)", 5);
    assert!(help.contains("cycle the disk sort"), "{help}");
    s.keys(&["Down"]);
    let notes = s.wait_for("Help (↑ keys, Esc or ? to close)", 5);
    assert!(notes.contains("cloud volumes"), "{notes}");
    s.keys(&["Escape"]);
    // A key sent right after Esc would arrive as Alt+key: wait for the overlay to close.
    s.wait_for_not("Esc or ? to close", 5);
    s.keys(&["s"]);
    s.wait_for("aqu-sz*", 5);
    s.keys(&["Space"]);
    s.wait_for("PAUSED", 5);
    s.keys(&["Space"]);
    s.tmux(&["resize-window", "-t", "pw", "-x", "160", "-y", "48"]);
    s.wait_for("MemAvailable", 10);
    s.keys(&["Enter"]);
    s.wait_for("(Esc: back)", 5);
    s.keys(&["Escape"]);
    s.wait_for_not("(Esc: back)", 5);
    s.tmux(&["resize-window", "-t", "pw", "-x", "70", "-y", "20"]);
    s.wait_for("needs at least 80x24", 5);
    s.tmux(&["resize-window", "-t", "pw", "-x", "80", "-y", "24"]);
    s.wait_for("Dirty & writeback", 5);
    s.keys(&["q"]);
    let end = s.wait_for("shell-42-ok", 10);
    assert!(end.contains("exit=0"), "{end}");
}

#[test]
fn ctrl_c_quits_and_ascii_no_color_terminals_work() {
    let Some(s) = start("ctrlc", 80, 24, "TERM=linux NO_COLOR=1") else {
        return;
    };
    s.wait_for("Dirty & writeback", 10);
    s.keys(&["C-c"]);
    let end = s.wait_for("shell-42-ok", 10);
    assert!(end.contains("exit=0"), "{end}");
    s.keys(&[
        &format!("TERM=screen {} --ascii", env!("CARGO_BIN_EXE_pagewatch")),
        "Enter",
    ]);
    let screen = s.wait_for("+Memory", 10);
    assert!(
        !screen.contains('│') && !screen.contains('█'),
        "non-ASCII glyphs:\n{screen}"
    );
    s.keys(&["q"]);
}

#[test]
fn sigterm_restores_the_terminal() {
    let Some(s) = start("sigterm", 80, 24, "") else {
        return;
    };
    s.wait_for("Dirty & writeback", 10);
    // Only this session's pagewatch: the child of the pane's shell.
    let shell = s.tmux(&["list-panes", "-t", "pw", "-F", "#{pane_pid}"]);
    let _ = Command::new("pkill")
        .args(["-TERM", "-P", shell.trim()])
        .output();
    let end = s.wait_for("shell-42-ok", 10);
    assert!(end.contains("exit=0"), "{end}");
    // Back on the main screen: the alternate screen's panes are gone.
    assert!(!end.contains("Dirty & writeback"), "{end}");
}

#[test]
fn a_stuck_proc_read_leaves_the_clock_and_keys_running() {
    // A copy of a captured /proc + /sys, read live with --proc-root (paced, like /proc); after
    // the first samples its `stat` becomes a FIFO nobody writes, so the next read blocks.
    let dir = tempfile::tempdir().unwrap();
    let tree = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/trees/live-idle/000");
    let ok = Command::new("cp")
        .args(["-r", &format!("{tree}/proc"), &format!("{tree}/sys")])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let root = dir.path().display();
    let args = format!("--proc-root {root}/proc --sys-root {root}/sys");
    let Some(s) = start_with("stall", 80, 24, "PAGEWATCH_TEST_BLOCKING_FIFO=1", &args) else {
        return;
    };
    // A figure only a sample gives (a pane title shows before the first sample): the FIFO
    // must replace `stat` after the first read, or the screen waits for a first sample
    // instead of saying sampling stalled.
    s.wait_for("Available ", 10);
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::rename(&fifo, dir.path().join("proc/stat")).unwrap();
    // The sampler's alarm rings 3 s after the last sample; the clock then runs on ticks.
    s.wait_for("sampling stalled", 10);
    // Seconds on ticks from the alarm; the main thread's own fallback tick would first come
    // 9 s after the last sample.
    s.wait_for("no sample for 6s", 10);
    s.keys(&["?"]);
    s.wait_for("Esc or ? to close)", 5);
    s.keys(&["Escape"]);
    s.wait_for_not("Esc or ? to close", 5);
    s.keys(&["q"]);
    let end = s.wait_for("shell-42-ok", 10);
    assert!(end.contains("exit=0"), "{end}");
}
