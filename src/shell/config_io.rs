//! The config file on disk: read once at start, and written on a thread of its own each time
//! a saved setting changes in the screen, so a Ctrl-C (or SIGTERM, SIGHUP) loses nothing and
//! a slow disk (fsync while writeback is throttled) never holds up the keys.
//!
//! A write never goes through a symbolic link and never leaves a half-written file: the new
//! text goes to a fresh temporary file beside it (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600),
//! is synced, then renamed over the file (`rename` replaces the name, never what a link
//! points to). A config file that is itself a symbolic link (a dotfile manager's) is left
//! alone and the screen says why. The directory is created mode 0700 when missing.
//! Owns: the file's I/O (with `shell/tui.rs`, one of the edges that may touch files). Must
//! not touch: the text's meaning (`config`).

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use crate::app::Msg;
use crate::config::{self, Problem, Setting, Settings};

/// A config file larger than this is not read (it is not one pagewatch wrote).
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

/// The file's text, `None` when there is no file. Never follows a symbolic link for writing,
/// but reading through one is fine (the user's own dotfile).
fn read(path: &Path) -> io::Result<Option<String>> {
    let f = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !f.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    f.take(MAX_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_BYTES {
        return Err(io::Error::other("larger than 1 MiB"));
    }
    Ok(Some(text))
}

/// Writes `changes` into the file at `path`, keeping everything else in it.
pub fn save(path: &Path, changes: &[Setting]) -> Result<(), String> {
    let shown = path.display();
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(format!(
                "{shown} is a symbolic link; pagewatch does not replace it (edit it by hand)"
            ));
        }
        Ok(m) if !m.is_file() => return Err(format!("{shown} is not a regular file")),
        _ => {}
    }
    let old = read(path).map_err(|e| format!("reading {shown}: {e}"))?;
    let text =
        config::set(old.as_deref().unwrap_or(""), changes).map_err(|p| format!("{shown} {p}"))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("creating {}: {e}", dir.display()))?;
    replace(dir, path, text.as_bytes()).map_err(|e| format!("writing {shown}: {e}"))
}

/// Writes `data` to a new temporary file in `dir` and renames it over `path`.
fn replace(dir: &Path, path: &Path, data: &[u8]) -> io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    for n in 0..100 {
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp);
        let mut file = match file {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        let res = file
            .write_all(data)
            .and_then(|()| file.sync_all())
            .and_then(|()| fs::rename(&tmp, path));
        if res.is_err() {
            let _ = fs::remove_file(&tmp);
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
    /// Starts saving to `path`; a failure is told to the app as a notice on `notices`.
    pub fn start(path: PathBuf, notices: Sender<Msg>) -> io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Vec<Setting>>();
        let (done_tx, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("config".into())
            .spawn(move || {
                while let Ok(mut changes) = rx.recv() {
                    // Several keys pressed at once make one write.
                    while let Ok(more) = rx.try_recv() {
                        changes.extend(more);
                    }
                    if let Err(e) = save(&path, &changes) {
                        let _ = notices.send(Msg::Notice(format!("settings not saved: {e}")));
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
