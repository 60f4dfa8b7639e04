//! Dropping the kernel's caches: `sync`, then `1` (page cache) or `3` (also dentries and
//! inodes) into /proc/sys/vm/drop_caches, timed.
//!
//! Owns: that one write and the explanation of why it is unavailable (not root, read-only
//! /proc/sys as in most containers). Global and slow on big machines: call it off the UI thread.
//! Must not touch: any other file; it never writes anything but the level digit.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{Access, access};

const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Why caches could not be dropped.
#[derive(Debug, thiserror::Error)]
pub enum DropError {
    /// Only 1 and 3 are offered.
    #[error(
        "drop level {0} is not offered: use 1 (page cache) or 3 (page cache, dentries and inodes)"
    )]
    BadLevel(u8),
    /// The check before writing failed.
    #[error("{0}")]
    Unavailable(String),
    /// The write itself failed.
    #[error("writing {level} to {DROP_CACHES} failed: {source}")]
    Write {
        /// The level written.
        level: u8,
        /// What the kernel said.
        source: std::io::Error,
    },
}

/// Ok when this process may drop caches; otherwise why not, in words for the UI.
pub fn availability() -> Result<(), String> {
    let euid = rustix::process::geteuid();
    if !euid.is_root() {
        return Err(format!(
            "dropping caches needs root (running as uid {}); fio's invalidate=1 drops one file's pages without it",
            euid.as_raw()
        ));
    }
    if !Path::new(DROP_CACHES).exists() {
        return Err(format!("{DROP_CACHES} does not exist on this kernel"));
    }
    access(DROP_CACHES, Access::WRITE_OK).map_err(|e| {
        if e == rustix::io::Errno::ROFS {
            format!("{DROP_CACHES} is on a read-only /proc/sys (usual in containers)")
        } else {
            format!("{DROP_CACHES} is not writable: {e}")
        }
    })
}

/// Syncs, then drops caches at `level` (1 or 3). Returns the time the sync and the drop took.
pub fn drop_caches(level: u8) -> Result<Duration, DropError> {
    if level != 1 && level != 3 {
        return Err(DropError::BadLevel(level));
    }
    availability().map_err(DropError::Unavailable)?;
    let t0 = Instant::now();
    // Dirty pages are never dropped: write them back first so the drop means what it says.
    rustix::fs::sync();
    let write = |level: u8| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).open(DROP_CACHES)?;
        let digit = [b'0' + level];
        // One write(2) call that must take the whole digit: the kernel acts inside it.
        let n = f.write(&digit)?;
        if n != digit.len() {
            return Err(std::io::Error::other("the kernel took 0 bytes"));
        }
        Ok(())
    };
    write(level).map_err(|source| DropError::Write { level, source })?;
    Ok(t0.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_1_and_3() {
        for l in [0, 2, 4, 7] {
            let e = drop_caches(l).unwrap_err();
            assert!(matches!(e, DropError::BadLevel(x) if x == l));
            assert!(e.to_string().contains("use 1"), "{e}");
        }
    }
}
