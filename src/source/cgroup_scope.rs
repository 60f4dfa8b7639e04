//! The processes of one cgroup v2 group and its descendants, for a scoped process walk
//! (spec §11: scope the walk to the selected cgroup's `cgroup.procs`).
//!
//! Owns: finding the cgroup2 mount (`PROC/self/mountinfo`) and reading `cgroup.procs` down
//! the group's tree. Must not touch: the per-process files (`source::procs`).

use std::path::{Path, PathBuf};

/// Appends the pids of group `cgroup` (a path relative to the cgroup2 mount, `/a/b`) and of
/// every group below it; the error says why the scope could not be listed.
pub fn list(proc_root: &Path, cgroup: &str, pids: &mut Vec<u32>) -> Result<(), String> {
    let mount = cgroup2_mount(proc_root)?;
    let rel = cgroup.trim_start_matches('/');
    if rel.split('/').any(|c| c == "..") {
        return Err(format!("cgroup {cgroup}: '..' is not a group"));
    }
    let top = mount.join(rel);
    if !top.is_dir() {
        return Err(format!(
            "cgroup {cgroup}: no such group under {}",
            mount.display()
        ));
    }
    each_group(&top, |_, procs| {
        pids.extend(procs.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
        false
    });
    Ok(())
}

/// Visits `top` and every group below it, parents first, with each one's `cgroup.procs`
/// text (a group whose file cannot be read is passed over), until `f` says stop (`true`);
/// the group `f` stopped at, or `None`.
pub(super) fn each_group(top: &Path, mut f: impl FnMut(&Path, &str) -> bool) -> Option<PathBuf> {
    let mut todo = vec![top.to_path_buf()];
    while let Some(dir) = todo.pop() {
        if let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs"))
            && f(&dir, &text)
        {
            return Some(dir);
        }
        if let Ok(entries) = std::fs::read_dir(&dir) {
            todo.extend(
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
        }
    }
    None
}

/// Where cgroup2 is mounted, from `PROC/self/mountinfo` (the first cgroup2 mount).
fn cgroup2_mount(proc_root: &Path) -> Result<PathBuf, String> {
    let path = proc_root.join("self/mountinfo");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    super::mountinfo::first_of(&text, "cgroup2")
        .ok_or_else(|| "no cgroup2 mount in /proc/self/mountinfo".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_a_group_and_its_descendants() {
        let dir = tempfile::tempdir().unwrap();
        let cg = dir.path().join("cg");
        std::fs::create_dir_all(cg.join("box/inner")).unwrap();
        std::fs::create_dir_all(cg.join("other")).unwrap();
        std::fs::write(cg.join("box/cgroup.procs"), "10\n11\n").unwrap();
        std::fs::write(cg.join("box/inner/cgroup.procs"), "12\n").unwrap();
        std::fs::write(cg.join("other/cgroup.procs"), "99\n").unwrap();
        let proc = dir.path().join("proc");
        std::fs::create_dir_all(proc.join("self")).unwrap();
        std::fs::write(
            proc.join("self/mountinfo"),
            format!("35 26 0:30 / {} rw - cgroup2 cgroup2 rw\n", cg.display()),
        )
        .unwrap();
        let mut pids = Vec::new();
        list(&proc, "/box", &mut pids).unwrap();
        pids.sort_unstable();
        assert_eq!(pids, [10, 11, 12]);
        assert!(
            list(&proc, "/nope", &mut pids)
                .unwrap_err()
                .contains("no such group")
        );
        assert!(list(&proc, "/box/../other", &mut pids).is_err());
    }
}
