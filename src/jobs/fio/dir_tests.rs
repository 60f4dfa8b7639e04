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
    assert_eq!(dir.owned().count(), 2);
    dir.cleanup().unwrap();
    assert!(!a.exists() && !b.exists());
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
    let foreign = tmp
        .path()
        .join(format!("pagewatch-{}-64k.fio", std::process::id()));
    fs::write(&foreign, b"precious").unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
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
    let name = tmp
        .path()
        .join(format!("pagewatch-{}-8k.fio", std::process::id()));
    std::os::unix::fs::symlink("/etc/hostname", &name).unwrap();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    assert!(dir.file_for(8 << 10).is_err());
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
    assert_eq!(dir.owned().count(), 0, "nothing created");
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
    assert!(
        dir.path()
            .to_string_lossy()
            .contains(&format!("pagewatch-{}", rustix::process::getuid().as_raw()))
    );
    let f = dir.file_for(12_345).unwrap();
    dir.cleanup().unwrap();
    assert!(!f.exists());
}
