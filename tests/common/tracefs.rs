//! What the tracer tests check in tracefs: pagewatch's instance of a pid, that it goes away,
//! and that the top-level `enable` of the events it uses is never touched.

#![allow(clippy::unwrap_used, dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const TRACEFS: &str = "/sys/kernel/tracing";

/// `instances/pagewatch-<pid><name>` (`name`: empty, or `-sync`, `-blk`, `-below`).
pub fn instance(pid: u32, name: &str) -> PathBuf {
    Path::new(TRACEFS)
        .join("instances")
        .join(format!("pagewatch-{pid}{name}"))
}

/// The top-level `events/<event>/enable` of each event (`subsystem/event`, or `subsystem` for
/// the subsystem's own `enable`).
pub fn top_level_enables(events: &[&str]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let p = Path::new(TRACEFS).join("events").join(e).join("enable");
            std::fs::read_to_string(&p).unwrap_or_else(|err| panic!("{}: {err}", p.display()))
        })
        .collect()
}

/// Waits up to `secs` for `path` to disappear.
pub fn gone_within(path: &Path, secs: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while path.exists() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}
