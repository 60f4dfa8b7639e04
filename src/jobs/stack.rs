//! A task's kernel stack on demand (`/proc/PID/stack`): where a D-state task waits.
//!
//! Owns: that one read. Must not touch: app state. Root only (the kernel refuses others, or
//! shows zeros for addresses); read once per key press, never per tick.

/// The kernel stack of `pid` as the kernel prints it, or a one-line reason it is not there.
#[must_use]
pub fn read(pid: u32) -> String {
    let path = format!("/proc/{pid}/stack");
    match std::fs::read_to_string(&path) {
        Ok(t) if t.trim().is_empty() => format!("{path}: empty (the task is running, not waiting)"),
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            format!("{path}: no permission (root only)")
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => format!("pid {pid} has exited"),
        Err(e) => format!("{path}: {e}"),
    }
}
