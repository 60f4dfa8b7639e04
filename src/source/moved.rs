//! Which block devices moved (did any I/O) since their settings were last read, so that the
//! once-a-minute re-read of the per-device settings (the queue files under `/sys/block`, the
//! BDI limits under `/sys/class/bdi`) skips idle devices (issue 27: with 100 idle loop
//! devices the two re-reads were a fifth of the default screen's CPU).
//!
//! Owns: `Motion` (each device's `/proc/diskstats` counters, hashed, as at its last settings
//! read) and `Counters` (this tick's, by name and by `MAJ:MIN`, the BDI's name). Must not
//! touch: the settings themselves, parsing beyond splitting a diskstats line.
//!
//! A device's settings are re-read when it is new, when its diskstats line changed since
//! they were last read (any counter: I/O started, completed, a flush, a discard), on a full
//! refresh (`FULL_EVERY`), and always when it has no diskstats line (a FUSE or NFS BDI, with
//! no sign of motion either way). So a moving device's settings are as fresh as before (a
//! minute at most) and an idle one's are read again once it moves; what an idle device shows
//! can be up to `FULL_EVERY` refreshes old, and it carries no I/O to interpret.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Every this many settings refreshes all devices are re-read, moved or not (ten minutes at
/// one refresh a minute).
pub(super) const FULL_EVERY: u32 = 10;

/// This tick's diskstats counters, hashed, keyed by device name and by `MAJ:MIN`.
pub(super) struct Counters<'a> {
    by_key: HashMap<std::borrow::Cow<'a, str>, u64>,
}

impl<'a> Counters<'a> {
    /// Splits `diskstats` (absent: no device is known to be idle).
    pub(super) fn of(diskstats: Option<&'a str>) -> Self {
        let mut by_key = HashMap::new();
        for line in diskstats.unwrap_or_default().lines() {
            let mut f = line.split_ascii_whitespace();
            let (Some(major), Some(minor), Some(name)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let mut h = DefaultHasher::new();
            for field in f {
                field.hash(&mut h);
            }
            let h = h.finish();
            by_key.insert(std::borrow::Cow::Borrowed(name), h);
            by_key.insert(std::borrow::Cow::Owned(format!("{major}:{minor}")), h);
        }
        Counters { by_key }
    }

    fn get(&self, key: &str) -> Option<u64> {
        self.by_key.get(key).copied()
    }
}

/// Each device's counters when its settings were last read, and the refresh count.
#[derive(Default)]
pub(super) struct Motion {
    at_read: HashMap<String, u64>,
    refreshes: u32,
}

impl Motion {
    /// Starts a settings refresh: whether it is a full one (every `FULL_EVERY`th, the first
    /// included).
    pub(super) fn start(&mut self) -> bool {
        let full = self.refreshes == 0;
        self.refreshes = (self.refreshes + 1) % FULL_EVERY;
        full
    }

    /// Whether `key`'s settings are to be read at this refresh (see the module doc); `cached`:
    /// there is a text from an earlier read to reuse.
    pub(super) fn due(&self, key: &str, now: &Counters<'_>, full: bool, cached: bool) -> bool {
        if full || !cached {
            return true;
        }
        match (now.get(key), self.at_read.get(key)) {
            (Some(n), Some(was)) => n != *was,
            _ => true,
        }
    }

    /// Notes that `key`'s settings were read with `now`'s counters.
    pub(super) fn read(&mut self, key: &str, now: &Counters<'_>) {
        match now.get(key) {
            Some(h) => {
                self.at_read.insert(key.to_owned(), h);
            }
            None => {
                self.at_read.remove(key);
            }
        }
    }

    /// Forgets the devices not in `keep` (gone since).
    pub(super) fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.at_read.retain(|k, _| keep(k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: &str = "   7       0 loop0 5 0 10 1 0 0 0 0 0 2 1 0 0 0 0 0 0\n \
                      253       0 vda 100 3 800 50 20 1 160 9 0 70 59 0 0 0 0 4 1\n";
    // vda wrote once more; loop0 unchanged.
    const T1: &str = "   7       0 loop0 5 0 10 1 0 0 0 0 0 2 1 0 0 0 0 0 0\n \
                      253       0 vda 100 3 800 50 21 1 168 10 0 71 60 0 0 0 0 4 1\n";

    #[test]
    fn only_a_device_whose_counters_moved_is_read_again() {
        let mut m = Motion::default();
        let t0 = Counters::of(Some(T0));
        assert!(m.start(), "the first refresh reads everything");
        for k in ["loop0", "vda", "7:0", "253:0"] {
            assert!(m.due(k, &t0, true, false));
            m.read(k, &t0);
        }
        assert!(!m.start());
        let t1 = Counters::of(Some(T1));
        assert!(!m.due("loop0", &t1, false, true));
        assert!(!m.due("7:0", &t1, false, true), "the BDI of loop0");
        assert!(m.due("vda", &t1, false, true));
        assert!(m.due("253:0", &t1, false, true));
        // Nothing cached to reuse: read, moved or not.
        assert!(m.due("loop0", &t1, false, false));
        // No diskstats line (a FUSE BDI): always read.
        assert!(m.due("0:52", &t1, false, true));
        // No diskstats at all this tick: nothing is known to be idle.
        assert!(m.due("loop0", &Counters::of(None), false, true));
    }

    #[test]
    fn every_full_every_th_refresh_reads_all() {
        let mut m = Motion::default();
        let fulls: Vec<bool> = (0..2 * FULL_EVERY).map(|_| m.start()).collect();
        let at: Vec<usize> = (0..fulls.len()).filter(|&i| fulls[i]).collect();
        assert_eq!(at, vec![0, FULL_EVERY as usize]);
    }

    #[test]
    fn a_device_gone_is_forgotten_and_read_afresh_when_back() {
        let mut m = Motion::default();
        let t0 = Counters::of(Some(T0));
        m.start();
        m.read("loop0", &t0);
        m.retain(|k| k != "loop0");
        m.start();
        assert!(m.due("loop0", &t0, false, true));
    }
}
