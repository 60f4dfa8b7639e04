//! Saved settings: what `config.toml` holds, how its text is read (every problem named by
//! its line, the setting then left at its default) and how one changed setting is written
//! back into the text (`edit`), keeping the user's comments and other keys.
//!
//! ```toml
//! interval = 1.0           # seconds between samples, 0.05 to 3600
//! units = "bytes"          # dirty figures in "bytes" or "pages"
//! disk_sort = "util"       # util, aqu-sz, await, iops, throughput, name
//! process_sort = "storage" # storage, memory, dirtied, read, rchar, wchar, iowait, sync, pid
//! view = "none"            # the who view shown: none, processes, cgroups
//! partitions = false       # partitions beside whole disks
//! fio_dir = "/var/tmp"     # where fio's test files go
//! color = "auto"           # auto (colours unless NO_COLOR), never
//! mouse = true             # clicks and the wheel (off: --no-mouse)
//! ```
//! Owns: the keys, their names and values, parsing and editing the text. Must not touch:
//! files or the environment (`cmd::screen` and `shell::config_io` read and write them;
//! `default_path` is handed the variables).

mod choices;
mod edit;
mod flags;
mod names;

use std::ffi::OsString;
use std::path::PathBuf;

pub use choices::{CgroupSort, ProcSort, SortKey, WhoView};
pub use edit::set;
pub use flags::with_flags;
pub use names::{ColorMode, Units};

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

/// The settings in `text`, and what was wrong with it. A file that is not TOML gives no
/// settings (every default) and its one syntax error; a key that is unknown or has a bad
/// value is named by its line and left at its default, the other keys kept.
#[must_use]
pub fn parse(text: &str) -> (Settings, Vec<Problem>) {
    let doc = match toml_edit::Document::parse(text) {
        Ok(d) => d,
        Err(e) => {
            let line = e.span().map_or(0, |s| line_of(text, s.start));
            let message = format!(
                "{}; every setting is at its default",
                e.message().trim_end()
            );
            return (Settings::default(), vec![Problem { line, message }]);
        }
    };
    let mut out = Settings::default();
    let mut problems = Vec::new();
    for (key, item) in doc.iter() {
        let line = doc
            .key(key)
            .and_then(toml_edit::Key::span)
            .or_else(|| item.span())
            .map_or(0, |s| line_of(text, s.start));
        if let Err(why) = names::apply(&mut out, key, item) {
            problems.push(Problem { line, message: why });
        }
    }
    (out, problems)
}

/// The line (1-based) of byte `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).unwrap_or(text).matches('\n').count() + 1
}

/// Where the config file is by default: `$XDG_CONFIG_HOME/pagewatch/config.toml` when that
/// variable is an absolute path (the XDG rule: a relative one is ignored), else
/// `$HOME/.config/pagewatch/config.toml`; `None` without either.
#[must_use]
pub fn default_path(xdg_config_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    ConfigPath::default_for(xdg_config_home, home).map(|c| c.file)
}

/// The config file and the directory its writer starts from (`config_io::save`): settings
/// are written only beneath `base`, through directories of the running user's own, and
/// never through a symbolic link below `base`. `base` itself may be reached through links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigPath {
    /// The file.
    pub file: PathBuf,
    /// `$XDG_CONFIG_HOME` (or `~/.config`) for the default file, the file's own directory
    /// for `--config FILE`.
    pub base: PathBuf,
}

impl ConfigPath {
    /// The default file (`default_path`), with the XDG directory as its base.
    #[must_use]
    pub fn default_for(xdg_config_home: Option<OsString>, home: Option<OsString>) -> Option<Self> {
        let base = xdg_config_home
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                home.map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|h| h.join(".config"))
            })?;
        Some(ConfigPath {
            file: base.join("pagewatch").join("config.toml"),
            base,
        })
    }

    /// A file the user named (`--config FILE`): its directory is the base.
    #[must_use]
    pub fn explicit(file: PathBuf) -> Self {
        let base = file
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), PathBuf::from);
        ConfigPath { file, base }
    }
}

#[cfg(test)]
mod tests;
