//! The job detail view end to end in tmux, keys only (issue #24 item 7): a fio started by hand
//! with `--output` shows in the jobs pane with its data file (never the report), `Tab` and
//! `Enter` open its detail (command line, files with residency, /proc rates), `Esc` closes it;
//! a fio job started from the `f` form gets a detail with its file measured and fio's live
//! figures, `q` closes it without quitting and the title says `x stops #1`; the hand-started
//! fio, once stopped, stays listed as ended. Skips only when tmux or fio is missing. Files go
//! under /var/tmp/pw-jobs-tmux-PID, removed at the end.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[path = "common/tmux.rs"]
mod tmux;

use std::path::PathBuf;
use std::process::{Command, Stdio};

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

/// The test directory and the hand-started fio, both gone when dropped.
struct Setup {
    dir: PathBuf,
    fio: Option<std::process::Child>,
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(f) = &mut self.fio {
            let _ = Command::new("kill").arg(f.id().to_string()).status();
            let _ = f.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn enter_opens_the_job_detail() {
    if !tools_present() {
        return;
    }
    let dir = PathBuf::from(format!("/var/tmp/pw-jobs-tmux-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("own")).unwrap();
    let mut setup = Setup { dir, fio: None };
    let (data, out) = (setup.dir.join("f"), setup.dir.join("out.txt"));
    let bin = env!("CARGO_BIN_EXE_pagewatch");
    let cmd = format!(
        "{bin} --fio-dir {}; echo \"exit=$?\"; echo shell-$((40+2))-ok",
        setup.dir.join("own").display()
    );
    let s = Session::start(
        format!("pagewatch-detail-{}", std::process::id()),
        160,
        48,
        &cmd,
    );
    s.wait_for("Available", 10);

    // A fio by hand: its data file is held by its worker, its report by its main process. The
    // fdatasync keeps the disk busy, so pagewatch looks for fio processes.
    let fio = Command::new("fio")
        .args([
            "--name=x".to_owned(),
            format!("--filename={}", data.display()),
            "--size=64m".into(),
            "--rw=write".into(),
            "--bs=64k".into(),
            "--fdatasync=16".into(),
            "--time_based".into(),
            "--runtime=40".into(),
            format!("--output={}", out.display()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let fio_pid = fio.id();
    setup.fio = Some(fio);
    let line = format!("fio {fio_pid} (not ours) {}", data.display());
    let screen = s.wait_for(&line, 30);
    assert!(!screen.contains("out.txt 0B"), "{screen}");

    // Tab focuses the jobs pane; Enter opens the selected row's detail. Other fio runs on the
    // machine may be listed too: ↓ to the next row until the detail is ours.
    s.keys(&["Tab"]);
    s.wait_for("Jobs (x: foreign fio, not ours · Enter: detail)", 5);
    let title = format!("fio pid {fio_pid} (not ours; Esc: back)");
    let mut detail = String::new();
    for _ in 0..8 {
        s.keys(&["Enter"]);
        detail = s.wait_for("(not ours; Esc: back)", 5);
        if detail.contains(&title) {
            break;
        }
        // Apart: Escape right before an arrow's own escape sequence reads as one key.
        s.keys(&["Escape"]);
        s.wait_for("Enter: detail)", 5);
        s.keys(&["Down"]);
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    assert!(detail.contains(&title), "{detail}");
    assert!(detail.contains("data files: 1 ("), "{detail}");
    assert!(
        detail.contains(&format!("%  {}", data.display())),
        "{detail}"
    );
    assert!(
        !detail.contains(&format!("%  {}", out.display())),
        "{detail}"
    );
    assert!(
        detail.contains("--output="),
        "the whole command line: {detail}"
    );
    assert!(detail.contains("storage rd "), "{detail}");
    println!("{detail}");
    s.keys(&["Escape"]);
    s.wait_for("Jobs (x: foreign fio", 5);

    // A job of ours from the f form: 32M, 8 s.
    s.keys(&["f"]);
    s.wait_for("Run fio", 5);
    s.keys(&["Down", "Down", "BSpace", "BSpace", "32M"]);
    s.keys(&["Down", "Down", "Down", "Down", "BSpace", "8", "Enter"]);
    s.wait_for("fio randread size=32M runtime=8 · pid", 15);
    s.wait_for("Jobs (x stops #1 · Enter: detail)", 30);
    s.keys(&["Enter"]);
    s.wait_for("Job #1 (Esc: back)", 5);
    let detail = s.wait_for("data files: 1 (", 10);
    assert!(detail.contains("--filename="), "{detail}");
    assert!(detail.contains(".fio"), "{detail}");
    let detail = s.wait_for(" IOPS ", 15);
    assert!(detail.contains("fio's live figures"), "{detail}");
    println!("{detail}");
    // q closes the view, it does not quit.
    s.keys(&["q"]);
    s.wait_for("Jobs (x stops #1", 5);

    // The hand-started fio ends: its row stays, dimmed, with its last figures.
    if let Some(mut f) = setup.fio.take() {
        Command::new("kill")
            .arg(fio_pid.to_string())
            .status()
            .unwrap();
        f.wait().unwrap();
    }
    println!("{}", s.wait_for(&format!("fio {fio_pid} ended "), 15));

    s.keys(&["q"]);
    let end = s.wait_for("shell-42-ok", 20);
    assert!(end.contains("exit=0"), "{end}");
}
