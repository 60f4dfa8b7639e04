//! Reads the sampled files from a root that plays /proc and one that plays /sys.
//!
//! Owns: `FsSource`, which reads live `/proc` and `/sys` (or any directories given in their
//! place) once per call, stamps the sample with its `Clock`, and caches what changes rarely
//! (zoneinfo, the vm sysctls, per-device queue settings). Must not touch: parsing, derivation,
//! UI.
//!
//! The /proc files (per tick and slow refresh alike) are kept open when on procfs and re-read
//! from offset 0 with `pread` (seq_file and proc_sys regenerate their text at offset 0): an
//! open + close per file per tick cost as much as the read itself. A held file whose read
//! fails is dropped and opened afresh, so a vanished file reads as absent, exactly like a
//! first open. Files outside procfs (captured trees given as `--proc-root`) are opened on
//! every read, so replacing or deleting them between ticks behaves as before. On procfs a
//! short read well under a page is the end of the file (see `read_from_start`), which saves
//! the read that would only see EOF.
//!
//! `/proc/zoneinfo` is the most expensive file (46–64 µs of kernel time per read here: the
//! kernel formats every zone and its per-cpu pagesets), and pagewatch only needs its
//! slow-changing part: the watermarks, `managed` and `protection`, for the reserves and the
//! reclaim pane (free memory itself comes from meminfo's MemFree every tick). So it is read on
//! the slow refresh with the sysctls and the `/sys/block` listing (about 140 µs together);
//! spec §1.3 asks for a periodic re-read because those figures do change at runtime (sysctl
//! writes to `min_free_kbytes`, `watermark_scale_factor`, `lowmem_reserve_ratio`, memory
//! hotplug). The period is `SLOW_REFRESH_TICKS` samples, and `refresh_soon` brings the next
//! refresh forward: the app asks for it as soon as what it derives from these files stops
//! matching what the kernel reports each tick (the dirty thresholds, MemAvailable, the disks
//! in diskstats), which is how a sysctl write, a watermark change or a new disk shows. In
//! between, zoneinfo's `pages free` and counters are stale, which no figure uses.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{Clock, Source, SystemClock};
use crate::sample::{RawSample, names};
use crate::{Error, Result};

/// Files read on every tick, relative to the proc root, with their sample names.
const PROC_FILES: [(&str, &str); 8] = [
    ("meminfo", names::MEMINFO),
    ("vmstat", names::VMSTAT),
    ("diskstats", names::DISKSTATS),
    ("stat", names::STAT),
    ("uptime", names::UPTIME),
    ("pressure/cpu", names::PSI_CPU),
    ("pressure/memory", names::PSI_MEMORY),
    ("pressure/io", names::PSI_IO),
];

/// Files that change rarely (zoneinfo, the vm sysctls, the /sys/block listing and queue
/// settings) are re-read every this many samples, or sooner on `FsSource::refresh_soon`; in
/// between, the sample carries the last text read. Measured kernel cost here: zoneinfo
/// 46–64 µs, each vm sysctl 3–8 µs, listing /sys/block 45 µs.
pub const SLOW_REFRESH_TICKS: u32 = 15;

/// Queue settings are re-read on every this many slow refreshes (once a minute at 1 Hz), and
/// whenever the set of disks changes.
const QUEUE_REFRESHES: u32 = 4;

/// Reads kernel files from a proc root and a sys root.
pub struct FsSource {
    sys_root: PathBuf,
    clock: Box<dyn Clock>,
    page_size: u64,
    buf: Vec<u8>,
    /// The per-tick files, in `PROC_FILES` order.
    tick_files: Vec<Held>,
    /// The slow-refresh files (zoneinfo, then the vm sysctls), with their sample names.
    slow_files: Vec<(String, Held)>,
    /// Whole disks at the last refresh, and their `BLOCK_DEVICES` text.
    devices: Vec<String>,
    block_text: Option<String>,
    /// Counts slow refreshes: queue settings are re-read every `QUEUE_REFRESHES`th.
    slow_refreshes: u32,
    /// The slow-refresh files' text at the last refresh (absent files left out).
    slow_text: Vec<(String, String)>,
    ticks_since_refresh: u32,
    /// The files of a sample handed back (`Source::recycle`): the next sample is built in it,
    /// its keys and text buffers reused rather than allocated again.
    spare: BTreeMap<String, String>,
}

impl FsSource {
    /// The live system: `/proc` and `/sys` with the system clock.
    #[must_use]
    pub fn live() -> Self {
        Self::new("/proc", "/sys", Box::new(SystemClock))
    }

    /// Reads from the given roots, stamping samples with `clock`.
    #[must_use]
    pub fn new(
        proc_root: impl Into<PathBuf>,
        sys_root: impl Into<PathBuf>,
        clock: Box<dyn Clock>,
    ) -> Self {
        let proc_root: PathBuf = proc_root.into();
        let tick_files = PROC_FILES
            .iter()
            .map(|(rel, _)| Held::new(proc_root.join(rel)))
            .collect();
        let zoneinfo = (
            names::ZONEINFO.to_owned(),
            Held::new(proc_root.join("zoneinfo")),
        );
        let sysctls = names::VM_SYSCTLS.iter().map(|knob| {
            (
                names::vm_sysctl(knob),
                Held::new(proc_root.join("sys/vm").join(knob)),
            )
        });
        let slow_files = std::iter::once(zoneinfo).chain(sysctls).collect();
        Self {
            sys_root: sys_root.into(),
            clock,
            page_size: rustix::param::page_size() as u64,
            buf: Vec::new(),
            tick_files,
            slow_files,
            devices: Vec::new(),
            block_text: None,
            slow_text: Vec::new(),
            slow_refreshes: 0,
            ticks_since_refresh: 0,
            spare: BTreeMap::new(),
        }
    }

    /// Overrides the page size recorded in samples (captured trees from other machines).
    #[must_use]
    pub fn with_page_size(mut self, page_size: u64) -> Self {
        self.page_size = page_size;
        self
    }

    /// Makes the next read refresh the slow set (zoneinfo, the vm sysctls, /sys/block), as
    /// when the figures derived from them stop matching the kernel's.
    pub fn refresh_soon(&mut self) {
        self.ticks_since_refresh = 0;
    }

    /// Reads every sampled file once.
    pub fn read(&mut self) -> Result<RawSample> {
        // Filled in place: a recycled sample's keys and buffers are reused, and whatever
        // file is not set again below (absent this time) is removed at the end.
        let mut files = std::mem::take(&mut self.spare);
        let mut fresh = Vec::with_capacity(files.len().max(PROC_FILES.len()));
        let mono_ns = self.clock.mono_ns();
        let wall_ms = self.clock.wall_ms();
        for ((_, name), held) in PROC_FILES.iter().zip(&mut self.tick_files) {
            if let Some(bytes) = held.read(&mut self.buf)? {
                put(&mut files, name, text(&self.buf[..bytes]));
                fresh.push(*name);
            }
        }
        let refresh = self.ticks_since_refresh == 0;
        if refresh {
            self.slow_text.clear();
            for (name, held) in &mut self.slow_files {
                if let Some(bytes) = held.read(&mut self.buf)? {
                    self.slow_text
                        .push((name.clone(), text(&self.buf[..bytes]).into_owned()));
                }
            }
            self.block_text = self.read_block_devices()?;
        }
        self.ticks_since_refresh = (self.ticks_since_refresh + 1) % SLOW_REFRESH_TICKS;
        for (name, text) in &self.slow_text {
            put(&mut files, name, Cow::Borrowed(text));
            fresh.push(name);
        }
        if let Some(text) = &self.block_text {
            put(&mut files, names::BLOCK_DEVICES, Cow::Borrowed(text));
            fresh.push(names::BLOCK_DEVICES);
        }
        if files.len() != fresh.len() {
            files.retain(|k, _| fresh.contains(&k.as_str()));
        }
        Ok(RawSample {
            mono_ns,
            wall_ms,
            page_size: self.page_size,
            files,
        })
    }

    /// The `/sys/block` pseudo-file (see `names::BLOCK_DEVICES`); queue settings are re-read
    /// when the set of devices changed, and every 12th refresh.
    fn read_block_devices(&mut self) -> Result<Option<String>> {
        let dir = self.sys_root.join("block");
        let mut devs: Vec<String> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().and_then(|e| e.file_name().into_string().ok()))
                .collect(),
            Err(e) if is_absent(&e) => return Ok(None),
            Err(source) => return Err(Error::Io { path: dir, source }),
        };
        devs.sort();
        self.slow_refreshes = (self.slow_refreshes + 1) % QUEUE_REFRESHES;
        if devs != self.devices || self.block_text.is_none() || self.slow_refreshes == 0 {
            let text = self.block_devices_text(&devs)?;
            self.devices = devs;
            return Ok(Some(text));
        }
        Ok(self.block_text.clone())
    }

    fn block_devices_text(&mut self, devs: &[String]) -> Result<String> {
        let mut text = String::new();
        for dev in devs {
            let base = self.sys_root.join("block").join(dev);
            text.push_str(dev);
            let paths = names::QUEUE_FILES
                .iter()
                .map(|f| base.join("queue").join(f));
            for path in paths.chain(std::iter::once(base.join("dm/name"))) {
                text.push('\t');
                if let Some(v) = read_optional(&path, &mut self.buf)? {
                    text.push_str(v.trim());
                }
            }
            text.push('\n');
        }
        Ok(text)
    }
}

impl Source for FsSource {
    fn next_sample(&mut self) -> Result<Option<RawSample>> {
        self.read().map(Some)
    }

    fn recycle(&mut self, used: RawSample) {
        self.spare = used.files;
    }

    fn refresh_soon(&mut self) {
        FsSource::refresh_soon(self);
    }
}

/// Sets `files[name]` to `text`, reusing the entry's key and buffer when it is there.
fn put(files: &mut BTreeMap<String, String>, name: &str, text: Cow<'_, str>) {
    match files.get_mut(name) {
        Some(v) => {
            v.clear();
            v.push_str(&text);
        }
        None => {
            files.insert(name.to_owned(), text.into_owned());
        }
    }
}

/// Whether an I/O error means "this kernel does not provide the file".
fn is_absent(e: &std::io::Error) -> bool {
    // EOPNOTSUPP: PSI compiled in but disabled (psi=0); ENODEV/ENXIO: vanished device.
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Unsupported)
        || matches!(e.raw_os_error(), Some(95 | 19 | 6))
}

/// A file read on every sample, kept open between reads when it lives on procfs.
struct Held {
    path: PathBuf,
    file: Option<File>,
    /// How much to ask for per read: the file's last length rounded up (see `read_from_start`).
    step: usize,
}

impl Held {
    fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: None,
            step: DEFAULT_STEP,
        }
    }

    /// Reads the whole file into `buf`; its length, or `None` when it does not exist (any
    /// more).
    fn read(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>> {
        if let Some(f) = &self.file {
            if let Ok(n) = read_from_start(f, buf, self.step, true) {
                self.step = step_for(n);
                return Ok(Some(n));
            }
            // Stale or failing descriptor: fall through to a fresh open, which decides.
            self.file = None;
        }
        // A first read goes to EOF: whether the file is on procfs is not known yet.
        let res = File::open(&self.path)
            .and_then(|f| read_from_start(&f, buf, DEFAULT_STEP, false).map(|n| (f, n)));
        match res {
            Ok((f, n)) => {
                self.step = step_for(n);
                if is_procfs(&f) {
                    self.file = Some(f);
                }
                Ok(Some(n))
            }
            Err(e) if is_absent(&e) => Ok(None),
            Err(source) => Err(Error::Io {
                path: self.path.clone(),
                source,
            }),
        }
    }
}

/// Whether `f` is on procfs, where re-reading from offset 0 regenerates the text.
fn is_procfs(f: &File) -> bool {
    rustix::fs::fstatfs(f).is_ok_and(|s| s.f_type == rustix::fs::PROC_SUPER_MAGIC)
}

/// A short read on procfs of fewer bytes than this is the end of the file (`read_from_start`):
/// three quarters of the smallest page, well above any one record of the files read here.
const SHORT_EOF: usize = 3072;

/// The read size for a file first read, or read whole: 16 KiB.
const DEFAULT_STEP: usize = 16 * 1024;

/// The read size for a file last `len` bytes long: room for it to grow, and at least 512.
fn step_for(len: usize) -> usize {
    (len + len / 2 + 1).next_power_of_two().max(512)
}

/// Reads all of `f` from offset 0 into `buf` (grown as needed, never shrunk), asking for `step`
/// bytes per read; returns the length. With `step` above the length this is one read, plus
/// the read that sees EOF unless `procfs` lets a short read end it.
///
/// The size asked for matters: a sysctl read makes the kernel allocate and zero a buffer that
/// size (`proc_sys_call_handler`), which with the whole 64 KiB buffer cost more than the read.
///
/// `procfs`: `f` is a procfs file, whose reads stop short of the size asked for only at EOF or
/// when the kernel's seq_file buffer (a page at least) is full of whole records
/// (`seq_read_iter`; a single_open file is one record, and its buffer grows until it fits).
/// proc_sys handlers return the whole value in one read. So a short read of less than
/// `SHORT_EOF` bytes is the end of the file; a longer short read (vmstat is near a page) is
/// followed by the usual read to EOF.
fn read_from_start(
    f: &File,
    buf: &mut Vec<u8>,
    step: usize,
    procfs: bool,
) -> std::io::Result<usize> {
    if buf.len() < 64 * 1024 {
        buf.resize(64 * 1024, 0);
    }
    let mut n = 0;
    loop {
        if n + step > buf.len() {
            buf.resize((buf.len() * 2).max(n + step), 0);
        }
        match f.read_at(&mut buf[n..n + step], n as u64) {
            Ok(0) => return Ok(n),
            Ok(k) if procfs && k < step && k < SHORT_EOF => return Ok(n + k),
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The bytes as text; kernel files are ASCII, but anything else is kept, lossily.
fn text(bytes: &[u8]) -> Cow<'_, str> {
    // `from_utf8` checks ASCII a word at a time; the lossy scan is several times slower.
    std::str::from_utf8(bytes).map_or_else(|_| String::from_utf8_lossy(bytes), Cow::Borrowed)
}

/// Reads a whole file as text; `None` when the file does not exist on this machine.
pub(crate) fn read_optional(path: &Path, buf: &mut Vec<u8>) -> Result<Option<String>> {
    let res = File::open(path).and_then(|f| read_from_start(&f, buf, DEFAULT_STEP, false));
    match res {
        Ok(n) => Ok(Some(text(&buf[..n]).into_owned())),
        Err(e) if is_absent(&e) => Ok(None),
        Err(source) => Err(Error::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

#[cfg(test)]
#[path = "fs_tests.rs"]
mod tests;
