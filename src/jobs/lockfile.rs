//! Lock files (one playbook at a time; one tuner at a time), kept where no other user can
//! plant anything, and opened so that nothing planted is ever followed or waited on.
//!
//! Owns: choosing the state directory (`/run` for root; else `$XDG_RUNTIME_DIR` when it is
//! this user's own directory with no access for others; else `pagewatch-state-<uid>`, mode
//! 0700, made with `mkdir` in the checked fio base directory and used only while it is this
//! user's, mode 0700, and not a symlink), opening a lock file there (`O_NOFOLLOW|O_NONBLOCK`,
//! accepted only as a regular file of this user's, so a planted symlink is not followed and a
//! planted FIFO does not hang), taking `flock` on it, and naming the holder when another has
//! it. Must not touch: any other file. A lock file stays behind in that private directory
//! (unlinking one is racy); it blocks nobody, since `flock` ends with its holder.

use std::fs::{DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// How long to wait for a lock whose recorded holder is gone (a guard it left may still be
/// putting settings back, holding the lock it inherited) before refusing.
const GONE_HOLDER_WAIT: Duration = Duration::from_secs(3);

/// Where this user's lock files live: `/run` for root; else `$XDG_RUNTIME_DIR` when it is
/// this user's with no access for others; else `fallback/pagewatch-state-<uid>` (mode 0700).
/// `fallback` gives a directory that passed the fio directory's rules (`FioDir::check`); it
/// is called only when needed.
pub fn state_dir(fallback: impl FnOnce() -> Result<PathBuf>) -> Result<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    if uid == 0 && private(Path::new("/run"), 0, 0o022) {
        return Ok(PathBuf::from("/run"));
    }
    if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && x.is_absolute()
        && private(&x, uid, 0o077)
    {
        return Ok(x);
    }
    private_dir(&fallback()?.join(format!("pagewatch-state-{uid}")))
}

/// True when `dir` (not followed if a symlink) is a directory owned by `uid` with none of
/// the `forbidden` mode bits.
fn private(dir: &Path, uid: u32, forbidden: u32) -> bool {
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & forbidden == 0)
}

/// Makes `dir` with mode 0700, or takes the one there if it is this user's, mode 0700, and
/// not a symlink; refuses anything else (another user may have planted it).
pub fn private_dir(dir: &Path) -> Result<PathBuf> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
    }
    let uid = rustix::process::geteuid().as_raw();
    let m =
        std::fs::symlink_metadata(dir).with_context(|| format!("checking {}", dir.display()))?;
    if !m.is_dir() || m.uid() != uid || m.mode() & 0o077 != 0 {
        bail!(
            "{} is not a private directory of this user's (a {}, owner uid {}, mode {:o}): \
             remove it, or set XDG_RUNTIME_DIR",
            dir.display(),
            if m.is_symlink() {
                "symlink"
            } else if m.is_dir() {
                "directory"
            } else {
                "file"
            },
            m.uid(),
            m.mode() & 0o7777
        );
    }
    Ok(dir.to_path_buf())
}

/// Opens (creating, mode 0600) the lock file `path` without following a symlink and without
/// blocking; refuses anything but a regular file owned by this user.
pub fn open(path: &Path) -> Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let f = match f {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            bail!(
                "{} is a symlink: refusing to use it as a lock",
                path.display()
            )
        }
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    let m = f
        .metadata()
        .with_context(|| format!("checking {}", path.display()))?;
    if !m.is_file() {
        bail!(
            "{} is not a regular file: refusing to use it as a lock",
            path.display()
        );
    }
    if m.uid() != rustix::process::geteuid().as_raw() {
        bail!(
            "{} belongs to uid {}: refusing to use it as a lock",
            path.display(),
            m.uid()
        );
    }
    Ok(f)
}

/// Takes the exclusive lock `path` and writes `pid N` into it; held until the returned file
/// (and every copy of its descriptor) is closed. When another holds it, `refusal` gets the
/// holder's text (`pid N`) and makes the error. A holder that is gone (its guard still holds
/// the lock while it puts settings back) is waited for a little.
pub fn take(path: &Path, refusal: impl Fn(&str) -> String) -> Result<File> {
    let f = open(path)?;
    let start = Instant::now();
    while rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
        let who = holder(&f);
        if holder_alive(&who) || start.elapsed() > GONE_HOLDER_WAIT {
            bail!("{}", refusal(&who));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f.set_len(0)?;
    f.write_all_at(format!("pid {}\n", std::process::id()).as_bytes(), 0)?;
    Ok(f)
}

/// The holder's text in the lock file (read through the open descriptor, at most 128 bytes).
fn holder(f: &File) -> String {
    let mut buf = [0u8; 128];
    let n = f.read_at(&mut buf, 0).unwrap_or(0);
    let text = String::from_utf8_lossy(&buf[..n]);
    let t = text.trim();
    if t.is_empty() {
        "another process".to_owned()
    } else {
        t.chars().filter(|c| !c.is_control()).collect()
    }
}

/// False only when the text names a pid that no longer exists.
fn holder_alive(who: &str) -> bool {
    match who
        .strip_prefix("pid ")
        .and_then(|r| r.split_whitespace().next()?.parse::<u32>().ok())
    {
        Some(pid) => Path::new(&format!("/proc/{pid}")).exists(),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_planted_symlink_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let lock = d.path().join("x.lock");
        std::os::unix::fs::symlink(&victim, &lock).unwrap();
        let e = take(&lock, |w| format!("held by {w}")).unwrap_err();
        assert!(format!("{e:#}").contains("symlink"), "{e:#}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // A dangling symlink is not followed to create its target either.
        let lock2 = d.path().join("y.lock");
        let target = d.path().join("created-through-link");
        std::os::unix::fs::symlink(&target, &lock2).unwrap();
        assert!(take(&lock2, str::to_owned).is_err());
        assert!(!target.exists());
    }

    #[test]
    fn a_planted_fifo_is_refused_without_hanging() {
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join("x.lock");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &lock,
            rustix::fs::Mode::from_raw_mode(0o666),
        )
        .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let l = lock.clone();
        std::thread::spawn(move || {
            let _ = tx.send(take(&l, str::to_owned).map(|_| ()));
        });
        let r = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("opening a FIFO as the lock hung");
        let e = r.unwrap_err();
        assert!(format!("{e:#}").contains("not a regular file"), "{e:#}");
    }

    #[test]
    fn a_second_taker_is_refused_with_the_holders_pid_until_the_first_ends() {
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join("x.lock");
        let first = take(&lock, str::to_owned).unwrap();
        let e = take(&lock, |w| format!("busy: {w} holds it")).unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            format!("busy: pid {} holds it", std::process::id())
        );
        drop(first);
        assert!(take(&lock, str::to_owned).is_ok());
    }

    #[test]
    fn the_private_directory_is_made_0700_and_a_foreign_one_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = private_dir(&d.path().join("s")).unwrap();
        let m = std::fs::symlink_metadata(&p).unwrap();
        assert_eq!(m.mode() & 0o777, 0o700);
        // Again: the same directory is taken.
        assert_eq!(private_dir(&p).unwrap(), p);
        // Opened up to others: refused.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(private_dir(&p).is_err());
        // A symlink to a private directory: refused, not followed.
        let real = d.path().join("real");
        private_dir(&real).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = private_dir(&link).unwrap_err();
        assert!(format!("{e:#}").contains("symlink"), "{e:#}");
    }

    #[test]
    fn a_gone_holder_is_not_alive_and_a_live_one_is() {
        assert!(holder_alive(&format!("pid {}", std::process::id())));
        assert!(!holder_alive("pid 2147483647"));
        assert!(holder_alive("someone"));
    }
}
