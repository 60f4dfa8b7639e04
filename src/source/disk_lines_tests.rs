use std::fmt::Write as _;

use super::*;

const S: u64 = 1_000_000_000;

/// A tree with `n` devices (7:i, `loopI`), every counter `v(i)`, in `proc/diskstats` and each
/// device's `sys/dev/block/7:I/stat` (sysfs pads its fields to 8 columns).
struct Tree {
    dir: tempfile::TempDir,
    n: usize,
}

impl Tree {
    fn new(n: usize) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let t = Self { dir, n };
        for i in 0..n {
            t.set(i, 0);
        }
        t
    }

    fn set(&self, i: usize, v: u64) {
        let d = self.dir.path().join(format!("sys/dev/block/7:{i}"));
        std::fs::create_dir_all(&d).unwrap();
        let fields: Vec<String> = (0..17).map(|_| format!("{v:>8}")).collect();
        std::fs::write(d.join("stat"), format!("{}\n", fields.join(" "))).unwrap();
        self.write_diskstats(i, v);
    }

    /// Rewrites `proc/diskstats` with device `i` at `v`, the others as their stat says.
    fn write_diskstats(&self, i: usize, v: u64) {
        let mut text = String::new();
        for k in 0..self.n {
            let val = if k == i { v } else { self.stat_value(k) };
            let fields: Vec<String> = (0..17).map(|_| val.to_string()).collect();
            let _ = writeln!(text, "{:>4} {:>7} loop{k} {}", 7, k, fields.join(" "));
        }
        std::fs::create_dir_all(self.dir.path().join("proc")).unwrap();
        std::fs::write(self.dir.path().join("proc/diskstats"), text).unwrap();
    }

    fn stat_value(&self, i: usize) -> u64 {
        let p = self.dir.path().join(format!("sys/dev/block/7:{i}/stat"));
        std::fs::read_to_string(p)
            .map_or(0, |t| t.split_whitespace().next().unwrap().parse().unwrap())
    }

    fn sys(&self) -> PathBuf {
        self.dir.path().join("sys")
    }

    /// Reads a tick with `lines`, counting whole reads in `wholes`.
    fn tick(&self, lines: &mut Lines, at: u64, refresh: bool, wholes: &mut u32) -> String {
        let path = self.dir.path().join("proc/diskstats");
        let mut buf = Vec::new();
        let whole = |buf: &mut Vec<u8>| {
            *wholes += 1;
            let t = std::fs::read(&path).unwrap();
            buf.clear();
            buf.extend_from_slice(&t);
            Ok(Some(t.len()))
        };
        assert!(lines.read(whole, &mut buf, at, true, refresh).unwrap());
        lines.text().to_owned()
    }
}

/// `n` devices after the warm-up: two whole reads (at 0 and 1 s), loop3 moving between them.
fn warmed(n: usize) -> (Tree, Lines, u32) {
    let t = Tree::new(n);
    let mut l = Lines::new(&t.sys());
    let mut wholes = 0;
    t.tick(&mut l, 0, false, &mut wholes);
    t.set(3, 10);
    t.tick(&mut l, S, false, &mut wholes);
    (t, l, wholes)
}

fn value_of(text: &str, dev: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(dev))
        .unwrap();
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

#[test]
fn a_line_is_cut_after_its_name() {
    assert_eq!(
        split_after_name("   7       5 loop5 1 2 3"),
        ("   7       5 loop5", "1 2 3")
    );
    assert_eq!(split_after_name("   7       5"), ("   7       5", ""));
    let e = Entry::new(" 254       0 vda 9 8", 5);
    assert_eq!((e.name.as_str(), e.dev.as_str()), ("vda", "254:0"));
}

#[test]
fn few_devices_are_read_whole_every_tick() {
    let t = Tree::new(MANY_LINES);
    let mut l = Lines::new(&t.sys());
    let mut wholes = 0;
    for k in 0..10 {
        t.set(3, k);
        let text = t.tick(&mut l, k * S, false, &mut wholes);
        assert_eq!(value_of(&text, "loop3"), k);
        assert!(l.carried().is_empty());
    }
    assert_eq!(wholes, 10);
}

#[test]
fn with_many_devices_only_the_moving_ones_are_read_between_whole_reads() {
    let n = 100;
    let (t, mut l, mut wholes) = warmed(n);
    assert_eq!(wholes, 2);
    // Now loop3 alone is read from sysfs: diskstats is not read again until the whole read
    // due at the fourth tick after the last.
    t.set(3, 20);
    // An idle device's new counters are in diskstats only (its sysfs file says 0 still).
    t.write_diskstats(50, 7);
    let text = t.tick(&mut l, 2 * S, false, &mut wholes);
    assert_eq!(wholes, 2);
    assert_eq!(value_of(&text, "loop3"), 20);
    assert_eq!(value_of(&text, "loop50"), 0, "carried from its last read");
    assert!(l.carried().contains("loop50\t1000000000\n"));
    assert!(!l.carried().contains("loop3\t"));
    // Every line is there, in the kernel's order.
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(names.len(), n);
    assert_eq!(names[50], "loop50");
    t.tick(&mut l, 3 * S, false, &mut wholes);
    t.tick(&mut l, 4 * S, false, &mut wholes);
    assert_eq!(wholes, 2);
    // The fourth tick after the last whole read: whole, which shows loop50's counters; from
    // then on loop50 moves too.
    let text = t.tick(&mut l, 5 * S, false, &mut wholes);
    assert_eq!(wholes, 3);
    assert_eq!(value_of(&text, "loop50"), 7);
    assert!(l.carried().is_empty());
    t.set(50, 9);
    let text = t.tick(&mut l, 6 * S, false, &mut wholes);
    assert_eq!(wholes, 3);
    assert_eq!(value_of(&text, "loop50"), 9);
}

#[test]
fn a_read_that_fails_or_a_refresh_reads_whole() {
    let (t, mut l, mut wholes) = warmed(100);
    t.tick(&mut l, 2 * S, true, &mut wholes);
    assert_eq!(wholes, 3, "the slow refresh reads whole");
    // loop3 goes away: its sysfs read fails, and the tick reads the whole file.
    std::fs::remove_dir_all(t.dir.path().join("sys/dev/block/7:3")).unwrap();
    t.tick(&mut l, 3 * S, false, &mut wholes);
    assert_eq!(wholes, 4);
}

#[test]
fn per_device_reads_stop_when_many_devices_move_or_sysfs_disagrees() {
    let t = Tree::new(40);
    let mut l = Lines::new(&t.sys());
    let mut wholes = 0;
    t.tick(&mut l, 0, false, &mut wholes);
    // Six of 40 move: more than one in eight, so every tick reads whole.
    for i in 0..6 {
        t.set(i, 1);
    }
    t.tick(&mut l, S, false, &mut wholes);
    t.tick(&mut l, 2 * S, false, &mut wholes);
    assert_eq!(wholes, 3);
    // The others idle for longer than KEEP_NS: three carried ticks, then the whole read
    // that finds loop0 moved.
    t.set(0, 2);
    for k in 3..7 {
        t.tick(&mut l, KEEP_NS + k * S, false, &mut wholes);
    }
    assert_eq!(wholes, 4);
    // Then loop0 alone is read, from sysfs.
    t.set(0, 3);
    let text = t.tick(&mut l, KEEP_NS + 7 * S, false, &mut wholes);
    assert_eq!(wholes, 4);
    assert_eq!(value_of(&text, "loop0"), 3);
    // A sysfs stat with fewer counters than the line (an older kernel): whole from now on.
    std::fs::write(t.dir.path().join("sys/dev/block/7:0/stat"), "1 2 3\n").unwrap();
    for k in 8..15 {
        t.tick(&mut l, KEEP_NS + k * S, false, &mut wholes);
    }
    assert_eq!(wholes, 4 + 7);
}

#[test]
fn a_tree_that_is_not_the_kernels_is_read_whole() {
    let t = Tree::new(100);
    let mut l = Lines::new(&t.sys());
    let mut wholes = 0;
    let path = t.dir.path().join("proc/diskstats");
    for k in 0..6 {
        t.set(3, k);
        let whole = |buf: &mut Vec<u8>| {
            wholes += 1;
            let b = std::fs::read(&path).unwrap();
            buf.clear();
            buf.extend_from_slice(&b);
            Ok(Some(b.len()))
        };
        assert!(l.read(whole, &mut Vec::new(), k * S, false, false).unwrap());
    }
    assert_eq!(wholes, 6);
}
