//! The raw facts of the scope (issue 54, `parse::scope`): `/proc/self/cgroup`,
//! `/proc/1/cgroup` and the `names::SCOPE` pseudo-file (the command line's choice, the
//! cgroup2 mount's root and point, whether that root is a non-root group, and, when the
//! mount's root is above pagewatch's cgroup namespace, the group whose `cgroup.procs` lists
//! pagewatch's pid).
//!
//! Owns: reading those facts. Must not touch: the rule that picks the scope
//! (`parse::scope::resolve`, called here only to know which groups to keep read).

use std::fmt::Write as _;
use std::path::Path;

use crate::parse::scope::{self, Choice, Facts};
use crate::sample::names;

/// Bounds on the pid search, against pathological trees.
const MAX_GROUPS: usize = 20_000;

/// The facts as (sample name, text), and the scope's group path when there is one.
pub(super) fn read(
    proc_root: &Path,
    mountinfo: Option<&str>,
    choice: &Choice,
) -> (Vec<(String, String)>, Option<String>) {
    let mut out = Vec::new();
    if *choice == Choice::Auto && mountinfo.is_none() && !proc_root.join("self/cgroup").is_file() {
        // A captured tree: nothing says where pagewatch ran; no scope unless asked for.
        return (out, None);
    }
    let mut f = Facts {
        choice: choice.clone(),
        ..Facts::default()
    };
    let mut text = choice.line();
    text.push('\n');
    for (name, rel) in [
        (names::SELF_CGROUP, "self/cgroup"),
        (names::INIT_CGROUP, "1/cgroup"),
    ] {
        if let Ok(t) = std::fs::read_to_string(proc_root.join(rel)) {
            if name == names::SELF_CGROUP {
                f.own = scope::v2_path(&t);
            } else {
                f.init = scope::v2_path(&t);
            }
            out.push((name.to_owned(), t));
        }
    }
    let mount = mountinfo.and_then(|t| {
        super::mountinfo::mounts(t)
            .find(|m| m.fstype == "cgroup2")
            .map(|m| (m.root.to_owned(), m.point))
    });
    if let Some((root, point)) = mount {
        let _ = writeln!(text, "mount\t{root}\t{}", point.display());
        f.root_is_group = point.join("cgroup.type").is_file();
        text.push_str(if f.root_is_group {
            "root_group\tyes\n"
        } else {
            "root_group\tno\n"
        });
        if *choice == Choice::Auto && root.starts_with("/..") {
            f.found = own_pid(proc_root).and_then(|pid| find_pid(&point, pid));
            if let Some(g) = &f.found {
                let _ = writeln!(text, "found\t{g}");
            }
        }
        f.mount = Some((root, point.display().to_string()));
    }
    out.push((names::SCOPE.to_owned(), text));
    (out, scope::resolve(&f).path)
}

/// The scope's memory.stat and memory.current read again right after wb_stats, in place in
/// `out`, so its derived threshold and the kernel's `WbDirtyThresh` are of the same instant:
/// under a writer at 100 MB/s the page cache moves a few pages between the walk's read and
/// wb_stats (6.12 lab: 0-6 pages apart before, issue 54).
pub(super) fn reread(mount: &Path, group: &str, out: &mut [(String, String)], buf: &mut Vec<u8>) {
    let dir = mount.join(group.trim_start_matches('/'));
    for file in ["memory.stat", "memory.current"] {
        let name = names::cgroup_file(group, file);
        if let Ok(Some(text)) = super::read::read_optional(&dir.join(file), buf)
            && let Some(slot) = out.iter_mut().find(|(n, _)| *n == name)
        {
            slot.1 = text;
        }
    }
}

/// pagewatch's pid as this proc root numbers it (`PROC/self` is a link to it).
fn own_pid(proc_root: &Path) -> Option<u32> {
    std::fs::read_link(proc_root.join("self"))
        .ok()?
        .to_str()?
        .parse()
        .ok()
}

/// The group below `mount` whose `cgroup.procs` lists `pid`, as a path below the mount; at
/// most `MAX_GROUPS` groups are looked at.
fn find_pid(mount: &Path, pid: u32) -> Option<String> {
    let want = pid.to_string();
    let mut seen = 0;
    let mut over = false;
    let dir = super::cgroup_scope::each_group(mount, |_, procs| {
        seen += 1;
        over = seen > MAX_GROUPS;
        over || procs.lines().any(|l| l.trim() == want)
    })
    .filter(|_| !over)?;
    let rel = dir.strip_prefix(mount).ok()?.to_str()?;
    Some(format!("/{rel}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_its_own_pid_below_a_mount_above_the_namespace() {
        let dir = tempfile::tempdir().unwrap();
        let cg = dir.path().join("cg");
        std::fs::create_dir_all(cg.join("box/inner")).unwrap();
        std::fs::write(cg.join("cgroup.procs"), "1\n").unwrap();
        std::fs::write(cg.join("box/cgroup.procs"), "").unwrap();
        std::fs::write(cg.join("box/inner/cgroup.procs"), "7\n42\n").unwrap();
        let proc = dir.path().join("proc");
        std::fs::create_dir_all(&proc).unwrap();
        std::os::unix::fs::symlink("42", proc.join("self")).unwrap();
        std::fs::create_dir_all(proc.join("42")).unwrap();
        std::fs::write(proc.join("42/cgroup"), "0::/\n").unwrap();
        let mountinfo = format!("35 26 0:30 /.. {} rw - cgroup2 cgroup2 rw\n", cg.display());
        let (out, path) = read(&proc, Some(&mountinfo), &Choice::Auto);
        assert_eq!(path.as_deref(), Some("/box/inner"));
        let text = &out.iter().find(|(n, _)| n == names::SCOPE).unwrap().1;
        assert!(text.contains("mount\t/..\t"), "{text}");
        assert!(
            text.ends_with("root_group\tno\nfound\t/box/inner\n"),
            "{text}"
        );
        // --host: no search, the machine.
        let (_, path) = read(&proc, Some(&mountinfo), &Choice::Host);
        assert_eq!(path, None);
    }
}
