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
    let mut todo = vec![top];
    while let Some(dir) = todo.pop() {
        if let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) {
            pids.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
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
    Ok(())
}

/// Where cgroup2 is mounted, from `PROC/self/mountinfo` (the first cgroup2 mount).
fn cgroup2_mount(proc_root: &Path) -> Result<PathBuf, String> {
    let path = proc_root.join("self/mountinfo");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    mount_of(&text).ok_or_else(|| "no cgroup2 mount in /proc/self/mountinfo".to_owned())
}

/// The mount point of the first `cgroup2` line of a mountinfo text (proc(5): fields 5 and,
/// after the ` - ` separator, the type; spaces in paths are written `\040`).
fn mount_of(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        (right.split(' ').next()? == "cgroup2")
            .then(|| left.split(' ').nth(4).map(unescape))
            .flatten()
    })
}

/// Undoes mountinfo's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` `\`).
fn unescape(s: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                out.push(
                    d.iter()
                        .fold(0u8, |a, c| a.wrapping_mul(8).wrapping_add(c - b'0')),
                );
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cgroup2_mount() {
        let mi = "24 30 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n\
                  35 26 0:30 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw\n\
                  36 26 0:31 / /sys/fs/cgroup/memory rw shared:11 - cgroup cgroup rw,memory\n";
        assert_eq!(mount_of(mi), Some(PathBuf::from("/sys/fs/cgroup/unified")));
        let spaced = "35 26 0:30 / /mnt/cg\\040two rw shared:10 - cgroup2 cgroup2 rw\n";
        assert_eq!(mount_of(spaced), Some(PathBuf::from("/mnt/cg two")));
        assert_eq!(mount_of("24 30 0:22 / /sys rw - sysfs sysfs rw\n"), None);
    }

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
