//! The zram devices' `mm_stat` and `bd_stat` (spec §14.2), read every tick for each zram
//! device the slow refresh's `/sys/block` listing holds.
//!
//! Owns: the `Zram` collector. Must not touch: parsing, the listing itself (`source::fs`).
//!
//! Cost budget: on a machine without zram, one scan of the `/sys/block` pseudo-file's text on
//! each slow refresh and nothing else, no file opened; with zram, one open and read of
//! `mm_stat` (and `bd_stat` where the kernel has it) per device per tick, a few µs each.

use std::path::{Path, PathBuf};

use super::collect::{Collect, Pass, put_listed, refresh_text};
use crate::Result;
use crate::parse::zram::sample_name;
use crate::sample::names;

/// The zram devices' files, with their sample names.
pub(super) struct Zram {
    block: PathBuf,
    /// (sample name, path) of each device's `mm_stat` and `bd_stat`.
    files: Vec<(String, PathBuf)>,
    /// The device names of the last listing, to rebuild `files` only when they change.
    devices: Vec<String>,
}

impl Zram {
    pub fn new(sys_root: &Path) -> Self {
        Self {
            block: sys_root.join("block"),
            files: Vec::new(),
            devices: Vec::new(),
        }
    }

    /// The zram devices of this refresh's `/sys/block` pseudo-file (a line per disk, its name
    /// first).
    fn list(&mut self, block_text: &str) {
        let now: Vec<String> = block_text
            .lines()
            .filter_map(|l| l.split('\t').next())
            .filter(|n| n.starts_with("zram"))
            .map(str::to_owned)
            .collect();
        if now == self.devices {
            return;
        }
        self.files = now
            .iter()
            .flat_map(|d| {
                ["mm_stat", "bd_stat"].map(|f| (sample_name(d, f), self.block.join(d).join(f)))
            })
            .collect();
        self.devices = now;
    }
}

impl<'a> Collect<'a> for Zram {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if let Some(text) = refresh_text(pass, names::BLOCK_DEVICES) {
            self.list(&text);
        }
        put_listed(&self.files, pass);
        Ok(())
    }
}
