//! The state file of the calm baselines, the disks' and the processes', shared by every
//! pagewatch a user runs on the machine: read at the start and again whenever another
//! instance has written it (`refresh`, a `stat` a sample: the saturation marks another
//! instance writes each second of a saturated disk must reach this one at once); its text
//! rides in every sample, `names::BASELINES`, so a recording judges as the live run did.
//! Written with what the pipeline learned (`Step::learned`, handed here through
//! `Source::keep_baselines`): the disks' baselines (`model::saturation`) and the processes'
//! calm figures (`model::story::Calm`), so an instance started mid-incident names the victims
//! one started before it names.
//!
//! - **Noticing another instance's write.** The file is held open (an `O_PATH` fd) and
//!   `fstat`ed each sample: no path looked up (the lookup, even of the last name alone
//!   through a held directory, was most of `refresh`'s cost at idle, issue 52). A write in
//!   place moves its mtime or size; a write renamed over it (every pagewatch's) or a removal
//!   leaves the held file without a name (no links), and the path is opened again.
//! - **Where.** Root: `/var/lib/pagewatch/baselines`. Another user:
//!   `$XDG_STATE_HOME/pagewatch/baselines` (an absolute `XDG_STATE_HOME`, else
//!   `~/.local/state`), and root's file read as well, for the devices the user's own file does
//!   not have: a user sees what the machine's administrator measured, and writes only their
//!   own file. `PAGEWATCH_BASELINES` names another file, or `off` for none.
//! - **Read.** Refused whole, with a warning that says why, when it is not a regular file,
//!   belongs to another user (root's is trusted), is writable by others or sits in a directory
//!   others could swap it in (`userfile::untrusted`), is larger than
//!   `parse::baselines::MAX_BYTES` or does not parse (`parse::baselines`). A refused file is
//!   replaced by the next write, never trusted.
//! - **Write.** The file as it is now (another instance may have written since), with this
//!   run's devices and processes merged in (`merge`: a process's newest `seen` wins, one not
//!   listed for `PROCESS_KEEP_S` is dropped), written to a temporary file in the same directory
//!   (created exclusively, mode 0644) and renamed over it: a reader sees the old file or the
//!   new one, never half of one. No fsync: a baseline lost in a crash is learned again.
//!   The directory is created 0755 for root, 0700 for a user.
//!
//! Owns: the location, reading, merging and writing. Must not touch: the format
//! (`parse::baselines`), judging.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::parse::baselines::{self, PROCESS_KEEP_S, Stored};

/// Root's file, which every user reads.
const SYSTEM: &str = "/var/lib/pagewatch/baselines";

/// The state file of this run: where it is written, what was read at the start.
#[derive(Debug, Default)]
pub struct Store {
    /// The file written (`None`: nothing is written, as with `PAGEWATCH_BASELINES=off`).
    path: Option<PathBuf>,
    /// The files only read (root's, for a user).
    also: Vec<PathBuf>,
    /// The baselines last read, as the samples carry them; `None` when there were none.
    text: Option<String>,
    /// The written file as last read or written (inode, mtime ns, size): read again when it
    /// changes.
    stamp: Option<(u64, i128, u64)>,
    /// The written file, held open (`O_PATH`) to `stat` without looking its path up.
    held: Option<std::os::fd::OwnedFd>,
    /// The last write's failure, said once.
    pub failed: Option<String>,
}

impl Store {
    /// This user's store (see the module doc), read; with the warnings of the files refused.
    #[must_use]
    pub fn open() -> (Self, Vec<String>) {
        let root = rustix::process::geteuid().is_root();
        let (path, also) = match std::env::var_os("PAGEWATCH_BASELINES") {
            Some(v) if v == "off" => (None, Vec::new()),
            Some(v) => (Some(PathBuf::from(v)), Vec::new()),
            None if root => (Some(PathBuf::from(SYSTEM)), Vec::new()),
            None => (user_path(), vec![PathBuf::from(SYSTEM)]),
        };
        Self::at(path, &also)
    }

    /// `open`, each refused file said on `err` (`pagewatch: warning: ignoring …`).
    pub fn open_or_warn(err: &mut dyn std::io::Write) -> Self {
        let (store, warnings) = Self::open();
        for w in warnings {
            let _ = writeln!(err, "pagewatch: warning: {w}");
        }
        store
    }

    /// The store at `path` (written and read), over `also` (only read).
    #[must_use]
    pub fn at(path: Option<PathBuf>, also: &[PathBuf]) -> (Self, Vec<String>) {
        let mut store = Self {
            stamp: None,
            held: None,
            path,
            also: also.to_vec(),
            text: None,
            failed: None,
        };
        store.stamp = store.stamp_held();
        let warnings = store.read_all();
        (store, warnings)
    }

    /// Reads every file again into `text`; the warnings of those refused. A refused or
    /// vanished file keeps what was read of it before (nothing is lost to a bad write).
    fn read_all(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        let mut stored = Stored::default();
        let mut refused = false;
        for p in self.also.iter().rev().chain(&self.path) {
            match read(p) {
                Ok(s) => stored.extend(s),
                Err(Some(w)) => {
                    warnings.push(w);
                    refused = true;
                }
                Err(None) => {}
            }
        }
        if !(refused && self.text.is_some()) {
            self.text = (!stored.is_empty()).then(|| baselines::render(&stored));
        }
        warnings
    }

    /// Reads the file again when it changed since it was last read or written (another
    /// instance wrote it); whether the text changed.
    pub fn refresh(&mut self) -> bool {
        let now = self.stamp_held();
        if now == self.stamp {
            return false;
        }
        self.stamp = now;
        let before = self.text.clone();
        let _ = self.read_all();
        self.text != before
    }

    /// The text the samples carry (`names::BASELINES`).
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Merges `learned` (stamped `now_s`) into the file and writes it (see the module doc).
    pub fn keep(&mut self, learned: &Stored, now_s: i64) {
        let Some(path) = &self.path else { return };
        if learned.is_empty() {
            return;
        }
        let mut stored = read(path).unwrap_or_default();
        // An identity or comm the file could not hold would make it refused whole on the next
        // read.
        let mut learned = learned.clone();
        learned
            .devices
            .retain(|id, _| baselines::identity_ok(id).is_ok());
        learned
            .processes
            .retain(|(_, comm), _| baselines::comm_ok(comm).is_ok());
        merge(&mut stored, &learned, now_s);
        match write(path, &baselines::render(&stored)) {
            Ok(()) => self.failed = None,
            Err(e) => self.failed = Some(format!("writing {}: {e}", path.display())),
        }
    }

    /// The written file's stamp, from the file held open while it still has a name; the
    /// file at `path` opened again once it has none (renamed over or removed).
    fn stamp_held(&mut self) -> Option<(u64, i128, u64)> {
        use rustix::fs::{Mode, OFlags};
        if let Some(st) = self.held.as_ref().and_then(|f| rustix::fs::fstat(f).ok())
            && st.st_nlink > 0
        {
            return Some(stamp_of(&st));
        }
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        self.held = rustix::fs::open(self.path.as_deref()?, flags, Mode::empty()).ok();
        let st = rustix::fs::fstat(self.held.as_ref()?).ok()?;
        Some(stamp_of(&st))
    }
}

/// What tells a file's versions apart: inode (a rename puts a new one), mtime and size.
fn stamp_of(st: &rustix::fs::Stat) -> (u64, i128, u64) {
    let ns = i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec);
    (st.st_ino, ns, st.st_size as u64)
}

/// `$XDG_STATE_HOME/pagewatch/baselines`, else `~/.local/state/pagewatch/baselines`.
fn user_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            let home = PathBuf::from(std::env::var_os("HOME")?);
            Some(home.join(".local/state"))
        })?;
    Some(base.join("pagewatch/baselines"))
}

/// The file's baselines: `Err(None)` when there is no file, `Err(Some(warning))` when it is
/// refused.
fn read(path: &Path) -> Result<Stored, Option<String>> {
    let refused = |why: String| {
        Some(format!(
            "ignoring the disk baselines in {}: {why}",
            path.display()
        ))
    };
    let f = match crate::userfile::open_regular(path, true) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(e) => return Err(refused(e.to_string())),
    };
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    if let Some(why) = crate::userfile::untrusted(&real, &f) {
        return Err(refused(why));
    }
    let text = crate::userfile::read_capped(f, baselines::MAX_BYTES)
        .map_err(|e| refused(e.to_string()))?;
    baselines::parse(&text).map_err(refused)
}

/// Puts each learned device's classes over the stored ones (a class it did not learn keeps
/// the stored figure), its peaks the larger, its time `now_s`; each learned process over the
/// stored one unless that was seen later, and the learned reference (the last calm step) over
/// the stored one unless that was seen later; drops the processes not seen for
/// `PROCESS_KEEP_S` before `now_s`; then the least recently seen beyond `MAX_DEVICES` and
/// `MAX_PROCESSES`.
pub fn merge(stored: &mut Stored, learned: &Stored, now_s: i64) {
    for (id, l) in &learned.devices {
        let d = stored.devices.entry(id.clone()).or_default();
        for (mine, theirs) in d
            .baseline_ms
            .iter_mut()
            .flatten()
            .zip(l.baseline_ms.iter().flatten())
        {
            if theirs.is_some() {
                *mine = *theirs;
            }
        }
        for (p, q) in d.peak_kb_s.iter_mut().zip(l.peak_kb_s) {
            *p = p.max(q);
        }
        d.saturated_until_s = d.saturated_until_s.max(l.saturated_until_s);
        d.seen_s = now_s;
    }
    for (key, l) in &learned.processes {
        let p = stored.processes.entry(key.clone()).or_insert(*l);
        if l.seen_s >= p.seen_s {
            *p = *l;
        }
    }
    if let Some(l) = learned.reference
        && stored.reference.is_none_or(|r| l.seen_s >= r.seen_s)
    {
        stored.reference = Some(l);
    }
    stored
        .processes
        .retain(|_, p| p.seen_s >= now_s - PROCESS_KEEP_S);
    stored.trim();
}

/// Writes `text` to `path` through a temporary file renamed over it.
fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mode = if rustix::process::geteuid().is_root() {
        0o755
    } else {
        0o700
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let res = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

#[cfg(test)]
#[path = "baselines_tests.rs"]
mod tests;
