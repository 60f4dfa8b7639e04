//! `/proc/self/mountinfo` lines (proc(5)): where a filesystem type is mounted and with which
//! super options. Used to find cgroup2 (the cgroups tree, a scoped process walk), a cgroup v1
//! memory hierarchy, tracefs, and the proc mount's `hidepid=`.
//!
//! Owns: splitting a mountinfo line and undoing its octal escapes. Must not touch: files (the
//! callers read the text).

use std::path::PathBuf;

/// One mount: its point (unescaped), filesystem type and super options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount<'a> {
    /// Field 4, the root of the mount within its filesystem (`/..` for a cgroup2 mount whose
    /// root is above the reader's cgroup namespace).
    pub root: &'a str,
    /// Field 5, the mount point.
    pub point: PathBuf,
    /// The first field after ` - `.
    pub fstype: &'a str,
    /// The third field after ` - ` (comma-separated).
    pub super_options: &'a str,
}

/// Every well-formed line of a mountinfo text, in order; malformed lines are skipped.
pub fn mounts(text: &str) -> impl Iterator<Item = Mount<'_>> {
    text.lines().filter_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut r = right.split(' ');
        let fstype = r.next()?;
        let super_options = r.nth(1).unwrap_or("");
        let point = unescape(left.split(' ').nth(4)?);
        let root = left.split(' ').nth(3)?;
        Some(Mount {
            root,
            point,
            fstype,
            super_options,
        })
    })
}

/// The first mount point of filesystem type `fstype`.
#[must_use]
pub fn first_of(text: &str, fstype: &str) -> Option<PathBuf> {
    mounts(text).find(|m| m.fstype == fstype).map(|m| m.point)
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

/// The `hidepid=` super option of the proc mount at `point`, unless it hides nothing.
#[must_use]
pub fn hidepid(mountinfo: &str, point: &std::path::Path) -> Option<String> {
    let m = mounts(mountinfo)
        .filter(|m| m.fstype == "proc" && m.point == point)
        .last()?;
    let v = m
        .super_options
        .split(',')
        .find_map(|o| o.strip_prefix("hidepid="))?;
    (v != "0" && v != "off").then(|| v.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_are_split_and_unescaped() {
        let text = "24 30 0:22 / /sys rw,nosuid - sysfs sysfs rw\n\
                    garbage\n\
                    35 24 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                    36 24 0:31 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw,nsdelegate\n";
        let all: Vec<Mount> = mounts(text).collect();
        assert_eq!(all.len(), 3, "the malformed line is skipped");
        assert_eq!(all[1].super_options, "rw,memory");
        assert_eq!(
            first_of(text, "cgroup2"),
            Some(PathBuf::from("/mnt/cg two"))
        );
        assert_eq!(first_of(text, "tracefs"), None);
        assert_eq!(unescape(r"/x\\y\04"), PathBuf::from(r"/x\\y\04"));
    }

    /// Under `hidepid=2` a walk that is not root's sees only its own user's processes: the walk
    /// says so (issue 51). Root sees them all, so nothing is said then (`hidden_by`).
    #[test]
    fn hidepid_is_read_from_the_proc_mount_and_off_says_nothing() {
        let line = |point: &str, opts: &str| {
            format!(
                "22 1 0:21 / {point} rw,nosuid,nodev,noexec,relatime shared:12 - proc proc {opts}\n"
            )
        };
        let p = std::path::Path::new("/proc");
        let text = line("/proc", "rw,hidepid=invisible,gid=10");
        assert_eq!(hidepid(&text, p).as_deref(), Some("invisible"));
        let old = line("/proc", "rw,hidepid=2");
        assert_eq!(hidepid(&old, p).as_deref(), Some("2"));
        for off in ["rw", "rw,hidepid=0", "rw,hidepid=off"] {
            assert_eq!(hidepid(&line("/proc", off), p), None, "{off}");
        }
        // Another proc mount (a container's) is not the walk's.
        assert_eq!(hidepid(&line("/srv/c/proc", "rw,hidepid=2"), p), None);
        // The last mount on the point is the one in force.
        let both = format!("{}{}", line("/proc", "rw"), line("/proc", "rw,hidepid=2"));
        assert_eq!(hidepid(&both, p).as_deref(), Some("2"));
    }
}
