//! Writeback throttling's enable state on a block device, and why tuning `wbt_lat_usec` is a
//! lasting change.
//!
//! Owns: reading the state (`block/DEV/rqos/wbt/enabled` in debugfs, CONFIG_BLK_DEBUG_FS;
//! debugfs as mounted, or where it is mounted nowhere a detached mount of pagewatch's own,
//! root only, as `source::trace_instance` does for tracefs), the words that name the lasting
//! change (the refusal, the prompt, the restore line), and the rule where the state cannot be
//! read. Must not touch: the setting itself (`tune.rs`, `tuner.rs`).
//!
//! Why it lasts (block/blk-wbt.c, 6.x): the kernel keeps wbt in one of four states,
//! `WBT_STATE_ON_DEFAULT` (1), `ON_MANUAL` (2), `OFF_DEFAULT` (3), `OFF_MANUAL` (4). Any write
//! to `queue/wbt_lat_usec` that changes the value (`queue_wb_lat_store` → `wbt_set_min_lat`)
//! makes it manual, and only the default states are what `wbt_disable_default()` acts on
//! (BFQ selected: wbt off). Nothing in sysfs makes it default again (`-1` gives the default
//! latency, still manual) until the device is made again: a loop device keeps it across
//! `losetup -d` and a new `losetup`. Seen on a loop device: fresh 1 (2000), BFQ → 3 (0),
//! none → 1, write 0 → 4, BFQ → still 4, detached and attached again → still 4.
//!
//! The rule where the state cannot be read (no debugfs, a kernel without the file, no wbt on
//! the queue yet): the device is taken as in its default state, so the change needs the
//! same confirmation, and the message says the state was not read.

use std::path::{Path, PathBuf};

/// wbt's enable state, as the kernel numbers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WbtState {
    /// 1: on, the kernel's default.
    OnDefault,
    /// 2: on, set by hand.
    OnManual,
    /// 3: off by default (BFQ selected, or a device the kernel turns it off for).
    OffDefault,
    /// 4: off, set by hand.
    OffManual,
    /// Not read: why.
    Unknown(String),
}

impl WbtState {
    /// The state from the debugfs file's text (`1`..`4`).
    #[must_use]
    pub fn parse(text: &str) -> Option<WbtState> {
        Some(match text.trim() {
            "1" => WbtState::OnDefault,
            "2" => WbtState::OnManual,
            "3" => WbtState::OffDefault,
            "4" => WbtState::OffManual,
            _ => return None,
        })
    }

    /// True when set by hand already: tuning it again changes nothing lasting.
    #[must_use]
    pub fn manual(&self) -> bool {
        matches!(self, WbtState::OnManual | WbtState::OffManual)
    }

    /// The state in words, with the kernel's name.
    #[must_use]
    pub fn words(&self) -> String {
        match self {
            WbtState::OnDefault => "on, in its default state (WBT_STATE_ON_DEFAULT)".into(),
            WbtState::OnManual => "on, set by hand (WBT_STATE_ON_MANUAL)".into(),
            WbtState::OffDefault => "off, in its default state (WBT_STATE_OFF_DEFAULT)".into(),
            WbtState::OffManual => "off, set by hand (WBT_STATE_OFF_MANUAL)".into(),
            WbtState::Unknown(why) => {
                format!("in a state pagewatch could not read ({why}), taken as its default state")
            }
        }
    }
}

/// The device of a `wbt_lat_usec` file (`/sys/block/DEV/queue/wbt_lat_usec`).
#[must_use]
pub fn device_of(path: &Path) -> Option<&str> {
    let rest = path.strip_prefix("/sys/block").ok()?;
    let mut parts = rest.iter();
    let dev = parts.next()?.to_str()?;
    (parts.next()? == "queue" && parts.next()? == "wbt_lat_usec" && parts.next().is_none())
        .then_some(dev)
}

/// What tuning wbt on `dev` (in `state`) does that outlasts the run; `None` when it is set by
/// hand already.
#[must_use]
pub fn lasting(dev: &str, state: &WbtState) -> Option<String> {
    if state.manual() {
        return None;
    }
    Some(format!(
        "{dev}'s writeback throttling is {}: writing {dev}/queue/wbt_lat_usec leaves it set by \
         hand for good, whatever value is put back (BFQ no longer turns it off), until the \
         device is made again (a reboot; a loop device keeps it across detach and re-attach)",
        state.words()
    ))
}

/// The restore line's note for a `wbt_lat_usec` file after it was put back: the state now
/// (`written`: a write in this run changed its value, which the kernel marks as by hand).
#[must_use]
pub fn restore_note(dev: &str, state: &WbtState, written: bool) -> Option<String> {
    match state {
        WbtState::OnManual | WbtState::OffManual => Some(format!(
            "{dev}'s wbt is now {}: lasting until the device is made again",
            state.words()
        )),
        WbtState::Unknown(why) if written => Some(format!(
            "{dev}'s wbt is now set by hand (a write changed it; its state could not be read: \
             {why}): lasting until the device is made again"
        )),
        _ => None,
    }
}

/// wbt's state on `dev`, read from debugfs.
#[must_use]
pub fn state(dev: &str) -> WbtState {
    if dev.is_empty() || dev.contains('/') || dev.starts_with('.') {
        return WbtState::Unknown(format!("{dev:?} is not a device name"));
    }
    let root = match debugfs() {
        Ok(r) => r,
        Err(e) => return WbtState::Unknown(e),
    };
    let file = root.join("block").join(dev).join("rqos/wbt/enabled");
    match std::fs::read_to_string(&file) {
        Ok(t) => WbtState::parse(&t)
            .unwrap_or_else(|| WbtState::Unknown(format!("{}: {t:?}", file.display()))),
        Err(e) => WbtState::Unknown(format!("{}: {e}", file.display())),
    }
}

/// debugfs: where it is mounted, else a detached mount of pagewatch's own (root), made once
/// and dropped with the process.
fn debugfs() -> Result<PathBuf, String> {
    use crate::source::trace_instance::{Detached, detached_mount};
    static MOUNT: Detached = std::sync::OnceLock::new();
    if let Some(p) = std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|t| crate::source::first_mount_of(&t, "debugfs"))
    {
        return Ok(p);
    }
    let ro = rustix::mount::MountAttrFlags::MOUNT_ATTR_RDONLY;
    detached_mount(&MOUNT, "debugfs", ro).map_err(|e| format!("debugfs is not mounted, and {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_numbers_and_which_states_last() {
        assert_eq!(WbtState::parse("1\n"), Some(WbtState::OnDefault));
        assert_eq!(WbtState::parse("4"), Some(WbtState::OffManual));
        assert_eq!(WbtState::parse("0"), None);
        let l = lasting("loop0", &WbtState::OffDefault).unwrap();
        assert!(
            l.contains("WBT_STATE_OFF_DEFAULT") && l.contains("set by hand for good"),
            "{l}"
        );
        assert!(lasting("loop0", &WbtState::Unknown("no debugfs".into())).is_some());
        assert_eq!(lasting("loop0", &WbtState::OnManual), None);
        let n = restore_note("loop0", &WbtState::OnManual, true).unwrap();
        assert!(n.contains("WBT_STATE_ON_MANUAL"), "{n}");
        assert_eq!(restore_note("loop0", &WbtState::OnDefault, false), None);
        assert!(restore_note("loop0", &WbtState::Unknown("x".into()), true).is_some());
        assert_eq!(
            restore_note("loop0", &WbtState::Unknown("x".into()), false),
            None
        );
    }

    #[test]
    fn only_a_queues_wbt_file_names_a_device() {
        let p = |s: &str| device_of(Path::new(s)).map(str::to_owned);
        assert_eq!(p("/sys/block/vda/queue/wbt_lat_usec"), Some("vda".into()));
        assert_eq!(p("/sys/block/vda/queue/scheduler"), None);
        assert_eq!(p("/proc/sys/vm/dirty_ratio"), None);
    }
}
