//! The cachestat(2) call itself (Linux 6.5+, syscall 451, spec §8, §15.4): a file's cached,
//! dirty, writeback and evicted pages. Used by the dirty-files scan (`source::dirty_files`)
//! and the page-cache jobs (`jobs::cachestat`).
//!
//! Owns: the one `unsafe` call and the kernel's structs. Must not touch: opening files,
//! deciding what to measure.

use std::os::fd::{AsRawFd, BorrowedFd};

/// cachestat's number in the generic syscall table (x86_64, aarch64, riscv64, …).
const SYS_CACHESTAT: libc::c_long = 451;

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

/// The kernel's `struct cachestat`, field names as in the uapi header; all in pages.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::struct_field_names, reason = "the kernel's own names")]
#[allow(missing_docs)]
pub struct Cachestat {
    pub nr_cache: u64,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub nr_evicted: u64,
    pub nr_recently_evicted: u64,
}

/// cachestat(2) over the whole of the open file `fd`. ENOSYS before 6.5, EPERM when the
/// caller may neither write nor own the file (since 2025, spec §8).
#[allow(unsafe_code)]
pub fn cachestat(fd: BorrowedFd<'_>) -> std::io::Result<Cachestat> {
    // len 0 = to the end of the file.
    let range = CachestatRange { off: 0, len: 0 };
    let mut cs = Cachestat::default();
    // SAFETY: cachestat(fd, *const range, *mut cachestat, flags) reads `range` and writes one
    // `struct cachestat` (five u64, matching the #[repr(C)] layouts above) into `cs`; both
    // outlive the call. `fd` is open for the duration (a borrowed fd).
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            fd.as_raw_fd(),
            &raw const range,
            &raw mut cs,
            0 as libc::c_uint,
        )
    };
    if r == 0 {
        Ok(cs)
    } else {
        Err(std::io::Error::last_os_error())
    }
}
