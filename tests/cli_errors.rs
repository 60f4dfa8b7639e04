//! Errors at the command line, with `RUST_BACKTRACE=1` in the environment: one line naming
//! what failed plus a hint, never a Rust backtrace, and exit code 2 for usage errors (clap's
//! own and the clashes pagewatch finds) against 1 for failures at run time.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::process::Command;

/// Runs pagewatch with `args` and RUST_BACKTRACE=1: (exit code, stderr).
fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .env("HOME", "/nonexistent-home")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn no_backtrace(err: &str) {
    for bad in [
        "stack backtrace",
        "Stack backtrace",
        "backtrace",
        "Caused by",
        "panicked",
    ] {
        assert!(!err.contains(bad), "{bad:?} in:\n{err}");
    }
}

#[test]
fn runtime_failures_are_one_line_and_a_hint_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let missing = missing.to_str().unwrap();
    for args in [
        vec!["--batch", "--tree", missing],
        vec!["report", missing],
        vec!["export", "--format", "csv", missing],
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        no_backtrace(&err);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {err}");
        assert!(lines[0].starts_with("pagewatch: error: "), "{err}");
        assert!(lines[0].contains(missing), "{err}");
        assert_eq!(lines[1], "hint: check the path: it does not exist");
    }
}

#[test]
fn usage_errors_exit_2() {
    // clap's own: an unknown flag, a bad value.
    for args in [vec!["--no-such-flag"], vec!["--interval", "0"]] {
        let (code, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        no_backtrace(&err);
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains("--help"), "{err}");
    }
    // Found after parsing: jobs on a captured tree.
    let tree = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/trees/live-idle");
    let (code, err) = run(&["--eat", "1M", "--tree", tree]);
    assert_eq!(code, 2, "{err}");
    no_backtrace(&err);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(err.starts_with("pagewatch: error: --eat and --fio need live /proc"));
    assert!(err.lines().nth(1).unwrap().starts_with("hint: "));
}

#[test]
fn help_and_version_exit_0() {
    for args in [["--help"], ["--version"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(!out.stdout.is_empty());
    }
}

/// Issue 51: writing a recording, a report or an export onto a full or a read-only
/// filesystem ended with the generic `--help` hint. Each now says what to do. Root only: a
/// 16 KiB tmpfs and a read-only one, mounted in a mount namespace of the test's own
/// (`unshare -m`), so nothing outside sees them and they go with it.
#[test]
fn a_full_or_read_only_filesystem_gets_a_hint_of_its_own() {
    if !rustix::process::geteuid().is_root()
        || !Command::new("unshare")
            .args(["-m", "true"])
            .status()
            .is_ok_and(|s| s.success())
    {
        println!("skipped: needs root and unshare -m");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (full, ro) = (dir.path().join("full"), dir.path().join("ro"));
    std::fs::create_dir(&full).unwrap();
    std::fs::create_dir(&ro).unwrap();
    let bin = env!("CARGO_BIN_EXE_pagewatch");
    let rec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/recordings/idle-150s.pwrec"
    );
    // One command a line: its exit code, then its stderr.
    let script = format!(
        "mount --make-rprivate / && mount -t tmpfs -o size=16k none {f} && \
         mount -t tmpfs -o ro,size=16k none {r} && for d in {f} {r}; do \
         {bin} export {rec} --format csv -o $d/x.csv 2>&1; echo \"rc $?\"; \
         {bin} report {rec} -o $d/rep 2>&1 >/dev/null; echo \"rc $?\"; \
         timeout 10 {bin} record $d/x.pwrec --duration 2 --interval 0.5 2>&1; echo \"rc $?\"; \
         done",
        f = full.display(),
        r = ro.display(),
    );
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .env("HOME", "/nonexistent-home")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    no_backtrace(&text);
    let hints: Vec<&str> = text.lines().filter(|l| l.starts_with("hint: ")).collect();
    assert_eq!(text.matches("rc 1").count(), 6, "{text}");
    assert_eq!(hints.len(), 6, "{text}");
    for h in &hints[..3] {
        assert!(h.contains("is full: free some space"), "{text}");
    }
    for h in &hints[3..] {
        assert!(
            h.contains("read-only: write to a directory on a writable one"),
            "{text}"
        );
    }
}
