//! Reads the cgroup v2 tree, the per-device (BDI) dirty limits and the kernel's per-cgroup
//! writeback figures into the sample, as raw text (spec §1.8, §1.9, §11).
//!
//! Owns: finding the cgroup2 mount, choosing which groups to read each tick, the
//! `sys/fs/cgroup/` index and `sys/class/bdi/` pseudo-files (`sample::names`), and when to
//! read debugfs `wb_stats`. Must not touch: parsing beyond the memory.stat counters that
//! decide which groups are live (dirty, writeback, refaults, scans, major faults),
//! derivation, mounting anything.
//!
//! Cost control. Three cgroup files cost about 25 µs a group (spec §11), so the whole tree is
//! walked only on the slow refresh, every tick while the cgroups pane is open
//! (`Wants::cgroups_every_tick`), and at most every `DIRTYING_WALK_TICKS` ticks while the
//! machine dirties pages fast (`nr_dirtied` up by `DIRTYING_PAGES` in a tick: a group that
//! starts writing between walks shows within seconds). On the other ticks only the groups
//! that had dirty or writeback pages at their last read are read again, with their
//! ancestors (for the headroom), so a throttled container's domain is live; on an idle
//! machine that is none at all. A group that thrashes or is reclaimed (its refault, pgscan or
//! pgmajfault counters moved since its last read) is read every tick in the same way, for
//! `LIVE_READS` reads after they last moved, so its rates have two samples in a row; a group
//! first seen with any refaults or scans is read again at the next tick to find out. A walk
//! for the domains alone (pane closed) reads each
//! group's memory.stat and the other files only where it shows dirty or writeback pages. Without cgroup v2 memory + io (this development VM keeps
//! memory on cgroup v1) nothing is walked: the index only says why, from `self/mountinfo`.
//! Every read here that fails (a group removed between listing and reading, debugfs not
//! readable) is an absent file, never an error.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::sample::names;

/// Walk the tree at most this often while pages are dirtied fast.
const DIRTYING_WALK_TICKS: u32 = 5;
/// Reads a group stays read after it last had dirty or writeback pages.
const LIVE_READS: u32 = 5;
/// `nr_dirtied` growth in one tick that counts as dirtying fast (1 MiB of 4 KiB pages).
const DIRTYING_PAGES: u64 = 256;
/// The BDI limits are re-read on every this many slow refreshes (once a minute at 1 Hz),
/// for the BDIs whose device moved since (`source::moved`), and a new BDI's when it shows.
const BDI_REFRESHES: u32 = 4;
/// Bounds on a walk, against pathological trees.
const MAX_GROUPS: usize = 20_000;
const MAX_DEPTH: usize = 64;

/// Why there is (or is not) a memcg dirty domain on this machine: the index's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    V1Memory,
    NoMemoryIo,
    NoCgroup2,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::V1Memory => "v1_memory",
            Status::NoMemoryIo => "no_memory_io",
            Status::NoCgroup2 => "no_cgroup2",
        }
    }
}

/// The cgroup, BDI and wb_stats part of `FsSource`.
pub(super) struct Cgroups {
    proc_root: PathBuf,
    sys_root: PathBuf,
    /// The cgroup2 mount and why (decided on each slow refresh); `None` before the first, or
    /// when this root has no cgroup information at all (older captured trees).
    found: Option<(Option<PathBuf>, Status)>,
    /// The tree is a captured copy (no mountinfo): each group's inode is the one recorded
    /// in its `cgroup.ino` by the capture, when there is one, not the copy's.
    captured: bool,
    /// Groups (paths relative to the mount) that had dirty or writeback pages at a recent
    /// read, with their ancestors, and the reads left before a group without any is dropped
    /// (`LIVE_READS`): a writer that pauses for a tick (reclaim at memory.max, a journal
    /// commit) keeps its domain read.
    live: BTreeMap<String, u32>,
    /// Groups whose reclaim counters (`reclaim_events`) moved at a recent read, or were first
    /// seen non-zero, and the reads left, as `live` (no ancestors: they are not needed).
    thrashing: BTreeMap<String, u32>,
    /// Each group's `reclaim_events` at its last read; rebuilt on each full walk.
    reclaim_seen: BTreeMap<String, u64>,
    ticks_since_walk: u32,
    last_dirtied: Option<u64>,
    /// BDIs whose wb_stats showed a cgroup's wb at the last listing.
    cg_bdis: Vec<String>,
    bdi_names: Vec<String>,
    bdi_text: Option<String>,
    bdi_refreshes: u32,
    /// Each BDI's line of `bdi_text` as last read, and the BDIs' devices' motion since
    /// (`source::moved`: an idle device's limits are not re-read every minute).
    bdi_lines: HashMap<String, String>,
    bdi_motion: super::moved::Motion,
    /// What the command line asked the scope to be (`parse::scope`).
    choice: crate::parse::scope::Choice,
    /// The scope's raw facts as last read (each slow refresh), carried into every sample.
    scope_out: Vec<(String, String)>,
    /// The scope's group and its ancestors: read whole on every tick.
    pinned: Vec<String>,
    /// What this tick read: (sample name, text).
    pub(super) out: Vec<(String, String)>,
}

impl Cgroups {
    pub(super) fn new(proc_root: &Path, sys_root: &Path) -> Self {
        Self {
            proc_root: proc_root.to_owned(),
            sys_root: sys_root.to_owned(),
            found: None,
            captured: false,
            live: BTreeMap::new(),
            thrashing: BTreeMap::new(),
            reclaim_seen: BTreeMap::new(),
            ticks_since_walk: 0,
            last_dirtied: None,
            cg_bdis: Vec::new(),
            bdi_names: Vec::new(),
            bdi_text: None,
            bdi_refreshes: 0,
            bdi_lines: HashMap::new(),
            bdi_motion: super::moved::Motion::default(),
            choice: crate::parse::scope::Choice::Auto,
            scope_out: Vec::new(),
            pinned: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Sets what the command line asked the scope to be (`--cgroup`, `--host`).
    pub(super) fn set_choice(&mut self, choice: crate::parse::scope::Choice) {
        self.choice = choice;
        self.scope_out.clear();
    }

    /// Finds the cgroup2 mount and reads the scope's facts, from one read of `mountinfo`.
    fn rescope(&mut self) {
        let mut buf = Vec::new();
        let mountinfo = read_any(&self.proc_root.join("self/mountinfo"), &mut buf);
        self.found = self.find(mountinfo.as_deref());
        self.read_scope(mountinfo.as_deref());
    }

    /// Reads the scope's facts (`source::scope`, given `mountinfo` as `find` had it) and pins
    /// its group and ancestors.
    fn read_scope(&mut self, mountinfo: Option<&str>) {
        let (out, path) = super::scope::read(&self.proc_root, mountinfo, &self.choice);
        self.scope_out = out;
        self.pinned = match path.as_deref() {
            Some("/") => vec!["/".to_owned()],
            Some(p) => ancestors(p).map(str::to_owned).collect(),
            None => Vec::new(),
        };
    }

    /// Reads this tick's cgroup files into `self.out`. `refresh`: the slow refresh;
    /// `every_tick`: the cgroups pane is open; `vmstat` and `diskstats`: this tick's
    /// `/proc/vmstat` and `/proc/diskstats` texts.
    pub(super) fn read(
        &mut self,
        refresh: bool,
        every_tick: bool,
        vmstat: Option<&str>,
        diskstats: Option<&str>,
    ) {
        self.out.clear();
        let mut buf = Vec::new();
        if refresh || self.found.is_none() || self.scope_out.is_empty() {
            self.rescope();
        }
        self.out.extend(self.scope_out.iter().cloned());
        // On the slow refresh only, even for a tree without cgroup information (found
        // again every tick): the BDI limits count their refreshes.
        if refresh || self.bdi_text.is_none() {
            self.read_bdis(&mut buf, &super::moved::Counters::of(diskstats));
        }
        let dirtied = vmstat.and_then(nr_dirtied);
        let dirtying =
            matches!((self.last_dirtied, dirtied), (Some(a), Some(b)) if b >= a + DIRTYING_PAGES);
        self.last_dirtied = dirtied;
        self.ticks_since_walk = self.ticks_since_walk.saturating_add(1);
        let Some((mount, status)) = self.found.clone() else {
            return;
        };
        let mut index = format!("status\t{}\n", status.word());
        let mount = mount.filter(|_| status == Status::Ok);
        let Some(mount) = mount else {
            index.push_str("walk\tnone\n");
            self.out.push((names::CGROUP_INDEX.to_owned(), index));
            return;
        };
        // While pages are dirtied fast and no group is known to hold dirty pages, every tick
        // walks, so a container that starts writing has its domain at once.
        let full = refresh
            || every_tick
            || (dirtying && (self.live.is_empty() || self.ticks_since_walk >= DIRTYING_WALK_TICKS));
        let groups = self.pick(&mount, full, &mut index);
        // Every group read counts down; a dirty one (and its ancestors) is refilled below.
        for left in self.live.values_mut().chain(self.thrashing.values_mut()) {
            *left = left.saturating_sub(1);
        }
        self.live.retain(|_, left| *left > 0);
        self.thrashing.retain(|_, left| *left > 0);
        if full {
            self.reclaim_seen
                .retain(|g, _| groups.iter().any(|(x, _)| x == g));
        }
        for (group, mut ino) in groups {
            let dir = mount.join(group.trim_start_matches('/'));
            if self.captured
                && let Some(n) =
                    read_any(&dir.join("cgroup.ino"), &mut buf).and_then(|t| t.trim().parse().ok())
            {
                ino = n;
            }
            let mut flags = String::new();
            // Walks for the domains alone (the pane closed) read memory.stat first and the
            // rest only in groups with dirty or writeback pages: an idle group costs one read.
            let stat = read_any(&dir.join("memory.stat"), &mut buf);
            let dirty = group != "/" && stat.as_deref().is_some_and(|t| dirty_pages(t) > 0);
            if dirty {
                for a in ancestors(&group) {
                    self.live.insert(a.to_owned(), LIVE_READS);
                }
            }
            let thrashing = group != "/" && self.note_reclaim(&group, stat.as_deref());
            let all =
                every_tick || dirty || thrashing || group == "/" || self.pinned.contains(&group);
            for file in names::CGROUP_FILES {
                let text = if file == "memory.stat" {
                    stat.clone()
                } else if all {
                    read_any(&dir.join(file), &mut buf)
                } else {
                    None
                };
                let Some(text) = text else { continue };
                match file {
                    "memory.stat" => flags.push('m'),
                    "io.stat" => flags.push('i'),
                    _ => {}
                }
                self.out.push((names::cgroup_file(&group, file), text));
            }
            if self.pinned.contains(&group)
                && let Some(text) = read_any(&dir.join("io.max"), &mut buf)
            {
                self.out.push((names::cgroup_file(&group, "io.max"), text));
            }
            if flags.is_empty() {
                flags.push('-');
            }
            let _ = writeln!(index, "{ino}\t{flags}\t{group}");
        }
        self.out.push((names::CGROUP_INDEX.to_owned(), index));
        if !self.live.is_empty() || !self.pinned.is_empty() {
            self.read_wb_stats(full, &mut buf);
            if let Some(group) = self.pinned.first() {
                super::scope::reread(&mount, group, &mut self.out, &mut buf);
            }
        }
    }

    /// The groups to read this tick: the whole tree (`full`), else the live, thrashing and
    /// pinned ones; says which in the index's `walk` line.
    fn pick(&mut self, mount: &Path, full: bool, index: &mut String) -> Vec<(String, u64)> {
        if full {
            self.ticks_since_walk = 0;
            index.push_str("walk\tfull\n");
            return walk(mount);
        }
        index.push_str("walk\tactive\n");
        let picked: std::collections::BTreeSet<&String> = self
            .live
            .keys()
            .chain(self.thrashing.keys())
            .chain(&self.pinned)
            .collect();
        picked
            .into_iter()
            .filter_map(|g| {
                let ino = std::fs::metadata(mount.join(&g[1..])).ok()?.ino();
                Some((g.clone(), ino))
            })
            .collect()
    }

    /// Notes a group's reclaim counters (`reclaim_events`) at this read; whether they moved
    /// since its last read. A moving group is read every tick for `LIVE_READS` reads; one
    /// first seen with any is read again at the next tick, to find out.
    fn note_reclaim(&mut self, group: &str, stat: Option<&str>) -> bool {
        let Some(now) = stat.map(reclaim_events) else {
            return false;
        };
        match self.reclaim_seen.insert(group.to_owned(), now) {
            Some(before) if now > before => {
                self.thrashing.insert(group.to_owned(), LIVE_READS);
                true
            }
            None if now > 0 => {
                let left = self.thrashing.entry(group.to_owned()).or_insert(0);
                *left = (*left).max(1);
                false
            }
            _ => false,
        }
    }

    /// Where cgroup2 is mounted and whether it has the memory and io controllers: from
    /// `mountinfo`, the proc root's `self/mountinfo` as read for this and the scope alike
    /// (live), else `<sys root>/fs/cgroup` when it holds
    /// `cgroup.controllers` (a captured tree). `None` when neither says anything.
    fn find(&mut self, mountinfo: Option<&str>) -> Option<(Option<PathBuf>, Status)> {
        let mut buf = Vec::new();
        let (mount, v1_memory) = if let Some(text) = mountinfo {
            mounts(text)
        } else {
            let m = self.sys_root.join("fs/cgroup");
            if !m.join("cgroup.controllers").is_file() {
                return None;
            }
            self.captured = true;
            (Some(m), false)
        };
        let status = match &mount {
            _ if v1_memory => Status::V1Memory,
            None => Status::NoCgroup2,
            Some(m) => {
                let c = read_any(&m.join("cgroup.controllers"), &mut buf).unwrap_or_default();
                let has = |x: &str| c.split_whitespace().any(|w| w == x);
                if has("memory") && has("io") {
                    Status::Ok
                } else {
                    Status::NoMemoryIo
                }
            }
        };
        Some((mount, status))
    }

    /// The `sys/class/bdi/` pseudo-file as last read (`names::BDI_LIMITS`), carried between
    /// reads; the source puts it into each sample without copying it here first.
    pub(super) fn bdi_text(&self) -> Option<&str> {
        self.bdi_text.as_deref()
    }

    /// The `sys/class/bdi/` pseudo-file. A BDI's limits are read when it first shows, and
    /// re-read every `BDI_REFRESHES`th refresh unless its device (the BDI is named
    /// `MAJ:MIN`) has not moved since (`source::moved`; all of them every
    /// `moved::FULL_EVERY` such refreshes; a BDI without a diskstats line, FUSE or NFS, every
    /// time).
    fn read_bdis(&mut self, buf: &mut Vec<u8>, now: &super::moved::Counters<'_>) {
        let dir = self.sys_root.join("class/bdi");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            self.bdi_text = None;
            return;
        };
        let mut bdis: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        bdis.sort();
        self.bdi_refreshes = (self.bdi_refreshes + 1) % BDI_REFRESHES;
        let periodic = self.bdi_refreshes == 0 || self.bdi_text.is_none();
        if bdis == self.bdi_names && !periodic {
            return;
        }
        let full = periodic && self.bdi_motion.start();
        let mut text = String::new();
        for bdi in &bdis {
            let cached = self.bdi_lines.contains_key(bdi);
            if !cached || (periodic && self.bdi_motion.due(bdi, now, full, cached)) {
                self.bdi_lines.insert(bdi.clone(), bdi_line(&dir, bdi, buf));
                self.bdi_motion.read(bdi, now);
            }
            text.push_str(&self.bdi_lines[bdi]);
        }
        self.bdi_lines.retain(|b, _| bdis.binary_search(b).is_ok());
        self.bdi_motion
            .retain(|b| bdis.binary_search_by(|x| x.as_str().cmp(b)).is_ok());
        self.bdi_names = bdis;
        self.bdi_text = Some(text);
    }

    /// debugfs `wb_stats` (root, 6.10+; never mounted by pagewatch): every BDI's on a full
    /// walk, then only those that showed a cgroup's wb.
    fn read_wb_stats(&mut self, relist: bool, buf: &mut Vec<u8>) {
        let dir = self.sys_root.join("kernel/debug/bdi");
        if relist || self.cg_bdis.is_empty() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                self.cg_bdis.clear();
                return;
            };
            let mut all: Vec<String> = entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect();
            all.sort();
            self.cg_bdis.clear();
            for bdi in all {
                let Some(text) = read_any(&dir.join(&bdi).join("wb_stats"), buf) else {
                    continue;
                };
                // One block per wb; more than the root's means cgroup writeback.
                if text.matches("WbCgIno:").count() > 1 {
                    self.out.push((names::wb_stats(&bdi), text));
                    self.cg_bdis.push(bdi);
                }
            }
            return;
        }
        for bdi in &self.cg_bdis {
            if let Some(text) = read_any(&dir.join(bdi).join("wb_stats"), buf) {
                self.out.push((names::wb_stats(bdi), text));
            }
        }
    }
}

/// A whole file's text; `None` on any failure (absent, vanished, not permitted).
fn read_any(path: &Path, buf: &mut Vec<u8>) -> Option<String> {
    super::read::read_optional(path, buf).ok().flatten()
}

/// Every group under the mount, parents before children: (path, inode). The inode is the
/// directory entry's (`d_ino`), which is the cgroup id the kernel prints as `WbCgIno` and
/// the tracepoint's `cgroup_ino`.
fn walk(mount: &Path) -> Vec<(String, u64)> {
    let Ok(root) = std::fs::metadata(mount) else {
        return Vec::new();
    };
    let mut out = vec![("/".to_owned(), root.ino())];
    let mut i = 0;
    while i < out.len() && out.len() < MAX_GROUPS {
        let parent = out[i].0.clone();
        i += 1;
        if parent.matches('/').count() > MAX_DEPTH {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(mount.join(parent.trim_start_matches('/'))) else {
            continue;
        };
        let mut kids: Vec<(String, u64)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let base = parent.trim_end_matches('/');
                Some((format!("{base}/{name}"), e.ino()))
            })
            .collect();
        kids.sort();
        out.extend(kids);
    }
    out.truncate(MAX_GROUPS);
    out
}

/// The group and its ancestors below the root: `/a/b` → `/a/b`, `/a`.
fn ancestors(group: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(group), |g| {
        g.rfind('/').filter(|&i| i > 0).map(|i| &g[..i])
    })
}

/// `file_dirty + file_writeback` of a memory.stat text (bytes); 0 when absent.
fn dirty_pages(stat: &str) -> u64 {
    stat.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            matches!(k, "file_dirty" | "file_writeback").then(|| v.trim().parse::<u64>().ok())?
        })
        .fold(0, u64::saturating_add)
}

/// The memory.stat counters that move while a group thrashes or is reclaimed: refaults (the
/// 5.9+ split keys and the older single one), pgscan and pgmajfault, summed.
fn reclaim_events(stat: &str) -> u64 {
    stat.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            matches!(
                k,
                "workingset_refault_anon"
                    | "workingset_refault_file"
                    | "workingset_refault"
                    | "pgscan"
                    | "pgmajfault"
            )
            .then(|| v.trim().parse::<u64>().ok())?
        })
        .fold(0, u64::saturating_add)
}

/// `nr_dirtied` of a vmstat text.
fn nr_dirtied(vmstat: &str) -> Option<u64> {
    let i = vmstat.find("\nnr_dirtied ")?;
    let rest = &vmstat[i + "\nnr_dirtied ".len()..];
    rest.split('\n').next()?.trim().parse().ok()
}

/// From mountinfo: the first cgroup2 mount point, and whether the memory controller is
/// mounted on a cgroup v1 hierarchy.
fn mounts(mountinfo: &str) -> (Option<PathBuf>, bool) {
    let all: Vec<_> = super::mountinfo::mounts(mountinfo).collect();
    let cgroup2 = all
        .iter()
        .find(|m| m.fstype == "cgroup2")
        .map(|m| m.point.clone());
    let v1_memory = all
        .iter()
        .any(|m| m.fstype == "cgroup" && m.super_options.split(',').any(|o| o == "memory"));
    (cgroup2, v1_memory)
}

/// One BDI's line of the `sys/class/bdi/` pseudo-file: its name and its five files.
fn bdi_line(dir: &Path, bdi: &str, buf: &mut Vec<u8>) -> String {
    let mut line = bdi.to_owned();
    // The files relative to the BDI's directory (`read::Dir`).
    let d = super::read::Dir::open(&dir.join(bdi));
    for file in names::BDI_FILES {
        line.push('\t');
        if let Some(v) = d.as_ref().and_then(|d| d.read(file, buf)) {
            line.push_str(v.trim());
        }
    }
    line.push('\n');
    line
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_finds_cgroup2_and_v1_memory() {
        let hybrid = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n\
            35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
            41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            mounts(hybrid),
            (Some(PathBuf::from("/sys/fs/cgroup/unified")), true)
        );
        let v2 = "30 23 0:26 / /sys/fs/cg\\040x rw - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(mounts(v2), (Some(PathBuf::from("/sys/fs/cg x")), false));
        assert_eq!(mounts(""), (None, false));
    }

    #[test]
    fn ancestors_stop_below_the_root() {
        let a: Vec<&str> = ancestors("/a/b/c").collect();
        assert_eq!(a, ["/a/b/c", "/a/b", "/a"]);
    }

    #[test]
    fn dirty_and_dirtied_counters() {
        let stat = "file 100\nfile_dirty 8192\nfile_writeback 4096\nfile_thp 0\n";
        assert_eq!(dirty_pages(stat), 12_288);
        assert_eq!(
            nr_dirtied("nr_free_pages 1\nnr_dirtied 77\nnr_written 3\n"),
            Some(77)
        );
        assert_eq!(nr_dirtied("nr_dirtied_x 1\n"), None);
    }

    #[test]
    fn a_captured_tree_is_walked_and_vanished_groups_are_absent() {
        let t = tempfile::tempdir().unwrap();
        let cg = t.path().join("sys/fs/cgroup");
        std::fs::create_dir_all(cg.join("a/b")).unwrap();
        std::fs::write(cg.join("cgroup.controllers"), "cpu io memory\n").unwrap();
        std::fs::write(cg.join("a/memory.stat"), "file_dirty 4096\n").unwrap();
        std::fs::write(cg.join("a/b/memory.stat"), "file_dirty 4096\n").unwrap();
        std::fs::write(cg.join("a/b/io.stat"), "").unwrap();
        let mut c = Cgroups::new(&t.path().join("proc"), &t.path().join("sys"));
        c.read(true, false, None, None);
        let index = &c
            .out
            .iter()
            .find(|(n, _)| n == names::CGROUP_INDEX)
            .unwrap()
            .1;
        let lines: Vec<&str> = index.lines().collect();
        assert_eq!(lines[..2], ["status\tok", "walk\tfull"]);
        assert!(lines[2].ends_with("\t-\t/"), "{index}");
        assert!(lines[3].ends_with("\tm\t/a"), "{index}");
        assert!(lines[4].ends_with("\tmi\t/a/b"), "{index}");
        assert_eq!(c.live.keys().collect::<Vec<_>>(), ["/a", "/a/b"]);
        // Between walks only the live groups are read; a removed one is simply absent.
        std::fs::remove_dir_all(cg.join("a/b")).unwrap();
        c.read(false, false, None, None);
        let index = &c
            .out
            .iter()
            .find(|(n, _)| n == names::CGROUP_INDEX)
            .unwrap()
            .1;
        assert_eq!(index.lines().nth(1), Some("walk\tactive"));
        assert_eq!(index.lines().count(), 3, "{index}");
        assert!(
            c.out
                .iter()
                .any(|(n, _)| n == "sys/fs/cgroup/a/memory.stat")
        );
    }

    #[test]
    fn a_thrashing_group_is_read_every_tick_while_its_counters_move() {
        let t = tempfile::tempdir().unwrap();
        let cg = t.path().join("sys/fs/cgroup");
        for g in ["thrash", "idle", "old"] {
            std::fs::create_dir_all(cg.join(g)).unwrap();
            std::fs::write(cg.join(g).join("memory.pressure"), "").unwrap();
        }
        std::fs::write(cg.join("cgroup.controllers"), "io memory\n").unwrap();
        let stat = |g: &str, refaults: u64| {
            let text = format!("file 1\nworkingset_refault_file {refaults}\npgscan 0\n");
            std::fs::write(cg.join(g).join("memory.stat"), text).unwrap();
        };
        stat("thrash", 100);
        stat("idle", 0);
        stat("old", 7);
        let mut c = Cgroups::new(&t.path().join("proc"), &t.path().join("sys"));
        let read = |c: &mut Cgroups, refresh: bool| -> Vec<String> {
            c.read(refresh, false, None, None);
            let index = &c
                .out
                .iter()
                .find(|(n, _)| n == names::CGROUP_INDEX)
                .unwrap()
                .1;
            index
                .lines()
                .skip(2)
                .map(|l| l.rsplit('\t').next().unwrap().to_owned())
                .collect()
        };
        let pressure = |c: &Cgroups| {
            c.out
                .iter()
                .any(|(n, _)| n == "sys/fs/cgroup/thrash/memory.pressure")
        };
        assert_eq!(read(&mut c, true), ["/", "/idle", "/old", "/thrash"]);
        // Seen with refaults at the walk: read again at the next tick to find out. /thrash's
        // moved: it is read with its other files, and then every tick...
        stat("thrash", 900);
        assert_eq!(read(&mut c, false), ["/old", "/thrash"]);
        assert!(pressure(&c));
        stat("thrash", 1000);
        assert_eq!(
            read(&mut c, false),
            ["/thrash"],
            "/old did not move: dropped"
        );
        assert!(pressure(&c));
        // ... until LIVE_READS reads without a move, where only memory.stat is read.
        for _ in 0..LIVE_READS {
            assert_eq!(read(&mut c, false), ["/thrash"]);
            assert!(!pressure(&c));
        }
        // LIVE_READS reads without a move: no longer read between walks.
        assert!(read(&mut c, false).is_empty());
        // Moved since its last read, found at the next walk.
        stat("old", 8);
        read(&mut c, true);
        assert_eq!(read(&mut c, false), ["/old"]);
    }

    /// Prints what the reads cost on this machine: `cargo test --release --lib cgroups_cost
    /// -- --ignored --nocapture` (docs/REFERENCE.md, "Dirty domains").
    #[test]
    #[ignore = "a measurement, not a check"]
    fn cgroups_cost() {
        let mut c = Cgroups::new(Path::new("/proc"), Path::new("/sys"));
        let vmstat = std::fs::read_to_string("/proc/vmstat").unwrap();
        let time = |c: &mut Cgroups, refresh: bool, n: u32| {
            let t = std::time::Instant::now();
            for _ in 0..n {
                c.read(refresh, false, Some(&vmstat), None);
            }
            t.elapsed().as_secs_f64() * 1e6 / f64::from(n)
        };
        time(&mut c, true, 5);
        let slow = time(&mut c, true, 200);
        let tick = time(&mut c, false, 2000);
        let groups = c
            .out
            .iter()
            .filter(|(n, _)| n.ends_with("memory.stat"))
            .count();
        println!(
            "slow refresh {slow:.1} µs, other ticks {tick:.2} µs, {groups} groups with memory.stat; \
             at 1 Hz with a refresh every {} ticks: {:.2} µs/s",
            super::super::SLOW_REFRESH_TICKS,
            (slow + tick * f64::from(super::super::SLOW_REFRESH_TICKS - 1))
                / f64::from(super::super::SLOW_REFRESH_TICKS)
        );
    }
}
