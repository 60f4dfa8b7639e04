//! Reads the sampled files from a root that plays /proc and one that plays /sys.
//!
//! Owns: `FsSource`, which reads live `/proc` and `/sys` (or any directories given in their
//! place) once per call, stamps the sample with its `Clock`, and caches per-device queue
//! settings, which change rarely. Must not touch: parsing, derivation, UI.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use super::{Clock, Source, SystemClock};
use crate::sample::{RawSample, names};
use crate::{Error, Result};

/// Files read on every tick, relative to the proc root, with their sample names.
const PROC_FILES: [(&str, &str); 9] = [
    ("meminfo", names::MEMINFO),
    ("vmstat", names::VMSTAT),
    ("diskstats", names::DISKSTATS),
    ("zoneinfo", names::ZONEINFO),
    ("stat", names::STAT),
    ("uptime", names::UPTIME),
    ("pressure/cpu", names::PSI_CPU),
    ("pressure/memory", names::PSI_MEMORY),
    ("pressure/io", names::PSI_IO),
];

/// Files that change rarely (the vm sysctls, the /sys/block listing and queue settings) are
/// re-read every this many samples; in between, the sample carries the last text read.
/// Each /proc file costs about 25 µs of kernel time here, so this halves the files per tick.
pub const SLOW_REFRESH_TICKS: u32 = 5;

/// Reads kernel files from a proc root and a sys root.
pub struct FsSource {
    proc_root: PathBuf,
    sys_root: PathBuf,
    clock: Box<dyn Clock>,
    page_size: u64,
    buf: Vec<u8>,
    /// Whole disks at the last refresh, and their `BLOCK_DEVICES` text.
    devices: Vec<String>,
    block_text: Option<String>,
    /// Counts slow refreshes: queue settings are re-read every 12th (once a minute at 1 Hz).
    slow_refreshes: u32,
    /// The vm sysctls at the last refresh.
    sysctls: Vec<(String, String)>,
    ticks_since_refresh: u32,
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
        Self {
            proc_root: proc_root.into(),
            sys_root: sys_root.into(),
            clock,
            page_size: rustix::param::page_size() as u64,
            buf: Vec::with_capacity(64 * 1024),
            devices: Vec::new(),
            block_text: None,
            sysctls: Vec::new(),
            slow_refreshes: 0,
            ticks_since_refresh: 0,
        }
    }

    /// Overrides the page size recorded in samples (captured trees from other machines).
    #[must_use]
    pub fn with_page_size(mut self, page_size: u64) -> Self {
        self.page_size = page_size;
        self
    }

    /// Reads every sampled file once.
    pub fn read(&mut self) -> Result<RawSample> {
        let mut files = BTreeMap::new();
        let mono_ns = self.clock.mono_ns();
        let wall_ms = self.clock.wall_ms();
        for (rel, name) in PROC_FILES {
            let path = self.proc_root.join(rel);
            if let Some(text) = read_optional(&path, &mut self.buf)? {
                files.insert(name.to_owned(), text);
            }
        }
        let refresh = self.ticks_since_refresh == 0;
        if refresh {
            self.sysctls.clear();
            for knob in names::VM_SYSCTLS {
                let path = self.proc_root.join("sys/vm").join(knob);
                if let Some(text) = read_optional(&path, &mut self.buf)? {
                    self.sysctls.push((names::vm_sysctl(knob), text));
                }
            }
            self.block_text = self.read_block_devices()?;
        }
        self.ticks_since_refresh = (self.ticks_since_refresh + 1) % SLOW_REFRESH_TICKS;
        files.extend(self.sysctls.iter().cloned());
        if let Some(text) = &self.block_text {
            files.insert(names::BLOCK_DEVICES.to_owned(), text.clone());
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
        self.slow_refreshes = (self.slow_refreshes + 1) % 12;
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
}

/// Whether an I/O error means "this kernel does not provide the file".
fn is_absent(e: &std::io::Error) -> bool {
    // EOPNOTSUPP: PSI compiled in but disabled (psi=0); ENODEV/ENXIO: vanished device.
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Unsupported)
        || matches!(e.raw_os_error(), Some(95 | 19 | 6))
}

/// Reads a whole file as text; `None` when the file does not exist on this machine.
pub(crate) fn read_optional(path: &Path, buf: &mut Vec<u8>) -> Result<Option<String>> {
    buf.clear();
    let res = std::fs::File::open(path).and_then(|mut f| f.read_to_end(buf));
    match res {
        Ok(_) => Ok(Some(String::from_utf8_lossy(buf).into_owned())),
        Err(e) if is_absent(&e) => Ok(None),
        Err(source) => Err(Error::Io {
            path: path.to_owned(),
            source,
        }),
    }
}
