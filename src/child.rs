//! What pagewatch's guard children and pagewatch agree on: the variable that carries
//! pagewatch's pid to a child (`__guard`, the eater), so the child can check it was started by
//! the pagewatch it belongs to (and was not orphaned before its parent-death signal took
//! effect).
//!
//! Owns: `PARENT_ENV`. Sits below `source` and `jobs`, which both start guards (the tracefs
//! instance's, fio's). Must not touch: processes.

/// The environment variable carrying pagewatch's pid to the guard.
pub const PARENT_ENV: &str = "PAGEWATCH_PARENT_PID";
