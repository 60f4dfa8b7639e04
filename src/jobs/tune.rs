//! Kernel settings pagewatch may change for an experiment.
//!
//! Owns: the allowlist (`vm.dirty_*`, `vm.swappiness`, `vm.vfs_cache_pressure`, and a block
//! device's `queue/scheduler`, `nr_requests`, `read_ahead_kb`, `wbt_lat_usec`), parsing and
//! checking names and values, reading and writing those files (root only), and which files
//! are one setting (`slot`). Changing them and putting them back (the `Tuner`, its lock and
//! its restore guard, and the event of a change, `tune_event`) is `tuner.rs`. Must not touch:
//! any other file under /proc/sys or /sys.
//!
//! `vm.dirty_bytes` and `vm.dirty_ratio` are one setting in two forms: writing one zeroes the
//! other (`mm/page-writeback.c`, `dirty_bytes_handler`; docs/kernel-formulas.md §1.2),
//! and the same holds for the background pair. So the original kept for either is the form
//! that was in force (the non-zero one) before the first change to either, and restoring
//! writes that form back.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub use super::tuner::{Change, Tuner};

/// The vm sysctls that may be tuned.
pub const SYSCTLS: &[&str] = &[
    "vm.dirty_background_bytes",
    "vm.dirty_background_ratio",
    "vm.dirty_bytes",
    "vm.dirty_ratio",
    "vm.dirty_expire_centisecs",
    "vm.dirty_writeback_centisecs",
    "vm.dirtytime_expire_seconds",
    "vm.swappiness",
    "vm.vfs_cache_pressure",
];
/// The block queue attributes that may be tuned.
pub const QUEUE: &[&str] = &["scheduler", "nr_requests", "read_ahead_kb", "wbt_lat_usec"];

/// A setting as a playbook or the tune prompt names it: `vm.dirty_bytes`,
/// `queue/read_ahead_kb` (the device under the fio directory) or `vda:queue/scheduler`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// A vm sysctl from `SYSCTLS`.
    Sysctl(String),
    /// A block queue attribute from `QUEUE`; `device` `None` = the fio directory's disk.
    Queue {
        /// Kernel device name, such as `vda`.
        device: Option<String>,
        /// The attribute.
        attr: String,
    },
}

impl Setting {
    /// Parses and allowlists a setting name.
    pub fn parse(text: &str) -> Result<Setting, String> {
        let t = text.trim();
        if SYSCTLS.contains(&t) {
            return Ok(Setting::Sysctl(t.to_owned()));
        }
        let (device, rest) = match t.split_once(':') {
            Some((d, r)) => (Some(d), r),
            None => (None, t),
        };
        if let Some(attr) = rest.strip_prefix("queue/")
            && QUEUE.contains(&attr)
        {
            if let Some(d) = device
                && (d.is_empty() || d.contains('/') || d.starts_with('.'))
            {
                return Err(format!("{d:?} is not a block device name"));
            }
            return Ok(Setting::Queue {
                device: device.map(str::to_owned),
                attr: attr.to_owned(),
            });
        }
        Err(format!(
            "{t:?} may not be tuned: allowed are {}, and queue/{{{}}} (optionally DEVICE:queue/...)",
            SYSCTLS.join(", "),
            QUEUE.join(",")
        ))
    }

    /// Checks and normalises a value for this setting: a number (sizes such as `15M` for the
    /// `*_bytes` sysctls), or a scheduler's name.
    pub fn value(&self, text: &str) -> Result<String, String> {
        let t = text.trim();
        let bytes = matches!(self, Setting::Sysctl(s) if s.ends_with("_bytes"));
        if bytes {
            return crate::jobs::fio::value::parse_size(t)
                .map(|b| b.to_string())
                .ok_or_else(|| format!("{t:?} is not a size (such as 15M or 0)"));
        }
        if matches!(self, Setting::Queue { attr, .. } if attr == "scheduler") {
            return if !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                Ok(t.to_owned())
            } else {
                Err(format!(
                    "{t:?} is not a scheduler name (such as none or mq-deadline)"
                ))
            };
        }
        t.parse::<i64>()
            .map(|v| v.to_string())
            .map_err(|_| format!("{t:?} is not a whole number"))
    }

    /// The file behind the setting, with `device` for the fio directory's disk.
    pub fn resolve(&self, fio_device: Option<&str>) -> Result<Knob, String> {
        match self {
            Setting::Sysctl(s) => Ok(Knob {
                name: s.clone(),
                path: Path::new("/proc/sys").join(s.replace('.', "/")),
            }),
            Setting::Queue { device, attr } => {
                let dev = device.as_deref().or(fio_device).ok_or_else(|| {
                    format!("queue/{attr}: the fio directory's disk is unknown; name it (vda:queue/{attr})")
                })?;
                Ok(Knob {
                    name: format!("{dev}/queue/{attr}"),
                    path: Path::new("/sys/block").join(dev).join("queue").join(attr),
                })
            }
        }
    }
}

/// A resolved setting: its display name and its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knob {
    /// `vm.dirty_bytes`, `vda/queue/scheduler`.
    pub name: String,
    /// `/proc/sys/vm/dirty_bytes`, `/sys/block/vda/queue/scheduler`.
    pub path: PathBuf,
}

/// True when `path` is a file the allowlist names (the guard checks what it is sent).
#[must_use]
pub fn allowed_path(path: &Path) -> bool {
    let s = path.to_string_lossy();
    if let Some(vm) = s.strip_prefix("/proc/sys/vm/") {
        return SYSCTLS.contains(&format!("vm.{vm}").as_str());
    }
    let parts: Vec<&str> = s.split('/').collect();
    matches!(parts.as_slice(), ["", "sys", "block", dev, "queue", attr]
        if !dev.is_empty() && !dev.starts_with('.') && QUEUE.contains(attr))
}

/// The value a settings file shows: a scheduler's bracketed choice, else the trimmed text.
#[must_use]
pub fn shown(text: &str) -> String {
    let t = text.trim();
    match (t.find('['), t.find(']')) {
        (Some(a), Some(b)) if a < b => t[a + 1..b].to_owned(),
        _ => t.to_owned(),
    }
}

pub(super) fn read(path: &Path) -> Result<String> {
    let t = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(shown(&t))
}

pub(super) fn write(path: &Path, value: &str) -> Result<()> {
    std::fs::write(path, value).with_context(|| format!("writing {value} to {}", path.display()))
}

/// The two forms of a dirty threshold: (bytes file, ratio file), when `path` is one of them.
fn pair(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let vm = Path::new("/proc/sys/vm");
    let name = path.strip_prefix(vm).ok()?.to_str()?;
    let base = match name {
        "dirty_bytes" | "dirty_ratio" => "dirty",
        "dirty_background_bytes" | "dirty_background_ratio" => "dirty_background",
        _ => return None,
    };
    Some((
        vm.join(format!("{base}_bytes")),
        vm.join(format!("{base}_ratio")),
    ))
}

/// The one setting `path` is part of, as a key: for a dirty threshold, its bytes file
/// (both forms are one setting); else `path` itself.
#[must_use]
pub fn slot(path: &Path) -> PathBuf {
    pair(path).map_or_else(|| path.to_path_buf(), |(bytes, _)| bytes)
}

/// The name a playbook gives the setting in `path`: `vm.dirty_ratio`, `vda/queue/scheduler`.
#[must_use]
pub fn name_of(path: &Path) -> String {
    if let Ok(vm) = path.strip_prefix("/proc/sys/vm") {
        return format!("vm.{}", vm.display());
    }
    path.strip_prefix("/sys/block")
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The (file, value) that puts `path`'s setting back as it is now: for a dirty threshold,
/// whichever form is in force.
pub(super) fn original(path: &Path) -> Result<(PathBuf, String)> {
    if let Some((bytes, ratio)) = pair(path) {
        let b = read(&bytes)?;
        return Ok(if b == "0" {
            (ratio.clone(), read(&ratio)?)
        } else {
            (bytes, b)
        });
    }
    Ok((path.to_path_buf(), read(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_takes_dirty_sysctls_and_queue_attributes_only() {
        assert_eq!(
            Setting::parse("vm.dirty_bytes"),
            Ok(Setting::Sysctl("vm.dirty_bytes".into()))
        );
        assert_eq!(
            Setting::parse("vda:queue/scheduler"),
            Ok(Setting::Queue {
                device: Some("vda".into()),
                attr: "scheduler".into()
            })
        );
        for bad in [
            "vm.overcommit_memory",
            "kernel.panic",
            "queue/rotational",
            "../x:queue/scheduler",
            "a/b:queue/nr_requests",
        ] {
            assert!(Setting::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn values_are_checked_and_sizes_become_bytes() {
        let b = Setting::parse("vm.dirty_bytes").unwrap();
        assert_eq!(b.value("15M").unwrap(), (15u64 << 20).to_string());
        assert!(b.value("lots").is_err());
        let r = Setting::parse("vm.dirty_ratio").unwrap();
        assert_eq!(r.value("5").unwrap(), "5");
        assert!(r.value("5M").is_err());
        let s = Setting::parse("queue/scheduler").unwrap();
        assert_eq!(s.value("mq-deadline").unwrap(), "mq-deadline");
        assert!(s.value("a b").is_err());
    }

    #[test]
    fn paths_and_the_guard_allowlist_agree() {
        let k = Setting::parse("queue/read_ahead_kb")
            .unwrap()
            .resolve(Some("vda"))
            .unwrap();
        assert_eq!(k.path, Path::new("/sys/block/vda/queue/read_ahead_kb"));
        assert!(allowed_path(&k.path));
        let v = Setting::parse("vm.dirty_background_ratio")
            .unwrap()
            .resolve(None)
            .unwrap();
        assert_eq!(v.path, Path::new("/proc/sys/vm/dirty_background_ratio"));
        assert!(allowed_path(&v.path));
        assert!(!allowed_path(Path::new("/proc/sys/vm/drop_caches")));
        assert!(!allowed_path(Path::new("/sys/block/../queue/scheduler")));
        assert!(
            Setting::parse("queue/nr_requests")
                .unwrap()
                .resolve(None)
                .is_err()
        );
    }

    #[test]
    fn scheduler_shows_its_bracketed_choice() {
        assert_eq!(shown("none [mq-deadline] kyber bfq\n"), "mq-deadline");
        assert_eq!(shown("128\n"), "128");
    }

    #[test]
    fn dirty_pairs_restore_as_one_setting() {
        let (b, r) = pair(Path::new("/proc/sys/vm/dirty_ratio")).unwrap();
        assert_eq!(b, Path::new("/proc/sys/vm/dirty_bytes"));
        assert_eq!(r, Path::new("/proc/sys/vm/dirty_ratio"));
        assert!(pair(Path::new("/proc/sys/vm/swappiness")).is_none());
        assert_eq!(
            slot(Path::new("/proc/sys/vm/dirty_ratio")),
            slot(Path::new("/proc/sys/vm/dirty_bytes"))
        );
        assert_ne!(
            slot(Path::new("/proc/sys/vm/dirty_ratio")),
            slot(Path::new("/proc/sys/vm/dirty_background_ratio"))
        );
        let sched = Path::new("/sys/block/vda/queue/scheduler");
        assert_eq!(slot(sched), sched);
        assert_eq!(name_of(sched), "vda/queue/scheduler");
        assert_eq!(
            name_of(Path::new("/proc/sys/vm/dirty_ratio")),
            "vm.dirty_ratio"
        );
    }
}
