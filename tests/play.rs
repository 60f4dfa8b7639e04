//! Playbooks end to end through the binary: batch mode and `record` refuse jobs instead of
//! ignoring them, and `record --play` runs a playbook as `play --record` does.
#![allow(clippy::unwrap_used)]

use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");

#[test]
fn batch_refuses_fio_and_eat_and_starts_nothing() {
    for args in [
        &[
            "--batch",
            "--count",
            "1",
            "--fio",
            "randwrite",
            "--fio-dir",
            "/dev/vda",
        ][..],
        &["--batch", "--count", "1", "--eat", "1G"][..],
    ] {
        let out = Command::new(EXE).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--batch only prints figures"), "{err}");
        assert!(err.contains("pagewatch play"), "{err}");
        // Refused before the first sample: nothing printed, so no job could have started.
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// Runs pagewatch in `dir` (so a stray relative file would land there): (exit code, stdout,
/// stderr).
fn run_in(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(EXE)
        .args(args)
        .current_dir(dir)
        .env("HOME", "/nonexistent-home")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Nothing but `keep` in `dir`: no recording, no fio directory or file was created.
fn untouched(dir: &std::path::Path, keep: &[&str]) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect();
    assert!(left.is_empty(), "created {left:?}");
}

#[test]
fn batch_refuses_play_playbook_record_and_listen_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = book(
        dir.path(),
        "name = \"t\"\ndescription = \"d\"\n[[step]]\nphase = \"idle\"\n",
    );
    let p = p.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--batch", "--count", "1", "--play", "cache-reread"],
            "`pagewatch play cache-reread --format json`",
        ),
        (
            &["--batch", "--count", "1", "--playbook", p],
            "refuses --playbook",
        ),
        (
            &["--batch", "--count", "1", "--play-scale", "0.1"],
            "refuses --play-scale 0.1",
        ),
        (
            &["--batch", "--count", "1", "--record", "x.pwrec"],
            "`pagewatch record x.pwrec`",
        ),
        (
            &["--batch", "--count", "1", "--listen", "127.0.0.1:1"],
            "`pagewatch serve --listen 127.0.0.1:1`",
        ),
    ];
    for (args, says) in cases {
        let (code, out, err) = run_in(dir.path(), args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 2, "{err}");
        // Refused before the first sample: nothing printed.
        assert!(out.is_empty(), "{args:?}: {out}");
        untouched(dir.path(), &["book.toml"]);
    }
    // Without --batch, --play is refused too, pointing to the picker and `pagewatch play`.
    let (code, _, err) = run_in(dir.path(), &["--play", "cache-reread"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("press P") && err.contains("`pagewatch play cache-reread`"),
        "{err}"
    );
}

#[test]
fn record_refuses_fio_and_eat_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["record", "--fio", "randwrite", "r.pwrec"],
            "--fio randwrite",
        ),
        (&["record", "--eat", "1G", "r.pwrec"], "--eat 1G"),
        (
            &["record", "--fio", "randread", "--eat", "50%", "r.pwrec"],
            "--fio randread --eat 50%",
        ),
    ];
    for (args, refused) in cases {
        let (code, out, err) = run_in(dir.path(), args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("record starts no jobs, so it refuses {refused};")),
            "{err}"
        );
        assert!(
            err.contains("`pagewatch record --play FILE r.pwrec`"),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
        untouched(dir.path(), &[]);
    }
}

#[test]
fn record_play_refuses_duration_and_listen_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "record",
                "--play",
                "cache-reread",
                "--duration",
                "10",
                "r.pwrec",
            ],
            "--duration 10 with --play: the recording ends with the playbook",
        ),
        (
            &[
                "record",
                "--play",
                "cache-reread",
                "--listen",
                "127.0.0.1:1",
                "r.pwrec",
            ],
            "--listen 127.0.0.1:1 with --play",
        ),
        // --fio-dir and --scale belong to --play.
        (
            &["record", "--fio-dir", "/var/tmp", "r.pwrec"],
            "--play <NAME|FILE>",
        ),
    ];
    for (args, says) in cases {
        let (code, out, err) = run_in(dir.path(), args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        untouched(dir.path(), &[]);
    }
}

/// `record --play`: the playbook runs while recording, its table is printed, and the report of
/// the recording shows both read phases.
#[test]
fn record_play_records_the_playbook_and_the_report_shows_its_phases() {
    if !is_root() {
        eprintln!("skipped: cache-reread drops caches, which needs root");
        return;
    }
    if let Err(e) = pagewatch::jobs::fio::find_fio() {
        eprintln!("skipped: {e}");
        return;
    }
    let _s = serial();
    // On a real disk, not a possible tmpfs /tmp: the first read must come from the disk.
    let dir = tempfile::Builder::new()
        .prefix("pagewatch-play-test")
        .tempdir_in("/var/tmp")
        .unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, table, err) = run_in(
        dir.path(),
        &[
            "record",
            "--play",
            "cache-reread",
            "--scale",
            "0.05",
            "--fio-dir",
            d,
            "r.pwrec",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("wrote") && err.contains("r.pwrec"), "{err}");
    for phase in ["layout", "first read", "second read"] {
        assert!(
            table.lines().any(|l| l.starts_with(phase)),
            "{phase}: {table}"
        );
    }
    // The one pipeline's gate decides what a playbook's recording carries, as it does for
    // `record`'s: the reads keep the disk busy, so the process walk is in it.
    let rec = pagewatch::record::read(&dir.path().join("r.pwrec")).unwrap();
    let walked = rec
        .samples
        .iter()
        .filter(|s| s.files.contains_key(pagewatch::sample::names::PROCS))
        .count();
    assert!(
        walked > 0,
        "no process walk in {} samples",
        rec.samples.len()
    );
    let (code, _, err) = run_in(dir.path(), &["report", "r.pwrec", "-o", "rep"]);
    assert_eq!(code, Some(0), "{err}");
    let report = std::fs::read_to_string(dir.path().join("rep/report.md")).unwrap();
    let phases = &report[report.find("## Phases").expect("a Phases section")..];
    for phase in ["first read", "second read"] {
        assert!(
            phases.lines().any(|l| l.starts_with(phase)),
            "{phase}: {phases}"
        );
    }
    // The fio files are gone with the run.
    let fio_files: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    assert!(fio_files.is_empty(), "{fio_files:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Tests that run playbooks take this in turn: one playbook at a time per machine, and the
/// sysctl tests restore what they change.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[path = "common/sysctl.rs"]
mod sysctl;

use sysctl::{DirtyKnobs, is_root, vm as sysctl};

fn book(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("book.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !f() {
        assert!(
            std::time::Instant::now() < end,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn sigkill_in_a_tuned_playbook_restores_dirty_bytes() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let _s = serial();
    let before = DirtyKnobs::take();
    let dir = tempfile::tempdir().unwrap();
    let p = book(
        dir.path(),
        "name = \"t\"\ndescription = \"d\"\n[[step]]\nphase = \"tuned\"\n[[step]]\n\
         tune = \"vm.dirty_bytes\"\nvalue = \"15M\"\n[[step]]\nwait = \"60s\"\n",
    );
    let mut child = Command::new(EXE)
        .arg("play")
        .arg(&p)
        .args(["--fio-dir", "/var/tmp"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("dirty_bytes 15M", 20, || {
        sysctl("dirty_bytes") == "15728640"
    });
    child.kill().unwrap();
    child.wait().unwrap();
    wait_for("the guard to restore", 10, || before.restored());
}

#[test]
fn a_second_playbook_refuses_to_run_beside_the_first() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let p = book(
        dir.path(),
        "name = \"t\"\ndescription = \"d\"\n[[step]]\nphase = \"idle\"\n[[step]]\nwait = \"3s\"\n",
    );
    let first = Command::new(EXE)
        .arg("play")
        .arg(&p)
        .args(["--fio-dir", "/var/tmp"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    let second = Command::new(EXE)
        .arg("play")
        .arg(&p)
        .args(["--fio-dir", "/var/tmp"])
        .output()
        .unwrap();
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("another playbook is running"), "{err}");
    let out = first.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("idle"), "{table}");
}

#[test]
fn a_bad_playbook_file_names_its_line_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = book(
        dir.path(),
        "name = \"t\"\ndescription = \"d\"\n[[step]]\ntune = \"kernel.panic\"\nvalue = \"1\"\n",
    );
    let out = Command::new(EXE).arg("play").arg(&p).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3:") && err.contains("may not be tuned"),
        "{err}"
    );
}
