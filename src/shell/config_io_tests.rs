use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Barrier};

use super::*;
use crate::app::SortKey;

/// `--config FILE`: the file's own directory is the base.
fn named(path: &Path) -> ConfigPath {
    ConfigPath::explicit(path.to_path_buf())
}

#[test]
fn saving_creates_a_private_directory_and_file_and_loads_back() {
    let tmp = tempfile::tempdir().unwrap();
    // The default path below an XDG directory that does not exist yet.
    let loc = ConfigPath::default_for(Some(tmp.path().join("cfg").into()), None).unwrap();
    let path = loc.file.clone();
    assert_eq!(path, tmp.path().join("cfg/pagewatch/config.toml"));
    assert_eq!(load(&path), (Settings::default(), vec![]));
    save(&loc, &[Setting::Interval(3.0)]).unwrap();
    save(&loc, &[Setting::DiskSort(SortKey::Iops)]).unwrap();
    let (s, problems) = load(&path);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((s.interval, s.disk_sort), (Some(3.0), Some(SortKey::Iops)));
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(mode(&tmp.path().join("cfg")), 0o700);
    // No temporary or lock file left behind.
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
    let e = save(&named(&path), &[Setting::Interval(9.0)]).unwrap_err();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "interval = 1\n");
    assert!(
        fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// Issue 22, must-fix 4: `~/.config/pagewatch` a link to another program's directory.
#[test]
fn a_symlinked_config_directory_is_never_written_into() {
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("otherprog");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("config.toml"), "theirs = 1\n").unwrap();
    fs::set_permissions(other.join("config.toml"), fs::Permissions::from_mode(0o644)).unwrap();
    let xdg = tmp.path().join("cfg");
    fs::create_dir(&xdg).unwrap();
    std::os::unix::fs::symlink(&other, xdg.join("pagewatch")).unwrap();
    let loc = ConfigPath::default_for(Some(xdg.clone().into()), None).unwrap();
    let e = save(&loc, &[Setting::Interval(3.0)]).unwrap_err();
    assert!(
        e.contains("symbolic link") && e.contains("not saved"),
        "{e}"
    );
    let theirs = other.join("config.toml");
    assert_eq!(fs::read_to_string(&theirs).unwrap(), "theirs = 1\n");
    assert_eq!(
        fs::metadata(&theirs).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert_eq!(fs::read_dir(&other).unwrap().count(), 1);
    // The base itself may be a link (a dotfile manager's ~/.config): it is where the user
    // keeps settings.
    let real = tmp.path().join("dotfiles");
    fs::create_dir(&real).unwrap();
    let linked = tmp.path().join("linked-cfg");
    std::os::unix::fs::symlink(&real, &linked).unwrap();
    let loc = ConfigPath::default_for(Some(linked.into()), None).unwrap();
    save(&loc, &[Setting::Interval(3.0)]).unwrap();
    assert_eq!(
        load(&real.join("pagewatch/config.toml")).0.interval,
        Some(3.0)
    );
}

/// Issue 22, must-fix 4: root with another user's HOME (`sudo -E`) leaves that user's config
/// alone, and creates nothing in their home.
#[test]
fn another_users_home_is_not_saved_into() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: needs root to give a directory to another user");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("alice");
    fs::create_dir_all(home.join(".config/pagewatch")).unwrap();
    let f = home.join(".config/pagewatch/config.toml");
    fs::write(&f, "interval = 2\n").unwrap();
    for p in [
        &home,
        &home.join(".config"),
        &home.join(".config/pagewatch"),
        &f,
    ] {
        std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    }
    let loc = ConfigPath::default_for(None, Some(home.clone().into())).unwrap();
    let e = save(&loc, &[Setting::Interval(3.0)]).unwrap_err();
    assert!(
        e.contains("belongs to uid 65534") && e.contains("sudo -E"),
        "{e}"
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "interval = 2\n");
    assert_eq!(fs::metadata(&f).unwrap().uid(), 65534);
    // Reading it is fine: the screen starts with the user's settings.
    assert_eq!(load(&f).0.interval, Some(2.0));
    // Without a ~/.config yet, none is made for them.
    fs::remove_dir_all(home.join(".config")).unwrap();
    let e = save(&loc, &[Setting::Interval(3.0)]).unwrap_err();
    assert!(e.contains("belongs to uid 65534"), "{e}");
    assert!(!home.join(".config").exists());
    // A --config FILE in a directory of theirs likewise.
    let e = save(&named(&home.join("pw.toml")), &[Setting::Interval(3.0)]).unwrap_err();
    assert!(e.contains("belongs to uid 65534"), "{e}");
    assert!(!home.join("pw.toml").exists());
}

#[test]
fn the_saver_says_a_refusal_once() {
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("cfg");
    fs::create_dir(&xdg).unwrap();
    std::os::unix::fs::symlink(tmp.path(), xdg.join("pagewatch")).unwrap();
    let (tx, rx) = mpsc::channel();
    let loc = ConfigPath::default_for(Some(xdg.into()), None).unwrap();
    let saver = Saver::start(loc, tx).unwrap();
    for i in 0..3 {
        saver.save(vec![Setting::Interval(f64::from(i) + 1.0)]);
        std::thread::sleep(Duration::from_millis(30));
    }
    saver.finish();
    let notices: Vec<String> = rx
        .try_iter()
        .map(|m| match m {
            Msg::Notice(t) => t,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("settings are not saved: "),
        "{notices:?}"
    );
}

/// Two screens saving different keys at the same moment: both changes land, every round
/// (without the lock, 22 of 30 rounds lost one).
#[test]
fn two_savers_at_once_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.toml");
    for round in 0..30u32 {
        let go = Arc::new(Barrier::new(2));
        let (p, g) = (path.clone(), Arc::clone(&go));
        let other = std::thread::spawn(move || {
            g.wait();
            save(&named(&p), &[Setting::Interval(f64::from(round) + 1.0)]).unwrap();
        });
        go.wait();
        save(&named(&path), &[Setting::Partitions(round % 2 == 0)]).unwrap();
        other.join().unwrap();
        let (s, _) = load(&path);
        assert_eq!(
            (s.interval, s.partitions),
            (Some(f64::from(round) + 1.0), Some(round % 2 == 0)),
            "round {round}"
        );
    }
}

#[test]
fn a_fifo_or_device_as_the_config_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("config.toml");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let (s, problems) = load(&fifo);
    assert_eq!(s, Settings::default());
    assert!(
        problems[0].message.contains("not a regular file (a FIFO)"),
        "{problems:?}"
    );
    let e = save(&named(&fifo), &[Setting::Interval(2.0)]).unwrap_err();
    assert!(e.contains("not a regular file (a FIFO)"), "{e}");
    let (_, problems) = load(Path::new("/dev/zero"));
    assert!(
        problems[0].message.contains("character device"),
        "{problems:?}"
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
    let e = save(&named(&path), &[Setting::Interval(9.0)]).unwrap_err();
    assert!(e.contains("line 2"), "{e}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "interval = 2\n[[[\n");
    // A directory in its place, unreadable.
    let dir = tmp.path().join("dir.toml");
    fs::create_dir(&dir).unwrap();
    assert_eq!(load(&dir).1.len(), 1);
    assert!(save(&named(&dir), &[Setting::Interval(9.0)]).is_err());
}

#[test]
fn the_saver_thread_writes_everything_before_finish_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.toml");
    let (tx, _rx) = mpsc::channel();
    let saver = Saver::start(named(&path), tx).unwrap();
    saver.save(vec![Setting::Interval(2.0)]);
    saver.save(vec![Setting::Interval(5.0), Setting::Partitions(true)]);
    saver.finish();
    let (s, _) = load(&path);
    assert_eq!((s.interval, s.partitions), (Some(5.0), Some(true)));
}
