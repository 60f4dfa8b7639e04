use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::*;
use crate::parse::procs::tests::stat_line;
use crate::parse::procs::{ProcIo, Walk, parse};
use crate::sample::{Wants, names};
use crate::source::procs_visit::{Extra, Fds};
use crate::source::{Clock, FsSource, Source};

/// A clock the test moves.
struct TestClock(Arc<AtomicU64>);

impl Clock for TestClock {
    fn mono_ns(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
    fn wall_ms(&self) -> i64 {
        i64::try_from(self.mono_ns() / 1_000_000).unwrap()
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

/// A walker over the fake tree, on a boot clock equal to the monotonic one.
fn fake_walker(tree: &Tree) -> Walker {
    let mut w = Walker::new(tree.proc());
    w.boot_minus_mono = || 0;
    w
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
            pace: Pace::Attribute,
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
    // A first walk is followed by one a second later; then one on each multiple of the
    // period by the wall clock (here the monotonic one): 105 s, not 106.
    now.store(101 * S, Ordering::SeqCst);
    let second = parse(src.read().unwrap().file(names::PROCS).unwrap()).unwrap();
    assert_eq!(second.prev_mono_ns, Some(100 * S));
    now.store(102 * S, Ordering::SeqCst);
    assert_eq!(src.read().unwrap().file(names::PROCS), None, "not on 5 s");
    now.store(105 * S, Ordering::SeqCst);
    let third = parse(src.read().unwrap().file(names::PROCS).unwrap()).unwrap();
    assert_eq!(third.prev_mono_ns, Some(101 * S));
    now.store(106 * S, Ordering::SeqCst);
    assert_eq!(
        src.read().unwrap().file(names::PROCS),
        None,
        "1 s later: no walk"
    );
    src.want(&Wants::default());
    now.store(110 * S, Ordering::SeqCst);
    assert_eq!(src.read().unwrap().file(names::PROCS), None, "turned off");
    src.want(&Wants {
        procs: Some(ProcScope {
            pace: Pace::Attribute,
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
fn a_v1_memory_cgroup_is_the_processes_cgroup() {
    // A hybrid host (this development VM): controllers on v1, systemd's tree on v2. The
    // memory hierarchy's group is the one whose limit reclaims the page cache (a dd in a
    // 256 MB v1 memcg read "/" here, its v2 path).
    let tree = Tree::new();
    tree.set(42, 'D', 500, 0);
    let d = tree.proc().join("42");
    std::fs::write(
        d.join("cgroup"),
        "12:pids:/user.slice\n5:cpu,memory:/pwtest\n1:name=systemd:/user.slice\n0::/\n",
    )
    .unwrap();
    tree.set(43, 'D', 600, 0);
    std::fs::write(
        tree.proc().join("43/cgroup"),
        "5:memory:/\n0::/user.slice/a:b\n",
    )
    .unwrap();
    let mut w = fake_walker(&tree);
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    let text = w.maybe_walk(0, &scope).unwrap();
    assert!(text.contains("\nmemcg_v1 /pwtest\n"), "{text}");
    let walk = parse(text).unwrap();
    let cgroup = |pid| {
        walk.records
            .iter()
            .find(|r| r.pid == pid)
            .and_then(|r| r.cgroup.clone())
    };
    assert_eq!(cgroup(42).as_deref(), Some("memory:/pwtest"));
    assert_eq!(cgroup(43).as_deref(), Some("memory:/"));
    // Memory on v2 (the default tree above): the v2 path, as before.
    std::fs::write(d.join("cgroup"), "3:cpu:/x\n0::/box\n").unwrap();
    let mut w = fake_walker(&tree);
    let walk = parse(w.maybe_walk(0, &scope).unwrap()).unwrap();
    let r = walk.records.iter().find(|r| r.pid == 42).unwrap();
    assert_eq!(r.cgroup.as_deref(), Some("/box"));
}

#[test]
fn only_active_processes_are_written_with_their_previous_reading() {
    let tree = Tree::new();
    tree.set(42, 'S', 500, 0); // idle, then writes from walk 3
    tree.set(43, 'S', 600, 0); // idle throughout
    let mut w = fake_walker(&tree);
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    let walk_at = |w: &mut Walker, s: u64| parse(w.maybe_walk(s * S, &scope).unwrap()).unwrap();
    assert!(
        records(&walk_at(&mut w, 0)).is_empty(),
        "first sight, not in D"
    );
    let idle = walk_at(&mut w, 5);
    assert!(records(&idle).is_empty(), "idle");
    assert_eq!(
        idle.own_pid, None,
        "a captured tree's walk names no pagewatch"
    );
    tree.set(42, 'S', 500, 4096);
    let third = walk_at(&mut w, 10);
    assert_eq!(records(&third), [('p', 42), ('P', 42)]);
    assert!(matches!(third.records[0].io, ProcIo::Counters(c) if c.write_bytes == 0));
    tree.set(42, 'S', 500, 8192);
    assert_eq!(
        records(&walk_at(&mut w, 15)),
        [('P', 42)],
        "walk 3 has its reading"
    );
    // Pid 42 reused by a process that started before the previous walk (15 s) and writes:
    // first sight again, no previous reading, not written (its counters span its life).
    tree.set(42, 'S', 550, 1 << 20);
    assert!(records(&walk_at(&mut w, 20)).is_empty());
    // A process gone: nothing, and no error.
    std::fs::remove_dir_all(tree.proc().join("43")).unwrap();
    tree.set(42, 'S', 550, 2 << 20);
    assert_eq!(records(&walk_at(&mut w, 25)), [('p', 42), ('P', 42)]);
}

#[test]
fn a_process_born_since_the_previous_walk_is_written_at_first_sight_when_it_did_io() {
    let tree = Tree::new();
    let mut w = fake_walker(&tree);
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    let walk_at = |w: &mut Walker, s: u64| parse(w.maybe_walk(s * S, &scope).unwrap()).unwrap();
    // Born before the first walk: a first walk rates nothing, so writes nothing.
    tree.set(40, 'S', 50, 1 << 20);
    let first = walk_at(&mut w, 1);
    assert!(records(&first).is_empty());
    assert_eq!(first.boot_ns, Some(S), "boot = mono here");
    // Born at 2.5 s and 2.6 s (ticks of 10 ms), after the walk at 1 s: the writer is
    // written, alone (no previous reading to carry); the idle one is not.
    tree.set(41, 'S', 250, 3 << 20);
    let args = format!("dd\0if=/dev/zero\0of=/x\ny\0{}\0", "a".repeat(300));
    std::fs::write(tree.proc().join("41/cmdline"), args).unwrap();
    tree.set(42, 'S', 260, 0);
    let second = walk_at(&mut w, 5);
    assert_eq!(records(&second), [('P', 41)]);
    let cmdline = second.records[0].cmdline.as_deref().unwrap();
    assert!(
        cmdline.starts_with("dd if=/dev/zero of=/x?y aaa"),
        "{cmdline}"
    );
    assert_eq!(
        cmdline.len(),
        super::super::procs_visit::CMDLINE_MAX,
        "capped"
    );
    // Born exactly at the previous walk's tick (5 s) counts as after it. Pid 41 written
    // again: its command line was in the previous walk's file, so it is left out.
    tree.set(43, 'S', 500, 4096);
    tree.set(41, 'S', 250, 4 << 20);
    let third = walk_at(&mut w, 10);
    assert_eq!(records(&third), [('P', 41), ('P', 43)]);
    assert_eq!(third.records[0].cmdline, None);
    // Idle at 15 s, writing at 20 s: written afresh, with its command line.
    walk_at(&mut w, 15);
    tree.set(41, 'S', 250, 5 << 20);
    let fifth = walk_at(&mut w, 20);
    assert_eq!(records(&fifth), [('p', 41), ('P', 41)]);
    assert!(fifth.records[1].cmdline.is_some());
}

#[test]
fn the_recording_gives_the_same_rates_as_every_process_would() {
    // Rates from the active-only walks equal the hand-computed ones: 4096 bytes over 5 s.
    let tree = Tree::new();
    tree.set(42, 'S', 500, 0);
    let mut w = fake_walker(&tree);
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    let mut t = crate::model::procs::Tracker::default();
    for (s, bytes) in [(0, 0), (5, 0), (10, 4096), (15, 4096)] {
        tree.set(42, 'S', 500, bytes);
        let walk = parse(w.maybe_walk(s * S, &scope).unwrap()).unwrap();
        t.update(&crate::parse::Snapshot {
            mono_ns: s * S,
            procs: Some(Arc::new(walk)),
            ..crate::parse::Snapshot::default()
        });
        let rows = t.rows().unwrap();
        match s {
            10 => assert_eq!(rows[0].dirtied_bytes_per_s, Some(4096.0 / 5.0)),
            _ => assert!(rows.is_empty(), "idle at {s} s: {rows:?}"),
        }
    }
}

#[test]
fn a_live_walk_parses_and_finds_this_process() {
    let mut w = Walker::new("/proc");
    let scope = ProcScope {
        pace: Pace::Attribute,
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
    // It names itself: the story never makes pagewatch its own victim.
    assert_eq!((first.own_pid, second.own_pid), (Some(me), Some(me)));
}

/// Issue 27: a process written walk after walk keeps the fds of its extra files (wchan,
/// statm, cgroup; status and oom_score_adj as a memory candidate): the third walk reads them
/// through the fds the second opened, and says what a fresh read says.
#[test]
fn a_process_written_again_reads_its_extras_through_the_fds_it_kept() {
    let mut w = Walker::new("/proc");
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    let me = std::process::id();
    let kept = |w: &Walker| {
        w.seen
            .get(&me)
            .and_then(|s| s.fds.as_ref())
            .map(Fds::extra_fds)
            .unwrap_or_default()
    };
    let base = 1_000 * S;
    w.maybe_walk(base, &scope).unwrap();
    // Reading moves this process's rchar: it is written at each of the next walks.
    let _ = std::fs::read("/proc/self/status").unwrap();
    let second = parse(w.maybe_walk(base + 5 * S, &scope).unwrap()).unwrap();
    let opened = kept(&w);
    for x in [Extra::Wchan, Extra::Statm, Extra::Cgroup] {
        assert!(
            opened.iter().any(|(y, _)| *y == x),
            "{x:?} not kept: {opened:?}"
        );
    }
    let candidate = second.memory.iter().any(|m| m.pid == me);
    if candidate {
        assert!(
            opened.iter().any(|(y, _)| *y == Extra::Status),
            "{opened:?}"
        );
    }
    let _ = std::fs::read("/proc/self/status").unwrap();
    let third = parse(w.maybe_walk(base + 10 * S, &scope).unwrap()).unwrap();
    // The same fds, not reopened (a memory candidate since, it opens status and oom too).
    let now = kept(&w);
    assert!(opened.iter().all(|fd| now.contains(fd)), "{now:?}");
    // The count of held fds is the fds the walker holds, each once. (Not a bound on its
    // growth: the walk holds the fds of every process, and other tests of this binary, or
    // the machine, start processes between two walks; `held + 3 + added` failed 2 runs in 4
    // beside them.)
    let counted: usize = w
        .seen
        .values()
        .filter_map(|s| s.fds.as_ref())
        .map(Fds::count)
        .sum();
    assert_eq!(w.fds_held().0, counted, "held fds counted once");
    let mine = third
        .records
        .iter()
        .find(|r| r.pid == me && !r.carried)
        .expect("written at the third walk");
    // The v1 memory hierarchy's group where memory is on v1 (this development VM), else the
    // v2 path.
    let fresh = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let v1 = fresh.lines().find_map(|l| {
        let f: Vec<&str> = l.splitn(3, ':').collect();
        (f.len() == 3 && f[0] != "0" && f[1].split(',').any(|c| c == "memory"))
            .then(|| format!("memory:{}", f[2]))
    });
    let fresh = v1.or_else(|| {
        fresh
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .map(str::to_owned)
    });
    assert_eq!(mine.cgroup, fresh);
    let (resident, _) = mine.statm.expect("statm read through its kept fd");
    assert!(resident > 0);
    if candidate && let Some(m) = third.memory.iter().find(|m| m.pid == me) {
        assert!(m.vm_rss_kb.is_some_and(|kb| kb > 0), "{m:?}");
        let adj = std::fs::read_to_string("/proc/self/oom_score_adj").unwrap();
        assert_eq!(m.oom_score_adj, adj.trim().parse().ok());
    }
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

/// The pids `fd_limit_child` must find, space-separated; set by
/// `a_walk_keeps_within_a_lowered_fd_limit`, which runs it under `prlimit`.
const SLEEPERS_ENV: &str = "PW_FD_TEST_SLEEPERS";
/// The fd limit (soft = hard) of that run: the walker cannot raise it. Under the old budget
/// ((limit − 1,024) / 2 processes, each holding three fds) the walk ran out of fds from about
/// 1,070 processes at this limit.
const FD_LIMIT: u64 = 3_200;

/// `sleep` children, killed on drop (also when an assert fails).
struct Sleepers(Vec<std::process::Child>);

impl Drop for Sleepers {
    fn drop(&mut self) {
        for k in &mut self.0 {
            let _ = k.kill();
            let _ = k.wait();
        }
    }
}

/// Issue #22 item 7: with 1,200 `sleep` processes and RLIMIT_NOFILE 3,200 (hard), every
/// process is seen at every walk, the fds held stay within the budget with the reserve left
/// free for the sampler's own opens, and a walk that cannot list /proc (fds exhausted by
/// someone else) drops nothing that is held.
#[test]
fn a_walk_keeps_within_a_lowered_fd_limit() {
    use std::process::{Command, Stdio};
    if Command::new("prlimit").arg("--version").output().is_err() {
        println!("skipped: no prlimit");
        return;
    }
    let mut kids = Sleepers(Vec::new());
    for _ in 0..1_200 {
        let k = Command::new("sleep")
            .arg("300")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        kids.0.push(k);
    }
    let pids: Vec<String> = kids.0.iter().map(|k| k.id().to_string()).collect();
    let out = Command::new("prlimit")
        .arg(format!("--nofile={FD_LIMIT}:{FD_LIMIT}"))
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "source::procs::tests::fd_limit_child",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SLEEPERS_ENV, pids.join(" "))
        .output()
        .unwrap();
    drop(kids);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran no test: {text}");
}

/// Entries of /proc/self/fd (the read_dir's own fd included).
fn fds_open() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// The walks of `a_walk_keeps_within_a_lowered_fd_limit`, in a child run under `prlimit`.
#[test]
#[ignore = "run under prlimit by a_walk_keeps_within_a_lowered_fd_limit"]
fn fd_limit_child() {
    use rustix::process::{Resource, getrlimit};
    let sleepers: Vec<u32> = std::env::var(SLEEPERS_ENV)
        .expect("run by a_walk_keeps_within_a_lowered_fd_limit")
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let limit = getrlimit(Resource::Nofile).current.unwrap();
    assert_eq!(limit, FD_LIMIT);
    let reserve = RESERVE_FDS.min(limit / 2) as usize;
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    let mut w = Walker::new("/proc");
    let check = |w: &Walker, at: &str| {
        let missing = sleepers.iter().filter(|p| !w.seen.contains_key(p)).count();
        assert_eq!(
            missing,
            0,
            "{at}: {missing} of {} sleepers not seen",
            sleepers.len()
        );
        let (held, budget) = w.fds_held();
        let budget = budget.unwrap();
        assert!(held <= budget, "{at}: {held} fds held, budget {budget}");
        assert!(held > 0, "{at}: procfs walks hold fds");
        let open = fds_open();
        assert!(
            open + reserve <= limit as usize,
            "{at}: {open} fds open, the reserve of {reserve} is not free"
        );
        // The sampler's own opens: all but a few of the reserve at once.
        let files: std::io::Result<Vec<File>> = (0..reserve - 16)
            .map(|_| File::open("/proc/self/stat"))
            .collect();
        if let Err(e) = files {
            panic!("{at}: the sampler's opens fail: {e}");
        }
        held
    };
    let mut t = 1_000 * S;
    let mut walk = |w: &mut Walker| {
        t += 5 * S;
        parse(w.maybe_walk(t, &scope).unwrap()).unwrap()
    };
    walk(&mut w);
    check(&w, "walk 1");
    let second = walk(&mut w);
    let held = check(&w, "walk 2");
    let kept = held_stat_fds(&w, &sleepers);
    assert!(!kept.is_empty(), "no sleeper holds fds");
    // Someone else takes every fd left: the next walk cannot list /proc.
    let mut hog = Vec::new();
    while let Ok(f) = File::open("/proc/self/stat") {
        hog.push(f);
    }
    let failed = walk(&mut w);
    assert!(failed.scope_error.is_some() && failed.records.is_empty());
    assert_eq!(w.fds_held().0, held, "a failed walk dropped held fds");
    assert!(
        w.seen.len() >= sleepers.len(),
        "a failed walk forgot processes"
    );
    drop(hog);
    let fourth = walk(&mut w);
    assert_eq!(
        fourth.prev_mono_ns,
        Some(second.mono_ns),
        "prev is the last walk that listed"
    );
    check(&w, "walk 4");
    // Room freed by processes that ended may let more sleepers hold fds now; those held
    // before keep the very same fds.
    let now = held_stat_fds(&w, &sleepers);
    let lost = kept.iter().filter(|k| !now.contains(k)).count();
    assert_eq!(
        lost, 0,
        "{lost} sleepers' held fds were dropped or reopened"
    );
}

/// The sleepers that hold fds, with their stat fd's number.
fn held_stat_fds(w: &Walker, sleepers: &[u32]) -> Vec<(u32, i32)> {
    sleepers
        .iter()
        .filter_map(|p| Some((*p, w.seen.get(p)?.fds.as_ref()?.stat_fd())))
        .collect()
}

/// Issue #22: as non-root, another user's process is kept on its stat. Its io is denied at
/// both walks and field 42 is 0 (delay accounting off), so CPU time and major faults are
/// what show it busy; a readable process is still kept on its io and field 42 only.
#[test]
fn another_users_busy_process_is_kept_on_its_stat() {
    use super::super::procs_visit::{Io, Marks, moved};
    let denied = Io::Denied(3);
    let text = Io::Text("rchar: 1\n".into());
    let at = |io, cpu, majflt| Marks {
        io,
        blkio: Some(0),
        cpu,
        majflt,
    };
    assert!(moved(at(&denied, 100, 5), at(&denied, 180, 5)), "CPU time");
    assert!(
        moved(at(&denied, 100, 5), at(&denied, 100, 9)),
        "major faults"
    );
    assert!(!moved(at(&denied, 100, 5), at(&denied, 100, 5)), "idle");
    assert!(
        !moved(at(&text, 100, 5), at(&text, 180, 9)),
        "readable io that did not move: idle for IO, however busy the CPU"
    );
    let more = Io::Text("rchar: 2\n".into());
    assert!(moved(at(&text, 100, 5), at(&more, 100, 5)), "io moved");
}

/// The walk names the fio processes among all it saw, idle ones included, so the foreign-fio
/// scan needs no comm of its own (issue #27).
#[test]
fn the_walk_names_its_fio_processes() {
    let tree = Tree::new();
    tree.set(42, 'S', 500, 0);
    for pid in [50, 51] {
        tree.set(pid, 'S', 700, 0);
        let stat = stat_line(pid, "fio", 'S', 1, 700, 0) + "\n";
        std::fs::write(tree.proc().join(pid.to_string()).join("stat"), stat).unwrap();
    }
    let mut w = fake_walker(&tree);
    let scope = ProcScope::default();
    let first = parse(w.maybe_walk(0, &scope).unwrap()).unwrap();
    assert_eq!((first.fio, first.records.len()), (vec![50, 51], 0));
    std::fs::remove_dir_all(tree.proc().join("50")).unwrap();
    let second = parse(w.maybe_walk(5 * S, &scope).unwrap()).unwrap();
    assert_eq!(second.fio, [51]);
    std::fs::remove_dir_all(tree.proc().join("51")).unwrap();
    let third = w.maybe_walk(10 * S, &scope).unwrap();
    assert!(!third.contains("\nfio"), "no fio line without fio: {third}");
}

/// Sets process `pid`'s stat rss (field 24, pages) and its status and oom_score_adj files.
fn set_memory(t: &Tree, pid: u32, state: char, rss: u64) {
    let d = t.proc().join(pid.to_string());
    let line = stat_line(pid, "w", state, 1, 10, 0);
    let (head, rest) = line.split_once(") ").unwrap();
    let mut f: Vec<String> = rest.split(' ').map(str::to_owned).collect();
    f[24 - 3] = rss.to_string();
    std::fs::write(d.join("stat"), format!("{head}) {}\n", f.join(" "))).unwrap();
    let kb = rss * 4;
    let status = format!(
        "Name:\tw\nVmPeak:\t 9 kB\nVmRSS:\t {kb} kB\nRssAnon:\t {kb} kB\nRssFile:\t 0 kB\n\
         RssShmem:\t 0 kB\nVmSwap:\t 4 kB\nThreads:\t1\n"
    );
    std::fs::write(d.join("status"), status).unwrap();
    std::fs::write(d.join("oom_score_adj"), "-500\n").unwrap();
}

#[test]
fn the_largest_by_rss_and_those_in_d_state_get_memory_records() {
    use crate::source::procs_memory::MEM_TOP;
    let t = Tree::new();
    let n = MEM_TOP as u32 + 5;
    for pid in 1..=n {
        t.set(pid, 'S', 10, 0);
        set_memory(&t, pid, 'S', u64::from(pid) * 100);
    }
    // A small process stalled in D state is written too, beyond the top.
    set_memory(&t, 1, 'D', 1);
    let mut w = Walker::new(t.proc());
    let scope = ProcScope::default();
    let first = parse(w.maybe_walk(1_000 * S, &scope).unwrap()).unwrap();
    let pids: Vec<u32> = first.memory.iter().map(|r| r.pid).collect();
    assert_eq!(pids.len(), MEM_TOP + 1, "{pids:?}");
    assert_eq!(pids[0], n, "the largest first");
    assert!(pids.contains(&1), "the D-state task: {pids:?}");
    assert!(!pids.contains(&2), "small and asleep: left out");
    let top = &first.memory[0];
    assert_eq!(top.before, None, "a first walk has no previous reading");
    assert_eq!(
        (
            top.vm_rss_kb,
            top.rss_anon_kb,
            top.vm_swap_kb,
            top.oom_score_adj
        ),
        (
            Some(u64::from(n) * 400),
            Some(u64::from(n) * 400),
            Some(4),
            Some(-500)
        )
    );
    assert_eq!(first.page_size, Some(rustix::param::page_size() as u64));
    // The largest grows: the next walk carries its previous rss.
    set_memory(&t, n, 'S', u64::from(n) * 200);
    let second = parse(w.maybe_walk(1_005 * S, &scope).unwrap()).unwrap();
    let top = &second.memory[0];
    assert_eq!((top.pid, top.stat.rss_pages), (n, u64::from(n) * 200));
    assert_eq!(top.before, Some((u64::from(n) * 100, 0)));
}

#[path = "procs_pace_tests.rs"]
mod pace;
