use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::parse::baselines::{Device, MAX_DEVICES, MAX_PROCESSES, PROCESS_KEEP_S, Process};

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
    a.keep(
        &Stored::with_devices([("serial=a".to_owned(), device(0.06))]),
        100,
    );
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
    assert_eq!(read.devices["serial=a"].baseline_ms[0][0], Some(0.06));
    assert_eq!(read.devices["serial=a"].seen_s, 100);
    // A second instance's device is merged in, the first's kept.
    let (mut c, _) = Store::at(Some(path.clone()), &[]);
    c.keep(
        &Stored::with_devices([("serial=b".to_owned(), device(0.5))]),
        200,
    );
    let (d, _) = Store::at(Some(path), &[]);
    let read = crate::parse::baselines::parse(d.text().unwrap()).unwrap();
    assert_eq!(read.devices.len(), 2);
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
    assert!(warned(&path).contains("larger than 96 KiB"));
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
    s.keep(
        &Stored::with_devices([("serial=a".to_owned(), device(0.06))]),
        1,
    );
    let (s, w) = Store::at(Some(path), &[]);
    assert!(w.is_empty() && s.text().is_some(), "{w:?}");
}

#[test]
fn merge_keeps_what_was_not_learned_and_bounds_the_devices() {
    let mut stored = Stored::with_devices([("a".to_owned(), device(0.1))]);
    stored.devices.get_mut("a").unwrap().baseline_ms[1][3] = Some(2.0);
    let mut l = device(0.2);
    l.peak_kb_s = [500.0, 9000.0];
    merge(&mut stored, &Stored::with_devices([("a".to_owned(), l)]), 7);
    let a = &stored.devices["a"];
    assert_eq!(a.baseline_ms[0][0], Some(0.2));
    assert_eq!(a.baseline_ms[1][3], Some(2.0));
    assert_eq!(a.peak_kb_s.map(|p| p as u64), [1000, 9000]);
    assert_eq!(a.seen_s, 7);
    for i in 0..MAX_DEVICES {
        let mut d = device(0.1);
        d.seen_s = 1000 + i64::try_from(i).unwrap();
        stored.devices.insert(format!("d{i}"), d);
    }
    merge(&mut stored, &Stored::default(), 0);
    assert_eq!(stored.devices.len(), MAX_DEVICES);
    // The least recently seen went: `a`, seen at 7.
    assert!(!stored.devices.contains_key("a"));
}

#[test]
fn a_users_own_file_wins_over_roots() {
    let dir = tempfile::tempdir().unwrap();
    let system = dir.path().join("system");
    let own = dir.path().join("own");
    let text = |ms: f64, ids: &[&str]| {
        let s = Stored::with_devices(ids.iter().map(|i| ((*i).to_owned(), device(ms))));
        crate::parse::baselines::render(&s)
    };
    std::fs::write(&system, text(0.3, &["a", "b"])).unwrap();
    std::fs::write(&own, text(0.1, &["a"])).unwrap();
    let (s, w) = Store::at(Some(own), &[system]);
    assert!(w.is_empty(), "{w:?}");
    let read = crate::parse::baselines::parse(s.text().unwrap()).unwrap();
    assert_eq!(read.devices["a"].baseline_ms[0][0], Some(0.1));
    assert_eq!(read.devices["b"].baseline_ms[0][0], Some(0.3));
}

#[test]
fn an_identity_the_file_cannot_hold_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baselines");
    let (mut s, _) = Store::at(Some(path.clone()), &[]);
    let long = format!("loop={}", "x".repeat(600));
    s.keep(
        &Stored::with_devices([(long, device(0.1)), ("serial=a".to_owned(), device(0.2))]),
        5,
    );
    let (s, w) = Store::at(Some(path), &[]);
    assert!(w.is_empty(), "{w:?}");
    let read = crate::parse::baselines::parse(s.text().unwrap()).unwrap();
    assert_eq!(read.devices.keys().collect::<Vec<_>>(), ["serial=a"]);
}

#[test]
fn another_instances_write_is_read_at_the_next_refresh_even_in_a_directory_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/baselines");
    let (mut a, _) = Store::at(Some(path.clone()), &[]);
    assert!(!a.refresh(), "nothing written yet");
    let (mut b, _) = Store::at(Some(path.clone()), &[]);
    b.keep(
        &Stored::with_devices([("serial=b".to_owned(), device(0.5))]),
        100,
    );
    assert!(a.refresh(), "the directory made by b, after a first looked");
    assert!(!a.refresh(), "nothing new");
    b.keep(
        &Stored::with_devices([("serial=c".to_owned(), device(0.7))]),
        101,
    );
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
    c.keep(
        &Stored::with_devices([("serial=d".to_owned(), device(0.9))]),
        102,
    );
    assert!(a.refresh());
    let read = crate::parse::baselines::parse(a.text().unwrap()).unwrap();
    assert!(read.devices.contains_key("serial=d"), "{read:?}");
}

/// python3's calm fsync 0.32 ms, last listed at `seen_s`.
fn python(seen_s: i64) -> Stored {
    let mut s = Stored::default();
    s.processes.insert(
        (13460, "python3".into()),
        Process {
            calm: [Some(0.32), None],
            seen_s,
        },
    );
    s
}

#[test]
fn the_processes_calm_is_written_read_again_and_merged_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baselines");
    let (mut a, _) = Store::at(Some(path.clone()), &[]);
    let mut learned = python(1000);
    learned.devices.insert("serial=a".to_owned(), device(0.06));
    a.keep(&learned, 1001);
    let (b, w) = Store::at(Some(path.clone()), &[]);
    assert!(w.is_empty(), "{w:?}");
    let read = crate::parse::baselines::parse(b.text().unwrap()).unwrap();
    assert_eq!(read.processes, python(1000).processes);
    assert_eq!(read.devices["serial=a"].seen_s, 1001);
    // Another instance's older figure does not replace the newer one; its newer one does.
    let mut older = python(990);
    older
        .processes
        .values_mut()
        .for_each(|p| p.calm[0] = Some(9.0));
    let (mut c, _) = Store::at(Some(path.clone()), &[]);
    c.keep(&older, 1002);
    let mut newer = python(1010);
    newer
        .processes
        .values_mut()
        .for_each(|p| p.calm[1] = Some(3.0));
    c.keep(&newer, 1010);
    let (d, _) = Store::at(Some(path.clone()), &[]);
    let read = crate::parse::baselines::parse(d.text().unwrap()).unwrap();
    assert_eq!(read.processes, newer.processes);
    // A comm the file could not hold is not written; a process not listed for
    // `PROCESS_KEEP_S` is dropped at the next write.
    let mut bad = Stored::default();
    bad.processes.insert((7, "a\nb".into()), Process::default());
    let (mut e, _) = Store::at(Some(path.clone()), &[]);
    e.keep(&bad, 1010 + PROCESS_KEEP_S);
    let read = crate::parse::baselines::parse(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(
        read.unwrap().processes.len(),
        1,
        "python3 seen 300 s ago: kept"
    );
    e.keep(&python(5), 1011 + PROCESS_KEEP_S);
    let read = crate::parse::baselines::parse(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(read.unwrap().processes.len(), 0, "seen 301 s ago: dropped");
}

#[test]
fn merge_bounds_the_processes_keeping_the_most_recently_seen() {
    let mut stored = Stored::default();
    let mut learned = Stored::default();
    for i in 0..MAX_PROCESSES + 5 {
        let p = Process {
            calm: [Some(0.5), None],
            seen_s: 1000 + i64::try_from(i).unwrap(),
        };
        let into = if i % 2 == 0 {
            &mut stored
        } else {
            &mut learned
        };
        into.processes
            .insert((u32::try_from(i).unwrap() + 1, "p".into()), p);
    }
    merge(&mut stored, &learned, 1000);
    assert_eq!(stored.processes.len(), MAX_PROCESSES);
    // The five least recently seen went: pids 1 to 5, seen 1000 to 1004.
    assert!(stored.processes.values().all(|p| p.seen_s >= 1005));
}

#[test]
fn roots_and_a_users_file_together_are_bounded_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let system = dir.path().join("system");
    let own = dir.path().join("own");
    let text = |from: usize| {
        let mut s = Stored::default();
        for i in from..from + MAX_DEVICES {
            let mut d = device(0.1);
            d.seen_s = i64::try_from(i).unwrap();
            s.devices.insert(format!("d{i}"), d);
        }
        crate::parse::baselines::render(&s)
    };
    std::fs::write(&system, text(0)).unwrap();
    std::fs::write(&own, text(MAX_DEVICES)).unwrap();
    let (s, w) = Store::at(Some(own), &[system]);
    assert!(w.is_empty(), "{w:?}");
    // The text the samples carry must parse: at most `MAX_DEVICES`, the newest.
    let read = crate::parse::baselines::parse(s.text().unwrap()).unwrap();
    assert_eq!(read.devices.len(), MAX_DEVICES);
    assert!(read.devices.values().all(|d| d.seen_s >= 64));
}

#[test]
fn the_newest_reference_is_kept_whoever_writes_last() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baselines");
    let at = |seen_s, thresh_bytes| crate::parse::baselines::Reference {
        seen_s,
        thresh_bytes,
        available_bytes: 2e10,
    };
    let with = |r| Stored {
        reference: Some(r),
        ..Stored::default()
    };
    let (mut a, _) = Store::at(Some(path.clone()), &[]);
    a.keep(&with(at(1000, 4e9)), 1000);
    let (mut b, _) = Store::at(Some(path.clone()), &[]);
    b.keep(&with(at(900, 3e9)), 1001);
    let read = |p: &std::path::Path| {
        let text = std::fs::read_to_string(p).unwrap();
        crate::parse::baselines::parse(&text).unwrap().reference
    };
    assert_eq!(
        read(&path),
        Some(at(1000, 4e9)),
        "an older one does not replace it"
    );
    b.keep(&with(at(1005, 2e9)), 1005);
    assert_eq!(read(&path), Some(at(1005, 2e9)));
    // Learning none keeps the stored one.
    b.keep(&Stored::default(), 1006);
    assert_eq!(read(&path), Some(at(1005, 2e9)));
}
