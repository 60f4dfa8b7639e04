//! The "Dirty files" table (spec §15.4): which files hold the dirty and writeback pages, from
//! the dirty-files scan's cachestat(2) records.
//!
//! Owns: `DirtyFiles` and `FileRow`: ranking by dirty + writeback bytes, the device name of
//! each file, and why the table is empty when it is. Must not touch: I/O.

use serde::Serialize;

use crate::parse::Snapshot;
use crate::parse::dirty_files::Scan;

/// The table holds this many files at most.
pub const TOP: usize = 10;

/// One file of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileRow {
    /// Its path (` (deleted)` when unlinked).
    pub path: String,
    /// The device it lives on: diskstats' name for its `st_dev` (`vda1`), else `MAJ:MIN`.
    pub device: String,
    /// The process that held it open.
    pub pid: u32,
    /// That process's comm.
    pub comm: String,
    /// The process had exited (or closed it): measured by path.
    pub exited: bool,
    /// Dirty bytes.
    pub dirty_bytes: u64,
    /// Bytes under writeback.
    pub writeback_bytes: u64,
    /// Bytes of the file in the page cache.
    pub cached_bytes: u64,
}

/// The table and its state.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DirtyFiles {
    /// The files, most dirty + writeback bytes first, at most `TOP`.
    pub files: Vec<FileRow>,
    /// Why there are none, or what is missing: cachestat(2) absent (before 6.5), files that
    /// could not be measured (another user's, without root).
    pub note: Option<String>,
}

/// The table from the snapshot's scan; `None` when the sample carries none.
#[must_use]
pub fn derive(cur: &Snapshot) -> Option<DirtyFiles> {
    let scan: &Scan = cur.dirty_files.as_ref()?;
    let page = cur.page_size;
    let mut files: Vec<FileRow> = scan
        .files
        .iter()
        .map(|f| FileRow {
            path: f.path.clone(),
            device: cur
                .disks
                .iter()
                .find(|d| (d.major, d.minor) == (f.major, f.minor))
                .map_or_else(|| format!("{}:{}", f.major, f.minor), |d| d.name.clone()),
            pid: f.pid,
            comm: f.comm.clone(),
            exited: f.by_path,
            dirty_bytes: f.dirty * page,
            writeback_bytes: f.writeback * page,
            cached_bytes: f.cache * page,
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.dirty_bytes + f.writeback_bytes));
    files.truncate(TOP);
    let note = if scan.state == "no-cachestat" {
        Some("cachestat(2) is missing (Linux 6.5+): no per-file figures".to_owned())
    } else if let Some(why) = scan.state.strip_prefix("error ") {
        Some(format!("scan failed: {why}"))
    } else if scan.denied > 0 {
        Some(format!(
            "{} files not measured (another user's: root sees all)",
            scan.denied
        ))
    } else {
        None
    };
    Some(DirtyFiles { files, note })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::DiskCounters;
    use std::sync::Arc;

    #[test]
    fn ranked_by_dirty_and_writeback_with_device_names() {
        let scan = crate::parse::dirty_files::parse(
            "state ok\nscan 1\ndenied 0\n\
             f 10 254:1 5 100 10 0 cp\t/a\n\
             x 11 254:1 6 900 500 20 dd\t/b\n\
             f 12 8:3 7 50 40 1 tar\t/c\n",
        )
        .unwrap();
        let s = Snapshot {
            page_size: 4096,
            disks: vec![Arc::new(DiskCounters {
                major: 254,
                minor: 1,
                name: "vda1".into(),
                ..DiskCounters::default()
            })],
            dirty_files: Some(scan),
            ..Snapshot::default()
        };
        let t = derive(&s).unwrap();
        let order: Vec<&str> = t.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(order, ["/b", "/c", "/a"]);
        let b = &t.files[0];
        assert_eq!((b.dirty_bytes, b.writeback_bytes), (500 * 4096, 20 * 4096));
        assert_eq!(
            (b.device.as_str(), b.exited, b.comm.as_str()),
            ("vda1", true, "dd")
        );
        assert_eq!(t.files[1].device, "8:3", "no diskstats line: the number");
        assert_eq!(t.note, None);
        let none = Snapshot {
            dirty_files: Some(crate::parse::dirty_files::parse("state no-cachestat\n").unwrap()),
            ..Snapshot::default()
        };
        let t = derive(&none).unwrap();
        assert!(t.files.is_empty());
        assert!(t.note.unwrap().contains("Linux 6.5"));
        assert_eq!(derive(&Snapshot::default()), None);
    }
}
