//! The saved settings' vocabulary: what a config file can hold (`Settings`), one changed
//! setting to write back (`Setting`), every key with its documentation, and a problem found
//! in a file. It sits below the reading (`config::parse`, `names`) and the writing (`edit`),
//! which both speak it.
//!
//! Owns: `Settings`, `Setting`, `Problem`, `KEY_DOCS`, `KEYS`. Must not touch: the file's
//! text.

use std::path::PathBuf;

use super::{ColorMode, ProcSort, SortKey, Units, WhoView};

/// Settings found in a config file; `None`: not set there (or set to a bad value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// Seconds between samples.
    pub interval: Option<f64>,
    /// Dirty figures in pages or bytes.
    pub units: Option<Units>,
    /// The disk table's sort column.
    pub disk_sort: Option<SortKey>,
    /// The processes view's sort column.
    pub process_sort: Option<ProcSort>,
    /// The who view shown (`Some(None)`: none).
    pub view: Option<Option<WhoView>>,
    /// Partitions shown beside whole disks.
    pub partitions: Option<bool>,
    /// Where fio's test files go.
    pub fio_dir: Option<PathBuf>,
    /// Colours.
    pub color: Option<ColorMode>,
    /// Mouse clicks and the wheel.
    pub mouse: Option<bool>,
}

/// One setting with its value: what the screen changed, to be written back.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    /// `interval`.
    Interval(f64),
    /// `units`.
    Units(Units),
    /// `disk_sort`.
    DiskSort(SortKey),
    /// `process_sort`.
    ProcessSort(ProcSort),
    /// `view`.
    View(Option<WhoView>),
    /// `partitions`.
    Partitions(bool),
}

impl Setting {
    /// The key it is saved under.
    #[must_use]
    pub fn key(&self) -> &'static str {
        match self {
            Setting::Interval(_) => "interval",
            Setting::Units(_) => "units",
            Setting::DiskSort(_) => "disk_sort",
            Setting::ProcessSort(_) => "process_sort",
            Setting::View(_) => "view",
            Setting::Partitions(_) => "partitions",
        }
    }
}

/// Something wrong in a config file, at a line (1-based; 0 when the file has no position).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line.
    pub line: usize,
    /// What is wrong, and what was done about it.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Every key, in the order the file documents them, with what it holds (for the man page).
pub const KEY_DOCS: [(&str, &str); 9] = [
    (
        "interval",
        "seconds between samples, 0.05 to 3600 (keys + and -)",
    ),
    ("units", "dirty figures in \"bytes\" or \"pages\" (key u)"),
    (
        "disk_sort",
        "the disk table's sort: util, aqu-sz, await, iops, throughput or name (key s)",
    ),
    (
        "process_sort",
        "the processes view's sort: dirtied, read, rchar, wchar, iowait or pid (key s there)",
    ),
    (
        "view",
        "the who view shown: none, processes or cgroups (keys w, c, Esc)",
    ),
    (
        "partitions",
        "true to show partitions beside whole disks (key p)",
    ),
    (
        "fio_dir",
        "the directory fio's test files go in (as --fio-dir)",
    ),
    (
        "color",
        "auto (colours unless NO_COLOR is set) or never (as --color)",
    ),
    (
        "mouse",
        "false to leave the mouse to the terminal (as --no-mouse)",
    ),
];

/// Every key, in the order the file documents them.
pub const KEYS: [&str; 9] = {
    let mut k = [""; 9];
    let mut i = 0;
    while i < 9 {
        k[i] = KEY_DOCS[i].0;
        i += 1;
    }
    k
};
