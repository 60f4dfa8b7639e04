//! `pagewatch __guard`: the guard children pagewatch starts so that nothing it started or
//! changed outlives it (fio's process group, the fio test files, the tracefs instance, tuned
//! settings).
//!
//! Owns: which guard runs. Must not touch: what each guard does (`jobs::guard`,
//! `jobs::fio::dir`, `source::trace_guard`, `jobs::tuner`).

use anyhow::Result;

/// Runs the guard `args` names; exits the process with the program's status.
pub fn run(args: &crate::cli::GuardArgs) -> Result<()> {
    // Not `pagewatch`: `killall pagewatch` leaves the guards to do their work.
    let _ = std::fs::write("/proc/self/comm", crate::jobs::guard::NAME);
    if let Some(dir) = &args.clean_dir {
        return crate::jobs::fio::dir::run_cleanup_guard(dir);
    }
    if let Some(dir) = &args.tracefs_instance {
        return crate::source::trace_guard::run(dir);
    }
    if args.restore {
        return crate::jobs::tuner::run_restore_guard();
    }
    crate::jobs::guard::run(&args.argv)
}
