//! Reading one kernel file: the open that refuses anything but a regular file, the reads from
//! offset 0 sized to the file, when a short read is the end (seq_file records), and the text.
//!
//! Owns: those read helpers, shared by the sample's files (`fs`), the process walk (`procs`,
//! `procs_visit`), the cgroup walk (`cgroups`) and captured trees (`tree`); and whether a proc
//! root is the one pagewatch runs in (`own_pid`, for the walker and the pid lister). Must not
//! touch: which files a sample holds.

use std::borrow::Cow;
use std::fs::File;
use std::io::ErrorKind;
use std::path::Path;

use crate::{Error, Result};

/// How a procfs file's text comes out of the kernel's seq_file: a read returns whole records
/// and stops short of the size asked for only at the end of the file or when the next record
/// does not fit in the kernel's buffer (a page, or larger when one record needed more).
/// `seq_read_iter` in fs/seq_file.c.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Records {
    /// One record (`single_open`; proc_sys handlers return the whole value too): any short
    /// read is the whole file.
    One,
    /// Records of at most this many bytes in a page-sized buffer: a short read that leaves
    /// more than this of the page unfilled is the end.
    UpTo(usize),
    /// Records of unknown size (zoneinfo has one per NUMA node, a few KiB each): read until
    /// a read returns nothing.
    Unknown,
}

/// Whether an I/O error means "this kernel does not provide the file".
pub(super) fn is_absent(e: &std::io::Error) -> bool {
    // EOPNOTSUPP: PSI compiled in but disabled (psi=0); ENODEV/ENXIO: vanished device.
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Unsupported)
        || matches!(e.raw_os_error(), Some(95 | 19 | 6))
}

/// The most pagewatch reads of one file: many times the largest real one (diskstats with
/// 10,000 devices is about 1.3 MB), so a file that never ends (a link to /dev/zero in a tree)
/// is an error, not an allocation that grows until the process aborts.
pub const MAX_FILE_BYTES: usize = 16 << 20;

/// Opens `path` for reading, refusing anything that is not a regular file (every /proc and
/// /sys file is one): a FIFO or a device in a captured tree would block or never end. The
/// open itself does not block (O_NONBLOCK), even on a FIFO without a writer. The check is
/// `userfile::open_regular`, the one the playbook and config readers use too.
///
/// One exception, for the test of a read that blocks (`tests/tmux_e2e.rs`, which has no other
/// way to make a read hang): with `PAGEWATCH_TEST_BLOCKING_FIFO=1` in the environment a FIFO
/// is opened and read as the kernel would block on it.
pub(super) fn open_regular(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::FileTypeExt;
    static BLOCKING_FIFO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let blocking_fifo = *BLOCKING_FIFO
        .get_or_init(|| std::env::var_os("PAGEWATCH_TEST_BLOCKING_FIFO").is_some_and(|v| v == "1"));
    if blocking_fifo && std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
        return File::open(path);
    }
    crate::userfile::open_regular(path, false)
}

/// Whether `f` is on procfs, where re-reading from offset 0 regenerates the text.
pub(super) fn is_procfs(f: &File) -> bool {
    rustix::fs::fstatfs(f).is_ok_and(|s| s.f_type == rustix::fs::PROC_SUPER_MAGIC)
}

/// pagewatch's own pid, where `proc_root` is the /proc it runs in (`self` links to it); `None`
/// for a captured tree (`source::scope` takes whatever `self` links to: a captured tree's
/// recorder).
pub(super) fn own_pid(proc_root: &Path) -> Option<u32> {
    let pid = std::process::id();
    let link = std::fs::read_link(proc_root.join("self")).ok()?;
    (link.as_os_str() == pid.to_string().as_str()).then_some(pid)
}

/// The read size for a file first read, or read whole: 16 KiB.
pub(super) const DEFAULT_STEP: usize = 16 * 1024;

/// The read size for a file last `len` bytes long: room for it to grow, and at least 512.
pub(super) fn step_for(len: usize) -> usize {
    (len + len / 2 + 1).next_power_of_two().max(512)
}

/// Reads all of `f` from offset 0 into `buf` (grown as needed, never shrunk), asking for `step`
/// bytes per read; returns the length. With `step` above the length this is one read, plus
/// the read that sees EOF unless the file's `records` let a short read end it.
///
/// The size asked for matters: a sysctl read makes the kernel allocate and zero a buffer that
/// size (`proc_sys_call_handler`), which with the whole 64 KiB buffer cost more than the read.
///
/// `records`: how the file, known to be on procfs, comes out of the kernel (`Records`); `None`
/// for any other file, which is read until a read returns nothing. The read that only sees
/// EOF costs a system call: seq_file finds its place without generating the text again when
/// the offset is where the last read ended (`m->read_pos`). At any other offset it does
/// generate it again from the start (`traverse`): on this VM /proc/vmstat cost 30 µs read
/// from 0, 1.8 µs at its end right after, and 31 µs at offset 100 (Python `os.pread`).
///
/// The reads are plain `pread` system calls (rustix): libc's wrapper is a cancellation point,
/// which costs a cold pass through the thread's cancellation state on every call.
pub(super) fn read_from_start(
    f: &File,
    buf: &mut Vec<u8>,
    step: usize,
    records: Option<Records>,
) -> std::io::Result<usize> {
    // No larger start than the first step: each zeroed page of a buffer stays resident
    // (issue #27: the walker's and the source's 64 KiB were 128 KiB of RSS for files of
    // under 16 KiB).
    let mut n = 0;
    loop {
        if n >= MAX_FILE_BYTES {
            return Err(std::io::Error::new(
                ErrorKind::InvalidData,
                format!(
                    "longer than {} MiB: not a kernel file",
                    MAX_FILE_BYTES >> 20
                ),
            ));
        }
        if n + step > buf.len() {
            buf.resize((buf.len() * 2).max(n + step), 0);
        }
        match rustix::io::pread(f, &mut buf[n..n + step], n as u64) {
            Ok(0) => return Ok(n),
            Ok(k) if k < step && short_is_end(records, k) => return Ok(n + k),
            Ok(k) => n += k,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Whether a read that returned `k` bytes, fewer than asked for, was the end of a procfs file
/// cut into `records` (`Records`).
pub(super) fn short_is_end(records: Option<Records>, k: usize) -> bool {
    match records {
        Some(Records::One) => true,
        Some(Records::UpTo(max)) => k + max < rustix::param::page_size(),
        Some(Records::Unknown) | None => false,
    }
}

/// The bytes as text; kernel files are ASCII, but anything else is kept, lossily.
pub(super) fn text(bytes: &[u8]) -> Cow<'_, str> {
    // `from_utf8` checks ASCII a word at a time; the lossy scan is several times slower.
    std::str::from_utf8(bytes).map_or_else(|_| String::from_utf8_lossy(bytes), Cow::Borrowed)
}

/// Reads a whole file as text; `None` when the file does not exist on this machine.
pub(crate) fn read_optional(path: &Path, buf: &mut Vec<u8>) -> Result<Option<String>> {
    let res = open_regular(path).and_then(|f| read_from_start(&f, buf, DEFAULT_STEP, None));
    match res {
        Ok(n) => Ok(Some(text(&buf[..n]).into_owned())),
        Err(e) if is_absent(&e) => Ok(None),
        Err(source) => Err(Error::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// A directory whose small files are read relative to it: one path component per open instead
/// of the whole path from `/` (`/sys/class/bdi/7:12/max_ratio` walks five, each a dentry
/// lookup and, on sysfs, a revalidation), and on sysfs one read per file: an attribute is one
/// record of at most a page (`sysfs_kf_seq_show`), so a short read is the whole of it and the
/// read that would only see EOF is left out. Each file is still checked to be regular
/// (`open_regular`'s rule: a FIFO in a captured tree must not block).
pub(super) struct Dir {
    dir: File,
    sysfs: bool,
}

impl Dir {
    /// Opens the directory `path`; `None` when it cannot be.
    pub(super) fn open(path: &Path) -> Option<Self> {
        // SYSFS_MAGIC (include/uapi/linux/magic.h); rustix names only procfs's and NFS's.
        const SYSFS_MAGIC: rustix::fs::FsWord = 0x6265_6572;
        let dir = File::open(path).ok()?;
        let sysfs = rustix::fs::fstatfs(&dir).is_ok_and(|s| s.f_type == SYSFS_MAGIC);
        Some(Self { dir, sysfs })
    }

    /// The text of the regular file `rel` (relative to the directory); `None` when it is
    /// absent, not regular or cannot be read.
    pub(super) fn read(&self, rel: &str, buf: &mut Vec<u8>) -> Option<String> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let f = File::from(rustix::fs::openat(&self.dir, rel, flags, Mode::empty()).ok()?);
        if !f.metadata().ok()?.file_type().is_file() {
            return None;
        }
        let records = self.sysfs.then_some(Records::One);
        let n = read_from_start(&f, buf, 4096, records).ok()?;
        Some(text(&buf[..n]).into_owned())
    }
}

/// Whether an error is a permission refusal (as non-root on another user's process).
pub(super) fn denied(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::PermissionDenied
}

/// A value with every newline but a final one turned into `?` (the format is line-based).
pub(super) fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    let body = s.strip_suffix('\n').unwrap_or(s);
    if body.contains('\n') {
        let mut t = body.replace('\n', "?");
        if body.len() < s.len() {
            t.push('\n');
        }
        std::borrow::Cow::Owned(t)
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Whether an open failed for want of fds (`EMFILE`: this process's limit; `ENFILE`: the
/// system's).
pub(super) fn out_of_fds(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}
