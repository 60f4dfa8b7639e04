//! The parent side of a memory eater: starts `pagewatch eat SIZE`, follows its progress and
//! releases it.
//!
//! Owns: one eater child, the thread that reads its JSON lines (and reaps it), the thread that
//! keeps the tail of its stderr, and the release (close stdin + SIGTERM, SIGKILL after a grace
//! period). Reports through the `notify` callback only. Must not touch: the terminal, app state.
//!
//! Call `Eater::spawn` from a long-lived thread (the main thread): the child's PR_SET_PDEATHSIG
//! fires when the *thread* that spawned it exits, not the process. The child stays in
//! pagewatch's process group: it is a single process with no children of its own, and a Ctrl-C
//! at the terminal then reaches it too (it releases on SIGINT). Several eaters may run at once.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process, waitid};

use super::eat::PARENT_PID_ENV;
use super::eat_plan::{EatLine, EatState};

/// How long the eater gets to exit after SIGTERM before SIGKILL. Freeing many GiB takes time.
pub const GRACE: Duration = Duration::from_secs(10);
const STDERR_TAIL_LINES: usize = 20;

/// What an eater reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EatUpdate {
    /// A progress line from the child.
    Progress {
        /// Bytes touched and held.
        touched: u64,
        /// Bytes asked for.
        target: u64,
        /// The child's state.
        state: EatState,
        /// Why it aborted or was released.
        reason: Option<String>,
    },
    /// The child has exited and been reaped. Always the last update.
    Exited {
        /// Exit code, when it exited by itself.
        code: Option<i32>,
        /// The signal that killed it, if any.
        signal: Option<i32>,
        /// The last lines of its stderr.
        stderr_tail: String,
        /// In plain words: `released`, `refused: …`, `killed by signal 9`.
        reason: String,
    },
}

/// A running memory eater. Dropping it releases the memory.
pub struct Eater {
    pid: Pid,
    stdin: Mutex<Option<ChildStdin>>,
    /// True once the child has exited (its zombie may still exist). Held while signalling, so a
    /// reaped pid is never signalled.
    exited: Arc<Mutex<bool>>,
}

impl Eater {
    /// Starts `exe eat SIZE [--force]`. `notify` is called from the eater's reader thread.
    pub fn spawn(
        exe: &Path,
        size: &str,
        force: bool,
        notify: Arc<dyn Fn(EatUpdate) + Send + Sync>,
    ) -> anyhow::Result<Eater> {
        let mut cmd = Command::new(exe);
        cmd.arg("eat").arg(size);
        if force {
            cmd.arg("--force");
        }
        cmd.env(PARENT_PID_ENV, std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {} eat {size}", exe.display()))?;
        let pid = Pid::from_child(&child);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("eater stdout")?;
        let stderr = child.stderr.take().context("eater stderr")?;
        let exited = Arc::new(Mutex::new(false));

        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail_w = Arc::clone(&tail);
        let err_thread = std::thread::spawn(move || keep_tail(stderr, &tail_w));
        let exited_w = Arc::clone(&exited);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(l) = serde_json::from_str::<EatLine>(&line) {
                    notify(EatUpdate::Progress {
                        touched: l.touched,
                        target: l.target,
                        state: l.state,
                        reason: l.reason,
                    });
                }
            }
            // Wait for the exit without reaping, mark it under the lock, then reap: a release
            // racing with this never signals a pid that could have been reused.
            while waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            )
            .is_err_and(|e| e == rustix::io::Errno::INTR)
            {}
            *exited_w.lock().unwrap_or_else(PoisonError::into_inner) = true;
            let status = child.wait();
            let _ = err_thread.join();
            let tail: Vec<String> = tail
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .drain(..)
                .collect();
            notify(exited_update(status.ok(), tail.join("\n")));
        });
        Ok(Eater {
            pid,
            stdin: Mutex::new(stdin),
            exited,
        })
    }

    /// The child's pid.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.pid.as_raw_pid().unsigned_abs()
    }

    /// Releases the memory: closes stdin and sends SIGTERM now; a background thread sends
    /// SIGKILL if it is still alive after `GRACE`. Returns at once; calling it again is harmless.
    pub fn release(&self) {
        drop(
            self.stdin
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        signal_if_alive(&self.exited, self.pid, Signal::TERM);
        let (exited, pid) = (Arc::clone(&self.exited), self.pid);
        std::thread::spawn(move || {
            let step = Duration::from_millis(50);
            let mut waited = Duration::ZERO;
            while waited < GRACE {
                if *exited.lock().unwrap_or_else(PoisonError::into_inner) {
                    return;
                }
                std::thread::sleep(step);
                waited += step;
            }
            signal_if_alive(&exited, pid, Signal::KILL);
        });
    }
}

impl Drop for Eater {
    fn drop(&mut self) {
        self.release();
    }
}

fn signal_if_alive(exited: &Mutex<bool>, pid: Pid, sig: Signal) {
    let done = exited.lock().unwrap_or_else(PoisonError::into_inner);
    if !*done {
        let _ = kill_process(pid, sig);
    }
}

fn keep_tail(stderr: impl Read, tail: &Mutex<VecDeque<String>>) {
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        let mut t = tail.lock().unwrap_or_else(PoisonError::into_inner);
        if t.len() == STDERR_TAIL_LINES {
            t.pop_front();
        }
        t.push_back(line);
    }
}

/// Builds the final update from the exit status and the stderr tail.
fn exited_update(status: Option<ExitStatus>, stderr_tail: String) -> EatUpdate {
    use std::os::unix::process::ExitStatusExt;
    let code = status.and_then(|s| s.code());
    let signal = status.and_then(|s| s.signal());
    let last = stderr_tail.lines().last().unwrap_or("").trim();
    let last = last.strip_prefix("pagewatch eat: ").unwrap_or(last);
    let reason = match (code, signal) {
        (Some(0), _) => "released".to_owned(),
        (Some(c), _) if last.is_empty() => format!("failed with exit code {c}"),
        (Some(_), _) => format!("failed: {last}"),
        (None, Some(9)) => "killed by SIGKILL (the OOM killer, or no exit after SIGTERM)".into(),
        (None, Some(s)) => format!("killed by signal {s}"),
        (None, None) => "exit status unknown".to_owned(),
    };
    EatUpdate::Exited {
        code,
        signal,
        stderr_tail,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn exit_reasons() {
        let ok = exited_update(Some(ExitStatus::from_raw(0)), String::new());
        assert!(
            matches!(ok, EatUpdate::Exited { code: Some(0), ref reason, .. } if reason == "released")
        );
        let refused = exited_update(
            Some(ExitStatus::from_raw(1 << 8)),
            "pagewatch eat: refusing to eat 1G: MemAvailable is 2G".into(),
        );
        assert!(
            matches!(refused, EatUpdate::Exited { code: Some(1), ref reason, .. } if reason == "failed: refusing to eat 1G: MemAvailable is 2G"),
            "{refused:?}"
        );
        let killed = exited_update(Some(ExitStatus::from_raw(9)), String::new());
        assert!(matches!(
            killed,
            EatUpdate::Exited {
                code: None,
                signal: Some(9),
                ..
            }
        ));
    }
}
