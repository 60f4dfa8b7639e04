//! Files a user names (a playbook, the config file) and the captured trees' files, opened so
//! that what is not a plain file cannot hurt: the open never blocks (`O_NONBLOCK`, so a FIFO
//! without a writer returns at once), the opened descriptor is checked with `fstat` and
//! refused unless it is a regular file (a FIFO would block the read, `/dev/zero` never
//! ends), and a read stops at a stated cap. Also the ownership rule for a file whose contents
//! decide what pagewatch does as root: it, and every directory above it, must be out of other
//! users' reach (the same rule as the fio directory's, `jobs::fio::dir`).
//!
//! Owns: opening, type-checking and bounded reading of such files, and that ownership rule.
//! Must not touch: what the text means.

use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The sticky bit: in such a directory only an entry's owner may rename or remove it.
const STICKY: u32 = 0o1000;

/// Opens `path` for reading without blocking (even on a FIFO without a writer), refusing what
/// is not a regular file (`not a regular file (a FIFO)`). With `nofollow` a symbolic link as
/// the last component is refused too (ELOOP).
pub fn open_regular(path: &Path, nofollow: bool) -> io::Result<File> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)?;
    let kind = f.metadata()?.file_type();
    if kind.is_file() {
        Ok(f)
    } else {
        Err(io::Error::new(
            ErrorKind::InvalidInput,
            format!("not a regular file ({})", kind_name(kind)),
        ))
    }
}

/// What a file that is not a regular one is, in words.
#[must_use]
pub fn kind_name(kind: std::fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a file"
    }
}

/// Reads `f` as UTF-8 text, at most `max` bytes: a longer file is an error
/// (`larger than 1 MiB`), never an allocation that grows with it.
pub fn read_capped(f: File, max: u64) -> io::Result<String> {
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            ErrorKind::InvalidData,
            format!("larger than {}", cap_text(max)),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|e| io::Error::new(ErrorKind::InvalidData, format!("not UTF-8 text ({e})")))
}

/// `1 MiB`, `512 KiB`, `100 bytes`.
fn cap_text(max: u64) -> String {
    if max >= 1 << 20 && max % (1 << 20) == 0 {
        format!("{} MiB", max >> 20)
    } else if max >= 1 << 10 && max % (1 << 10) == 0 {
        format!("{} KiB", max >> 10)
    } else {
        format!("{max} bytes")
    }
}

/// `open_regular` then `read_capped`.
pub fn read_regular(path: &Path, max: u64) -> io::Result<String> {
    read_capped(open_regular(path, false)?, max)
}

/// Why a file another user could change must not steer pagewatch: `None` when `file` (an
/// open file at the canonical path `real`) and every directory above it belong to root or
/// the running user and are not writable by group and others (a directory may be, when it
/// is sticky, as `/tmp` is). This is the fio directory's rule (`jobs::fio::dir`), applied to
/// a file whose contents decide what pagewatch does (as root: kernel settings, cache drops).
#[must_use]
pub fn untrusted(real: &Path, file: &File) -> Option<String> {
    let me = rustix::process::geteuid().as_raw();
    let m = match file.metadata() {
        Ok(m) => m,
        Err(e) => return Some(format!("cannot check who owns it ({e})")),
    };
    if m.uid() != 0 && m.uid() != me {
        return Some(format!(
            "it belongs to uid {}, not to you or root, so they could change what it does",
            m.uid()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Some(format!(
            "it is writable by other users (mode {:04o}), so they could change what it does; \
             chmod go-w it",
            m.mode() & 0o7777
        ));
    }
    for dir in real.ancestors().skip(1) {
        let d = match std::fs::symlink_metadata(dir) {
            Ok(d) => d,
            Err(e) => return Some(format!("cannot check {} ({e})", dir.display())),
        };
        if d.uid() != 0 && d.uid() != me {
            return Some(format!(
                "{} belongs to uid {}, who could swap the file for another",
                dir.display(),
                d.uid()
            ));
        }
        if d.mode() & 0o022 != 0 && d.mode() & STICKY == 0 {
            return Some(format!(
                "{} is writable by other users (mode {:04o}) and not sticky, so they could swap \
                 the file for another",
                dir.display(),
                d.mode() & 0o7777
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_regular_file_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read_regular(&fifo, 100).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        let e = read_regular(Path::new("/dev/zero"), 100).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a character device)");
        let e = read_regular(dir.path(), 100).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a directory)");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(read_regular(&link, 100).is_err());
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        std::os::unix::fs::symlink(&plain, link.with_extension("2")).unwrap();
        assert_eq!(read_regular(&link.with_extension("2"), 100).unwrap(), "x");
        let e = open_regular(&link.with_extension("2"), true).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
    }

    #[test]
    fn reads_up_to_the_cap_and_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![b'a'; 2048]).unwrap();
        assert_eq!(read_regular(&f, 2048).unwrap().len(), 2048);
        let e = read_regular(&f, 2047).unwrap_err();
        assert_eq!(e.to_string(), "larger than 2047 bytes");
        assert_eq!(
            read_regular(&f, 1024).unwrap_err().to_string(),
            "larger than 1 KiB"
        );
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(
            read_regular(&f, 10)
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
    }

    #[test]
    fn a_file_or_directory_others_can_write_is_untrusted() {
        use std::os::unix::fs::PermissionsExt;
        let set = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        let sub = real.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let f = sub.join("book.toml");
        std::fs::write(&f, "x").unwrap();
        set(&f, 0o644);
        let check = || untrusted(&f, &File::open(&f).unwrap());
        assert_eq!(check(), None);
        set(&f, 0o666);
        assert!(check().unwrap().contains("mode 0666"), "{:?}", check());
        set(&f, 0o664);
        assert!(check().is_some());
        set(&f, 0o644);
        set(&sub, 0o777);
        let why = check().unwrap();
        assert!(
            why.contains(&sub.display().to_string()) && why.contains("not sticky"),
            "{why}"
        );
        set(&sub, 0o1777);
        assert_eq!(check(), None);
        set(&sub, 0o755);
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&f, Some(65534), None).unwrap();
            assert!(check().unwrap().contains("uid 65534"), "{:?}", check());
        }
    }
}
