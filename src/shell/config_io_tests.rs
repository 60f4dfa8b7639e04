use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::app::SortKey;

#[test]
fn saving_creates_a_private_directory_and_file_and_loads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("cfg/pagewatch/config.toml");
    assert_eq!(load(&path), (Settings::default(), vec![]));
    save(&path, &[Setting::Interval(3.0)]).unwrap();
    save(&path, &[Setting::DiskSort(SortKey::Iops)]).unwrap();
    let (s, problems) = load(&path);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((s.interval, s.disk_sort), (Some(3.0), Some(SortKey::Iops)));
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    // No temporary file left behind.
    let names: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("config.toml")]);
}

#[test]
fn a_symlinked_config_is_never_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    fs::write(&victim, "interval = 1\n").unwrap();
    let path = tmp.path().join("config.toml");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    // Read through it (the user's own dotfile) ...
    assert_eq!(load(&path).0.interval, Some(1.0));
    // ... but never written.
    let e = save(&path, &[Setting::Interval(9.0)]).unwrap_err();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "interval = 1\n");
    assert!(
        fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_broken_file_is_reported_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.toml");
    fs::write(&path, "interval = 2\n[[[\n").unwrap();
    let (s, problems) = load(&path);
    assert_eq!(s, Settings::default());
    assert_eq!(problems[0].line, 2);
    let e = save(&path, &[Setting::Interval(9.0)]).unwrap_err();
    assert!(e.contains("line 2"), "{e}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "interval = 2\n[[[\n");
    // A directory in its place, unreadable.
    let dir = tmp.path().join("dir.toml");
    fs::create_dir(&dir).unwrap();
    assert_eq!(load(&dir).1.len(), 1);
    assert!(save(&dir, &[Setting::Interval(9.0)]).is_err());
}

#[test]
fn the_saver_thread_writes_everything_before_finish_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.toml");
    let (tx, _rx) = mpsc::channel();
    let saver = Saver::start(path.clone(), tx).unwrap();
    saver.save(vec![Setting::Interval(2.0)]);
    saver.save(vec![Setting::Interval(5.0), Setting::Partitions(true)]);
    saver.finish();
    let (s, _) = load(&path);
    assert_eq!((s.interval, s.partitions), (Some(5.0), Some(true)));
}
