//! Tests of `FsSource` (held files, reopening, the slow refresh).

use std::path::Path;

use super::*;
use crate::source::read::{MAX_FILE_BYTES, read_optional, short_is_end};

/// What `Held::read` read, as text.
fn read_text(h: &mut Held, buf: &mut Vec<u8>) -> Result<Option<String>> {
    Ok(h.read(buf)?.map(|n| text(&buf[..n]).into_owned()))
}

#[test]
fn held_proc_file_rereads_fresh_text() {
    let mut h = Held::new("/proc/self/stat".into(), Records::Unknown);
    let mut buf = Vec::new();
    let a = read_text(&mut h, &mut buf).unwrap().unwrap();
    assert!(h.file.is_some(), "procfs files are kept open");
    // Burn some CPU so utime/stime or at least the text can move; the point is that a
    // second read returns a whole, well-formed file again, from offset 0.
    let b = read_text(&mut h, &mut buf).unwrap().unwrap();
    assert_eq!(a.split(' ').next(), b.split(' ').next());
    assert!(b.ends_with('\n'));
}

#[test]
fn regular_files_are_reopened_and_vanishing_means_absent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("meminfo");
    std::fs::write(&path, "one\n").unwrap();
    let mut h = Held::new(path.clone(), Records::Unknown);
    let mut buf = Vec::new();
    assert_eq!(
        read_text(&mut h, &mut buf).unwrap().as_deref(),
        Some("one\n")
    );
    assert!(h.file.is_none(), "files outside procfs are not held");
    std::fs::write(&path, "two, longer\n").unwrap();
    assert_eq!(
        read_text(&mut h, &mut buf).unwrap().as_deref(),
        Some("two, longer\n")
    );
    std::fs::remove_file(&path).unwrap();
    assert_eq!(read_text(&mut h, &mut buf).unwrap(), None);
}

#[test]
fn files_larger_than_the_buffer_are_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    let big = "x".repeat(200 * 1024 + 7);
    std::fs::write(&path, &big).unwrap();
    let mut buf = vec![0; 16];
    assert_eq!(read_optional(&path, &mut buf).unwrap(), Some(big));
}

/// A proc root with the required per-tick files and, optionally, a zoneinfo.
fn proc_tree(zoneinfo: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let proc = dir.path().join("proc");
    std::fs::create_dir_all(proc.join("sys/vm")).unwrap();
    std::fs::write(proc.join("meminfo"), "MemTotal: 100 kB\nMemFree: 50 kB\n").unwrap();
    std::fs::write(proc.join("sys/vm/dirty_ratio"), "20\n").unwrap();
    if let Some(z) = zoneinfo {
        std::fs::write(proc.join("zoneinfo"), z).unwrap();
    }
    dir
}

fn source(dir: &tempfile::TempDir) -> FsSource {
    FsSource::new(
        dir.path().join("proc"),
        dir.path().join("sys"),
        Box::new(SystemClock),
    )
}

#[test]
fn zoneinfo_is_carried_between_slow_refreshes() {
    let dir = proc_tree(Some("Node 0, zone DMA\n  pages free 1\n"));
    let mut src = source(&dir);
    let first = src.read().unwrap();
    assert_eq!(
        first.file(names::ZONEINFO),
        Some("Node 0, zone DMA\n  pages free 1\n")
    );
    let changed = "Node 0, zone DMA\n  pages free 2\n";
    std::fs::write(dir.path().join("proc/zoneinfo"), changed).unwrap();
    // The next SLOW_REFRESH_TICKS − 1 samples carry the text of the last refresh …
    for i in 1..SLOW_REFRESH_TICKS {
        let s = src.read().unwrap();
        assert_eq!(s.file(names::ZONEINFO), first.file(names::ZONEINFO), "{i}");
        assert_eq!(s.file(names::MEMINFO), first.file(names::MEMINFO), "{i}");
    }
    // … and the refresh after them reads the new text.
    assert_eq!(src.read().unwrap().file(names::ZONEINFO), Some(changed));
    // A sysctl rides on the same refresh.
    assert_eq!(
        src.read().unwrap().file(&names::vm_sysctl("dirty_ratio")),
        Some("20\n")
    );
}

#[test]
fn absent_zoneinfo_stays_absent_and_a_vanished_one_goes() {
    let dir = proc_tree(None);
    let mut src = source(&dir);
    for i in 0..2 * SLOW_REFRESH_TICKS {
        let s = src.read().unwrap();
        assert_eq!(s.file(names::ZONEINFO), None, "{i}");
        assert!(s.file(names::MEMINFO).is_some());
    }
    std::fs::write(dir.path().join("proc/zoneinfo"), "Node 0, zone DMA\n").unwrap();
    let seen = (0..SLOW_REFRESH_TICKS)
        .filter(|_| src.read().unwrap().file(names::ZONEINFO).is_some())
        .count();
    assert!(seen >= 1, "appears within SLOW_REFRESH_TICKS samples");
    std::fs::remove_file(dir.path().join("proc/zoneinfo")).unwrap();
    let last = (0..SLOW_REFRESH_TICKS)
        .map(|_| src.read().unwrap().file(names::ZONEINFO).is_some())
        .last();
    assert_eq!(last, Some(false), "gone within SLOW_REFRESH_TICKS samples");
}

#[test]
fn live_sample_holds_the_tick_files() {
    let mut src = FsSource::live();
    let a = src.read().unwrap();
    let b = src.read().unwrap();
    assert!(src.tick_files[0].file.is_some());
    assert!(b.file(names::MEMINFO).unwrap().starts_with("MemTotal:"));
    assert_eq!(
        a.files.keys().collect::<Vec<_>>(),
        b.files.keys().collect::<Vec<_>>()
    );
}

#[test]
fn read_size_follows_the_file() {
    assert_eq!(step_for(3), 512);
    assert_eq!(step_for(4066), 8192);
    assert_eq!(step_for(5420), 8192);
    assert_eq!(step_for(6000), 16384);
    // A held sysctl and a held seq_file read whole with a small step, also after growing.
    for path in ["/proc/sys/vm/dirty_ratio", "/proc/self/mountinfo"] {
        let mut h = Held::new(path.into(), Records::Unknown);
        let mut buf = Vec::new();
        for _ in 0..3 {
            let got = read_text(&mut h, &mut buf).unwrap().unwrap();
            assert_eq!(got, std::fs::read_to_string(path).unwrap(), "{path}");
        }
        h.step = 16; // smaller than the file: several reads
        let got = read_text(&mut h, &mut buf).unwrap().unwrap();
        assert_eq!(got, std::fs::read_to_string(path).unwrap(), "{path}");
    }
}

#[test]
fn a_recycled_sample_is_rebuilt_exactly() {
    let dir = proc_tree(Some("Node 0, zone DMA\n"));
    let proc = dir.path().join("proc");
    std::fs::write(proc.join("stat"), "cpu  1 2 3\n").unwrap();
    let mut src = source(&dir);
    let mut fresh = source(&dir);
    for i in 0..3 * SLOW_REFRESH_TICKS {
        // Files come and go and change length between samples.
        match i {
            3 => std::fs::remove_file(proc.join("stat")).unwrap(),
            6 => std::fs::write(proc.join("stat"), "cpu  10 20 30 40\n").unwrap(),
            8 => std::fs::write(proc.join("meminfo"), "MemTotal: 1 kB\n").unwrap(),
            11 => std::fs::remove_file(proc.join("zoneinfo")).unwrap(),
            _ => {}
        }
        let got = src.read().unwrap();
        let want = fresh.read().unwrap();
        assert_eq!(got.files, want.files, "sample {i}");
        src.recycle(got);
    }
    // A recycled sample from elsewhere (extra files) leaves nothing behind either.
    let mut odd = fresh.read().unwrap();
    odd.files.insert("proc/not-sampled".into(), "x".into());
    src.recycle(odd);
    assert_eq!(src.read().unwrap().files, fresh.read().unwrap().files);
}

#[test]
fn text_keeps_invalid_bytes_lossily() {
    assert_eq!(text(b"MemTotal: 1 kB\n"), "MemTotal: 1 kB\n");
    assert!(matches!(text(b"ok"), Cow::Borrowed(_)));
    assert_eq!(text(b"a\xffb"), "a\u{fffd}b");
}

#[test]
fn procfs_short_reads_end_the_file_only_when_they_are_the_end() {
    // kallsyms: megabytes of seq_file records (a symbol of up to 512 bytes a line), so reads
    // stop short at every full kernel buffer without being the end; the others are one
    // record and end in one short read.
    for (path, records) in [
        ("/proc/kallsyms", Records::UpTo(600)),
        ("/proc/self/mountinfo", Records::Unknown),
        ("/proc/filesystems", Records::One),
        ("/proc/sys/vm/dirty_ratio", Records::One),
    ] {
        let Ok(want) = std::fs::read_to_string(path) else {
            continue;
        };
        let mut h = Held::new(path.into(), records);
        let mut buf = Vec::new();
        for step in [DEFAULT_STEP, 16, 4096, 65536] {
            read_text(&mut h, &mut buf).unwrap();
            assert!(h.file.is_some(), "{path} is held");
            h.step = step;
            let got = read_text(&mut h, &mut buf).unwrap().unwrap();
            assert_eq!(got.len(), want.len(), "{path} step {step}");
            assert_eq!(got, want, "{path} step {step}");
        }
    }
}

#[test]
fn the_tick_files_are_read_whole_with_their_record_sizes() {
    // Their figures move between two reads, but not their lines: each held read has every
    // line a read to EOF has, whatever the read size.
    for (rel, _, records) in PROC_FILES {
        let path = Path::new("/proc").join(rel);
        let Ok(want) = std::fs::read_to_string(&path) else {
            continue;
        };
        // A line's name: its first word, or a diskstats line's third (after the numbers).
        let keys = |t: &str| -> Vec<String> {
            t.lines()
                .map(|l| {
                    let mut w = l.split_whitespace();
                    let first = w.next().unwrap_or_default();
                    if first.starts_with(|c: char| c.is_ascii_digit()) {
                        w.nth(1).unwrap_or_default().to_owned()
                    } else {
                        first.to_owned()
                    }
                })
                .collect()
        };
        // No line longer than the record bound (a vmstat record is a line), or a short read
        // could end the file early.
        if let Records::UpTo(max) = records {
            let longest = want.split_inclusive('\n').map(str::len).max();
            assert!(
                longest.unwrap_or(0) <= max,
                "{rel}: a line of {longest:?} bytes"
            );
        }
        let mut h = Held::new(path.clone(), records);
        let mut buf = Vec::new();
        for step in [DEFAULT_STEP, 64, 4096, 8192] {
            read_text(&mut h, &mut buf).unwrap();
            h.step = step;
            let got = read_text(&mut h, &mut buf).unwrap().unwrap();
            assert!(got.ends_with('\n'), "{rel} step {step}");
            assert_eq!(
                got.lines().count(),
                want.lines().count(),
                "{rel} step {step}"
            );
            assert_eq!(keys(&got), keys(&want), "{rel} step {step}");
        }
    }
}

#[test]
fn a_short_read_ends_a_file_by_its_records() {
    let page = rustix::param::page_size();
    assert!(short_is_end(Some(Records::One), page * 3));
    assert!(short_is_end(Some(Records::UpTo(128)), page - 129));
    assert!(!short_is_end(Some(Records::UpTo(128)), page - 128));
    assert!(!short_is_end(Some(Records::Unknown), 10));
    assert!(!short_is_end(None, 10));
}

#[test]
fn refresh_soon_brings_the_slow_refresh_forward() {
    let dir = proc_tree(Some("Node 0, zone DMA\n  pages free 1\n"));
    let mut src = source(&dir);
    src.read().unwrap();
    std::fs::write(dir.path().join("proc/sys/vm/dirty_ratio"), "5\n").unwrap();
    let key = names::vm_sysctl("dirty_ratio");
    assert_eq!(src.read().unwrap().file(&key), Some("20\n"), "carried");
    src.refresh_soon();
    assert_eq!(src.read().unwrap().file(&key), Some("5\n"), "read again");
    // The period restarts from that refresh.
    std::fs::write(dir.path().join("proc/sys/vm/dirty_ratio"), "7\n").unwrap();
    for i in 1..SLOW_REFRESH_TICKS {
        assert_eq!(src.read().unwrap().file(&key), Some("5\n"), "{i}");
    }
    assert_eq!(src.read().unwrap().file(&key), Some("7\n"));
}

#[test]
fn a_file_that_never_ends_is_cut_off_with_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("meminfo");
    std::fs::write(&big, vec![b'x'; MAX_FILE_BYTES + 1]).unwrap();
    let e = read_optional(&big, &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("longer than 16 MiB"), "{e}");
    let fifo = tmp.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let e = read_optional(&fifo, &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a regular file (a FIFO)"), "{e}");
}

#[test]
fn sysfs_attributes_read_through_a_directory_equal_a_plain_read() {
    // Every attribute of every BDI and every disk's queue on this machine, one read each.
    let mut buf = Vec::new();
    let mut seen = 0;
    for (root, files) in [
        ("/sys/class/bdi", &names::BDI_FILES[..]),
        ("/sys/block", &names::QUEUE_FILES[..]),
    ] {
        let Ok(entries) = std::fs::read_dir(root) else {
            continue;
        };
        for e in entries.flatten() {
            let mut dir = e.path();
            if root == "/sys/block" {
                dir.push("queue");
            }
            let d = super::super::read::Dir::open(&dir).expect("a sysfs directory");
            for f in files {
                let plain = std::fs::read_to_string(dir.join(f)).ok();
                let via = d.read(f, &mut buf);
                // A value that changes between the two reads (max_bytes follows the
                // threshold) is read once more.
                if plain != via {
                    assert_eq!(
                        std::fs::read_to_string(dir.join(f)).ok(),
                        d.read(f, &mut buf),
                        "{}",
                        dir.join(f).display()
                    );
                }
                seen += 1;
            }
        }
    }
    assert!(seen > 0, "no sysfs here");
    // A missing file is none, as is a directory (a disk's entry under /sys/block).
    let d = super::super::read::Dir::open(Path::new("/sys/block")).unwrap();
    assert_eq!(d.read("no-such-file", &mut buf), None);
    let disk = std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .next()
        .unwrap();
    assert_eq!(d.read(disk.file_name().to_str().unwrap(), &mut buf), None);
}

/// A disk's line of the `/sys/block` pseudo-file, and a BDI's of `sys/class/bdi/`.
fn line_of<'a>(text: Option<&'a str>, name: &str) -> &'a str {
    text.unwrap_or_default()
        .lines()
        .find(|l| l.split('\t').next() == Some(name))
        .unwrap_or_else(|| panic!("{name} in {text:?}"))
}

#[test]
fn an_idle_disks_settings_are_carried_a_moving_ones_re_read() {
    let dir = proc_tree(None);
    let stats = |w: u64| {
        format!(
            "   7       0 loop0 5 0 10 1 0 0 0 0 0 2 1\n \
             253       0 vda 100 3 800 50 {w} 1 160 9 0 70 59\n"
        )
    };
    std::fs::write(dir.path().join("proc/diskstats"), stats(20)).unwrap();
    let set = |dev: &str, sched: &str, ratio: &str, devno: &str| {
        let q = dir.path().join("sys/block").join(dev).join("queue");
        std::fs::create_dir_all(&q).unwrap();
        std::fs::write(q.join("scheduler"), sched).unwrap();
        let b = dir.path().join("sys/class/bdi").join(devno);
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("max_ratio"), ratio).unwrap();
    };
    set("loop0", "none\n", "100\n", "7:0");
    set("vda", "none\n", "100\n", "253:0");
    let mut src = source(&dir);
    let s = src.read().unwrap();
    assert_eq!(
        line_of(s.file(names::BLOCK_DEVICES), "vda"),
        "vda\t\tnone\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
    );
    // Both change their settings; only vda does I/O.
    set("loop0", "mq-deadline\n", "50\n", "7:0");
    set("vda", "mq-deadline\n", "50\n", "253:0");
    std::fs::write(dir.path().join("proc/diskstats"), stats(21)).unwrap();
    // The disks' and BDIs' texts a minute of ticks later (one periodic refresh).
    let a_minute_on = |src: &mut FsSource| {
        let mut last = None;
        for _ in 0..SLOW_REFRESH_TICKS * QUEUE_REFRESHES {
            last = Some(src.read().unwrap());
        }
        let last = last.unwrap();
        let text = |name| last.file(name).map(str::to_owned);
        (text(names::BLOCK_DEVICES), text(names::BDI_LIMITS))
    };
    drop(s);
    let (block, bdi) = a_minute_on(&mut src);
    let (block, bdi) = (block.as_deref(), bdi.as_deref());
    assert!(line_of(block, "vda").contains("mq-deadline"), "{block:?}");
    assert!(line_of(block, "loop0").contains("\tnone\t"), "{block:?}");
    assert!(line_of(bdi, "253:0").contains("\t50\t"), "{bdi:?}");
    assert!(line_of(bdi, "7:0").contains("\t100\t"), "{bdi:?}");
    // Once loop0 moves, its settings are read at the next periodic refresh.
    std::fs::write(
        dir.path().join("proc/diskstats"),
        stats(21).replace("loop0 5 ", "loop0 6 "),
    )
    .unwrap();
    let (block, bdi) = a_minute_on(&mut src);
    let (block, bdi) = (block.as_deref(), bdi.as_deref());
    assert!(line_of(block, "loop0").contains("mq-deadline"), "{block:?}");
    assert!(line_of(bdi, "7:0").contains("\t50\t"), "{bdi:?}");
}

#[test]
fn every_disks_settings_are_re_read_on_the_full_refresh() {
    let dir = proc_tree(None);
    std::fs::write(
        dir.path().join("proc/diskstats"),
        "   7       0 loop0 5 0 10 1 0 0 0 0 0 2 1\n",
    )
    .unwrap();
    let q = dir.path().join("sys/block/loop0/queue");
    std::fs::create_dir_all(&q).unwrap();
    std::fs::write(q.join("scheduler"), "none\n").unwrap();
    let mut src = source(&dir);
    let _ = src.read().unwrap();
    std::fs::write(q.join("scheduler"), "kyber\n").unwrap();
    let period = SLOW_REFRESH_TICKS * QUEUE_REFRESHES;
    let mut n = 0;
    let shown = loop {
        n += 1;
        let s = src.read().unwrap();
        if line_of(s.file(names::BLOCK_DEVICES), "loop0").contains("kyber") {
            break n;
        }
        assert!(
            n <= period * super::super::moved::FULL_EVERY,
            "never re-read"
        );
    };
    assert!(
        shown > period,
        "an idle disk is not re-read every minute: {shown}"
    );
}

#[test]
fn the_stored_baselines_ride_in_every_sample_and_what_is_learned_is_kept() {
    let dir = proc_tree(None);
    let state = dir.path().join("state/baselines");
    let mut d = crate::parse::baselines::Device::default();
    d.baseline_ms[0][0] = Some(0.06);
    let stored = crate::parse::baselines::Stored::with_devices([("serial=a".to_owned(), d)]);
    std::fs::create_dir_all(state.parent().unwrap()).unwrap();
    std::fs::write(&state, crate::parse::baselines::render(&stored)).unwrap();
    let (store, warnings) = super::super::baselines::Store::at(Some(state.clone()), &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let text = store.text().unwrap().to_owned();
    let mut src = source(&dir).with_baselines(store);
    for _ in 0..2 {
        let s = src.read().unwrap();
        assert_eq!(s.file(names::BASELINES), Some(text.as_str()));
    }
    // What the pipeline hands back is merged into the file, and the next sample carries the
    // file as it is now (another instance's saturation marks reach this one at once).
    let mut learned = crate::parse::baselines::Device::default();
    learned.baseline_ms[1][2] = Some(1.5);
    src.keep_baselines(&crate::parse::baselines::Stored::with_devices([(
        "serial=b".to_owned(),
        learned,
    )]));
    let now = crate::parse::baselines::parse(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(now.devices.len(), 2);
    assert_eq!(now.devices["serial=b"].baseline_ms[1][2], Some(1.5));
    assert!(now.devices["serial=b"].seen_s > 1_700_000_000);
    let merged = crate::parse::baselines::render(&now);
    assert_eq!(
        src.read().unwrap().file(names::BASELINES),
        Some(merged.as_str())
    );
    // Another instance writes it (a rename, as `keep` does): the next sample carries that.
    let mut other = now.clone();
    other.devices.get_mut("serial=a").unwrap().saturated_until_s = Some(1_795_950_003);
    let tmp = state.with_extension("tmp");
    std::fs::write(&tmp, crate::parse::baselines::render(&other)).unwrap();
    std::fs::rename(&tmp, &state).unwrap();
    let carried = src
        .read()
        .unwrap()
        .file(names::BASELINES)
        .unwrap()
        .to_owned();
    assert!(carried.contains("saturated 1795950003"), "{carried}");
    // A damaged write loses nothing: the samples keep the last text read.
    std::fs::write(&state, "garbage").unwrap();
    assert_eq!(
        src.read().unwrap().file(names::BASELINES),
        Some(carried.as_str())
    );
    // Without a store, nothing rides along.
    assert_eq!(source(&dir).read().unwrap().file(names::BASELINES), None);
}

#[test]
fn zram_devices_files_are_read_every_tick_and_none_without_zram() {
    let dir = proc_tree(None);
    std::fs::write(
        dir.path().join("proc/diskstats"),
        " 253       0 vda 100 3 800 50 20 1 160 9 0 70 59\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("sys/block/vda/queue")).unwrap();
    let mut src = source(&dir);
    let s = src.read().unwrap();
    assert!(
        !s.files.keys().any(|k| k.starts_with("sys/block/zram")),
        "no zram: no zram file"
    );
    // A zram device shows at the next slow refresh, with mm_stat and (here) no bd_stat.
    let z = dir.path().join("sys/block/zram0");
    std::fs::create_dir_all(z.join("queue")).unwrap();
    std::fs::write(z.join("mm_stat"), "4096 100 8192 0 8192 0 0 1 0\n").unwrap();
    src.refresh_soon();
    let s = src.read().unwrap();
    assert_eq!(
        s.file("sys/block/zram0/mm_stat"),
        Some("4096 100 8192 0 8192 0 0 1 0\n")
    );
    assert_eq!(s.file("sys/block/zram0/bd_stat"), None);
    // Read afresh every tick, not carried.
    std::fs::write(z.join("mm_stat"), "8192 200 8192 0 8192 0 0 1 0\n").unwrap();
    let s = src.read().unwrap();
    assert_eq!(
        s.file("sys/block/zram0/mm_stat"),
        Some("8192 200 8192 0 8192 0 0 1 0\n")
    );
    // Removed and added again under the same name (zram-control's hot_remove, hot_add) before
    // any refresh: the held directory is stale, one tick goes without, the next reads the new.
    std::fs::remove_dir_all(&z).unwrap();
    std::fs::create_dir_all(z.join("queue")).unwrap();
    std::fs::write(z.join("mm_stat"), "1 2 3 0 3 0 0 1 0\n").unwrap();
    std::fs::write(z.join("bd_stat"), "0 0 0\n").unwrap();
    let s = src.read().unwrap();
    assert_eq!(s.file("sys/block/zram0/mm_stat"), None);
    let s = src.read().unwrap();
    assert_eq!(
        s.file("sys/block/zram0/mm_stat"),
        Some("1 2 3 0 3 0 0 1 0\n")
    );
    // bd_stat is looked for at the listing: read from the next refresh on.
    assert_eq!(s.file("sys/block/zram0/bd_stat"), None);
    src.refresh_soon();
    assert_eq!(
        src.read().unwrap().file("sys/block/zram0/bd_stat"),
        Some("0 0 0\n")
    );
    // A device made but not set up (disksize 0) is not read, until a listing finds it set up.
    std::fs::write(z.join("disksize"), "0\n").unwrap();
    src.refresh_soon();
    assert_eq!(src.read().unwrap().file("sys/block/zram0/mm_stat"), None);
    assert_eq!(src.read().unwrap().file("sys/block/zram0/mm_stat"), None);
    std::fs::write(z.join("disksize"), "536870912\n").unwrap();
    assert_eq!(src.read().unwrap().file("sys/block/zram0/mm_stat"), None);
    src.refresh_soon();
    assert_eq!(
        src.read().unwrap().file("sys/block/zram0/mm_stat"),
        Some("1 2 3 0 3 0 0 1 0\n")
    );
}
