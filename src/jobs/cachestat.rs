//! How much of one file sits in the page cache: cachestat(2) on Linux ≥ 6.5, mincore(2) before.
//!
//! Owns: the two raw calls, each in one tiny `unsafe` function. cachestat also gives dirty and
//! writeback pages; mincore gives residency only. Opens the file read-only and never reads its
//! data (mincore maps it but does not fault pages in). Must not touch: anything else.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Which call answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheMethod {
    /// cachestat(2): cached, dirty and writeback pages.
    Cachestat,
    /// mmap + mincore(2): resident pages only.
    Mincore,
}

/// A file's page-cache residency, in pages of the system page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheInfo {
    /// Pages of the file in the page cache.
    pub pages_cached: u64,
    /// Pages the file spans (its size rounded up).
    pub pages_total: u64,
    /// Dirty pages (cachestat only).
    pub dirty: Option<u64>,
    /// Pages under writeback (cachestat only).
    pub writeback: Option<u64>,
    /// How it was measured.
    pub method: CacheMethod,
}

/// Set once cachestat returned ENOSYS, so later calls go straight to mincore.
static NO_CACHESTAT: AtomicBool = AtomicBool::new(false);
/// mincore looks at this much of the file per mapping, so huge files need little memory.
const WINDOW: u64 = 256 << 20;

/// Measures `path` (a regular file; `/proc/PID/fd/N` works too, even for deleted files).
pub fn cached_pages(path: &Path) -> std::io::Result<CacheInfo> {
    let f = File::open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    let page = rustix::param::page_size() as u64;
    let pages_total = meta.len().div_ceil(page);
    if !NO_CACHESTAT.load(Ordering::Relaxed) {
        match crate::source::cachestat(std::os::fd::AsFd::as_fd(&f)) {
            Ok(cs) => {
                return Ok(CacheInfo {
                    pages_cached: cs.nr_cache,
                    pages_total,
                    dirty: Some(cs.nr_dirty),
                    writeback: Some(cs.nr_writeback),
                    method: CacheMethod::Cachestat,
                });
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                NO_CACHESTAT.store(true, Ordering::Relaxed);
            }
            Err(e) => return Err(e),
        }
    }
    let pages_cached = mincore_count(&f, meta.len(), page)?;
    Ok(CacheInfo {
        pages_cached,
        pages_total,
        dirty: None,
        writeback: None,
        method: CacheMethod::Mincore,
    })
}

/// Forces the mincore path (for tests on kernels that have cachestat).
pub fn cached_pages_mincore(path: &Path) -> std::io::Result<u64> {
    let f = File::open(path)?;
    let len = f.metadata()?.len();
    mincore_count(&f, len, rustix::param::page_size() as u64)
}

fn mincore_count(f: &File, len: u64, page: u64) -> std::io::Result<u64> {
    let mut vec = Vec::new();
    let mut cached = 0;
    let mut off = 0;
    while off < len {
        let n = WINDOW.min(len - off);
        vec.clear();
        vec.resize(n.div_ceil(page) as usize, 0u8);
        mincore_window(f.as_raw_fd(), off, n as usize, &mut vec)?;
        cached += vec.iter().filter(|b| *b & 1 == 1).count() as u64;
        off += n;
    }
    Ok(cached)
}

#[allow(unsafe_code)]
fn mincore_window(fd: RawFd, off: u64, len: usize, vec: &mut [u8]) -> std::io::Result<()> {
    let off = libc::off_t::try_from(off).map_err(std::io::Error::other)?;
    // SAFETY: a fresh read-only shared mapping of `len` bytes of an open file, at a
    // page-aligned offset (multiples of WINDOW). mincore writes one byte per page of it into
    // `vec`, which the caller sized to len / page rounded up. Nothing dereferences the
    // mapping, and it is unmapped before returning on every path.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            off,
        );
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let r = libc::mincore(addr, len, vec.as_mut_ptr());
        let err = std::io::Error::last_os_error();
        libc::munmap(addr, len);
        if r != 0 {
            return Err(err);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_fresh_written_file_is_cached_and_both_methods_agree() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut f = File::create(&p).unwrap();
        // 1 MiB + 1 byte: the last page is partial.
        f.write_all(&vec![7u8; (1 << 20) + 1]).unwrap();
        drop(f);
        let page = rustix::param::page_size() as u64;
        let info = cached_pages(&p).unwrap();
        assert_eq!(info.pages_total, ((1 << 20) + page) / page);
        // Just written: every page is in the cache (dirty or not).
        assert_eq!(info.pages_cached, info.pages_total, "{info:?}");
        let m = cached_pages_mincore(&p).unwrap();
        assert_eq!(m, info.pages_total);
    }

    #[test]
    fn empty_file_and_non_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("empty");
        File::create(&p).unwrap();
        let info = cached_pages(&p).unwrap();
        assert_eq!((info.pages_cached, info.pages_total), (0, 0));
        assert_eq!(cached_pages_mincore(&p).unwrap(), 0);
        assert!(cached_pages(dir.path()).is_err());
        assert!(cached_pages(&dir.path().join("missing")).is_err());
    }
}
