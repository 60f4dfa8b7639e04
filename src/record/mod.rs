//! Session recordings: the raw samples and events of a session in one compressed,
//! crash-safe file, and reading them back.
//!
//! Owns: the file format (see `format.rs`), `Recorder` (writing), `read` (reading) and
//! `RecordingSource` (a recording's samples as a `Source`).
//! A recording holds raw kernel text, never derived figures, so every figure is re-derived
//! by the same `parse` and `model` code as live. Must not touch: parsing, deriving, drawing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::sample::{RawSample, names};
use crate::source::HostInfo;

/// The format version this build writes. Readers refuse files with a newer version.
pub const FORMAT_VERSION: u32 = 1;

/// Facts about the recorded machine and session, written once at the start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Format version of the file.
    pub format: u32,
    /// pagewatch version that wrote it.
    pub pagewatch: String,
    /// Wall time the recording started, ms since the epoch.
    pub started_ms: i64,
    /// Seconds between samples.
    pub interval_s: f64,
    /// Host name, kernel, CPU count.
    pub host: HostInfo,
    /// Page size, bytes.
    pub page_size: u64,
    /// Every vm sysctl the figures depend on, as read at the start (`dirty_ratio` → `20`).
    pub sysctls: BTreeMap<String, String>,
    /// Per-device queue settings at the start.
    pub devices: Vec<DeviceFacts>,
    /// How the recording was made (`pagewatch --record`, `pagewatch record`, command line).
    pub provenance: String,
    /// How the recorder saw throttled writers: `tracepoint` (it ran as root) or `wchan` (not
    /// root: approximate). Written by `pagewatch stream`, for `connect`'s header; absent in
    /// recordings made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub privilege: Option<String>,
}

/// Queue settings of one block device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceFacts {
    /// Kernel name (`sda`, `nvme0n1`, `dm-0`).
    pub name: String,
    /// `queue/rotational`.
    pub rotational: String,
    /// `queue/scheduler`.
    pub scheduler: String,
    /// `queue/nr_requests`.
    pub nr_requests: String,
    /// `queue/write_cache`.
    pub write_cache: String,
    /// `dm/name`, for device-mapper devices.
    pub dm_name: String,
}

/// Everything read back from a recording file.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The header.
    pub header: Header,
    /// Samples, in recorded order.
    pub samples: Vec<RawSample>,
    /// Events, in recorded order.
    pub events: Vec<Event>,
    /// What was skipped while reading (a torn tail, a corrupted stretch), in plain words.
    pub warnings: Vec<String>,
    /// Reading stopped at damage (a checksum mismatch, a record that does not decode), not
    /// at a torn tail or an unclosed end, which a killed recorder leaves: the commands show
    /// what precedes it, then exit 1 (`exit::Damaged`).
    pub damaged: bool,
}

mod delta;
mod error;
pub mod format;
mod reader;
mod replay;
pub mod stream;
mod writer;

pub use delta::SampleDelta;
pub use error::RecordError;
pub use reader::read;
pub use replay::RecordingSource;
pub use stream::{Followed, Follower, StreamError, StreamWriter};
pub use writer::{Recorder, Written, ZSTD_LEVEL};

impl Header {
    /// The header for a recording whose first sample is `first`: the vm sysctls and the
    /// block devices' queue settings are taken from that sample's files.
    #[must_use]
    pub fn from_sample(
        first: &RawSample,
        host: HostInfo,
        interval_s: f64,
        provenance: String,
        started_ms: i64,
    ) -> Header {
        let sysctls = names::VM_SYSCTLS
            .iter()
            .filter_map(|k| {
                let text = first.file(&names::vm_sysctl(k))?;
                Some(((*k).to_owned(), text.trim().to_owned()))
            })
            .collect();
        let devices = first
            .file(names::BLOCK_DEVICES)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let mut f = l.split('\t').map(str::to_owned);
                let mut next = || f.next().unwrap_or_default();
                DeviceFacts {
                    name: next(),
                    rotational: next(),
                    scheduler: next(),
                    nr_requests: next(),
                    write_cache: next(),
                    dm_name: next(),
                }
            })
            .collect();
        Header {
            format: FORMAT_VERSION,
            pagewatch: env!("CARGO_PKG_VERSION").to_owned(),
            started_ms,
            interval_s,
            host,
            page_size: first.page_size,
            sysctls,
            devices,
            provenance,
            privilege: None,
        }
    }
}
