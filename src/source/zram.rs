//! The zram devices' `mm_stat` and `bd_stat` (spec §14.2), read every tick for each zram
//! device the slow refresh's `/sys/block` listing holds.
//!
//! Owns: the `Zram` collector. Must not touch: parsing, the listing itself (`source::fs`).
//!
//! Cost budget: on a machine without zram, one scan of the `/sys/block` pseudo-file's text on
//! each slow refresh and nothing else, no file opened. With zram, each device's directory is
//! held open from the listing, and each tick opens `mm_stat` relative to it (one path
//! component) and reads it once; `bd_stat` only where the listing found it (the kernel has it
//! with `CONFIG_ZRAM_WRITEBACK`). A device whose `disksize` reads 0 at the listing (made but
//! never set up: its `mm_stat` is all zeros) is not read until a listing finds it set up, at
//! most `SLOW_REFRESH_TICKS` later. An idle screen here opened both files of such a zram0 by
//! their whole path every tick, bd_stat failing each time; held and relative, the collector
//! still took 37–48 µs of the sampler thread's CPU a tick (a scratch build timing each
//! collector, 2026-11-29), most of it a cold cache at one tick a second.

use std::path::{Path, PathBuf};

use super::collect::{Collect, Pass, refresh_text};
use super::read::Dir;
use crate::Result;
use crate::parse::zram::sample_name;
use crate::sample::names;

/// One zram device: its directory, and the sample names of the files it has.
struct Device {
    name: String,
    /// `None` until opened, and again after a read failed (the device went, or was removed
    /// and added again under the same name): the next tick opens it afresh.
    dir: Option<Dir>,
    mm_stat: String,
    /// Whether the listing found `bd_stat`.
    bd_stat: Option<String>,
    /// `disksize` read 0 at the listing: nothing to read until it is set up.
    unset: bool,
}

/// The zram devices' files, with their sample names.
pub(super) struct Zram {
    block: PathBuf,
    devices: Vec<Device>,
}

impl Zram {
    pub fn new(sys_root: &Path) -> Self {
        Self {
            block: sys_root.join("block"),
            devices: Vec::new(),
        }
    }

    /// The zram devices of this refresh's `/sys/block` pseudo-file (a line per disk, its name
    /// first). Each is looked at afresh: directory and whether it has `bd_stat`.
    fn list(&mut self, block_text: &str) {
        let mut buf = Vec::new();
        self.devices = block_text
            .lines()
            .filter_map(|l| l.split('\t').next())
            .filter(|n| n.starts_with("zram"))
            .map(|d| {
                let dir = Dir::open(&self.block.join(d));
                let bd = dir.as_ref().and_then(|x| x.read("bd_stat", &mut buf));
                let size = dir.as_ref().and_then(|x| x.read("disksize", &mut buf));
                Device {
                    name: d.to_owned(),
                    dir,
                    mm_stat: sample_name(d, "mm_stat"),
                    bd_stat: bd.map(|_| sample_name(d, "bd_stat")),
                    unset: size.is_some_and(|t| t.trim() == "0"),
                }
            })
            .collect();
    }
}

impl<'a> Collect<'a> for Zram {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if let Some(text) = refresh_text(pass, names::BLOCK_DEVICES) {
            self.list(&text);
        }
        for d in self.devices.iter_mut().filter(|d| !d.unset) {
            if d.dir.is_none() {
                d.dir = Dir::open(&self.block.join(&d.name));
            }
            let Some(dir) = &d.dir else { continue };
            let Some(mm) = dir.read("mm_stat", pass.buf) else {
                d.dir = None;
                continue;
            };
            pass.put(&d.mm_stat, mm.into());
            if let Some(name) = &d.bd_stat
                && let Some(bd) = dir.read("bd_stat", pass.buf)
            {
                pass.put(name, bd.into());
            }
        }
        Ok(())
    }
}
