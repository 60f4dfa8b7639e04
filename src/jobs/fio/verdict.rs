//! The verdict on a finished fio run: finished, stopped, killed (partial) or failed, and why.
//!
//! fio exits 0, 1 or 128 (after SIGINT/SIGTERM), but a run can fail with exit 0: a mounted
//! device prints "Aborting", and I/O errors show as `jobs[].error`. Owns: reading those signs.
//! Must not touch: processes (it only reads an `Outcome`).

use super::child::Outcome;
use super::live::{errno_text, summary};
use super::update::FioUpdate;
use crate::event::FioSummary;

/// How a run ended, from what fio printed and its exit status. `stopping`: pagewatch asked it
/// to stop; `killed`: pagewatch had it SIGKILLed.
pub(crate) fn verdict(name: &str, out: &Outcome, stopping: bool, killed: bool) -> FioUpdate {
    let code = exit_code(out);
    // fio itself exits 0, 1 or 128; more means it (or the guard) died of a signal.
    let partial = code > 128 || killed;
    let sum = out.last.as_ref().map(|last| summary(name, last, partial));
    if let Some(why) = problem(out) {
        return failed(why, &out.stderr, sum);
    }
    match sum {
        None => failed(
            format!("fio exited with code {code} and printed no result"),
            &out.stderr,
            None,
        ),
        Some(s) if partial && !stopping => failed(
            format!("fio was killed (exit {code}); the figures are the last periodic ones"),
            &out.stderr,
            Some(s),
        ),
        Some(summary) => FioUpdate::Finished {
            summary,
            exit: code,
            stderr_tail: out.stderr.join("\n"),
        },
    }
}

fn exit_code(out: &Outcome) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    out.status
        .code()
        .unwrap_or_else(|| 128 + out.status.signal().unwrap_or(0))
}

/// fio's own complaint, if it made one: a job error, an "Aborting" line, or exit code 1.
pub(crate) fn problem(out: &Outcome) -> Option<String> {
    let lines = || out.messages.iter().chain(&out.stderr);
    if let Some(e) = out
        .last
        .as_ref()
        .and_then(|l| l.jobs.iter().find(|j| j.error != 0))
    {
        let said: Vec<&str> = lines()
            .filter(|l| l.starts_with("fio:"))
            .take(3)
            .map(String::as_str)
            .collect();
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {}", said.join("; "))
        };
        return Some(format!(
            "fio job {} failed with error {} ({}){said}",
            e.name,
            e.error,
            errno_text(e.error)
        ));
    }
    if let Some(line) = lines().find(|l| l.contains("Aborting")) {
        return Some(line.clone());
    }
    let code = exit_code(out);
    if code != 0 && code != 128 && code <= 128 {
        let said: Vec<&str> = lines()
            .filter(|l| l.starts_with("fio:") || l.contains("rror"))
            .map(String::as_str)
            .collect();
        let said = if said.is_empty() {
            out.stderr
                .last()
                .map_or("no message", String::as_str)
                .to_string()
        } else {
            said.join("; ")
        };
        return Some(format!("fio exited with code {code}: {said}"));
    }
    None
}

pub(crate) fn failed(reason: String, stderr: &[String], summary: Option<FioSummary>) -> FioUpdate {
    FioUpdate::Failed {
        reason,
        stderr_tail: stderr.join("\n"),
        summary,
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
