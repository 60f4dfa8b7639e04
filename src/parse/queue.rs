//! `/sys/block/<dev>/queue/*` and `/sys/block/<dev>/dm/name` → `QueueSettings`.
//!
//! Owns: parsing the settings the disk table and recordings show. Must not touch: I/O.

use serde::Serialize;

use crate::sample::{RawSample, names};

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
}

/// Reads the settings of `dev` from the sample.
#[must_use]
pub fn parse(sample: &RawSample, dev: &str) -> QueueSettings {
    let get = |file: &str| sample.file(&names::queue(dev, file)).map(str::trim);
    QueueSettings {
        rotational: get("rotational").and_then(|s| match s {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }),
        scheduler: get("scheduler").and_then(active_scheduler),
        nr_requests: get("nr_requests").and_then(|s| s.parse().ok()),
        write_cache: get("write_cache")
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        dm_name: sample
            .file(&names::dm_name(dev))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    }
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
    #[test]
    fn scheduler() {
        assert_eq!(
            super::active_scheduler("none [mq-deadline] kyber bfq").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(super::active_scheduler("none").as_deref(), Some("none"));
    }
}
