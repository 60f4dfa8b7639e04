use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::*;
use crate::parse::procs::tests::stat_line;
use crate::parse::procs::{ProcIo, Walk, parse};
use crate::sample::{Wants, names};
use crate::source::{Clock, FsSource, Source};

/// A clock the test moves.
struct TestClock(Arc<AtomicU64>);

impl Clock for TestClock {
    fn mono_ns(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
    fn wall_ms(&self) -> i64 {
        0
    }
}

const S: u64 = 1_000_000_000;

/// A fake proc root with processes `pid → (state, start, write_bytes)`.
struct Tree(tempfile::TempDir);

impl Tree {
    fn new() -> Self {
        let t = Tree(tempfile::tempdir().unwrap());
        std::fs::create_dir_all(t.proc().join("sys/kernel")).unwrap();
        std::fs::write(t.proc().join("sys/kernel/task_delayacct"), "1\n").unwrap();
        t
    }
    fn proc(&self) -> PathBuf {
        self.0.path().join("proc")
    }
    fn set(&self, pid: u32, state: char, start: u64, write_bytes: u64) {
        let d = self.proc().join(pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("stat"),
            stat_line(pid, "w", state, 1, start, 0) + "\n",
        )
        .unwrap();
        let io = format!(
            "rchar: 0\nwchar: {write_bytes}\nsyscr: 0\nsyscw: 0\nread_bytes: 0\n\
             write_bytes: {write_bytes}\ncancelled_write_bytes: 0\n"
        );
        std::fs::write(d.join("io"), io).unwrap();
        std::fs::write(d.join("wchan"), "balance_dirty_pages").unwrap();
        std::fs::write(d.join("cgroup"), "1:name=systemd:/\n0::/box\n").unwrap();
    }
}

/// `(tag, pid)` of each record of a walk.
fn records(w: &Walk) -> Vec<(char, u32)> {
    w.records
        .iter()
        .map(|r| (if r.carried { 'p' } else { 'P' }, r.pid))
        .collect()
}

#[test]
fn no_walk_unless_wanted_and_one_every_period() {
    let tree = Tree::new();
    tree.set(42, 'D', 500, 0);
    let now = Arc::new(AtomicU64::new(100 * S));
    let mut src = FsSource::new(
        tree.proc(),
        tree.0.path().join("sys"),
        Box::new(TestClock(now.clone())),
    );
    assert_eq!(
        src.read().unwrap().file(names::PROCS),
        None,
        "nothing wanted"
    );
    src.want(&Wants {
        procs: Some(ProcScope {
            fast: true,
            ..ProcScope::default()
        }),
        ..Wants::default()
    });
    let first = parse(src.read().unwrap().file(names::PROCS).unwrap()).unwrap();
    assert_eq!((first.mono_ns, first.prev_mono_ns), (100 * S, None));
    assert_eq!(
        records(&first),
        [('P', 42)],
        "a D task is written at first sight"
    );
    assert_eq!(first.records[0].cgroup.as_deref(), Some("/box"));
    now.store(101 * S, Ordering::SeqCst);
    assert_eq!(
        src.read().unwrap().file(names::PROCS),
        None,
        "1 s later: no walk"
    );
    now.store(102 * S, Ordering::SeqCst);
    let second = parse(src.read().unwrap().file(names::PROCS).unwrap()).unwrap();
    assert_eq!(second.prev_mono_ns, Some(100 * S));
    src.want(&Wants::default());
    now.store(104 * S, Ordering::SeqCst);
    assert_eq!(src.read().unwrap().file(names::PROCS), None, "turned off");
    src.want(&Wants {
        procs: Some(ProcScope {
            fast: true,
            ..ProcScope::default()
        }),
        ..Wants::default()
    });
    let again = parse(src.read().unwrap().file(names::PROCS).unwrap()).unwrap();
    assert_eq!(
        again.prev_mono_ns, None,
        "after a pause the walk starts afresh"
    );
}

#[test]
fn only_active_processes_are_written_with_their_previous_reading() {
    let tree = Tree::new();
    tree.set(42, 'S', 500, 0); // idle, then writes from walk 3
    tree.set(43, 'S', 600, 0); // idle throughout
    let mut w = Walker::new(tree.proc());
    let scope = ProcScope {
        fast: true,
        ..ProcScope::default()
    };
    let walk_at = |w: &mut Walker, s: u64| parse(w.maybe_walk(s * S, &scope).unwrap()).unwrap();
    assert!(
        records(&walk_at(&mut w, 0)).is_empty(),
        "first sight, not in D"
    );
    assert!(records(&walk_at(&mut w, 2)).is_empty(), "idle");
    tree.set(42, 'S', 500, 4096);
    let third = walk_at(&mut w, 4);
    assert_eq!(records(&third), [('p', 42), ('P', 42)]);
    assert!(matches!(third.records[0].io, ProcIo::Counters(c) if c.write_bytes == 0));
    tree.set(42, 'S', 500, 8192);
    assert_eq!(
        records(&walk_at(&mut w, 6)),
        [('P', 42)],
        "walk 3 has its reading"
    );
    // Pid 42 reused by a new process that writes: first sight again, no previous reading.
    tree.set(42, 'S', 900, 1 << 20);
    assert!(records(&walk_at(&mut w, 8)).is_empty());
    // A process gone: nothing, and no error.
    std::fs::remove_dir_all(tree.proc().join("43")).unwrap();
    tree.set(42, 'S', 900, 2 << 20);
    assert_eq!(records(&walk_at(&mut w, 10)), [('p', 42), ('P', 42)]);
}

#[test]
fn the_recording_gives_the_same_rates_as_every_process_would() {
    // Rates from the active-only walks equal the hand-computed ones: 4096 bytes over 2 s.
    let tree = Tree::new();
    tree.set(42, 'S', 500, 0);
    let mut w = Walker::new(tree.proc());
    let scope = ProcScope {
        fast: true,
        ..ProcScope::default()
    };
    let mut t = crate::model::procs::Tracker::default();
    for (s, bytes) in [(0, 0), (2, 0), (4, 4096), (6, 4096)] {
        tree.set(42, 'S', 500, bytes);
        let walk = parse(w.maybe_walk(s * S, &scope).unwrap()).unwrap();
        t.update(&crate::parse::Snapshot {
            mono_ns: s * S,
            procs: Some(Arc::new(walk)),
            ..crate::parse::Snapshot::default()
        });
        let rows = t.rows().unwrap();
        match s {
            4 => assert_eq!(rows[0].dirtied_bytes_per_s, Some(2048.0)),
            _ => assert!(rows.is_empty(), "idle at {s} s: {rows:?}"),
        }
    }
}

#[test]
fn a_live_walk_parses_and_finds_this_process() {
    let mut w = Walker::new("/proc");
    let scope = ProcScope {
        fast: true,
        ..ProcScope::default()
    };
    let base = 1_000 * S;
    let first = parse(w.maybe_walk(base, &scope).unwrap()).unwrap();
    assert_eq!(first.clk_tck, rustix::param::clock_ticks_per_second());
    // Some reading in between moves this process's rchar.
    let _ = std::fs::read("/proc/self/status").unwrap();
    let second = parse(w.maybe_walk(base + 2 * S, &scope).unwrap()).unwrap();
    let me = std::process::id();
    let mine: Vec<_> = second.records.iter().filter(|r| r.pid == me).collect();
    assert_eq!(mine.len(), 2, "{:?}", records(&second));
    assert!(mine[0].carried && !mine[1].carried);
    assert!(mine[1].cgroup.is_some() || !std::path::Path::new("/sys/fs/cgroup").exists());
}

#[test]
fn kernel_stack_says_why_not() {
    let gone = kernel_stack(Path::new("/proc"), u32::MAX).unwrap_err();
    assert!(gone.contains("gone"), "{gone}");
    let mine = kernel_stack(Path::new("/proc"), std::process::id());
    if rustix::process::geteuid().is_root() {
        assert!(mine.is_ok(), "{mine:?}");
    } else {
        assert!(mine.unwrap_err().contains("root"));
    }
}
