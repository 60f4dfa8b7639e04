//! `pagewatch __guard --tracefs-instance DIR`: removes pagewatch's tracefs instance if
//! pagewatch ends without doing so itself (SIGKILL, `process::exit`, a crash), so the
//! `balance_dirty_pages` event never stays enabled behind it.
//!
//! Owns: the guard's body (`run`); starting it is `trace_instance::start_guard`, called when
//! an instance is created. Must not touch: any instance but `instances/pagewatch-<its parent's pid>[-<name>]` (checked
//! before waiting), the event anywhere else. Like the fio file guard (`jobs/fio/dir.rs`) it
//! waits for the end of a pipe only pagewatch holds, in its own process group so a Ctrl-C at
//! the terminal does not stop it first.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// Seconds (beyond `remove_instance`'s own retries) the guard keeps trying a busy instance.
const GIVE_UP_S: u32 = 60;

/// The guard: checks `instance` is `instances/pagewatch-<parent pid>`, waits until the parent
/// closes the pipe on stdin (it exits, however it ends), then finds the instance (under a
/// detached tracefs mount, its path went with pagewatch: `trace_instance::locate`), disables
/// the event in it and removes it (`source::trace_instance::remove_instance`, which also
/// checks it is on tracefs).
pub fn run(instance: &Path) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    for sig in [SIGHUP, SIGINT, SIGQUIT, SIGTERM] {
        signal_hook::flag::register(sig, std::sync::Arc::default())?;
    }
    let parent = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get());
    let expected: Option<i32> = std::env::var(crate::child::PARENT_ENV)
        .ok()
        .and_then(|e| e.parse().ok());
    if !parent_checks_out(expected, parent, |pid| {
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat"))
            .is_ok_and(|stat| running(&stat))
    }) {
        bail!("__guard --tracefs-instance is for pagewatch's own use");
    }
    let parent = expected.unwrap_or(parent);
    if !instance_of(instance, parent) {
        bail!(
            "{} is not pagewatch-{parent}'s tracefs instance",
            instance.display()
        );
    }
    crate::child::wait_for_close(std::io::stdin().lock());
    // Where it is now: under a detached tracefs mount (`trace_instance::detached`), the path
    // pagewatch gave went with pagewatch, and this guard finds the same instance through a
    // mount of its own.
    let Some(instance) = super::trace_instance::locate(instance) else {
        bail!("tracefs is gone: cannot remove {}", instance.display());
    };
    let instance = instance.as_path();
    // The dead pagewatch's readers close only when its last thread has exited: one stuck in
    // D state under a write flood keeps the instance busy past `remove_instance`'s own two
    // seconds of retries (seen once in tests/below_guard.rs on a loaded host), so the guard
    // tries again for up to `GIVE_UP_S`.
    let mut tries = 0;
    loop {
        match crate::source::remove_trace_instance(instance) {
            Ok(()) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < GIVE_UP_S => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
            Err(e) => {
                return Err(e).with_context(|| format!("removing {}", instance.display()));
            }
        }
    }
}

/// Whether the guard was started by the pagewatch it names (`expected`, from the
/// environment): its parent now, or a pagewatch that already died (`alive` false). A
/// pagewatch SIGKILLed right after arming can be gone before its new guard gets here; the
/// guard is then reparented, and it must still remove the dead one's instance (seen in CI:
/// an instance left for good when the kill came within milliseconds of arming).
fn parent_checks_out(expected: Option<i32>, parent: i32, alive: impl Fn(i32) -> bool) -> bool {
    match expected {
        Some(e) if e > 0 => e == parent || !alive(e),
        _ => false,
    }
}

/// Whether a process whose `/proc/PID/stat` reads `stat` is still running: not a zombie (`Z`)
/// or dead (`X`). A SIGKILLed pagewatch is a zombie until its parent reaps it, and its
/// guard, reparented meanwhile, must take it for gone (CI once saw a `-below` instance left
/// behind, no guard running, when `tests/below_guard.rs` killed pagewatch within milliseconds
/// of arming: the guard had checked while pagewatch was a zombie and refused).
fn running(stat: &str) -> bool {
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    !matches!(state, Some("Z" | "X" | "x") | None)
}

/// Whether `dir` is named `instances/pagewatch-<pid>` or `instances/pagewatch-<pid>-<name>`.
fn instance_of(dir: &Path, pid: i32) -> bool {
    let name_ok = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(super::trace_instance::owner_pid)
        .is_some_and(|p| i64::from(p) == i64::from(pid));
    let parent_ok = dir
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "instances");
    name_ok && parent_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_parents_instance_is_still_removed() {
        assert!(parent_checks_out(Some(42), 42, |_| true));
        assert!(
            parent_checks_out(Some(42), 1, |_| false),
            "reparented: the pagewatch it names is gone"
        );
        assert!(
            !parent_checks_out(Some(42), 1, |_| true),
            "started by hand naming a live pagewatch"
        );
        assert!(!parent_checks_out(None, 42, |_| false));
        assert!(!parent_checks_out(Some(0), 0, |_| false));
    }

    #[test]
    fn a_zombie_parent_counts_as_gone() {
        assert!(running("42 (pagewatch) S 1 42 42 0 -1"));
        assert!(running("42 (a) b) R 1"), "a comm with a parenthesis");
        assert!(!running("42 (pagewatch) Z 1 42 42 0 -1"));
        assert!(!running("42 (pagewatch) X 1"));
        assert!(!running(""));
        // A real zombie: a child that exited and is not reaped yet.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let stat = Path::new("/proc").join(child.id().to_string()).join("stat");
        let zombie = (0..500).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            std::fs::read_to_string(&stat).is_ok_and(|s| !running(&s))
        });
        child.wait().unwrap();
        assert!(zombie, "an exited, unreaped child reads as not running");
    }

    #[test]
    fn only_the_parents_instance() {
        let p = Path::new("/sys/kernel/tracing/instances/pagewatch-42");
        assert!(instance_of(p, 42));
        assert!(!instance_of(p, 43));
        let named = Path::new("/sys/kernel/tracing/instances/pagewatch-42-blk");
        assert!(instance_of(named, 42));
        assert!(!instance_of(named, 4));
        assert!(!instance_of(
            Path::new("/sys/kernel/tracing/pagewatch-42"),
            42
        ));
        assert!(!instance_of(
            Path::new("/sys/kernel/tracing/instances/pagewatch-420"),
            42
        ));
    }
}
