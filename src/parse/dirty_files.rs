//! The dirty-files scan's pseudo-file (`names::DIRTY_FILES`, spec §15.4): the scan's state
//! and one record per file holding dirty or writeback pages.
//!
//! Owns: `Scan`, `FileRec` and their parser. Must not touch: derivation, I/O.

use serde::Serialize;

use crate::sample::names;
use crate::{Error, Result};

/// One file's record, pages as cachestat(2) counts them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileRec {
    /// Measured by its path after its owner exited (`x`), not through the owner's fd (`f`).
    pub by_path: bool,
    /// The process that held it open (the last one seen, when `by_path`).
    pub pid: u32,
    /// The file's device (`st_dev`): a partition's or a whole disk's number.
    pub major: u32,
    /// Its minor number.
    pub minor: u32,
    /// Its inode.
    pub ino: u64,
    /// `nr_cache`, pages.
    pub cache: u64,
    /// `nr_dirty`, pages.
    pub dirty: u64,
    /// `nr_writeback`, pages.
    pub writeback: u64,
    /// The owner's comm.
    pub comm: String,
    /// The path as `/proc/PID/fd` shows it (` (deleted)` when unlinked).
    pub path: String,
}

/// One scan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Scan {
    /// `ok`, `no-cachestat` (ENOSYS: before 6.5) or `error TEXT`.
    pub state: String,
    /// The monotonic time of the scan, ns.
    pub scan_ns: u64,
    /// Files it could not open or measure (another user's without root: EPERM).
    pub denied: u32,
    /// The files with dirty or writeback pages.
    pub files: Vec<FileRec>,
}

/// Parses the pseudo-file.
pub fn parse(text: &str) -> Result<Scan> {
    let file = names::DIRTY_FILES;
    let mut out = Scan::default();
    for (i, line) in text.lines().enumerate() {
        let bad = |what: &str| Error::parse(file, i + 1, what.to_owned());
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "state" => rest.clone_into(&mut out.state),
            "scan" => out.scan_ns = rest.parse().map_err(|_| bad("scan: expected ns"))?,
            "denied" => out.denied = rest.parse().map_err(|_| bad("denied: expected a count"))?,
            "f" | "x" => out.files.push(record(key == "x", rest).ok_or_else(|| {
                bad("expected PID MAJ:MIN INO CACHE DIRTY WRITEBACK COMM<TAB>PATH")
            })?),
            "" => {}
            _ => return Err(bad(&format!("unknown line {key:?}"))),
        }
    }
    Ok(out)
}

fn record(by_path: bool, rest: &str) -> Option<FileRec> {
    let (head, path) = rest.split_once('\t')?;
    let mut w = head.splitn(7, ' ');
    let pid = w.next()?.parse().ok()?;
    let (major, minor) = w.next()?.split_once(':')?;
    Some(FileRec {
        by_path,
        pid,
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        ino: w.next()?.parse().ok()?,
        cache: w.next()?.parse().ok()?,
        dirty: w.next()?.parse().ok()?,
        writeback: w.next()?.parse().ok()?,
        comm: w.next()?.to_owned(),
        path: path.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_errors() {
        let t = "state ok\nscan 5000000000\ndenied 2\n\
            f 4242 254:1 131 524288 500000 24288 dd\t/mnt/big file.iso\n\
            x 4242 254:1 132 10 9 0 my cp\t/mnt/b (deleted)\n";
        let s = parse(t).unwrap();
        assert_eq!(
            (s.state.as_str(), s.scan_ns, s.denied),
            ("ok", 5_000_000_000, 2)
        );
        assert_eq!(s.files.len(), 2);
        let f = &s.files[0];
        assert_eq!((f.pid, f.major, f.minor, f.ino), (4242, 254, 1, 131));
        assert_eq!((f.cache, f.dirty, f.writeback), (524_288, 500_000, 24_288));
        assert_eq!(
            (f.comm.as_str(), f.path.as_str()),
            ("dd", "/mnt/big file.iso")
        );
        assert!(s.files[1].by_path);
        assert_eq!(s.files[1].comm, "my cp", "a comm may hold a space");
        let e = parse("state ok\nf 1 2:3 x\tp\n").unwrap_err().to_string();
        assert!(e.starts_with("proc/dirty-files:2:"), "{e}");
    }
}
