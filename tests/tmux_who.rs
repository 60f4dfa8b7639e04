//! The "who" views end to end in tmux, keys only, at 80x24 and 160x48 as a user would: a
//! buffered `dd` writes, `w` opens the processes view and dd shows first by dirtied bytes,
//! `s` changes the sort (storage IO, then memory), `K` shows the selected task's kernel stack (root), `c` opens the
//! cgroups view (on this VM's cgroup v1 memory controller: the one-line note), Esc goes back,
//! `q` quits. Skips only when tmux is missing; `.ci/run` installs it.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[path = "common/tmux.rs"]
mod tmux;

use std::process::{Child, Command, Stdio};

use tmux::Session;

fn tmux_present() -> bool {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipping: tmux is not installed (bash .ci/run installs it)");
        return false;
    }
    true
}

/// A buffered writer into a file of our own, killed and removed on drop.
struct Writer {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Writer {
    fn start() -> Self {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let child = Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", dir.path().join("out").display()))
            .args(["bs=1M", "count=100000"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Self { child, _dir: dir }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One at a time: each test's dd would otherwise be the other's busiest process.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(w: u16, h: u16) {
    let _one = ONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let bin = env!("CARGO_BIN_EXE_pagewatch");
    let name = format!("pagewatch-who-{}-{w}", std::process::id());
    let cmd = format!("{bin}; echo \"exit=$?\"");
    let dd = Writer::start();
    let s = Session::start(name, w, h, &cmd);
    s.wait_for("iowait", 10);
    s.keys(&["w"]);
    s.wait_for("Processes by IO", 5);
    // The walk runs every 2 s while the pane is shown; a process's first walk has no rate
    // (`-`), its second has. Once dd has its rate, it leads by dirtied bytes.
    let pid = dd.child.id().to_string();
    s.wait_for(&format!("{pid} dd"), 15);
    let rows_of = |screen: &str| -> Vec<String> {
        screen
            .lines()
            .skip_while(|l| !l.contains("DIRTIED/s"))
            .skip(1)
            .filter(|l| {
                l.trim_start_matches('│')
                    .trim_start()
                    .starts_with(char::is_numeric)
            })
            .map(str::to_owned)
            .collect()
    };
    let dd_row = |rows: &[String]| {
        rows.iter()
            .find(|r| r.contains(&format!("{pid} dd")))
            .cloned()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let screen = loop {
        let screen = s.screen();
        // `│  PID dd  DIRTIED/s …`: the third word after the border.
        let rated = dd_row(&rows_of(&screen)).is_some_and(|r| {
            r.trim_start_matches('│')
                .split_whitespace()
                .nth(2)
                .is_some_and(|rate| rate != "-")
        });
        if rated || std::time::Instant::now() > deadline {
            break screen;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    };
    let rows = rows_of(&screen);
    assert!(
        rows.first()
            .is_some_and(|r| r.contains(&format!("{pid} dd"))),
        "dd is not first by dirtied bytes once it has a rate:\n{screen}"
    );
    s.keys(&["s"]);
    s.wait_for("sort memory", 5);
    s.wait_for("RSS*", 5);
    s.keys(&["K"]);
    s.wait_for("Kernel stack of", 5);
    s.keys(&["Escape"]);
    s.wait_for("Processes by memory", 5);
    s.keys(&["c"]);
    let screen = s.wait_for("Cgroups: dirty domains", 5);
    if std::fs::read_to_string("/proc/self/cgroup").is_ok_and(|c| c.contains(":memory:")) {
        assert!(
            screen.contains("container dirty limits need cgroup v2"),
            "no note on a cgroup v1 memory host:\n{screen}"
        );
    }
    s.keys(&["Escape"]);
    s.wait_for_not("Cgroups: dirty domains", 5);
    s.keys(&["q"]);
    s.wait_for("exit=0", 10);
}

#[test]
fn who_views_by_keys_at_80x24() {
    if tmux_present() {
        run(80, 24);
    }
}

#[test]
fn who_views_by_keys_at_160x48() {
    if tmux_present() {
        run(160, 48);
    }
}
