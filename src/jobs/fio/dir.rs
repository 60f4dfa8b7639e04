//! The directory fio's test files live in, and the files pagewatch created there.
//!
//! Owns: choosing and checking the directory (refusing devices, missing paths and any place
//! another user could write to, warning on tmpfs), the private directory pagewatch makes for
//! each session, creating test files with O_EXCL and remembering their identity, free-space
//! checks, and removing the files at the end (also through a cleanup guard when pagewatch is
//! killed). Must not touch: any file it did not create, fio itself.
//!
//! Safety against other local users: fio opens its file by path, as root when pagewatch runs
//! as root, so every directory on that path must be out of other users' reach. pagewatch
//! accepts a base directory (`--fio-dir`, or `$TMPDIR`, or `/tmp`) only when it and each of
//! its ancestors is owned by root or the running user and is either not writable by group and
//! others or sticky (as `/tmp` is: there only an entry's owner may rename or remove it). Inside
//! it pagewatch makes a fresh private directory (`pagewatch-<uid>-XXXXXX`, mode 0700, like
//! mkdtemp) and creates the test files there. Nobody but root can add, rename or swap an entry
//! on that path, so the path fio opens is the file pagewatch created; its (device, inode)
//! identity is also checked, without following symlinks, before and after every fio run and
//! before it is removed.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};

use super::spec::size_text;

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;
const STICKY: u32 = 0o1000;

/// A file's identity: the device and inode it had when pagewatch created it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

/// The test files pagewatch created, each with its identity. Shared with the fio job threads:
/// fio's layout run unlinks and recreates the file (fio's `extend_file`), and the job adopts
/// the new inode, which only pagewatch (or root) can have made in the private directory.
#[derive(Debug, Clone, Default)]
pub struct OwnedFiles(Arc<Mutex<BTreeMap<PathBuf, FileId>>>);

impl OwnedFiles {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, FileId>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Checks `path` is still the file pagewatch created; returns its length.
    pub fn verify(&self, path: &Path) -> Result<u64> {
        let id = self
            .map()
            .get(path)
            .copied()
            .with_context(|| format!("{} is not a file pagewatch created", path.display()))?;
        verify(path, id)
    }

    /// Records the file fio laid out at `path` (a regular file of this user's, reached
    /// without following a symlink) as the one pagewatch owns there; returns its length.
    pub fn adopt(&self, path: &Path) -> Result<u64> {
        let m = open_nofollow(path)?;
        if !m.file_type().is_file() || m.uid() != rustix::process::geteuid().as_raw() {
            bail!(
                "{} is not a regular file of this user's after fio laid it out",
                path.display()
            );
        }
        self.map().insert(
            path.to_path_buf(),
            FileId {
                dev: m.dev(),
                ino: m.ino(),
            },
        );
        Ok(m.len())
    }
}

/// Where fio's files go, and which of them pagewatch created.
#[derive(Debug)]
pub struct FioDir {
    path: PathBuf,
    keep: bool,
    owned: OwnedFiles,
    warning: Option<String>,
    guard: Option<(Child, ChildStdin)>,
}

impl FioDir {
    /// Checks a base directory (`--fio-dir`, or the default when `None`) as `open` would,
    /// without creating anything. Returns the canonical base.
    pub fn check(dir: Option<&Path>) -> Result<PathBuf> {
        let base = match dir {
            Some(d) => check_explicit(d)?,
            None => default_base()?,
        };
        if base.to_string_lossy().contains(':') {
            bail!(
                "fio directory {} contains ':', which fio reads as a file separator",
                base.display()
            );
        }
        check_trusted(&base)?;
        Ok(base)
    }

    /// Checks `dir` (or the default `$TMPDIR`, else `/tmp`) and makes a fresh private directory
    /// in it, `pagewatch-<uid>-XXXXXX` with mode 0700, where this session's test files go.
    pub fn open(dir: Option<&Path>, keep: bool) -> Result<FioDir> {
        let base = Self::check(dir)?;
        let path = make_private(&base)?;
        let warning = fs_warning(&path);
        Ok(FioDir {
            path,
            keep,
            owned: OwnedFiles::default(),
            warning,
            guard: None,
        })
    }

    /// Starts `exe __guard --clean-dir DIR`, which removes this directory's test files when
    /// pagewatch ends without doing so itself (SIGKILL): it waits for the end of a pipe only
    /// pagewatch holds. Nothing to do when the files are kept.
    pub fn start_cleanup_guard(&mut self, exe: &Path) -> Result<()> {
        if self.keep || self.guard.is_some() {
            return Ok(());
        }
        let mut child = Command::new(exe)
            .arg("__guard")
            .arg("--clean-dir")
            .arg(&self.path)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .context("starting the fio file cleanup guard")?;
        let stdin = child.stdin.take().context("cleanup guard without a pipe")?;
        self.guard = Some((child, stdin));
        Ok(())
    }

    /// The private directory fio's files are in.
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
    #[must_use]
    pub fn owned(&self) -> Vec<PathBuf> {
        self.owned.map().keys().cloned().collect()
    }

    /// The shared list of owned files, for a job that runs fio on one of them.
    #[must_use]
    pub fn owned_files(&self) -> OwnedFiles {
        self.owned.clone()
    }

    /// The test file for `size` bytes: `<dir>/pagewatch-<pid>-<size>.fio`, reused within the
    /// session, created empty with O_EXCL when missing. Refuses a path pagewatch did not create,
    /// a file that is no longer the one it created, and a size that does not fit in the free
    /// space.
    pub fn file_for(&mut self, size: u64) -> Result<PathBuf> {
        let path = self.path.join(format!(
            "pagewatch-{}-{}.fio",
            std::process::id(),
            size_text(size)
        ));
        let known = self.owned.map().get(&path).copied();
        let have = match (known, fs::symlink_metadata(&path)) {
            (_, Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                // fio unlinks a file whose layout it was stopped in: create it again.
                self.owned.map().remove(&path);
                None
            }
            (_, Err(e)) => return Err(e).with_context(|| format!("checking {}", path.display())),
            (None, Ok(_)) => bail!(
                "{} already exists and pagewatch did not create it: refusing to use it",
                path.display()
            ),
            (Some(id), Ok(_)) => Some(verify(&path, id)?),
        };
        let free = free_bytes(&self.path)?;
        let need = size.saturating_sub(have.unwrap_or(0));
        if need > free {
            bail!(
                "not enough free space in {} for a {} fio file: {} free, {} needed",
                self.path.display(),
                size_text(size),
                size_text(free),
                size_text(need)
            );
        }
        if have.is_none() {
            let f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .mode(0o600)
                .open(&path)
                .with_context(|| format!("creating {}", path.display()))?;
            let m = f.metadata()?;
            self.owned.map().insert(
                path.clone(),
                FileId {
                    dev: m.dev(),
                    ino: m.ino(),
                },
            );
        }
        Ok(path)
    }

    /// Removes the files pagewatch created (only while each is still the file it created) and
    /// the private directory when it is empty. Returns the first error; keeps trying the rest.
    pub fn cleanup(&mut self) -> Result<()> {
        let mut first = None;
        let owned = std::mem::take(&mut *self.owned.map());
        for (path, id) in owned {
            let gone = match verify(&path, id) {
                Ok(_) => fs::remove_file(&path).map_err(anyhow::Error::new),
                Err(e) => Err(e),
            };
            if let Err(e) = gone
                && !is_not_found(&e)
            {
                first.get_or_insert_with(|| e.context(format!("removing {}", path.display())));
            }
        }
        // Fails harmlessly when something else is in it.
        let _ = fs::remove_dir(&self.path);
        first.map_or(Ok(()), Err)
    }
}

impl Drop for FioDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.cleanup();
        }
        if let Some((mut child, stdin)) = self.guard.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

fn is_not_found(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

/// Opens `path` without following a symlink and checks it is still the regular file `id`.
/// Returns its length.
fn verify(path: &Path, id: FileId) -> Result<u64> {
    let m = open_nofollow(path)?;
    if !m.file_type().is_file() || m.dev() != id.dev || m.ino() != id.ino {
        bail!(
            "{} was replaced: it is not the file pagewatch created",
            path.display()
        );
    }
    Ok(m.len())
}

/// The metadata of `path` through a descriptor opened without following a symlink.
fn open_nofollow(path: &Path) -> Result<fs::Metadata> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    match f {
        Ok(f) => Ok(f.metadata()?),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => bail!(
            "{} was replaced by a symlink: not the file pagewatch created",
            path.display()
        ),
        Err(e) => Err(e.into()),
    }
}

/// `pagewatch __guard --clean-dir DIR`: waits until pagewatch closes the pipe on stdin (it
/// exits, however it ends), then removes what is left of its test files in its private `DIR`
/// and the directory. Signals from the terminal do not stop it before that.
pub fn run_cleanup_guard(dir: &Path) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    for sig in [SIGHUP, SIGINT, SIGQUIT, SIGTERM] {
        signal_hook::flag::register(sig, std::sync::Arc::default())?;
    }
    crate::child::wait_for_close(std::io::stdin().lock());
    remove_leftovers(dir);
    Ok(())
}

/// Removes `pagewatch-*.fio` regular files (never a symlink's target) from a private
/// directory pagewatch made, then the directory. Does nothing unless `dir` is a directory
/// owned by this user with no access for others.
fn remove_leftovers(dir: &Path) {
    let Ok(m) = fs::symlink_metadata(dir) else {
        return;
    };
    if !m.is_dir() || m.uid() != rustix::process::geteuid().as_raw() || m.mode() & 0o077 != 0 {
        return;
    }
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let ours = name.starts_with("pagewatch-") && name.ends_with(".fio");
            if ours && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    let _ = fs::remove_dir(dir);
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

fn default_base() -> Result<PathBuf> {
    let base = std::env::var_os("TMPDIR")
        .filter(|t| !t.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    fs::canonicalize(&base).with_context(|| format!("fio directory $TMPDIR {}", base.display()))
}

/// Refuses `base` unless it and every ancestor is owned by root or this user and is not
/// writable by others unless sticky: then no other user can swap a path below it.
fn check_trusted(base: &Path) -> Result<()> {
    let me = rustix::process::geteuid().as_raw();
    for dir in base.ancestors() {
        let m = fs::symlink_metadata(dir).with_context(|| format!("checking {}", dir.display()))?;
        if !m.is_dir() {
            bail!("{} is not a directory", dir.display());
        }
        if m.uid() != 0 && m.uid() != me {
            bail!(
                "fio directory {}: {} belongs to uid {}, who could swap fio's files for links to \
                 files of yours; use a directory owned by you or root (--fio-dir)",
                base.display(),
                dir.display(),
                m.uid()
            );
        }
        if m.mode() & 0o022 != 0 && m.mode() & STICKY == 0 {
            bail!(
                "fio directory {}: {} is writable by other users (mode {:04o}) and not sticky, \
                 so they could swap fio's files for links to files of yours; use a directory \
                 only you or root can write (--fio-dir)",
                base.display(),
                dir.display(),
                m.mode() & 0o7777
            );
        }
    }
    Ok(())
}

/// Makes `base/pagewatch-<uid>-XXXXXX` with mode 0700, like mkdtemp(3): mkdir fails rather
/// than reuse anything that is already there.
fn make_private(base: &Path) -> Result<PathBuf> {
    use std::hash::{BuildHasher, RandomState};
    let uid = rustix::process::geteuid().as_raw();
    let seed = RandomState::new();
    for attempt in 0u32..100 {
        let n = seed.hash_one((std::process::id(), attempt));
        let path = base.join(format!("pagewatch-{uid}-{:06x}", n & 0xff_ffff));
        match fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {
                let m = fs::symlink_metadata(&path)?;
                if !m.is_dir() || m.uid() != uid || m.mode() & 0o077 != 0 {
                    bail!(
                        "{} is not a private directory of pagewatch's",
                        path.display()
                    );
                }
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("creating fio directory {}", path.display()));
            }
        }
    }
    bail!(
        "could not make a private fio directory in {}: 100 names were taken",
        base.display()
    )
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
