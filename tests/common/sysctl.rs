//! The vm sysctls the live tests change, and the guard that puts them back: reading and
//! writing `/proc/sys/vm/*`, whether we are root, and `DirtyKnobs`, which restores the four
//! dirty thresholds (the form in force of each pair) when dropped, however the test ends.

#![allow(clippy::unwrap_used, dead_code)]

use std::path::Path;

const VM: &str = "/proc/sys/vm";

/// The four dirty threshold files, background pair first.
pub const DIRTY: [&str; 4] = [
    "dirty_background_ratio",
    "dirty_background_bytes",
    "dirty_ratio",
    "dirty_bytes",
];

/// Whether the tests run as root (needed to change vm sysctls, arm tracefs, ...).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `/proc/sys/vm/<name>`, trimmed.
pub fn vm(name: &str) -> String {
    let path = Path::new(VM).join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .trim()
        .to_owned()
}

/// `/proc/sys/vm/<name>` as a number.
pub fn vm_u64(name: &str) -> u64 {
    let v = vm(name);
    v.parse()
        .unwrap_or_else(|e| panic!("vm.{name} = {v:?}: {e}"))
}

/// Writes `/proc/sys/vm/<name>`.
pub fn try_set_vm(name: &str, value: &str) -> std::io::Result<()> {
    std::fs::write(Path::new(VM).join(name), format!("{value}\n"))
}

/// Writes `/proc/sys/vm/<name>` and checks that it took.
pub fn set_vm(name: &str, value: &str) {
    try_set_vm(name, value).unwrap_or_else(|e| panic!("write {value} to vm.{name}: {e}"));
    assert_eq!(vm(name), value, "vm.{name} did not take {value}");
}

/// The four dirty thresholds as they were when taken; put back when dropped.
pub struct DirtyKnobs([String; 4]);

impl DirtyKnobs {
    /// Remembers the four files as they read now.
    pub fn take() -> Self {
        Self(DIRTY.map(vm))
    }

    /// Remembers them, then sets `vm.dirty_bytes` to `bytes`.
    pub fn set_dirty_bytes(bytes: u64) -> Self {
        let k = Self::take();
        set_vm("dirty_bytes", &bytes.to_string());
        k
    }

    /// What was taken: background ratio, background bytes, ratio, bytes.
    pub fn taken(&self) -> &[String; 4] {
        &self.0
    }

    /// Whether the four files read as they were taken.
    pub fn restored(&self) -> bool {
        DIRTY.map(vm) == self.0
    }

    /// Restores one (ratio, bytes) pair: the form that was in force. Writing one form zeroes
    /// its twin only if the value changed (spec §1.2), so when the read-back is wrong, a
    /// different value is written first.
    fn restore_pair(ratio_knob: &str, ratio: &str, bytes_knob: &str, bytes: &str) {
        let (knob, value) = if bytes == "0" {
            (ratio_knob, ratio)
        } else {
            (bytes_knob, bytes)
        };
        let n: u64 = value.parse().unwrap_or(0);
        let bump = if knob == bytes_knob {
            n + 4096
        } else if n >= 100 {
            n - 1
        } else {
            n + 1
        };
        let ok = || vm(ratio_knob) == ratio && vm(bytes_knob) == bytes;
        let _ = try_set_vm(knob, value);
        if !ok() {
            let _ = try_set_vm(knob, &bump.to_string());
            let _ = try_set_vm(knob, value);
        }
    }
}

impl Drop for DirtyKnobs {
    fn drop(&mut self) {
        let [bgr, bgb, r, b] = &self.0;
        Self::restore_pair("dirty_background_ratio", bgr, "dirty_background_bytes", bgb);
        Self::restore_pair("dirty_ratio", r, "dirty_bytes", b);
        let now = DIRTY.map(vm);
        if now == self.0 {
            eprintln!("restored {DIRTY:?} = {now:?}");
        } else {
            eprintln!(
                "WARNING: could not restore {DIRTY:?} to {:?}; they read {now:?}",
                self.0
            );
        }
    }
}
