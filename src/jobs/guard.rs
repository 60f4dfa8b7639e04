//! `pagewatch __guard -- PROGRAM ARGS...`: runs a program (fio) so that it cannot outlive
//! pagewatch, without `pre_exec` (unsafe) in pagewatch itself.
//!
//! pagewatch starts the guard as the leader of a new process group, and the guard starts the
//! program in that same group. The guard asks the kernel for SIGTERM when its parent dies
//! (PDEATHSIG), checks the parent is still the pagewatch named in `PAGEWATCH_PARENT_PID`, and
//! becomes a child subreaper. fio's workers call `setsid()` (they leave the group), so on SIGTERM
//! or SIGHUP the guard SIGKILLs every descendant it finds in /proc (orphaned workers are
//! reparented to it, so none escapes), then its own group when it leads it, and exits 137. It does the same to leftovers when the
//! program exits. It catches SIGINT without acting on it, so pagewatch's `killpg(SIGINT)` stops
//! fio (whose main process stops its workers) while the guard stays to report fio's exit status
//! (its own exit code; 128+N when fio died of signal N).
//! `pagewatch __guard --clean-dir DIR` is the other guard: it outlives a SIGKILLed pagewatch
//! to remove the fio test files left in its private directory (`fio/dir.rs`), and
//! `pagewatch __guard --tracefs-instance DIR` the one that removes its tracefs instance
//! (`source/trace_guard.rs`), and `pagewatch __guard --restore` the one that puts tuned kernel
//! settings back (`tuner.rs`). Every guard names itself `pagewatch-guard` (`NAME`), so
//! `killall pagewatch` does not take the guards down with pagewatch.
//! Owns: that protocol. Must not touch: the program's output (inherited as is).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};
use rustix::process::{
    Pid, Signal, getpgrp, getpid, getppid, kill_process, kill_process_group, set_child_subreaper,
    set_parent_process_death_signal,
};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

pub use crate::child::PARENT_ENV;

/// The guards' process name (`/proc/PID/comm`): not `pagewatch`, so `killall pagewatch`
/// leaves them to do their work (as the eater is `pagewatch-eat`).
pub const NAME: &str = "pagewatch-guard";

/// Runs the guard; exits the process with the program's status.
pub fn run(argv: &[String]) -> Result<()> {
    let (program, rest) = argv
        .split_first()
        .context("__guard needs a program to run")?;
    // A handler, not SIG_IGN: exec resets handlers, so the program gets SIGINT's default back.
    signal_hook::flag::register(SIGINT, Arc::new(AtomicBool::new(false)))?;
    let mut deadly = Signals::new([SIGTERM, SIGHUP])?;
    set_parent_process_death_signal(Some(Signal::TERM))
        .context("setting the parent-death signal")?;
    let expected: i32 = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("__guard is for pagewatch's own use ({PARENT_ENV} is not set)"))?;
    let parent = getppid().map_or(0, |p| p.as_raw_nonzero().get());
    if parent != expected {
        bail!(
            "pagewatch (pid {expected}) is gone (parent is now {parent}): not starting {program}"
        );
    }
    set_child_subreaper(Some(getpid())).context("becoming a child subreaper")?;
    std::thread::spawn(move || {
        if deadly.forever().next().is_some() {
            // pagewatch died or asked: take the program, its workers and this guard down.
            kill_descendants();
            // Only our own group: a guard started without process_group(0) shares its caller's.
            if getpgrp() == getpid() {
                let _ = kill_process_group(getpgrp(), Signal::KILL);
            }
            std::process::exit(128 + 9);
        }
    });
    let status = Command::new(program)
        .args(rest)
        .env_remove(PARENT_ENV)
        .status()
        .with_context(|| format!("starting {program}"))?;
    let code = status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + status.signal().unwrap_or(0)
    });
    kill_descendants();
    std::process::exit(code)
}

/// SIGKILLs every live descendant of this process, again until none is left (a worker killed
/// mid-fork, or orphans reparented here). Bounded: gives up after about a second.
fn kill_descendants() {
    let me = getpid().as_raw_nonzero().get();
    for _ in 0..100 {
        let found = descendants(me);
        if found.is_empty() {
            return;
        }
        for pid in found.into_iter().filter_map(Pid::from_raw) {
            let _ = kill_process(pid, Signal::KILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Live (not zombie) descendants of `root`, from /proc/*/stat.
fn descendants(root: i32) -> Vec<i32> {
    use procfs_core::FromRead;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(i32, i32)> = entries
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .parse::<i32>()
                .ok()
                .map(|pid| (pid, e.path()))
        })
        .filter_map(|(pid, path)| {
            let st = procfs_core::process::Stat::from_file(path.join("stat")).ok()?;
            (st.state != 'Z' && st.state != 'X').then_some((pid, st.ppid))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() && found.len() <= parents.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}
