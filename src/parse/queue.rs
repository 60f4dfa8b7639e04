//! The `sys/block/` pseudo-file (whole disks and their queue settings) → `BlockDevices`.
//!
//! Owns: parsing the settings the disk table and recordings show. Must not touch: I/O.

use std::collections::BTreeMap;

use serde::Serialize;

/// A whole disk's queue settings; each field is `None` when the file was not readable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QueueSettings {
    /// `rotational`: true for spinning disks.
    pub rotational: Option<bool>,
    /// The active scheduler (the bracketed entry of `scheduler`).
    pub scheduler: Option<String>,
    /// `nr_requests`.
    pub nr_requests: Option<u64>,
    /// `write_cache`: `write back` or `write through`.
    pub write_cache: Option<String>,
    /// Device-mapper name (`vg0-root`) for dm-N devices.
    pub dm_name: Option<String>,
    /// Hardware queues (entries of `mq/`); `None` when not read (older recordings, trees).
    pub hw_queues: Option<u32>,
    /// `wbt_lat_usec`: writeback throttling's read-latency target, µs; 0 is off. `None`
    /// when not read (no wbt in the kernel, older recordings, trees).
    pub wbt_lat_usec: Option<u64>,
}

/// Parses the pseudo-file: whole-disk names (sorted) and each one's settings.
#[must_use]
pub fn parse(text: &str) -> BTreeMap<String, QueueSettings> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut f = line.split('\t');
        let Some(name) = f.next().filter(|n| !n.is_empty()) else {
            continue;
        };
        let mut next = || f.next().map(str::trim).filter(|s| !s.is_empty());
        let settings = QueueSettings {
            rotational: next().and_then(|s| match s {
                "0" => Some(false),
                "1" => Some(true),
                _ => None,
            }),
            scheduler: next().and_then(active_scheduler),
            nr_requests: next().and_then(|s| s.parse().ok()),
            write_cache: next().map(str::to_owned),
            dm_name: next().map(str::to_owned),
            hw_queues: next().and_then(|s| s.parse().ok()),
            wbt_lat_usec: next().and_then(|s| s.parse().ok()),
        };
        out.insert(name.to_owned(), settings);
    }
    out
}

/// `none [mq-deadline] kyber` → `mq-deadline`; a lone `none` → `none`.
fn active_scheduler(s: &str) -> Option<String> {
    if let Some(open) = s.find('[') {
        let rest = &s[open + 1..];
        return rest.find(']').map(|close| rest[..close].to_owned());
    }
    s.split_whitespace().next().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        let q =
            parse("dm-0\t0\tnone\t128\twrite through\tvg0-root\nsda\t1\tnoop [cfq]\t\t\t\nsr0\n");
        assert_eq!(q["dm-0"].dm_name.as_deref(), Some("vg0-root"));
        assert_eq!(q["dm-0"].rotational, Some(false));
        assert_eq!(q["sda"].scheduler.as_deref(), Some("cfq"));
        assert_eq!(q["sda"].nr_requests, None);
        assert_eq!(q["sr0"], QueueSettings::default());
        // The columns of a VM's virtio disk and a loop device here (6.18).
        let q = parse(
            "vda\t1\tnone [mq-deadline] kyber bfq\t256\twrite back\t\t2\t75000\nloop0\t0\t[none] mq-deadline\t128\twrite through\t\t1\t0\n",
        );
        assert_eq!(q["vda"].wbt_lat_usec, Some(75_000));
        assert_eq!(q["vda"].hw_queues, Some(2));
        assert_eq!(q["loop0"].wbt_lat_usec, Some(0));
    }

    #[test]
    fn scheduler() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
    }
}
