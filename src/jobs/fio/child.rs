//! One fio process under `pagewatch __guard`, in its own process group: spawning it, draining
//! both pipes (fio must never block on a full pipe), signalling the group, and collecting what
//! it printed.
//!
//! Owns: the process group id of the fio currently running for a job and the stop/kill state.
//! Must not touch: the verdict on the run (runner.rs), figures (live.rs).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context, Result};
use rustix::process::{Pid, Signal, kill_process, kill_process_group};

use super::status::FioStatus;
use super::stream::{Frame, Framer};
use crate::child::PARENT_ENV;

/// How many stderr lines are kept for error reports.
const STDERR_KEEP: usize = 40;

/// Stop/kill state shared by a job's controller thread and its handle.
#[derive(Debug, Default)]
pub(crate) struct Control {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    pgid: Option<i32>,
    stop: bool,
    killed: bool,
    done: bool,
}

impl Control {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The running fio's process group (the guard's pid).
    pub(crate) fn pgid(&self) -> Option<i32> {
        self.lock().pgid
    }

    /// True once stop or kill was asked.
    pub(crate) fn stopping(&self) -> bool {
        self.lock().stop
    }

    /// True once the group was sent SIGKILL by pagewatch.
    pub(crate) fn killed(&self) -> bool {
        self.lock().killed
    }

    /// True once the job's thread finished.
    pub(crate) fn is_done(&self) -> bool {
        self.lock().done
    }

    /// Marks the job finished and wakes an escalation waiting on it.
    pub(crate) fn set_done(&self) {
        self.lock().done = true;
        self.changed.notify_all();
    }

    /// SIGINT to the group now; no new fio starts for this job.
    pub(crate) fn interrupt(&self) {
        let mut s = self.lock();
        s.stop = true;
        signal(s.pgid, Signal::INT);
    }

    /// Asks the guard to SIGKILL fio and all its workers (fio's workers leave the process
    /// group, so only the guard can find them all); no new fio starts for this job.
    pub(crate) fn terminate(&self) {
        let mut s = self.lock();
        s.stop = true;
        if let Some(pid) = s.pgid.and_then(Pid::from_raw) {
            s.killed = true;
            let _ = kill_process(pid, Signal::TERM);
        }
    }

    /// Last resort when the guard did not act: SIGKILL to the whole group.
    pub(crate) fn kill_group(&self) {
        let s = self.lock();
        signal(s.pgid, Signal::KILL);
    }

    /// Waits up to `limit` for the job to finish; true if it did.
    pub(crate) fn wait_done(&self, limit: Duration) -> bool {
        let s = self.lock();
        let (s, _) = self
            .changed
            .wait_timeout_while(s, limit, |s| !s.done)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        s.done
    }
}

fn signal(pgid: Option<i32>, sig: Signal) {
    if let Some(pid) = pgid.and_then(Pid::from_raw) {
        // ESRCH (already gone) is fine.
        let _ = kill_process_group(pid, sig);
    }
}

/// What one fio run left behind.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The guard's exit status (fio's code, or 128+N for a signal).
    pub status: ExitStatus,
    /// The last status document that parsed.
    pub last: Option<FioStatus>,
    /// stdout lines outside documents (fio's messages) and parse problems.
    pub messages: Vec<String>,
    /// The last stderr lines.
    pub stderr: Vec<String>,
}

/// Runs `fio_argv` under the guard (`exe __guard -- fio_argv...`) in a new process group,
/// calling `on_status` for each parsed status and `on_message` for each other line.
pub(crate) fn run(
    exe: &Path,
    fio_argv: &[String],
    control: &Control,
    on_started: &dyn Fn(u32),
    on_status: &mut dyn FnMut(&FioStatus),
    on_message: &(dyn Fn(&str) + Sync),
) -> Result<Outcome> {
    let mut cmd = Command::new(exe);
    cmd.arg("__guard")
        .arg("--")
        .args(fio_argv)
        .env(PARENT_ENV, std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = {
        let mut s = control.lock();
        if s.stop {
            anyhow::bail!("stopped before fio started");
        }
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {} __guard", exe.display()))?;
        s.pgid = i32::try_from(child.id()).ok();
        child
    };
    on_started(child.id());
    let stdout = child.stdout.take().context("fio stdout")?;
    let stderr = child.stderr.take().context("fio stderr")?;
    let (last, messages, stderr) = std::thread::scope(|scope| {
        let errs = scope.spawn(move || drain_stderr(stderr, on_message));
        let (last, messages) = read_stdout(stdout, on_status, on_message);
        (last, messages, errs.join().unwrap_or_default())
    });
    let status = child.wait().context("waiting for fio")?;
    control.lock().pgid = None;
    Ok(Outcome {
        status,
        last,
        messages,
        stderr,
    })
}

pub(crate) fn read_stdout(
    out: impl Read,
    on_status: &mut dyn FnMut(&FioStatus),
    on_message: &dyn Fn(&str),
) -> (Option<FioStatus>, Vec<String>) {
    let mut framer = Framer::new();
    let (mut last, mut messages) = (None, Vec::new());
    let mut reader = BufReader::new(out);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let eof = !matches!(reader.read_until(b'\n', &mut buf), Ok(n) if n > 0);
        let frame = if eof {
            framer.finish()
        } else {
            framer.push(&String::from_utf8_lossy(&buf))
        };
        match frame {
            Some(Frame::Doc(text)) => match FioStatus::parse(&text) {
                Ok(status) => {
                    on_status(&status);
                    last = Some(status);
                }
                Err(e) => {
                    on_message(&e);
                    messages.push(e);
                }
            },
            Some(Frame::Message(m)) => {
                on_message(&m);
                messages.push(m);
            }
            None => {}
        }
        if eof {
            return (last, messages);
        }
    }
}

fn drain_stderr(err: impl Read, on_message: &dyn Fn(&str)) -> Vec<String> {
    let mut tail = VecDeque::with_capacity(STDERR_KEEP);
    for line in BufReader::new(err).split(b'\n') {
        let Ok(line) = line else { break };
        let line = String::from_utf8_lossy(&line).trim_end().to_string();
        if line.is_empty() {
            continue;
        }
        on_message(&line);
        if tail.len() == STDERR_KEEP {
            tail.pop_front();
        }
        tail.push_back(line);
    }
    tail.into()
}

/// fio's path from `$PATH`, or an error that says how to install it.
pub fn find_fio() -> Result<PathBuf> {
    find_fio_in(std::env::var_os("PATH").as_deref())
}

/// fio's path from a `PATH`-style list of directories.
pub fn find_fio_in(path_var: Option<&std::ffi::OsStr>) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path_var
        .into_iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("fio"))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        .context("fio is not installed (not found in PATH). Install it with `apt-get install fio` (Debian, Ubuntu) or `dnf install fio` (Fedora, RHEL)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn missing_fio_says_how_to_install_it() {
        let tmp = tempfile::tempdir().unwrap();
        for path in [None, Some(OsStr::new("")), Some(tmp.path().as_os_str())] {
            let e = find_fio_in(path).unwrap_err().to_string();
            assert!(
                e.contains("apt-get install fio") && e.contains("dnf install fio"),
                "{e}"
            );
        }
    }

    #[test]
    fn finds_an_executable_fio_only() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let fake = tmp.path().join("fio");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        assert!(
            find_fio_in(Some(tmp.path().as_os_str())).is_err(),
            "not executable"
        );
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_fio_in(Some(tmp.path().as_os_str())).unwrap(), fake);
    }
}
