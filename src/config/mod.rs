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
mod settings;

use std::ffi::OsString;
use std::path::PathBuf;

pub use choices::{CgroupSort, ColorMode, ProcSort, SortKey, Units, WhoView};
pub use edit::set;
pub use flags::with_flags;
pub use settings::{KEY_DOCS, KEYS, Problem, Setting, Settings};

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
