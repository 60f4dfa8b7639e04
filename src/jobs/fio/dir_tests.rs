//! Tests of the fio directory: refusals, ownership, reuse and cleanup.

use super::*;

#[test]
fn creates_reuses_and_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let a = dir.file_for(1 << 20).unwrap();
    assert!(a.exists());
    assert!(
        a.file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("-1M.fio")
    );
    assert_eq!(
        fs::metadata(&a).unwrap().len(),
        0,
        "created empty; fio lays it out"
    );
    fs::write(&a, vec![1u8; 4096]).unwrap();
    let again = dir.file_for(1 << 20).unwrap();
    assert_eq!(again, a, "same size, same file");
    assert_eq!(
        fs::metadata(&a).unwrap().len(),
        4096,
        "reuse keeps the content"
    );
    let b = dir.file_for(2 << 20).unwrap();
    assert_ne!(a, b);
    assert_eq!(dir.owned().len(), 2);
    assert_eq!(a.parent(), Some(dir.path()));
    assert_eq!(
        dir.path().parent(),
        Some(tmp.path()),
        "a private directory inside"
    );
    dir.cleanup().unwrap();
    assert!(!a.exists() && !b.exists());
    assert!(!dir.path().exists(), "the private directory goes too");
    assert!(
        tmp.path().exists(),
        "an explicit directory is never removed"
    );
}

#[test]
fn drop_removes_files_unless_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let path = {
        let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
        dir.file_for(4096).unwrap()
    };
    assert!(!path.exists());
    let kept = {
        let mut dir = FioDir::open(Some(tmp.path()), true).unwrap();
        dir.file_for(4096).unwrap()
    };
    assert!(kept.exists());
}

#[test]
fn refuses_a_file_it_did_not_create() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let foreign = dir
        .path()
        .join(format!("pagewatch-{}-64k.fio", std::process::id()));
    fs::write(&foreign, b"precious").unwrap();
    let e = dir.file_for(64 << 10).unwrap_err().to_string();
    assert!(e.contains("did not create"), "{e}");
    drop(dir);
    assert_eq!(
        fs::read(&foreign).unwrap(),
        b"precious",
        "untouched, even by cleanup"
    );
}

#[test]
fn refuses_a_symlink_planted_at_the_name() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let name = dir
        .path()
        .join(format!("pagewatch-{}-8k.fio", std::process::id()));
    std::os::unix::fs::symlink("/etc/hostname", &name).unwrap();
    assert!(dir.file_for(8 << 10).is_err());
}

#[test]
fn a_swapped_file_is_caught_and_never_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let a = dir.file_for(8192).unwrap();
    let owned = dir.owned_files();
    assert_eq!(owned.verify(&a).unwrap(), 0);
    // Replace it by a symlink to a file of someone else's: verify refuses, cleanup keeps both.
    let victim = tmp.path().join("victim");
    fs::write(&victim, b"keep").unwrap();
    // Moved away, not removed: a freed inode number could be handed to the next file.
    fs::rename(&a, tmp.path().join("original")).unwrap();
    std::os::unix::fs::symlink(&victim, &a).unwrap();
    let e = format!("{:#}", owned.verify(&a).unwrap_err());
    assert!(e.contains("symlink"), "{e}");
    assert!(dir.file_for(8192).is_err(), "not reused");
    // A different regular file at the name (another inode) is refused as well.
    fs::remove_file(&a).unwrap();
    fs::write(&a, b"other").unwrap();
    let e = format!("{:#}", owned.verify(&a).unwrap_err());
    assert!(e.contains("replaced"), "{e}");
    assert!(dir.cleanup().is_err(), "says it did not remove it");
    assert_eq!(fs::read(&a).unwrap(), b"other");
    assert_eq!(fs::read(&victim).unwrap(), b"keep");
}

#[test]
fn an_owned_file_that_vanished_is_recreated() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let a = dir.file_for(8192).unwrap();
    fs::remove_file(&a).unwrap(); // fio unlinks a file whose layout it was stopped in
    assert_eq!(dir.file_for(8192).unwrap(), a);
    assert!(a.exists());
}

#[test]
fn refuses_a_directory_other_users_can_write() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
    let e = format!("{:#}", FioDir::open(Some(&shared), false).unwrap_err());
    assert!(
        e.contains("writable by other users") && e.contains("0777"),
        "{e}"
    );
    assert!(FioDir::check(Some(&shared)).is_err());
    // A world-writable parent is as bad as the directory itself.
    let inner = shared.join("inner");
    fs::create_dir(&inner).unwrap();
    fs::set_permissions(&inner, fs::Permissions::from_mode(0o700)).unwrap();
    assert!(FioDir::open(Some(&inner), false).is_err());
    // Sticky (as /tmp): only an entry's owner may rename it, so a private directory is safe.
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    let dir = FioDir::open(Some(&shared), false).unwrap();
    let m = fs::symlink_metadata(dir.path()).unwrap();
    assert_eq!(m.permissions().mode() & 0o7777, 0o700);
    assert!(
        fs::read_dir(&shared).unwrap().count() == 2,
        "inner and the private one"
    );
}

#[test]
fn refuses_a_directory_of_another_user() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: needs root to chown");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("theirs");
    fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let e = format!("{:#}", FioDir::open(Some(&theirs), false).unwrap_err());
    assert!(e.contains("belongs to uid 65534"), "{e}");
}

#[test]
fn the_cleanup_guard_removes_files_when_its_pipe_ends() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), true).unwrap();
    let f = dir.file_for(4096).unwrap();
    let keep_me = tmp.path().join("keep-me.fio");
    fs::write(&keep_me, b"x").unwrap();
    // Stands for the guard after pagewatch died: its files are removed, nothing else.
    remove_leftovers(dir.path());
    assert!(!f.exists() && !dir.path().exists());
    assert!(keep_me.exists());
    // Never inside a directory that is not a private one of this user's.
    let open_dir = tmp.path().join("open");
    fs::create_dir(&open_dir).unwrap();
    let planted = open_dir.join("pagewatch-1-1M.fio");
    fs::write(&planted, b"x").unwrap();
    fs::set_permissions(&open_dir, fs::Permissions::from_mode(0o755)).unwrap();
    remove_leftovers(&open_dir);
    assert!(planted.exists());
}

#[test]
fn refuses_devices_files_and_missing_paths() {
    for dev in ["/dev/null", "/dev/loop0"] {
        if Path::new(dev).exists() {
            let e = FioDir::open(Some(Path::new(dev)), false)
                .unwrap_err()
                .to_string();
            assert!(e.contains("is a device"), "{dev}: {e}");
        }
    }
    let e = FioDir::open(Some(Path::new("/nonexistent/pagewatch")), false).unwrap_err();
    assert!(format!("{e:#}").contains("No such file"), "{e:#}");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("plain");
    fs::write(&file, b"x").unwrap();
    let e = FioDir::open(Some(&file), false).unwrap_err().to_string();
    assert!(e.contains("not a directory"), "{e}");
    assert!(FioDir::open(Some(Path::new("/proc")), false).is_err());
}

#[test]
fn refuses_colon_in_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let odd = tmp.path().join("a:b");
    fs::create_dir(&odd).unwrap();
    let e = FioDir::open(Some(&odd), false).unwrap_err().to_string();
    assert!(e.contains("':'"), "{e}");
}

#[test]
fn refuses_more_than_the_free_space() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let e = dir.file_for(15 << 40).unwrap_err().to_string();
    assert!(e.contains("not enough free space"), "{e}");
    assert!(dir.owned().is_empty(), "nothing created");
}

#[test]
fn tmpfs_gives_a_warning() {
    let on_tmpfs = Path::new("/dev/shm");
    let is_tmpfs = rustix::fs::statfs(on_tmpfs).is_ok_and(|s| {
        #[allow(clippy::unnecessary_cast, clippy::cast_lossless)]
        let t = s.f_type as i64;
        t == TMPFS_MAGIC
    });
    if !is_tmpfs {
        eprintln!("skipped: /dev/shm is not tmpfs here");
        return;
    }
    // /dev/shm is under /dev, so check the warning text directly.
    let w = fs_warning(on_tmpfs).unwrap();
    assert!(w.contains("tmpfs"), "{w}");
    let tmp = tempfile::tempdir().unwrap();
    let disk = rustix::fs::statfs(tmp.path()).unwrap();
    #[allow(clippy::unnecessary_cast, clippy::cast_lossless)]
    let disk_type = disk.f_type as i64;
    assert_eq!(
        fs_warning(tmp.path()).is_some(),
        disk_type == TMPFS_MAGIC || disk_type == RAMFS_MAGIC
    );
}

#[test]
fn default_dir_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let mut dir = FioDir::open(None, false).unwrap();
    let meta = fs::metadata(dir.path()).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    // A fresh `pagewatch-<uid>-XXXXXX` each time: never a `pagewatch-<uid>` someone made first.
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let prefix = format!("pagewatch-{}-", rustix::process::geteuid().as_raw());
    assert!(
        name.starts_with(&prefix) && name.len() == prefix.len() + 6,
        "{name}"
    );
    let other = FioDir::open(None, false).unwrap();
    assert_ne!(other.path(), dir.path());
    let f = dir.file_for(12_345).unwrap();
    dir.cleanup().unwrap();
    assert!(!f.exists() && !dir.path().exists());
}
