//! The processes an unscoped walk visits: `/proc` listed, or the last walk's list again when
//! no task was created since.
//!
//! Owns: `Lister` (the newest pid seen at the last listing, how many walks reused it) and
//! listing the proc root. Must not touch: visiting processes, the cgroup scope's listing
//! (`cgroup_scope`: a process can join a cgroup without a new pid).
//!
//! # Why and when a list is reused
//!
//! Listing `/proc` (getdents: the kernel walks the pid table and fills a dentry a process)
//! was a fifth of an idle walk's samples (issue 27). The fifth field of `/proc/loadavg` is
//! the last pid handed out in the reader's pid namespace (`idr_get_cursor − 1`), for
//! processes and threads alike: while it has not moved, no task was created, so every process
//! alive now was alive at the last listing, and the processes that exited since are the ones
//! whose reads fail at the visit (swept from the table and from the list by the walker). It
//! serves only where it describes the proc root walked: procfs whose `self` is this process's
//! own pid (a proc mounted for another pid namespace names it otherwise). The cursor wraps at
//! `pid_max`; that many tasks created between two walks would look like none, so the root is
//! listed again at least every `RELIST_WALKS` walks whatever the cursor says.

use std::fs::File;
use std::path::Path;

use super::read::{Records, own_pid, read_from_start, text};

/// A listing serves at most this many walks in a row (30 s at the idle walk's 5 s).
pub(super) const RELIST_WALKS: u32 = 6;

/// Lists the processes of unscoped walks (see the module doc).
#[derive(Default)]
pub(super) struct Lister {
    /// `/proc/loadavg`, held, once the root is known to be this namespace's procfs (`None`
    /// inside: not yet checked; `Some(None)`: not usable).
    #[allow(clippy::option_option)]
    loadavg: Option<Option<File>>,
    /// The last pid handed out, as read at the last listing.
    newest: Option<u64>,
    /// Walks since the last listing.
    reused: u32,
}

impl Lister {
    /// Fills `pids` with the processes to visit: the last listing's (kept in `pids` by the
    /// caller, less the processes gone) while no task was created since, else `root` listed.
    /// `procfs`: `root` is procfs.
    pub(super) fn list(
        &mut self,
        root: &Path,
        procfs: bool,
        pids: &mut Vec<u32>,
        buf: &mut Vec<u8>,
    ) -> std::result::Result<(), String> {
        let newest = self.newest_pid(root, procfs, buf);
        if reuse(self.newest, newest, self.reused) && !pids.is_empty() {
            // The root opened and closed all the same: out of fds (taken by something else in
            // pagewatch), a walk fails here as a listing would, rather than visit processes it
            // could not open and drop them.
            File::open(root).map_err(|e| format!("{}: {e}", root.display()))?;
            self.reused += 1;
            return Ok(());
        }
        pids.clear();
        list_all(root, pids)?;
        self.newest = newest;
        self.reused = 0;
        Ok(())
    }

    /// Forgets the last listing: the next walk lists.
    pub(super) fn forget(&mut self) {
        self.newest = None;
        self.reused = 0;
    }

    /// Opens `root/loadavg` once, where it describes `root`. Called before the walker counts
    /// the fds open for its budget (`procs::fd_budget`), so that this one is among them.
    pub(super) fn open(&mut self, root: &Path, procfs: bool) {
        self.loadavg.get_or_insert_with(|| {
            let own = own_pid(root).is_some();
            (procfs && own)
                .then(|| File::open(root.join("loadavg")).ok())
                .flatten()
        });
    }

    /// The fifth field of `root/loadavg`, where it describes `root`; `None` otherwise or when
    /// it cannot be read.
    fn newest_pid(&mut self, root: &Path, procfs: bool, buf: &mut Vec<u8>) -> Option<u64> {
        self.open(root, procfs);
        let f = self.loadavg.as_ref()?.as_ref()?;
        let n = read_from_start(f, buf, 256, Some(Records::One)).ok()?;
        text(&buf[..n]).split_whitespace().nth(4)?.parse().ok()
    }
}

/// Whether the last listing serves again: the newest pid is known, the same as at that
/// listing, and the listing has served fewer than `RELIST_WALKS` walks.
fn reuse(then: Option<u64>, now: Option<u64>, reused: u32) -> bool {
    now.is_some() && then == now && reused + 1 < RELIST_WALKS
}

/// Every numeric entry of the proc root.
pub(super) fn list_all(root: &Path, pids: &mut Vec<u32>) -> std::result::Result<(), String> {
    let dir = std::fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    pids.extend(
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_serves_while_no_task_was_created_and_at_most_relist_walks() {
        assert!(reuse(Some(3215), Some(3215), 0), "nothing created");
        assert!(!reuse(Some(3215), Some(3216), 0), "a task created");
        assert!(!reuse(None, Some(3215), 0), "no listing to reuse yet");
        assert!(
            !reuse(Some(3215), None, 0),
            "loadavg unreadable or not ours"
        );
        assert!(reuse(Some(3215), Some(3215), RELIST_WALKS - 2));
        assert!(
            !reuse(Some(3215), Some(3215), RELIST_WALKS - 1),
            "the cursor may have wrapped: listed again"
        );
    }

    #[test]
    fn a_tree_that_is_not_this_namespaces_procfs_is_always_listed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("loadavg"), "0.00 0.00 0.00 1/80 3215\n").unwrap();
        std::fs::create_dir(dir.path().join("42")).unwrap();
        let mut l = Lister::default();
        let (mut pids, mut buf) = (Vec::new(), Vec::new());
        l.list(dir.path(), false, &mut pids, &mut buf).unwrap();
        assert_eq!(pids, [42]);
        std::fs::create_dir(dir.path().join("43")).unwrap();
        l.list(dir.path(), false, &mut pids, &mut buf).unwrap();
        pids.sort_unstable();
        assert_eq!(
            pids,
            [42, 43],
            "listed again: no newest pid is trusted here"
        );
    }

    #[test]
    fn a_process_started_between_two_walks_is_listed() {
        let mut l = Lister::default();
        let (mut pids, mut buf) = (Vec::new(), Vec::new());
        let root = Path::new("/proc");
        l.list(root, true, &mut pids, &mut buf).unwrap();
        assert!(
            l.newest.is_some(),
            "this namespace's procfs gives the newest pid"
        );
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        l.list(root, true, &mut pids, &mut buf).unwrap();
        let listed = pids.contains(&child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            listed,
            "a new pid moved loadavg's cursor: /proc listed again"
        );
    }
}
