//! `/proc/diskstats`, read whole or, on a machine with many block devices, only the lines of
//! the devices that moved lately (issue 27: with 100 idle loop devices the kernel generating
//! the whole file was a fifth of the default screen's CPU, 110 µs a tick here).
//!
//! Owns: `Lines` (each device's last line, when it was read, when it last changed, and its
//! held `/sys/dev/block/MAJ:MIN/stat`). Must not touch: parsing beyond cutting a line after
//! its name, rates (`model::disk`, which takes each carried line's own read time).
//!
//! With more than `MANY_LINES` lines, the whole file is read on the first `WARM_FULLS`
//! ticks, every `FULL_EVERY`th tick after, on the slow refresh, and whenever a per-device read
//! fails (a device went away). In between, only the devices whose line changed in the last
//! `KEEP_NS` are read, each from its sysfs `stat`, which holds the same counters in the same
//! order (`part_stat_show` and `diskstats_show` both count the requests in flight and bring
//! `io_ticks` up to date); every other line is carried from its last read, and named with
//! that read's time in `names::DISKSTATS_CARRIED`, so that a carried line that turns out to
//! have moved gets its rates over its own interval, not the tick's. What this costs: a device
//! that starts I/O after a minute idle shows it up to `FULL_EVERY - 1` ticks late, with the
//! rates averaged over the ticks it was not read. When more than one line in
//! `MOVING_SHARE` moves, the per-device reads would cost more than the whole file, which is
//! then read every tick. A sysfs `stat` with a different number of counters than its
//! diskstats line (kernels before 5.5 print 11 or 15 in sysfs and 14 or 18 after the name)
//! turns the per-device reads off for good.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::read::{Records, open_regular, read_from_start, step_for, text};
use crate::Result;

/// Up to this many lines the whole file is read every tick (about 1 µs of kernel time a
/// line here): the per-device reads pay only at scale.
pub(super) const MANY_LINES: usize = 32;

/// The whole file every this many ticks: how late an idle device's new I/O can show.
pub(super) const FULL_EVERY: u32 = 4;

/// The first this many reads are whole, so that a device busy at start is known to move.
const WARM_FULLS: u32 = 2;

/// A device whose line changed within this long is read every tick.
pub(super) const KEEP_NS: u64 = 60_000_000_000;

/// Per-device reads only while at most one line in this many moves: a sysfs `stat` read
/// costs several diskstats lines.
const MOVING_SHARE: usize = 8;

/// One device's line.
struct Entry {
    /// The line up to and including the device name, as the kernel printed it.
    head: String,
    /// The counters after the name, as the kernel printed them (single-spaced).
    counters: String,
    /// The device name and `MAJ:MIN`; empty for a line that does not have them.
    name: String,
    dev: String,
    /// When the line was last read, and when it last changed (`None`: not since it was
    /// first seen).
    read_ns: u64,
    moved_ns: Option<u64>,
    /// Its sysfs `stat`, held open while the device moves.
    stat: Option<File>,
    step: usize,
}

impl Entry {
    fn new(line: &str, mono_ns: u64) -> Self {
        let (head, counters) = split_after_name(line);
        let mut f = head.split_ascii_whitespace();
        let (dev, name) = match (f.next(), f.next(), f.next()) {
            (Some(major), Some(minor), Some(name)) => (format!("{major}:{minor}"), name.into()),
            _ => (String::new(), String::new()),
        };
        Self {
            head: head.to_owned(),
            counters: counters.to_owned(),
            name,
            dev,
            read_ns: mono_ns,
            moved_ns: None,
            stat: None,
            step: 512,
        }
    }

    fn moving(&self, mono_ns: u64) -> bool {
        !self.dev.is_empty()
            && self
                .moved_ns
                .is_some_and(|t| mono_ns.saturating_sub(t) < KEEP_NS)
    }

    /// Takes `counters` read now; whether they changed.
    fn take(&mut self, counters: &str, mono_ns: u64) -> bool {
        self.read_ns = mono_ns;
        if counters == self.counters {
            return false;
        }
        self.counters.clear();
        self.counters.push_str(counters);
        self.moved_ns = Some(mono_ns);
        true
    }
}

/// The line cut after its third field (major, minor, name): the head and the counters.
fn split_after_name(line: &str) -> (&str, &str) {
    let mut rest = line;
    let mut cut = 0;
    for _ in 0..3 {
        let start = rest.len() - rest.trim_start().len();
        let Some(len) = rest[start..].find(char::is_whitespace) else {
            return (line, "");
        };
        cut += start + len;
        rest = &line[cut..];
    }
    (&line[..cut], line[cut..].trim())
}

/// `/proc/diskstats` as last read, whole or in part (see the module doc).
pub(super) struct Lines {
    sys_root: PathBuf,
    entries: Vec<Entry>,
    /// Reads since the last whole one, and whole reads so far.
    since_full: u32,
    fulls: u32,
    /// False once a sysfs `stat` did not match its line.
    partial: bool,
    /// This tick's text, and the carried lines' names and read times.
    text: String,
    carried: String,
    /// A hash of which lines `carried` names and their read times.
    carried_key: u64,
}

impl Lines {
    pub(super) fn new(sys_root: &Path) -> Self {
        Self {
            sys_root: sys_root.to_owned(),
            entries: Vec::new(),
            since_full: 0,
            fulls: 0,
            partial: true,
            text: String::new(),
            carried: String::new(),
            carried_key: 0,
        }
    }

    /// This tick's `/proc/diskstats` text (after a `read` that returned true).
    pub(super) fn text(&self) -> &str {
        &self.text
    }

    /// `names::DISKSTATS_CARRIED`: the lines carried from an earlier read this tick, as
    /// `name<TAB>read_ns` lines; empty when every line was read now.
    pub(super) fn carried(&self) -> &str {
        &self.carried
    }

    /// Reads this tick's lines: the whole file through `whole` (which reads it into `buf`
    /// and returns its length, `None` when it does not exist), or the moving devices' sysfs
    /// files. `live`: the file is the kernel's (a captured tree is always read whole);
    /// `refresh`: the slow refresh, which reads it whole. False when the file does not exist.
    pub(super) fn read(
        &mut self,
        whole: impl FnOnce(&mut Vec<u8>) -> Result<Option<usize>>,
        buf: &mut Vec<u8>,
        mono_ns: u64,
        live: bool,
        refresh: bool,
    ) -> Result<bool> {
        if live && !refresh && self.due_partial(mono_ns) && self.read_moving(buf, mono_ns) {
            self.since_full += 1;
            self.compose(mono_ns);
            return Ok(true);
        }
        let Some(n) = whole(buf)? else {
            self.entries.clear();
            return Ok(false);
        };
        self.take_whole(&text(&buf[..n]), mono_ns);
        Ok(true)
    }

    /// Whether this tick may read only the moving devices.
    fn due_partial(&self, mono_ns: u64) -> bool {
        // The count last: with few devices (most machines) it is never made.
        self.partial
            && self.fulls >= WARM_FULLS
            && self.since_full + 1 < FULL_EVERY
            && self.entries.len() > MANY_LINES
            && self.entries.iter().filter(|e| e.moving(mono_ns)).count() * MOVING_SHARE
                <= self.entries.len()
    }

    /// Reads each moving device's sysfs `stat`; false when one failed (the caller then reads
    /// the whole file).
    fn read_moving(&mut self, buf: &mut Vec<u8>, mono_ns: u64) -> bool {
        for e in &mut self.entries {
            if !e.moving(mono_ns) {
                // Idle: its descriptor is not kept.
                e.stat = None;
                continue;
            }
            let Some(n) = read_stat(&self.sys_root, e, buf) else {
                e.stat = None;
                return false;
            };
            let counters = text(&buf[..n]);
            let fields = counters.split_ascii_whitespace();
            if fields.clone().count() != e.counters.split_ascii_whitespace().count() {
                self.partial = false;
                return false;
            }
            let mut single = String::with_capacity(e.counters.len());
            for f in fields {
                if !single.is_empty() {
                    single.push(' ');
                }
                single.push_str(f);
            }
            e.take(&single, mono_ns);
        }
        true
    }

    /// Takes a whole read: the text as it is, each line's change since it was last read.
    fn take_whole(&mut self, whole: &str, mono_ns: u64) {
        let same = whole.lines().count() == self.entries.len()
            && whole
                .lines()
                .zip(&self.entries)
                .all(|(l, e)| split_after_name(l).0 == e.head);
        if same {
            for (line, e) in whole.lines().zip(&mut self.entries) {
                e.take(split_after_name(line).1, mono_ns);
            }
        } else {
            // Devices came or went: match the lines by head (numbers and name).
            let mut old: HashMap<String, Entry> = std::mem::take(&mut self.entries)
                .into_iter()
                .map(|e| (e.head.clone(), e))
                .collect();
            for line in whole.lines() {
                let (head, counters) = split_after_name(line);
                let e = if let Some(mut e) = old.remove(head) {
                    e.take(counters, mono_ns);
                    e
                } else {
                    let mut e = Entry::new(line, mono_ns);
                    // A device that appears while pagewatch runs is likely about to be used:
                    // read it every tick from the start.
                    if self.fulls > 0 {
                        e.moved_ns = Some(mono_ns);
                    }
                    e
                };
                self.entries.push(e);
            }
        }
        self.since_full = 0;
        self.fulls = self.fulls.saturating_add(1);
        self.text.clear();
        self.text.push_str(whole);
        self.carried.clear();
    }

    /// This tick's text from the entries, and the carried lines (written again only when
    /// which lines are carried, or from when, changed: between two whole reads it is the same).
    fn compose(&mut self, mono_ns: u64) {
        use std::fmt::Write as _;
        use std::hash::{Hash, Hasher};
        self.text.clear();
        let mut h = std::hash::DefaultHasher::new();
        for (i, e) in self.entries.iter().enumerate() {
            self.text.push_str(&e.head);
            if !e.counters.is_empty() {
                self.text.push(' ');
                self.text.push_str(&e.counters);
            }
            self.text.push('\n');
            if e.read_ns != mono_ns && !e.name.is_empty() {
                (i, e.read_ns).hash(&mut h);
            }
        }
        let key = h.finish();
        if key == self.carried_key && !self.carried.is_empty() {
            return;
        }
        self.carried_key = key;
        self.carried.clear();
        for e in &self.entries {
            if e.read_ns != mono_ns && !e.name.is_empty() {
                let _ = writeln!(self.carried, "{}\t{}", e.name, e.read_ns);
            }
        }
    }
}

/// Reads `e`'s sysfs `stat` into `buf`, opening it when not held; its length, `None` when it
/// could not be read (gone, or never there).
fn read_stat(sys_root: &Path, e: &mut Entry, buf: &mut Vec<u8>) -> Option<usize> {
    if let Some(f) = &e.stat
        && let Ok(n) = read_from_start(f, buf, e.step, Some(Records::One))
    {
        e.step = step_for(n);
        return Some(n);
    }
    let path = sys_root.join("dev/block").join(&e.dev).join("stat");
    let f = open_regular(&path).ok()?;
    // Read to the end the first time: a file in a tree is not a sysfs attribute.
    let n = read_from_start(&f, buf, 512, None).ok()?;
    e.step = step_for(n);
    e.stat = Some(f);
    Some(n)
}

#[cfg(test)]
#[path = "disk_lines_tests.rs"]
mod tests;
