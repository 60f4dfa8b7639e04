//! The non-root play lock against other local users, end to end: `nobody` runs `pagewatch
//! play` with `--fio-dir` a shared sticky directory in which user `daemon` planted a symlink
//! (to a file of `nobody`'s) or a FIFO where the lock used to live. The run must neither
//! follow the one nor hang on the other, and its lock must not stop `daemon`'s own playbook.
//! A FIFO in the user's own lock place is refused at once. Needs root (for `runuser`);
//! skipped otherwise. Changes no kernel setting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const NOBODY: u32 = 65534;
const DAEMON: u32 = 1;

fn usable() -> bool {
    rustix::process::geteuid().is_root()
        && Command::new("runuser")
            .arg("--help")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

fn chown(p: &Path, uid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
}

/// `pagewatch play BOOK --fio-dir BASE` as `user`, without $XDG_RUNTIME_DIR; killed after
/// 20 s (a hang is a failure, not a stuck test).
fn play_as(user: &str, book: &Path, base: &Path) -> Output {
    let mut child = Command::new("runuser")
        .args([
            "-u",
            user,
            "--",
            "env",
            "-u",
            "XDG_RUNTIME_DIR",
            EXE,
            "play",
        ])
        .arg(book)
        .arg("--fio-dir")
        .arg(base)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "play as {user} hung: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A shared sticky directory (as /tmp is) with a one-step playbook everyone can read.
fn shared() -> (tempfile::TempDir, std::path::PathBuf) {
    let base = tempfile::tempdir().unwrap();
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let book = base.path().join("book.toml");
    std::fs::write(
        &book,
        "name = \"t\"\ndescription = \"d\"\n[[step]]\nphase = \"idle\"\n[[step]]\nwait = \"1s\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&book, std::fs::Permissions::from_mode(0o644)).unwrap();
    (base, book)
}

fn assert_ran(user: &str, out: &Output) {
    assert!(
        out.status.success(),
        "play as {user}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_planted_symlink_is_not_followed_and_one_users_lock_blocks_no_other() {
    if !usable() {
        eprintln!("skipped: needs root and runuser");
        return;
    }
    let (base, book) = shared();
    // nobody's own file, and daemon's symlink to it where the lock used to be.
    let mine = base.path().join("nobody-data");
    std::fs::write(&mine, "nobody's data").unwrap();
    chown(&mine, NOBODY);
    let link = base.path().join("pagewatch-play.lock");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    chown(&link, DAEMON);
    assert_ran("nobody", &play_as("nobody", &book, base.path()));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "nobody's data");
    let state = base.path().join(format!("pagewatch-state-{NOBODY}"));
    let m = std::fs::symlink_metadata(&state).unwrap();
    assert!(m.is_dir() && m.uid() == NOBODY && m.mode() & 0o777 == 0o700);
    // nobody's lock file stays in its private directory; daemon's playbook runs all the same.
    assert_ran("daemon", &play_as("daemon", &book, base.path()));
}

#[test]
fn a_planted_fifo_neither_hangs_the_run_nor_is_used() {
    if !usable() {
        eprintln!("skipped: needs root and runuser");
        return;
    }
    let (base, book) = shared();
    let fifo = base.path().join("pagewatch-play.lock");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o666),
    )
    .unwrap();
    std::fs::set_permissions(&fifo, std::fs::Permissions::from_mode(0o666)).unwrap();
    chown(&fifo, DAEMON);
    assert_ran("nobody", &play_as("nobody", &book, base.path()));
    // A FIFO in the user's own lock place (left by whatever): refused at once, by name.
    let state = base.path().join(format!("pagewatch-state-{NOBODY}"));
    let own = state.join("pagewatch-play.lock");
    std::fs::remove_file(&own).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &own,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    chown(&own, NOBODY);
    let out = play_as("nobody", &book, base.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("not a regular file"), "{err}");
}
