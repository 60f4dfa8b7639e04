//! Files a user names that are not what they seem (issue 22, must-fix 2 and the config FIFO):
//! a playbook that is `/dev/zero`, a link to it, a FIFO, a directory or a file too large
//! (`pagewatch play FILE` and the screen's `--playbook FILE`), and a config file that is a
//! FIFO. Each must end quickly with an error naming the file, in bounded memory: the binary
//! runs under a 1 GiB address-space limit and a 20 s deadline, so a read that never ends
//! aborts or times out instead of taking the machine with it.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs pagewatch with `args` (no terminal, HOME in `home`), limited to 1 GiB of address
/// space and 20 s: (exit code, stderr). A run that outlives the deadline is killed and fails
/// the test.
fn run(args: &[&str], home: &Path) -> (i32, String) {
    // `ulimit -v` in KiB: 1 GiB of address space.
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_pagewatch"))
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            // Killed by a signal (an abort on allocation failure): no code.
            return (status.code().unwrap_or(-1), err);
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pagewatch {args:?} still running after 20 s: it blocked");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn fifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

fn tree() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/trees/live-idle")
        .display()
        .to_string()
}

#[test]
fn a_playbook_that_never_ends_or_blocks_is_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let pipe = dir.path().join("fifo.toml");
    fifo(&pipe);
    let sub = dir.path().join("a-directory.toml");
    std::fs::create_dir(&sub).unwrap();
    let (link, pipe, sub) = (
        link.to_str().unwrap(),
        pipe.to_str().unwrap(),
        sub.to_str().unwrap(),
    );
    for (file, kind) in [
        ("/dev/zero", "character device"),
        (link, "character device"),
        (pipe, "FIFO"),
        (sub, "directory"),
    ] {
        let (code, err) = run(&["play", file], dir.path());
        assert_eq!(code, 1, "play {file}: {err}");
        assert!(err.contains(file), "play {file}: {err}");
        assert!(err.contains("not a regular file"), "play {file}: {err}");
        assert!(err.contains(kind), "play {file}: {err}");
        // The screen reads its --playbook the same way, before the terminal is touched.
        let (code, err) = run(&["--tree", &tree(), "--playbook", file], dir.path());
        assert_eq!(code, 1, "--playbook {file}: {err}");
        assert!(err.contains(file), "--playbook {file}: {err}");
        assert!(
            err.contains("not a regular file"),
            "--playbook {file}: {err}"
        );
    }
}

#[test]
fn a_playbook_larger_than_the_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.toml");
    let mut text = String::from("name = \"big\"\ndescription = \"d\"\n");
    while text.len() <= 1 << 20 {
        text.push_str("[[step]]\nwait = \"1s\"\n");
    }
    std::fs::write(&big, text).unwrap();
    let (code, err) = run(&["play", "--show", big.to_str().unwrap()], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("larger than 1 MiB"), "{err}");
    assert!(err.contains(big.to_str().unwrap()), "{err}");
}

#[test]
fn a_fifo_as_the_config_file_does_not_hang_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("config.toml");
    fifo(&pipe);
    // Without a terminal the screen fails to start, but only after reading the config file:
    // what matters is that it gets there, and says what was wrong with the file.
    let (_, err) = run(
        &["--tree", &tree(), "--config", pipe.to_str().unwrap()],
        dir.path(),
    );
    assert!(err.contains("not a regular file"), "{err}");
    assert!(err.contains("FIFO"), "{err}");
}
