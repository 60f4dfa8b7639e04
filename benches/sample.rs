//! Cost of one sample: parse + derive in userspace (4, 100 and 1000 devices) against the
//! kernel's cost of producing the files (the open/read/close syscalls alone), the same files
//! kept open and re-read with `pread` (what `FsSource` does on procfs), and one whole
//! `FsSource::read` of this machine (every per-tick file, plus the slow refresh one time in
//! `SLOW_REFRESH_TICKS`),
//! and `parse_file/*`: each of our parsers alone on this machine's text.
//!
//! Budget (issue #2): userspace ≤ 50 % of the kernel's cost, linear in the device count.
//! Run: `cargo bench --bench sample`.

#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::fmt::Write;
use std::hint::black_box;
use std::io::Read;
use std::os::unix::fs::FileExt;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pagewatch::model::{Model, Options};
use pagewatch::parse::Snapshot;
use pagewatch::sample::{RawSample, names};
use pagewatch::source::FsSource;

/// The core files the kernel formats on every tick.
const CORE: [&str; 8] = [
    "/proc/meminfo",
    "/proc/vmstat",
    "/proc/diskstats",
    "/proc/zoneinfo",
    "/proc/stat",
    "/proc/pressure/cpu",
    "/proc/pressure/memory",
    "/proc/pressure/io",
];

/// A diskstats text with `n` devices in the 20-field format, advanced by `tick`.
fn diskstats(n: usize, tick: u64) -> String {
    let mut s = String::new();
    for i in 0..n {
        let b = 1_000_000 + i as u64 * 7 + tick * 150;
        let _ = writeln!(
            s,
            "{:4} {:7} sd{} {} {} {} {} {} {} {} {} 0 {} {} {} {} {} {} {} {}",
            8,
            i * 16,
            i,
            b,
            b / 10,
            b * 8,
            b * 2,
            b,
            b / 5,
            b * 16,
            b * 3,
            b / 2,
            b * 4,
            b / 100,
            0,
            b,
            b / 3,
            b / 50,
            b / 20
        );
    }
    s
}

/// Two consecutive samples of this machine with `n` synthetic devices, 1 s apart.
fn pair(n: usize) -> (RawSample, RawSample) {
    let mut a = FsSource::live().read().expect("read /proc");
    let mut b = a.clone();
    a.files.insert(names::DISKSTATS.into(), diskstats(n, 0));
    b.files.insert(names::DISKSTATS.into(), diskstats(n, 1));
    b.mono_ns = a.mono_ns + 1_000_000_000;
    (a, b)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sample");
    let mut buf = Vec::with_capacity(256 * 1024);
    g.bench_function("kernel_read_core_files", |bch| {
        bch.iter(|| {
            for p in CORE {
                buf.clear();
                if let Ok(mut f) = std::fs::File::open(p) {
                    let _ = f.read_to_end(&mut buf);
                }
                black_box(&buf);
            }
        });
    });
    // The same files kept open and re-read from offset 0, as `FsSource` does on procfs.
    let held: Vec<std::fs::File> = CORE
        .iter()
        .filter_map(|p| std::fs::File::open(p).ok())
        .collect();
    let mut big = vec![0u8; 256 * 1024];
    g.bench_function("kernel_pread_core_files_held", |bch| {
        bch.iter(|| {
            for f in &held {
                let mut n = 0;
                while let Ok(k) = f.read_at(&mut big[n..], n as u64) {
                    if k == 0 {
                        break;
                    }
                    n += k;
                }
                black_box(&big[..n]);
            }
        });
    });
    let mut live = FsSource::live();
    g.bench_function("fs_source_read_live", |bch| {
        bch.iter(|| black_box(live.read().expect("read /proc")));
    });
    for n in [4usize, 100, 1000] {
        let (a, b) = pair(n);
        let prev = Snapshot::parse(&a).expect("parse");
        g.bench_with_input(BenchmarkId::new("parse_derive", n), &b, |bch, b| {
            bch.iter(|| {
                let cur = Snapshot::parse(black_box(b)).expect("parse");
                black_box(Model::derive(Some(&prev), &cur, Options::default()))
            });
        });
    }
    // What the app does per tick: `Parser` skips zoneinfo and the block-device text, which
    // repeat between the source's slow refreshes; diskstats changes every call here (a and b
    // alternate), as on a machine doing IO.
    let (a, b) = pair(4);
    let prev = Snapshot::parse(&a).expect("parse");
    let mut parser = pagewatch::parse::Parser::new();
    let mut flip = false;
    g.bench_function("parser_derive/4", |bch| {
        bch.iter(|| {
            flip = !flip;
            let raw = if flip { &a } else { &b };
            let cur = parser.parse(black_box(raw)).expect("parse");
            black_box(Model::derive(Some(&prev), &cur, Options::default()))
        });
    });
    g.finish();
    // Each parser alone on this machine's text, to see where parse time goes.
    let (_, b) = pair(4);
    let mut g = c.benchmark_group("parse_file");
    let file = |name: &str| b.file(name).expect("file").to_owned();
    let (mem, vm, zone, disk, stat) = (
        file(names::MEMINFO),
        file(names::VMSTAT),
        file(names::ZONEINFO),
        file(names::DISKSTATS),
        file(names::STAT),
    );
    g.bench_function("meminfo", |bch| {
        bch.iter(|| pagewatch::parse::meminfo::parse(black_box(&mem)));
    });
    g.bench_function("vmstat", |bch| {
        bch.iter(|| pagewatch::parse::vmstat::parse(black_box(&vm)));
    });
    g.bench_function("zoneinfo", |bch| {
        bch.iter(|| pagewatch::parse::zoneinfo::parse(black_box(&zone)));
    });
    g.bench_function("diskstats", |bch| {
        bch.iter(|| pagewatch::parse::diskstats::parse(black_box(&disk)));
    });
    g.bench_function("stat", |bch| {
        bch.iter(|| pagewatch::parse::stat::parse(black_box(&stat)));
    });
    g.bench_function("sysctl", |bch| {
        bch.iter(|| pagewatch::parse::sysctl::parse(black_box(&b)));
    });
    if let Some(q) = b.file(names::BLOCK_DEVICES) {
        g.bench_function("block_devices", |bch| {
            bch.iter(|| pagewatch::parse::queue::parse(black_box(q)));
        });
    }
    g.finish();
}

/// One scan of this machine's /proc for fio processes pagewatch did not start (the app runs
/// it only while something suggests a fio; see `App::scan_due`).
fn foreign_scan(c: &mut Criterion) {
    let none = std::collections::BTreeSet::new();
    c.bench_function("foreign_fio_scan", |b| {
        b.iter(|| {
            black_box(pagewatch::jobs::foreign::scan(
                std::path::Path::new("/proc"),
                &none,
            ))
        });
    });
}

/// One process walk of this machine (`source::procs::Walker`, spec §11): stat + io of every
/// process through held fds, plus wchan and cgroup of the active ones. Each iteration is one
/// walk (the walker is handed walk times a period apart). Divide by the process count printed
/// for µs per process; `PW_BENCH_SLEEPERS=1000` starts that many `sleep 600` first.
fn procs_walk(c: &mut Criterion) {
    use pagewatch::sample::{Pace, ProcScope};
    use pagewatch::source::procs::{WALK_PERIOD_NS, Walker};
    let sleepers: usize = std::env::var("PW_BENCH_SLEEPERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut kids: Vec<std::process::Child> = (0..sleepers)
        .filter_map(|_| std::process::Command::new("sleep").arg("600").spawn().ok())
        .collect();
    let count = std::fs::read_dir("/proc")
        .expect("list /proc")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .count();
    eprintln!("procs_walk: {count} processes ({} sleepers)", kids.len());
    let mut w = Walker::new("/proc");
    let scope = ProcScope {
        pace: Pace::Attribute,
        ..ProcScope::default()
    };
    let mut t = 0u64;
    c.bench_function(&format!("procs_walk/{count}"), |b| {
        b.iter(|| {
            t += WALK_PERIOD_NS;
            black_box(w.maybe_walk(t, &scope).map(str::len))
        });
    });
    for k in &mut kids {
        let _ = k.kill();
        let _ = k.wait();
    }
}

/// One whole frame at 160x48 from a captured tree: render into a buffer and diff it against
/// the previous frame, as the terminal does every second.
fn frame(c: &mut Criterion) {
    use pagewatch::app::{App, Look, Msg};
    use pagewatch::source::{HostInfo, Source, TreeSource};
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/trees/live-idle");
    let mut src = TreeSource::open(&dir).expect("tree");
    let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
    while let Some(s) = src.next_sample().expect("sample") {
        app.update(Msg::Sample(s));
    }
    let area = Rect::new(0, 0, 160, 48);
    let mut prev = Buffer::empty(area);
    pagewatch::ui::render(&app, area, &mut prev);
    let mut cur = Buffer::empty(area);
    c.bench_function("frame_160x48_render_diff", |b| {
        b.iter(|| {
            cur.reset();
            pagewatch::ui::render(&app, area, &mut cur);
            black_box(prev.diff(&cur).len())
        });
    });
}

/// What the TUI does per sample: `Screen::frame` repaints and compares only the drawing
/// operations that changed. Alternates between the app after the tree's last two samples, so
/// every frame follows a real sample-to-sample change (clock, figures, charts one column on).
fn screen_frames(c: &mut Criterion) {
    use pagewatch::app::{App, Look, Msg};
    use pagewatch::source::{HostInfo, Source, TreeSource};
    use pagewatch::ui::Screen;
    use ratatui::layout::Rect;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/trees/live-idle");
    let mut samples = Vec::new();
    let mut src = TreeSource::open(&dir).expect("tree");
    while let Some(s) = src.next_sample().expect("sample") {
        samples.push(s);
    }
    let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
    let mut b = App::new(HostInfo::default(), Look::default(), 1.0);
    for (i, s) in samples.iter().enumerate() {
        if i + 1 < samples.len() {
            a.update(Msg::Sample(s.clone()));
        }
        b.update(Msg::Sample(s.clone()));
    }
    let area = Rect::new(0, 0, 160, 48);
    let mut screen = Screen::new();
    c.bench_function("screen_160x48_two_samples", |bch| {
        bch.iter(|| {
            black_box(screen.frame(&a, area).len());
            black_box(screen.frame(&b, area).len())
        });
    });
}

/// The main thread's work per sample in steady state, on a real recorded session of an idle
/// machine (`assets/recordings/idle-150s.pwrec`): ingest the sample (parse, derive, history)
/// and draw the frame the terminal needs. Each iteration takes the next sample; at the end of
/// the recording the app starts over, and its first 60 samples (a warm-up that fills the
/// charts) are not timed. `PW_BENCH_INGEST_ONLY=1` times the ingest alone.
fn steady_ticks(c: &mut Criterion) {
    use pagewatch::app::{App, Look, Msg};
    use pagewatch::source::HostInfo;
    use pagewatch::ui::Screen;
    use ratatui::layout::Rect;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings/idle-150s.pwrec");
    let samples = pagewatch::record::read(&path).expect("recording").samples;
    let area = Rect::new(0, 0, 160, 48);
    let fresh = || {
        let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
        let mut screen = Screen::new();
        for s in &samples[..60] {
            app.update(Msg::Sample(s.clone()));
            screen.frame(&app, area);
        }
        (app, screen, 60)
    };
    let ingest_only = std::env::var_os("PW_BENCH_INGEST_ONLY").is_some();
    let (mut app, mut screen, mut next) = fresh();
    c.bench_function("tick_steady_idle_160x48", |bch| {
        bch.iter_custom(|iters| {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..iters {
                if next == samples.len() {
                    (app, screen, next) = fresh(); // not timed
                }
                let sample = samples[next].clone();
                next += 1;
                let t = std::time::Instant::now();
                app.update(Msg::Sample(sample));
                if ingest_only {
                    black_box(&app);
                } else {
                    black_box(screen.frame(&app, area).len());
                }
                spent += t.elapsed();
            }
            spent
        });
    });
}

/// Building the frame's canvas alone (`ui::canvas`: every pane's drawing operations), on the
/// same idle recording as `steady_ticks`: each iteration ingests the next sample (not timed)
/// and times the canvas of the app after it. The canvas is dropped outside the timing, as the
/// screen keeps it until the next frame.
fn canvas_steady(c: &mut Criterion) {
    use pagewatch::app::{App, Look, Msg};
    use pagewatch::source::HostInfo;
    use ratatui::layout::Rect;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings/idle-150s.pwrec");
    let samples = pagewatch::record::read(&path).expect("recording").samples;
    let area = Rect::new(0, 0, 160, 48);
    let fresh = || {
        let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
        for s in &samples[..60] {
            app.update(Msg::Sample(s.clone()));
        }
        (app, 60)
    };
    let (mut app, mut next) = fresh();
    c.bench_function("canvas_160x48", |bch| {
        bch.iter_custom(|iters| {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..iters {
                if next == samples.len() {
                    (app, next) = fresh(); // not timed
                }
                app.update(Msg::Sample(samples[next].clone()));
                next += 1;
                let t = std::time::Instant::now();
                let canvas = black_box(pagewatch::ui::canvas(&app, area));
                spent += t.elapsed();
                drop(canvas);
            }
            spent
        });
    });
}

/// The idle recording's samples as the live source hands them over: the recording predates
/// the live source's slow refresh, so zoneinfo is carried between refreshes
/// (`SLOW_REFRESH_TICKS`) here, as `FsSource` does live.
fn idle_samples_carried() -> Vec<RawSample> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings/idle-150s.pwrec");
    let mut samples = pagewatch::record::read(&path).expect("recording").samples;
    let mut zoneinfo = String::new();
    for (i, s) in samples.iter_mut().enumerate() {
        if i % pagewatch::source::SLOW_REFRESH_TICKS as usize == 0 {
            s.file(names::ZONEINFO)
                .unwrap_or_default()
                .clone_into(&mut zoneinfo);
        } else {
            s.files.insert(names::ZONEINFO.into(), zoneinfo.clone());
        }
    }
    samples
}

/// Evicts the caches and the TLB, as a second of other work does between two samples of the
/// running TUI: writes over `PW_BENCH_SWEEP_MB` (64) MiB, one byte a cache line.
struct Sweep(Vec<u8>);

impl Sweep {
    fn new() -> Self {
        let mb: usize = std::env::var("PW_BENCH_SWEEP_MB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64);
        Self(vec![1u8; mb << 20])
    }

    fn run(&mut self) {
        for k in (0..self.0.len()).step_by(64) {
            self.0[k] = self.0[k].wrapping_add(1);
        }
        black_box(&self.0);
    }
}

/// `samples` with `count` idle loop devices more in each diskstats, as `losetup` leaves them
/// after udev has read their first blocks (the same counters in every sample), and in the
/// queue settings (issue 52's 100 loop devices on files in /dev/shm,
/// `benches/issue52/loops100.sh`).
fn with_idle_loops(samples: &[RawSample], count: u32) -> Vec<RawSample> {
    use std::fmt::Write as _;
    let (mut lines, mut queues) = (String::new(), String::new());
    for n in 0..count {
        let _ = writeln!(
            lines,
            "   7 {n:>7} loop{n} 33 0 1138 12 0 0 0 0 0 24 12 0 0 0 0 0 0"
        );
        let _ = writeln!(
            queues,
            "loop{n}\t0\t[none]\t128\twrite back\t\t1\t\t\t\t\t\t\
             /dev/shm/pw-cost-loop-{n}.img\t0:{}\t0\t131072\t512",
            1000 + n
        );
    }
    // The settings as the live source hands them over: carried into every sample.
    let mut block = String::new();
    let mut out = samples.to_vec();
    for s in &mut out {
        if let Some(text) = s.files.get_mut(names::DISKSTATS) {
            text.push_str(&lines);
        }
        if let Some(text) = s.file(names::BLOCK_DEVICES) {
            block = format!("{text}{queues}");
        }
        if !block.is_empty() {
            s.files.insert(names::BLOCK_DEVICES.into(), block.clone());
        }
    }
    out
}

/// With the caches cold, as in the running TUI (`Sweep` before each timed sample):
/// `ingest_cold_idle` times the ingest alone (parse, derive, history), warm a third of this;
/// `tick_cold_idle_160x48` the ingest and the 160x48 frame the terminal needs, the sampler's
/// whole work per sample but for the reads and the write, and the closest of these benches
/// to what `tui_pty` measures; `tick_cold_idle_160x48_loops100` the same with 100 idle loop
/// devices in diskstats (`with_idle_loops`).
fn cold_ticks(c: &mut Criterion) {
    use pagewatch::app::{App, Look, Msg};
    use pagewatch::source::HostInfo;
    use pagewatch::ui::Screen;
    use ratatui::layout::Rect;
    let plain = idle_samples_carried();
    let loops = with_idle_loops(&plain, 100);
    let mut sweep = Sweep::new();
    let area = Rect::new(0, 0, 160, 48);
    for (name, draw, samples) in [
        ("ingest_cold_idle", false, &plain),
        ("tick_cold_idle_160x48", true, &plain),
        ("tick_cold_idle_160x48_loops100", true, &loops),
    ] {
        let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
        let mut screen = Screen::new();
        let mut next = 0;
        c.bench_function(name, |bch| {
            bch.iter_custom(|iters| {
                let mut spent = std::time::Duration::ZERO;
                for _ in 0..iters {
                    if next == samples.len() {
                        app = App::new(HostInfo::default(), Look::default(), 1.0);
                        screen = Screen::new();
                        next = 0;
                    }
                    let sample = samples[next].clone();
                    next += 1;
                    sweep.run();
                    let t = std::time::Instant::now();
                    app.update(Msg::Sample(sample));
                    if draw {
                        black_box(screen.frame(&app, area).len());
                    }
                    spent += t.elapsed();
                }
                spent
            });
        });
    }
}

criterion_group!(
    benches,
    bench,
    frame,
    screen_frames,
    steady_ticks,
    canvas_steady,
    cold_ticks,
    foreign_scan,
    procs_walk
);
criterion_main!(benches);
