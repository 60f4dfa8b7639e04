//! The directory fio's test files live in, and the files pagewatch created there.
//!
//! Owns: choosing and checking the directory (refusing devices and missing paths, warning on
//! tmpfs), creating test files with O_EXCL, the set of files pagewatch owns, free-space checks
//! and removing the files at the end. Must not touch: any file it did not create, fio itself.

use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::spec::size_text;

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Where fio's files go, and which of them pagewatch created.
#[derive(Debug)]
pub struct FioDir {
    path: PathBuf,
    keep: bool,
    created_dir: bool,
    owned: BTreeSet<PathBuf>,
    warning: Option<String>,
}

impl FioDir {
    /// Opens `dir`, or the default `$TMPDIR/pagewatch-<uid>` (created 0700 when missing).
    /// An explicit `dir` must already exist and be a directory.
    pub fn open(dir: Option<&Path>, keep: bool) -> Result<FioDir> {
        let (path, created_dir) = match dir {
            Some(d) => (check_explicit(d)?, false),
            None => default_dir()?,
        };
        if path.to_string_lossy().contains(':') {
            bail!(
                "fio directory {} contains ':', which fio reads as a file separator",
                path.display()
            );
        }
        let warning = fs_warning(&path);
        Ok(FioDir {
            path,
            keep,
            created_dir,
            owned: BTreeSet::new(),
            warning,
        })
    }

    /// The directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A warning to show, such as "on tmpfs: buffered IO results mean nothing".
    #[must_use]
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// The files pagewatch created and still owns.
    pub fn owned(&self) -> impl Iterator<Item = &Path> {
        self.owned.iter().map(PathBuf::as_path)
    }

    /// The test file for `size` bytes: `<dir>/pagewatch-<pid>-<size>.fio`, reused within the
    /// session, created empty with O_EXCL when missing. Refuses a path pagewatch did not create
    /// and a size that does not fit in the free space.
    pub fn file_for(&mut self, size: u64) -> Result<PathBuf> {
        let path = self.path.join(format!(
            "pagewatch-{}-{}.fio",
            std::process::id(),
            size_text(size)
        ));
        let existing = match fs::symlink_metadata(&path) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("checking {}", path.display())),
        };
        let have = match &existing {
            Some(_) if !self.owned.contains(&path) => {
                bail!(
                    "{} already exists and pagewatch did not create it: refusing to use it",
                    path.display()
                )
            }
            Some(m) if !m.file_type().is_file() => {
                bail!(
                    "{} is no longer a regular file: refusing to use it",
                    path.display()
                )
            }
            Some(m) => m.len(),
            None => 0,
        };
        let free = free_bytes(&self.path)?;
        let need = size.saturating_sub(have);
        if need > free {
            bail!(
                "not enough free space in {} for a {} fio file: {} free, {} needed",
                self.path.display(),
                size_text(size),
                size_text(free),
                size_text(need)
            );
        }
        if existing.is_none() {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .with_context(|| format!("creating {}", path.display()))?;
            self.owned.insert(path.clone());
        }
        Ok(path)
    }

    /// Removes the files pagewatch created (and the default directory when it made it and it is
    /// now empty). Returns the first error; keeps trying the rest.
    pub fn cleanup(&mut self) -> Result<()> {
        let mut first = None;
        for path in std::mem::take(&mut self.owned) {
            if let Err(e) = fs::remove_file(&path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                first.get_or_insert_with(|| {
                    anyhow::Error::new(e).context(format!("removing {}", path.display()))
                });
            }
        }
        if self.created_dir {
            // Fails harmlessly when something else is in it.
            let _ = fs::remove_dir(&self.path);
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for FioDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.cleanup();
        }
    }
}

fn check_explicit(dir: &Path) -> Result<PathBuf> {
    let meta = fs::metadata(dir).with_context(|| format!("--fio-dir {}", dir.display()))?;
    let kind = meta.file_type();
    if kind.is_block_device() || kind.is_char_device() {
        bail!(
            "--fio-dir {} is a device: pagewatch only writes its own files in a directory",
            dir.display()
        );
    }
    if !meta.is_dir() {
        bail!("--fio-dir {} is not a directory", dir.display());
    }
    let path = fs::canonicalize(dir).with_context(|| format!("--fio-dir {}", dir.display()))?;
    for forbidden in ["/dev", "/proc", "/sys"] {
        if path.starts_with(forbidden) {
            bail!(
                "--fio-dir {} is under {forbidden}: refusing",
                path.display()
            );
        }
    }
    Ok(path)
}

fn default_dir() -> Result<(PathBuf, bool)> {
    let base = std::env::var_os("TMPDIR")
        .filter(|t| !t.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    let path = base.join(format!("pagewatch-{}", rustix::process::getuid().as_raw()));
    match fs::DirBuilder::new().mode(0o700).create(&path) {
        Ok(()) => return Ok((path, true)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(e).with_context(|| format!("creating fio directory {}", path.display()));
        }
    }
    let meta =
        fs::symlink_metadata(&path).with_context(|| format!("checking {}", path.display()))?;
    if !meta.is_dir() {
        bail!("{} exists and is not a directory", path.display());
    }
    Ok((path, false))
}

fn fs_warning(path: &Path) -> Option<String> {
    let st = rustix::fs::statfs(path).ok()?;
    #[allow(clippy::unnecessary_cast, clippy::cast_lossless)]
    let kind = st.f_type as i64;
    let name = match kind {
        TMPFS_MAGIC => "tmpfs",
        RAMFS_MAGIC => "ramfs",
        _ => return None,
    };
    Some(format!(
        "{} is on {name}: fio's file lives in memory (Shmem), so buffered IO figures say nothing about a disk; use --fio-dir",
        path.display()
    ))
}

fn free_bytes(path: &Path) -> Result<u64> {
    let st = rustix::fs::statvfs(path).with_context(|| format!("statvfs {}", path.display()))?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

#[cfg(test)]
#[path = "dir_tests.rs"]
mod tests;
