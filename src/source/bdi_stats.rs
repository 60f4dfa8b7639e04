//! Reads each block device BDI's debugfs `stats` into the sample (spec §15.1): its dirty and
//! writeback pages and the kernel's write-bandwidth estimate, for the disks' "to write" and
//! drain ETA (`model::drain`).
//!
//! Owns: listing `<sys root>/kernel/debug/bdi` (on the slow refresh), deciding when to read,
//! and the `names::bdi_stats` files. Must not touch: parsing beyond meminfo's two gating
//! lines, derivation, mounting debugfs (pagewatch never mounts it).
//!
//! Only BDIs with a `wb_stats` beside their `stats` are read: that file came in 6.10 with the
//! `stats` summed over all the BDI's wbs; before, `stats` is the root cgroup's wb alone and a
//! cgroup-v2 writer's pages are missing from it (spec §15.1; seen in the lab, 5.10: vda's
//! `BdiReclaimable` + `BdiWriteback` 0 kB while meminfo's Dirty + Writeback held 135 MB of a
//! `dd` in `/box`), so older kernels get the apportioned figures (`model::drain`).
//!
//! Cost: nothing is read without root and a mounted debugfs (the listing fails once a slow
//! refresh). With them, each BDI named `MAJ:MIN` with a major other than 0 (block devices;
//! 0:N are FUSE, NFS and the like, without a disk row) is read every tick while meminfo's
//! Dirty + Writeback is at least `GATE_KB`; an idle machine, with a few MB dirty, reads none.
//! Every failed read is an absent file, never an error. A failed listing (no root: debugfs
//! is root's; or debugfs not mounted) is said in every sample, as `names::BDI_STATS_STATUS`
//! (`denied|absent|error TEXT`), so that the screens, batch text and JSON say why the disks'
//! figures are apportioned, in replay too.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::collect::{Collect, Pass};
use super::read::read_optional;
use crate::Result;
use crate::sample::names;

/// Read the BDIs' stats while meminfo's Dirty + Writeback is at least this (64 MiB): below it
/// every disk drains in about a second, and the apportioned figures (`model::drain`) say
/// enough.
pub(super) const GATE_KB: u64 = 64 * 1024;

/// The debugfs BDI stats collector.
pub(super) struct BdiStats {
    dir: PathBuf,
    /// The block device BDIs at the last listing, with their sample names.
    list: Vec<(String, String)>,
    listed: bool,
    /// Why the last listing failed: `names::BDI_STATS_STATUS`'s text.
    status: Option<String>,
    /// What this tick read: (sample name, text).
    out: Vec<(String, String)>,
}

impl BdiStats {
    pub fn new(sys_root: &Path) -> Self {
        Self {
            dir: sys_root.join("kernel/debug/bdi"),
            list: Vec::new(),
            listed: false,
            status: None,
            out: Vec::new(),
        }
    }

    fn relist(&mut self) {
        let listing = std::fs::read_dir(&self.dir);
        self.status = listing.as_ref().err().map(|e| status_text(&self.dir, e));
        let mut bdis: Vec<String> = listing
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| is_block_bdi(n))
                    // Before 6.10 (no wb_stats) `stats` misses the cgroups' wbs (spec §15.1).
                    .filter(|n| self.dir.join(n).join("wb_stats").exists())
                    .collect()
            })
            .unwrap_or_default();
        bdis.sort();
        self.list = bdis
            .into_iter()
            .map(|b| {
                let name = names::bdi_stats(&b);
                (b, name)
            })
            .collect();
        self.listed = true;
    }
}

/// `names::BDI_STATS_STATUS`'s line for a failed listing of `dir`: `denied` (no permission:
/// not root), `absent` (debugfs not mounted), else `error`, then the path and the OS's words.
fn status_text(dir: &Path, e: &std::io::Error) -> String {
    let kind = match e.kind() {
        std::io::ErrorKind::PermissionDenied => "denied",
        std::io::ErrorKind::NotFound => "absent",
        _ => "error",
    };
    format!("{kind} {}: {e}\n", dir.display())
}

/// `MAJ:MIN` with a major other than 0.
fn is_block_bdi(name: &str) -> bool {
    name.split_once(':').is_some_and(|(maj, min)| {
        maj.parse::<u32>().is_ok_and(|m| m != 0) && min.parse::<u32>().is_ok()
    })
}

/// meminfo's `Dirty` + `Writeback`, kB; `None` when either is missing.
fn waiting_kb(meminfo: &str) -> Option<u64> {
    let field = |key: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].split_whitespace().next()?.parse().ok()
    };
    Some(field("Dirty:")? + field("Writeback:")?)
}

impl<'a> Collect<'a> for BdiStats {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if pass.refresh || !self.listed {
            self.relist();
        }
        self.out.clear();
        let due = !self.list.is_empty()
            && pass
                .fresh(names::MEMINFO)
                .and_then(waiting_kb)
                .is_some_and(|kb| kb >= GATE_KB);
        if due {
            for (bdi, name) in &self.list {
                let path = self.dir.join(bdi).join("stats");
                if let Ok(Some(t)) = read_optional(&path, pass.buf) {
                    self.out.push((name.clone(), t));
                }
            }
        }
        let this: &'a Self = self;
        for (name, text) in &this.out {
            pass.put(name, Cow::Borrowed(text));
        }
        if let Some(s) = &this.status {
            pass.put(names::BDI_STATS_STATUS, Cow::Borrowed(s));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_bdis_and_the_gate() {
        assert!(is_block_bdi("254:0") && is_block_bdi("8:16"));
        assert!(!is_block_bdi("0:52") && !is_block_bdi("btrfs-1") && !is_block_bdi("8:"));
        let m = "MemFree: 5 kB\nDirty:           65000 kB\nWriteback:         536 kB\n";
        assert_eq!(waiting_kb(m), Some(65_536));
        assert_eq!(waiting_kb("Dirty: 5 kB\n"), None);
    }

    #[test]
    fn only_bdis_whose_stats_sum_the_cgroups_wbs_are_listed() {
        // 5.10's debugfs: `stats` alone, the root wb's (spec §15.1); 6.10+: `wb_stats` too.
        let sys = tempfile::tempdir().unwrap();
        let bdi = sys.path().join("kernel/debug/bdi");
        for (name, files) in [
            ("254:0", &["stats"][..]),
            ("254:16", &["stats", "wb_stats"]),
        ] {
            std::fs::create_dir_all(bdi.join(name)).unwrap();
            for f in files {
                std::fs::write(bdi.join(name).join(f), "BdiWriteback: 0 kB\n").unwrap();
            }
        }
        let mut s = BdiStats::new(sys.path());
        s.relist();
        let listed: Vec<&str> = s.list.iter().map(|(b, _)| b.as_str()).collect();
        assert_eq!(listed, ["254:16"]);
    }

    #[test]
    fn a_failed_listing_says_why() {
        let dir = tempfile::tempdir().unwrap();
        // debugfs not mounted: no `kernel/debug/bdi` under the sys root.
        let mut b = BdiStats::new(dir.path());
        b.relist();
        let s = b.status.clone().unwrap();
        assert!(
            s.starts_with("absent ") && s.contains("kernel/debug/bdi"),
            "{s}"
        );
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        let t = status_text(Path::new("/sys/kernel/debug/bdi"), &denied);
        assert!(t.starts_with("denied /sys/kernel/debug/bdi: "), "{t}");
        // Listed: nothing to say.
        let sda = dir.path().join("kernel/debug/bdi/8:0");
        std::fs::create_dir_all(&sda).unwrap();
        std::fs::write(sda.join("wb_stats"), "").unwrap();
        b.relist();
        assert_eq!(b.status, None);
        assert_eq!(b.list.len(), 1);
    }
}
