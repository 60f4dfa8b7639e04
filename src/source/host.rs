//! Static host facts captured once at start: the only place sysinfo is used.
//!
//! Owns: `HostInfo`. Must not touch: anything sampled per tick (that goes through `FsSource`).

use serde::{Deserialize, Serialize};

/// Host facts shown in the header and recorded with sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel release, such as `6.18.44`.
    pub kernel: String,
    /// Logical CPUs.
    pub cpus: usize,
}

impl HostInfo {
    /// Facts of the machine pagewatch runs on.
    #[must_use]
    pub fn live() -> Self {
        Self {
            hostname: sysinfo::System::host_name().unwrap_or_default(),
            kernel: sysinfo::System::kernel_version().unwrap_or_default(),
            cpus: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        }
    }

    /// Facts of a captured tree: `DIR/host` holds `hostname`, `kernel` and `cpus` lines
    /// (`key value`); absent keys fall back to the tree's directory name and blanks.
    #[must_use]
    pub fn captured(dir: &std::path::Path) -> Self {
        let text = std::fs::read_to_string(dir.join("host")).unwrap_or_default();
        let get = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix(' ')))
                .map(|v| v.trim().to_owned())
        };
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        Self {
            hostname: get("hostname")
                .or(name)
                .unwrap_or_else(|| "captured".to_owned()),
            kernel: get("kernel").unwrap_or_default(),
            cpus: get("cpus").and_then(|c| c.parse().ok()).unwrap_or(0),
        }
    }
}
