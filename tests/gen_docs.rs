//! `pagewatch __gen DIR`: the man pages and completions land where `man -M DIR/man` and
//! bash find them, without the Debian package (`tests/deb_package.rs` checks them packaged).

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::process::Command;

#[test]
fn gen_writes_man_pages_and_completions_that_work() {
    let tmp = tempfile::tempdir().unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .arg("__gen")
        .arg(tmp.path())
        .status()
        .unwrap();
    assert!(st.success());
    for f in [
        "man/man1/pagewatch.1",
        "man/man1/pagewatch-replay.1",
        "completions/pagewatch.bash",
        "completions/_pagewatch",
        "completions/pagewatch.fish",
    ] {
        assert!(tmp.path().join(f).is_file(), "{f}");
    }
    if Command::new("man").arg("--version").output().is_ok() {
        let out = Command::new("man")
            .arg("-M")
            .arg(tmp.path().join("man"))
            .arg("pagewatch")
            .env("MANPAGER", "cat")
            .output()
            .unwrap();
        let page = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && page.contains("EXIT STATUS"),
            "{page}"
        );
    }
    let script = tmp.path().join("completions/pagewatch.bash");
    let out = Command::new("bash")
        .args(["--norc", "-c"])
        .arg(format!(
            "source '{}' && complete -p pagewatch",
            script.display()
        ))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("-F _pagewatch pagewatch"), "{said}");
    // A directory that cannot be made is a failure (1) with the path named.
    let out = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args(["__gen", "/proc/no/such/dir"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/proc/no/such/dir"));
}
