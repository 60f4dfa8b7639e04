//! The checks before a playbook runs, headless or from the screen: root when it needs it, room
//! for the fio files, every eat size against MemAvailable and the safety margin, and every
//! tuned setting resolved to a file that is there (an unknown device such as
//! `nosuchdev:queue/read_ahead_kb` is refused here, not found out mid-run). Every refusal
//! names the playbook (its file, or the built-in's name) and the step's line, with sizes in
//! one unit system (`1.2G`, `256M`, as on the screen).
//!
//! Owns: those checks, and `disk_of` (the whole disk under a path, from sysfs). The figures
//! are read at the edge (`preflight`; MemAvailable by `jobs::eat::mem`, the eater's own
//! reading through `parse::meminfo`); the checks of the steps (`check_steps`) are pure.
//! Must not touch: anything the steps change.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::jobs::eat::mem;
use crate::jobs::eat_plan::MIN_MARGIN;
use crate::jobs::tune::Knob;
use crate::jobs::tuner::Tuner;
use crate::play::book::{Action, EatSize, Playbook};

/// The fio file sizes by step id, and the distinct sizes (one file each).
fn files(book: &Playbook) -> (BTreeMap<String, u64>, BTreeSet<u64>) {
    let mut ids = BTreeMap::new();
    let mut sizes = BTreeSet::new();
    for s in &book.steps {
        if let Action::Fio { id, spec, .. } = &s.action {
            if let Some(id) = id {
                ids.insert(id.clone(), spec.size);
            }
            sizes.insert(spec.size);
        }
    }
    (ids, sizes)
}

/// Refuses what cannot run here, before anything starts; every refusal names the playbook
/// (its file, or the built-in) and the line of the step.
pub(super) fn preflight(book: &Playbook, base: &Path) -> Result<()> {
    if book.needs_root() && !rustix::process::geteuid().is_root() {
        bail!(
            "{} tunes kernel settings or drops caches: run it as root",
            book.origin
        );
    }
    let (_, sizes) = files(book);
    let st = rustix::fs::statvfs(base).with_context(|| format!("statvfs {}", base.display()))?;
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    let need: u64 = sizes.iter().sum();
    if need > free {
        bail!(
            "{}: the fio files need {} and {} has {} free",
            book.origin,
            human(need),
            base.display(),
            human(free)
        );
    }
    let (total, avail) = mem()?;
    let facts = Facts {
        total,
        avail,
        device: disk_of(base),
    };
    check_steps(book, &facts, &knob_readable).map_err(anyhow::Error::msg)
}

/// What the checks of the steps need to know about this machine.
struct Facts {
    /// MemTotal, bytes.
    total: u64,
    /// MemAvailable, bytes.
    avail: u64,
    /// The disk under the fio directory (for `queue/ATTR` without a device).
    device: Option<String>,
}

/// A size as people read it, in the one unit system of the screen (`1.2G`, `256M`).
fn human(b: u64) -> String {
    crate::fmt::bytes(b as f64)
}

/// Whether the setting's file is there to be read (and written later).
fn knob_readable(knob: &Knob) -> Result<(), String> {
    if !knob.path.exists() {
        return Err(format!(
            "{} is not on this machine ({} does not exist)",
            knob.name,
            knob.path.display()
        ));
    }
    Tuner::current(knob).map(drop).map_err(|e| format!("{e:#}"))
}

/// The step checks of `preflight`, given the machine's figures and how to probe a setting:
/// eat sizes against MemAvailable and the safety margin, and every tuned setting resolved
/// (its device known and present), so that none of it is found out only mid-run.
fn check_steps(
    book: &Playbook,
    f: &Facts,
    knob_ok: &dyn Fn(&Knob) -> Result<(), String>,
) -> Result<(), String> {
    let (ids, _) = files(book);
    let margin = crate::jobs::eat_plan::margin(f.total);
    for s in &book.steps {
        let at = |e: String| book.at(s.line, &e);
        match &s.action {
            Action::Eat(EatSize::Size(e)) => {
                let b = e.eval(f.total, &ids).map_err(at)?;
                let room = f.avail.saturating_sub(margin);
                if b > room {
                    return Err(at(format!(
                        "eat {} is more than the {} that may be taken: MemAvailable {} minus \
                         the safety margin {}",
                        human(b),
                        human(room),
                        human(f.avail),
                        human(margin)
                    )));
                }
            }
            Action::Eat(EatSize::Leave(e)) => {
                let b = e.eval(f.total, &ids).map_err(at)?;
                if b < MIN_MARGIN || b >= f.avail {
                    return Err(at(format!(
                        "leave {} must be at least {} and below MemAvailable {}",
                        human(b),
                        human(MIN_MARGIN),
                        human(f.avail)
                    )));
                }
            }
            Action::Tune { setting, .. } => {
                let knob = setting.resolve(f.device.as_deref()).map_err(at)?;
                knob_ok(&knob).map_err(at)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The whole disk under `path`'s filesystem (`/sys/dev/block/M:m`, the parent for a partition).
#[must_use]
pub fn disk_of(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let real = std::fs::canonicalize(&sys).ok()?;
    let real = if real.join("partition").exists() {
        real.parent()?.to_path_buf()
    } else {
        real
    };
    Some(real.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
#[path = "preflight_tests.rs"]
mod tests;
