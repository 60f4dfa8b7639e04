use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::parse::baselines::Device;

fn device(ms: f64) -> Device {
    let mut d = Device {
        peak_kb_s: [1000.0, 2000.0],
        ..Device::default()
    };
    d.baseline_ms[0][0] = Some(ms);
    d
}

#[test]
fn what_one_run_keeps_the_next_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/pagewatch/baselines");
    let (mut a, w) = Store::at(Some(path.clone()), &[]);
    assert!(w.is_empty() && a.text().is_none(), "{w:?}");
    a.keep(&Stored::from([("serial=a".to_owned(), device(0.06))]), 100);
    assert_eq!(a.failed, None);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["baselines"]);
    let (b, w) = Store::at(Some(path.clone()), &[]);
    assert!(w.is_empty(), "{w:?}");
    let read = crate::parse::baselines::parse(b.text().unwrap()).unwrap();
    assert_eq!(read["serial=a"].baseline_ms[0][0], Some(0.06));
    assert_eq!(read["serial=a"].seen_s, 100);
    // A second instance's device is merged in, the first's kept.
    let (mut c, _) = Store::at(Some(path.clone()), &[]);
    c.keep(&Stored::from([("serial=b".to_owned(), device(0.5))]), 200);
    let (d, _) = Store::at(Some(path), &[]);
    let read = crate::parse::baselines::parse(d.text().unwrap()).unwrap();
    assert_eq!(read.len(), 2);
}

#[test]
fn a_damaged_or_hostile_file_is_ignored_with_a_warning_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baselines");
    let warned = |path: &Path| {
        let (s, w) = Store::at(Some(path.to_owned()), &[]);
        assert!(s.text().is_none());
        assert_eq!(w.len(), 1, "{w:?}");
        w[0].clone()
    };
    std::fs::write(&path, "pagewatch-baselines 1\ndevice x\nreads NaN\n").unwrap();
    let w = warned(&path);
    assert!(
        w.contains("ignoring the disk baselines in") && w.contains("line 3: bad figure `NaN`"),
        "{w}"
    );
    std::fs::write(&path, vec![b'x'; 100 * 1024]).unwrap();
    assert!(warned(&path).contains("larger than 64 KiB"));
    std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
    assert!(warned(&path).contains("not UTF-8"));
    // Writable by others: refused.
    std::fs::write(&path, "pagewatch-baselines 1\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(warned(&path).contains("writable by other users"));
    // A symbolic link (to a file another user could change) and a FIFO: refused, no block.
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &path).unwrap();
    warned(&path);
    std::fs::remove_file(&path).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    assert!(warned(&path).contains("FIFO"));
    std::fs::remove_file(&path).unwrap();
    // A damaged file is replaced whole by the next write.
    std::fs::write(&path, "garbage\n").unwrap();
    let (mut s, _) = Store::at(Some(path.clone()), &[]);
    s.keep(&Stored::from([("serial=a".to_owned(), device(0.06))]), 1);
    let (s, w) = Store::at(Some(path), &[]);
    assert!(w.is_empty() && s.text().is_some(), "{w:?}");
}

#[test]
fn merge_keeps_what_was_not_learned_and_bounds_the_devices() {
    let mut stored = Stored::from([("a".to_owned(), device(0.1))]);
    stored.get_mut("a").unwrap().baseline_ms[1][3] = Some(2.0);
    let mut l = device(0.2);
    l.peak_kb_s = [500.0, 9000.0];
    merge(&mut stored, &Stored::from([("a".to_owned(), l)]), 7);
    let a = &stored["a"];
    assert_eq!(a.baseline_ms[0][0], Some(0.2));
    assert_eq!(a.baseline_ms[1][3], Some(2.0));
    assert_eq!(a.peak_kb_s.map(|p| p as u64), [1000, 9000]);
    assert_eq!(a.seen_s, 7);
    for i in 0..MAX_DEVICES {
        let mut d = device(0.1);
        d.seen_s = 1000 + i64::try_from(i).unwrap();
        stored.insert(format!("d{i}"), d);
    }
    merge(&mut stored, &Stored::new(), 0);
    assert_eq!(stored.len(), MAX_DEVICES);
    // The least recently seen went: `a`, seen at 7.
    assert!(!stored.contains_key("a"));
}

#[test]
fn a_users_own_file_wins_over_roots() {
    let dir = tempfile::tempdir().unwrap();
    let system = dir.path().join("system");
    let own = dir.path().join("own");
    let text = |ms: f64, ids: &[&str]| {
        let s: Stored = ids.iter().map(|i| ((*i).to_owned(), device(ms))).collect();
        crate::parse::baselines::render(&s)
    };
    std::fs::write(&system, text(0.3, &["a", "b"])).unwrap();
    std::fs::write(&own, text(0.1, &["a"])).unwrap();
    let (s, w) = Store::at(Some(own), &[system]);
    assert!(w.is_empty(), "{w:?}");
    let read = crate::parse::baselines::parse(s.text().unwrap()).unwrap();
    assert_eq!(read["a"].baseline_ms[0][0], Some(0.1));
    assert_eq!(read["b"].baseline_ms[0][0], Some(0.3));
}

#[test]
fn an_identity_the_file_cannot_hold_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baselines");
    let (mut s, _) = Store::at(Some(path.clone()), &[]);
    let long = format!("loop={}", "x".repeat(600));
    s.keep(
        &Stored::from([(long, device(0.1)), ("serial=a".to_owned(), device(0.2))]),
        5,
    );
    let (s, w) = Store::at(Some(path), &[]);
    assert!(w.is_empty(), "{w:?}");
    let read = crate::parse::baselines::parse(s.text().unwrap()).unwrap();
    assert_eq!(read.keys().collect::<Vec<_>>(), ["serial=a"]);
}

#[test]
fn another_instances_write_is_read_at_the_next_refresh_even_in_a_directory_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/baselines");
    let (mut a, _) = Store::at(Some(path.clone()), &[]);
    assert!(!a.refresh(), "nothing written yet");
    let (mut b, _) = Store::at(Some(path.clone()), &[]);
    b.keep(&Stored::from([("serial=b".to_owned(), device(0.5))]), 100);
    assert!(a.refresh(), "the directory made by b, after a first looked");
    assert!(!a.refresh(), "nothing new");
    b.keep(&Stored::from([("serial=c".to_owned(), device(0.7))]), 101);
    assert!(a.refresh(), "a second write, renamed over the held file");
    assert!(a.text().unwrap().contains("serial=c"));
    // Written in place (the same inode, as an editor might): its size moves (its mtime may
    // not, within the clock's coarse tick).
    let mut text = std::fs::read_to_string(&path).unwrap();
    text = text.replace("serial=c", "serial=longer");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .unwrap();
    assert!(a.refresh(), "a write in place");
    assert!(a.text().unwrap().contains("serial=longer"));
    // The directory removed and made again, with another file in it.
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    let (mut c, _) = Store::at(Some(path.clone()), &[]);
    c.keep(&Stored::from([("serial=d".to_owned(), device(0.9))]), 102);
    assert!(a.refresh());
    let read = crate::parse::baselines::parse(a.text().unwrap()).unwrap();
    assert!(read.contains_key("serial=d"), "{read:?}");
}
