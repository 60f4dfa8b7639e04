//! The config file on disk: read once at start, and written on a thread of its own each time
//! a saved setting changes in the screen, so a Ctrl-C (or SIGTERM, SIGHUP) loses nothing and
//! a slow disk (fsync while writeback is throttled) never holds up the keys.
//!
//! Reading: only a regular file (opened without blocking, so a FIFO cannot hang the screen
//! before it draws), at most 1 MiB, through links if need be (the user's own dotfile).
//!
//! Writing goes only into the running user's own directories, never through a link:
//! - It starts from the base (`ConfigPath`: `$XDG_CONFIG_HOME` or `~/.config`, or the
//!   directory of `--config FILE`), which must belong to the running user: under `sudo -E`
//!   root's screen does not take over the invoking user's config (it says so, once).
//! - Below the base, each directory is opened with `O_NOFOLLOW` and must belong to the running
//!   user too (created mode 0700 when missing): a `pagewatch` directory that is a link to
//!   another program's directory is refused, not written into.
//! - In that directory (held open, so nothing can be swapped under it) an exclusive `flock` on
//!   the directory covers read, edit and rename, so two screens saving at once both land.
//! - The new text goes to a fresh temporary file (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600), is
//!   synced, then renamed over the file (`rename` replaces the name, never what a link points
//!   to). A config file that is itself a symbolic link (a dotfile manager's) is left alone
//!   and the screen says why.
//!
//! Owns: the file's I/O (with `shell/tui.rs`, one of the edges that may touch files). Must
//! not touch: the text's meaning (`config`).

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Component, Path};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::app::Msg;
use crate::config::{self, ConfigPath, Problem, Setting, Settings};
use crate::userfile;

/// A config file larger than this is not read (it is not one pagewatch wrote): 1 MiB.
const MAX_BYTES: u64 = 1 << 20;

/// How long leaving waits for the last write.
const FINISH_WAIT: Duration = Duration::from_secs(3);

/// The settings in the file at `path` and what was wrong with it; a missing file is no
/// settings and no problem.
#[must_use]
pub fn load(path: &Path) -> (Settings, Vec<Problem>) {
    match read(path) {
        Ok(None) => (Settings::default(), Vec::new()),
        Ok(Some(text)) => config::parse(&text),
        Err(e) => (
            Settings::default(),
            vec![Problem {
                line: 0,
                message: format!("cannot read it ({e}); every setting is at its default"),
            }],
        ),
    }
}

/// The file's text, `None` when there is no file. Reading through a symbolic link is fine
/// (the user's own dotfile); a FIFO or a device is refused without blocking.
fn read(path: &Path) -> io::Result<Option<String>> {
    match userfile::read_regular(path, MAX_BYTES) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The refusal for a directory that is not the running user's.
fn not_yours(dir: &Path, uid: u32) -> String {
    format!(
        "settings are not saved: {} belongs to uid {uid}, not to uid {} (pagewatch writes only \
         into directories of its user's own; is HOME another user's, as with sudo -E?)",
        dir.display(),
        me()
    )
}

/// Writes `changes` into the config file, keeping everything else in it (see the module's
/// rules for where it writes).
pub fn save(loc: &ConfigPath, changes: &[Setting]) -> Result<(), String> {
    let shown = loc.file.display();
    let name = loc
        .file
        .file_name()
        .ok_or_else(|| format!("{shown} names no file"))?;
    let dir = open_dir(loc)?;
    // One writer at a time, across screens: released when `dir` is closed.
    rustix::fs::flock(&dir, FlockOperation::LockExclusive)
        .map_err(|e| format!("locking the directory of {shown}: {e}"))?;
    let old = read_at(&dir, name).map_err(|e| format!("{shown} {e}"))?;
    let text =
        config::set(old.as_deref().unwrap_or(""), changes).map_err(|p| format!("{shown} {p}"))?;
    replace_at(&dir, name, text.as_bytes()).map_err(|e| format!("writing {shown}: {e}"))
}

/// The directory the file goes in, open: from the base (created when missing, beneath a
/// directory of the user's own), then each component below it without following a link,
/// each the user's own.
fn open_dir(loc: &ConfigPath) -> Result<OwnedFd, String> {
    let base = &loc.base;
    if matches!(fs::metadata(base), Err(e) if e.kind() == io::ErrorKind::NotFound) {
        if let Some(up) = base.ancestors().skip(1).find(|a| fs::metadata(a).is_ok()) {
            let uid = fs::metadata(up).map_or(u32::MAX, |m| m.uid());
            if uid != me() {
                return Err(not_yours(up, uid));
            }
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(base)
            .map_err(|e| format!("creating {}: {e}", base.display()))?;
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(base, flags, Mode::empty())
        .map_err(|e| format!("opening {}: {e}", base.display()))?;
    owned(&dir, base)?;
    let below = loc
        .file
        .parent()
        .and_then(|p| p.strip_prefix(base).ok())
        .unwrap_or(Path::new(""));
    let mut at = base.clone();
    for c in below.components() {
        let Component::Normal(name) = c else {
            return Err(format!(
                "{}: only plain names below {}",
                loc.file.display(),
                base.display()
            ));
        };
        at.push(name);
        dir = child_dir(&dir, name, &at)?;
    }
    Ok(dir)
}

/// The directory `name` in `parent`, created mode 0700 when missing; refused when it is a
/// link, not a directory, or another user's.
fn child_dir(parent: &OwnedFd, name: &OsStr, shown: &Path) -> Result<OwnedFd, String> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let open = || rustix::fs::openat(parent, name, flags, Mode::empty());
    let fd = match open() {
        Err(Errno::NOENT) => {
            match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(format!("creating {}: {e}", shown.display())),
            }
            open()
        }
        other => other,
    };
    let fd = fd.map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => format!(
            "settings are not saved: {} is a symbolic link or not a directory; pagewatch \
             writes them only through real directories of its user's own",
            shown.display()
        ),
        e => format!("opening {}: {e}", shown.display()),
    })?;
    owned(&fd, shown)?;
    Ok(fd)
}

/// Refuses a directory that does not belong to the running user.
fn owned(fd: &OwnedFd, shown: &Path) -> Result<(), String> {
    let st = rustix::fs::fstat(fd).map_err(|e| format!("checking {}: {e}", shown.display()))?;
    if st.st_uid == me() {
        Ok(())
    } else {
        Err(not_yours(shown, st.st_uid))
    }
}

/// The text of `name` in `dir`, `None` when missing; never through a link (the file is about
/// to be replaced), never blocking on a FIFO.
fn read_at(dir: &OwnedFd, name: &OsStr) -> Result<Option<String>, String> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) => {
            return Err(
                "is a symbolic link; pagewatch does not replace it (edit it by hand)".into(),
            );
        }
        Err(e) => return Err(format!(": {e}")),
    };
    let f = File::from(fd);
    let kind = f.metadata().map_err(|e| format!(": {e}"))?.file_type();
    if !kind.is_file() {
        return Err(format!(
            "is not a regular file ({})",
            userfile::kind_name(kind)
        ));
    }
    userfile::read_capped(f, MAX_BYTES)
        .map(Some)
        .map_err(|e| format!(": {e}"))
}

/// Writes `data` to a new temporary file in `dir` and renames it over `name`.
fn replace_at(dir: &OwnedFd, name: &OsStr, data: &[u8]) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for n in 0..100 {
        let tmp = format!(".{}.{}.{n}.tmp", name.to_string_lossy(), std::process::id());
        let mut file = match rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => File::from(fd),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        };
        let res = file
            .write_all(data)
            .and_then(|()| file.sync_all())
            .and_then(|()| Ok(rustix::fs::renameat(dir, &tmp, dir, name)?));
        if res.is_err() {
            let _ = rustix::fs::unlinkat(dir.as_fd(), &tmp, AtFlags::empty());
        }
        return res;
    }
    Err(io::Error::other("no free temporary file name"))
}

/// The thread that saves settings as they change.
pub struct Saver {
    tx: Option<Sender<Vec<Setting>>>,
    done: Receiver<()>,
}

impl Saver {
    /// Starts saving to `loc`; a failure is told to the app as a notice on `notices`, once
    /// while it stays the same (a refused directory is not told again at every key).
    pub fn start(loc: ConfigPath, notices: Sender<Msg>) -> io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Vec<Setting>>();
        let (done_tx, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("config".into())
            .spawn(move || {
                let mut told: Option<String> = None;
                while let Ok(mut changes) = rx.recv() {
                    // Several keys pressed at once make one write.
                    while let Ok(more) = rx.try_recv() {
                        changes.extend(more);
                    }
                    match save(&loc, &changes) {
                        Ok(()) => told = None,
                        Err(e) if told.as_ref() == Some(&e) => {}
                        Err(e) => {
                            let text = if e.starts_with("settings are not saved") {
                                e.clone()
                            } else {
                                format!("settings not saved: {e}")
                            };
                            let _ = notices.send(Msg::Notice(text));
                            told = Some(e);
                        }
                    }
                }
                let _ = done_tx.send(());
            })?;
        Ok(Self { tx: Some(tx), done })
    }

    /// Saves `changes` soon.
    pub fn save(&self, changes: Vec<Setting>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(changes);
        }
    }

    /// Waits (a few seconds at most) for the writes asked for so far.
    pub fn finish(mut self) {
        self.tx = None;
        let _ = self.done.recv_timeout(FINISH_WAIT);
    }
}

#[cfg(test)]
#[path = "config_io_tests.rs"]
mod tests;
