//! A memory cgroup of a set size for an eater (the compressed-swap live tests,
//! `stalls_live.rs` and `zswap_live.rs`), and whether the swap tools are here. Include it as
//! `#[path = "common/memcg.rs"] mod memcg;`.

#![allow(clippy::unwrap_used, dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// A memory cgroup named `name` of `limit` bytes: v1 below this process's own memory group,
/// or v2 at the root of the unified mount; `None` when neither can be made. The caller
/// removes it (`std::fs::remove_dir`) once its tasks are gone.
pub fn memory_group(name: &str, limit: u64) -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let v1 = own
        .lines()
        .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_owned()));
    let candidates = [
        v1.map(|p| {
            (
                format!("/sys/fs/cgroup/memory{p}/{name}"),
                "memory.limit_in_bytes",
            )
        }),
        Some((format!("/sys/fs/cgroup/{name}"), "memory.max")),
    ];
    for (dir, file) in candidates.into_iter().flatten() {
        let dir = PathBuf::from(dir);
        if std::fs::create_dir(&dir).is_err() {
            continue;
        }
        if std::fs::write(dir.join(file), limit.to_string()).is_ok() {
            return Some(dir);
        }
        let _ = std::fs::remove_dir(&dir);
    }
    None
}

/// mkswap, swapon and swapoff all run.
pub fn have_swap_tools() -> bool {
    ["mkswap", "swapon", "swapoff"].iter().all(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// `pagewatch eat SIZE` started in `group` (stdin and stdout piped: it prints `"holding"` once
/// it holds all it asked for, and lets go when stdin closes or it is killed).
pub fn eater_in(group: &std::path::Path, size: &str) -> std::process::Child {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {} && exec {} eat {size} --no-config",
            group.join("cgroup.procs").display(),
            env!("CARGO_BIN_EXE_pagewatch")
        ))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}
