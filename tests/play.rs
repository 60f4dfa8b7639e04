//! Playbooks end to end through the binary: batch mode refuses jobs instead of ignoring them.
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
        assert!(!out.status.success(), "{args:?} exited 0");
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

/// Tests that run playbooks take this in turn: one playbook at a time per machine, and the
/// sysctl tests restore what they change.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn sysctl(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/vm/{name}"))
        .unwrap()
        .trim()
        .to_owned()
}

/// Puts the dirty thresholds back as they were, whatever the test did.
struct DirtyGuard {
    bytes: String,
    ratio: String,
}

impl DirtyGuard {
    fn take() -> Self {
        Self {
            bytes: sysctl("dirty_bytes"),
            ratio: sysctl("dirty_ratio"),
        }
    }
}

impl Drop for DirtyGuard {
    fn drop(&mut self) {
        let (file, v) = if self.bytes == "0" {
            ("dirty_ratio", &self.ratio)
        } else {
            ("dirty_bytes", &self.bytes)
        };
        let _ = std::fs::write(format!("/proc/sys/vm/{file}"), v);
    }
}

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
    let before = DirtyGuard::take();
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
    wait_for("the guard to restore", 10, || {
        sysctl("dirty_bytes") == before.bytes && sysctl("dirty_ratio") == before.ratio
    });
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
