//! Reading a playbook file (`pagewatch play FILE`, the screen's `--playbook FILE`): a file
//! whose steps may tune kernel settings and drop caches as root, so it is read with care.
//!
//! - Only a regular file, opened without blocking: `/dev/zero` (or a link to it), a FIFO, a
//!   directory or a socket is refused at once, never read until memory runs out or blocked on.
//! - At most `MAX_BYTES` (1 MiB, some 500 times the largest built-in): a larger file is
//!   refused, not read whole.
//! - Only a file out of other users' reach: it and every directory above it belong to root or
//!   the running user and are not writable by group and others (a directory may be, when it
//!   is sticky, like `/tmp`), the same rule as the fio directory's (`jobs::fio::dir`).
//!   Otherwise another user could choose what root runs.
//!
//! Owns: finding, checking and reading the file, and naming it in the playbook (its origin).
//! Must not touch: the format (`book`), anything the steps do.

use std::path::Path;

use anyhow::{Result, anyhow};

use super::book::Playbook;
use crate::userfile;

/// The largest playbook file read: 1 MiB.
pub const MAX_BYTES: u64 = 1 << 20;

/// The text of the playbook file at `path`, refused (with the reason and the path) when it is
/// not a regular file, is larger than `MAX_BYTES` or could be changed by another user.
pub fn read_text(path: &Path) -> Result<String> {
    let shown = path.display();
    let f = userfile::open_regular(path, false).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow!("playbook {shown}: no such file")
        } else {
            anyhow!("playbook {shown}: {e}")
        }
    })?;
    let real = path
        .canonicalize()
        .map_err(|e| anyhow!("playbook {shown}: {e}"))?;
    if let Some(why) = userfile::untrusted(&real, &f) {
        let who = if rustix::process::geteuid().is_root() {
            "root"
        } else {
            "you"
        };
        return Err(anyhow!(
            "playbook {shown}: refused: its steps would run as {who}, but {why}"
        ));
    }
    userfile::read_capped(f, MAX_BYTES).map_err(|e| anyhow!("playbook {shown}: {e}"))
}

/// The playbook in the file at `path`: read as `read_text` does, parsed, and named by its
/// path in every error it gives, now and later (`playbook book.toml: line 12: …`).
pub fn load(path: &Path) -> Result<Playbook> {
    let text = read_text(path)?;
    let origin = format!("playbook {}", path.display());
    Playbook::parse(&text)
        .map(|b| b.with_origin(&origin))
        .map_err(|e| anyhow!("{}: {e}", crate::fmt::escape_controls(&origin)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const BOOK: &str = "name = \"t\"\ndescription = \"d\"\n[[step]]\nwait = \"1s\"\n";

    #[test]
    fn a_regular_file_of_yours_loads_and_is_named_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.toml");
        std::fs::write(&p, BOOK).unwrap();
        let b = load(&p).unwrap();
        let origin = format!("playbook {}", p.display());
        assert_eq!((b.name.as_str(), b.origin.as_str()), ("t", origin.as_str()));
        let e = load(&dir.path().join("none.toml")).unwrap_err().to_string();
        assert!(e.ends_with("none.toml: no such file"), "{e}");
        std::fs::write(&p, "name = \"t\"\n[[step]]\n").unwrap();
        let e = load(&p).unwrap_err().to_string();
        assert!(e.starts_with(&format!("playbook {}: ", p.display())), "{e}");
    }

    #[test]
    fn devices_fifos_and_large_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read_text(&link).unwrap_err().to_string();
        assert!(e.contains("not a regular file (a character device)"), "{e}");
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_BYTES as usize + 1]).unwrap();
        let e = read_text(&big).unwrap_err().to_string();
        assert!(e.contains("larger than 1 MiB"), "{e}");
        std::fs::write(&big, vec![b'#'; MAX_BYTES as usize]).unwrap();
        assert!(read_text(&big).is_ok());
    }

    #[test]
    fn a_file_other_users_can_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.toml");
        std::fs::write(&p, BOOK).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = load(&p).unwrap_err().to_string();
        assert!(e.contains("writable by other users (mode 0666)"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = load(&p).unwrap_err().to_string();
        assert!(e.contains("not sticky"), "{e}");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(load(&p).is_ok());
    }
}
