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
