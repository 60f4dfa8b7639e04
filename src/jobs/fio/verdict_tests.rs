//! Tests of the verdict on a run, from real fio 3.33 output (`tests/fixtures/fio/`): a job
//! error (O_DIRECT with bs=1000: EINVAL, exit 1), a normal run, and the exit/stop/kill cases.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use super::super::child::{Outcome, read_stdout};
use super::*;
use crate::jobs::fio::update::FioUpdate;

const EINVAL_OUT: &str = include_str!("../../../tests/fixtures/fio/direct-einval-3.33.stdout");
const EINVAL_ERR: &str = include_str!("../../../tests/fixtures/fio/direct-einval-3.33.stderr");
const RANDREAD: &str = include_str!("../../../tests/fixtures/fio/randread-8k-3.33.jsonplus");

fn outcome(stdout: &str, stderr: &str, status: ExitStatus) -> Outcome {
    let (last, messages) = read_stdout(stdout.as_bytes(), &mut |_| {}, &|_| {});
    Outcome {
        status,
        last,
        messages,
        stderr: stderr.lines().map(String::from).collect(),
    }
}

fn exited(code: i32) -> ExitStatus {
    ExitStatus::from_raw(code << 8)
}

#[test]
fn a_job_error_is_a_failure_with_fios_words() {
    let out = outcome(EINVAL_OUT, EINVAL_ERR, exited(1));
    let FioUpdate::Failed {
        reason,
        stderr_tail,
        summary,
    } = verdict("randread", &out, false, false)
    else {
        panic!()
    };
    assert!(
        reason.contains("failed with error 22 (Invalid argument") && reason.contains("err=22"),
        "{reason}"
    );
    assert!(stderr_tail.contains("io_u error on file"), "{stderr_tail}");
    assert!(summary.unwrap().error.unwrap().contains("error 22"));
}

#[test]
fn aborting_with_exit_zero_is_a_failure() {
    // fio's answer to a mounted block device: exit 0, error 0, no IO, and this line.
    let line = "fio: /dev/loop0 appears mounted, and 'allow_mounted_write' isn't set. Aborting.";
    let out = outcome(RANDREAD, line, exited(0));
    let FioUpdate::Failed { reason, .. } = verdict("randread", &out, false, false) else {
        panic!()
    };
    assert_eq!(reason, line);
}

#[test]
fn a_clean_run_finishes() {
    let out = outcome(RANDREAD, "", exited(0));
    let FioUpdate::Finished { summary, exit, .. } = verdict("randread", &out, false, false) else {
        panic!()
    };
    assert_eq!(exit, 0);
    assert_eq!(summary.read.ios, 686_724);
    assert!(!summary.partial);
}

#[test]
fn a_stop_gives_fios_final_result() {
    let out = outcome(
        &format!("fio: terminating on signal 2\n{RANDREAD}"),
        "",
        exited(128),
    );
    let FioUpdate::Finished { summary, exit, .. } = verdict("randread", &out, true, false) else {
        panic!()
    };
    assert_eq!(exit, 128);
    assert!(!summary.partial);
}

#[test]
fn a_kill_after_a_stop_keeps_the_last_figures_as_partial() {
    let cut = RANDREAD.rfind("\n{\n").unwrap();
    let out = outcome(&RANDREAD[..cut + 200], "", ExitStatus::from_raw(9));
    let FioUpdate::Finished { summary, exit, .. } = verdict("randread", &out, true, true) else {
        panic!()
    };
    assert_eq!(exit, 137);
    assert!(summary.partial);
    assert_eq!(
        summary.read.ios, 678_897,
        "the third (last complete) status"
    );
}

#[test]
fn a_kill_nobody_asked_for_is_a_failure_with_figures() {
    let out = outcome(RANDREAD, "", exited(137));
    let FioUpdate::Failed {
        reason, summary, ..
    } = verdict("randread", &out, false, false)
    else {
        panic!()
    };
    assert!(reason.contains("killed"), "{reason}");
    assert!(summary.unwrap().partial);
}

#[test]
fn no_output_says_so() {
    let out = outcome(
        "fio: refusing extend of file due to read-only\n",
        "",
        exited(1),
    );
    let FioUpdate::Failed {
        reason, summary, ..
    } = verdict("randread", &out, false, false)
    else {
        panic!()
    };
    assert!(
        reason.contains("code 1") && reason.contains("refusing extend"),
        "{reason}"
    );
    assert!(summary.is_none());
    let out = outcome("", "", exited(0));
    let FioUpdate::Failed { reason, .. } = verdict("randread", &out, false, false) else {
        panic!()
    };
    assert!(reason.contains("printed no result"), "{reason}");
}
