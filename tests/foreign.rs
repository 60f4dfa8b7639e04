//! Pairing with a real fio that pagewatch did not start (skipped with a reason when fio is not
//! installed): it is found by name with its exact command line and target file, its workers are
//! grouped under it, its read rate is positive, and its file shows up in the page cache.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pagewatch::jobs::cachestat::cached_pages;
use pagewatch::jobs::foreign::{FioPairing, ForeignFio, scan, scan_pids};
use pagewatch::parse::procs::parse;
use pagewatch::sample::ProcScope;
use pagewatch::source::procs::Walker;

const MIB: f64 = 1_048_576.0;

fn ours<'a>(runs: &'a [ForeignFio], file: &Path) -> Option<&'a ForeignFio> {
    runs.iter()
        .find(|r| r.files().iter().any(|f| f.path == file))
}

#[test]
fn finds_a_foreign_fio_and_measures_it() {
    if Command::new("fio").arg("--version").output().is_err() {
        println!("skipped: fio is not installed");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("f");
    let mut fio = Command::new("fio")
        .args([
            "--name=t",
            &format!("--filename={}", file.display()),
            "--size=32M",
            "--rw=randread",
            "--bs=8k",
            "--time_based",
            "--runtime=3",
            "--invalidate=0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let fio_pid = fio.id();

    let mut pairing = FioPairing::default();
    let t0 = Instant::now();
    let mut best_rchar = 0.0f64;
    let mut seen = None;
    let mut cache = None;
    let mut walked = None;
    // Until it has read for a while (fio lays the file out first), or fio's 3 s are long over.
    while t0.elapsed() < Duration::from_secs(8) && cache.is_none() {
        let runs = scan(Path::new("/proc"), &BTreeSet::new());
        let mono = t0.elapsed().as_nanos() as u64;
        let rates = pairing.update(&runs, mono);
        if let Some(run) = ours(&runs, &file) {
            let r = rates.iter().find(|r| r.pid == run.pid).unwrap();
            if let Some(t) = r.total {
                best_rchar = best_rchar.max(t.rchar_s);
                println!(
                    "{:.1}s rchar {:.1} MiB/s read_bytes {:.1} MiB/s",
                    mono as f64 / 1e9,
                    t.rchar_s / MIB,
                    t.read_bytes_s / MIB
                );
                // Reading for a second: take the cache figure while it still runs.
                if t.rchar_s > MIB && seen.is_some() && t0.elapsed() > Duration::from_secs(2) {
                    cache = Some(cached_pages(&file));
                    // The screen's way while the process walk runs: the walk's fio pids.
                    let mut procs = Walker::new("/proc");
                    let text = procs.maybe_walk(1, &ProcScope::default()).unwrap();
                    let fio = parse(text).unwrap().fio;
                    let runs = scan_pids(Path::new("/proc"), fio, &BTreeSet::new());
                    walked = ours(&runs, &file).cloned();
                }
            }
            seen = Some(run.clone());
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let excluded = scan(Path::new("/proc"), &BTreeSet::from([fio_pid]));
    // SIGINT is fio's clean stop: the main process ends and reaps its workers. SIGKILL would
    // orphan the worker.
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&fio),
        rustix::process::Signal::INT,
    )
    .unwrap();
    fio.wait().unwrap();
    let pids: Vec<u32> = seen
        .iter()
        .flat_map(|r| r.procs.iter().map(|p| p.pid))
        .collect();
    assert!(!pids.is_empty(), "our fio was never found");
    for p in &pids {
        assert!(
            !Path::new(&format!("/proc/{p}")).exists(),
            "fio process {p} outlived the test"
        );
    }

    let run = seen.expect("our fio was never found");
    println!(
        "fio {} ({} processes) {:?}: rchar {:.1} MiB/s; cache {cache:?}",
        run.pid,
        run.procs.len(),
        run.cmdline,
        best_rchar / MIB
    );
    assert_eq!(run.pid, fio_pid);
    assert_eq!(run.cmdline[0], "fio");
    assert!(run.cmdline.contains(&"--rw=randread".to_owned()));
    // fio forks one worker per job: the main process plus one.
    assert_eq!(run.procs.len(), 2, "{run:?}");
    assert_eq!(run.procs[1].ppid, fio_pid);
    // randread of a cached 32 MiB file: far more than 1 MiB/s of read() calls.
    assert!(best_rchar > MIB, "{best_rchar}");
    let cache = cache.expect("never read at 1 MiB/s for 2 s").unwrap();
    assert_eq!(
        cache.pages_total,
        (32 << 20) / rustix::param::page_size() as u64
    );
    // invalidate=0, laid out and then read at random for 2 s: most of it is cached.
    assert!(cache.pages_cached * 2 >= cache.pages_total, "{cache:?}");
    assert!(ours(&excluded, &file).is_none(), "exclude did not apply");
    let walked = walked.expect("the walk's fio pids did not lead to our fio");
    assert_eq!((walked.pid, &walked.cmdline), (run.pid, &run.cmdline));
    assert_eq!(walked.procs.len(), 2, "{walked:?}");
}

/// CPU time of this thread, ns (`/proc/thread-self/schedstat`, first field).
fn thread_cpu_ns() -> u64 {
    let t = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    t.split_whitespace().next().unwrap().parse().unwrap()
}

/// The cost of one foreign-fio scan in CPU time: by every process's comm, and from a walk's
/// fio pids (what the screen does while the walk covers every process; the walk itself is
/// paid for the processes view):
/// `PW_SLEEPERS=1000 cargo test --release --test foreign scan_cost -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, run by hand"]
fn scan_cost() {
    let n: usize = std::env::var("PW_SLEEPERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut kids: Vec<std::process::Child> = (0..n)
        .map(|_| Command::new("sleep").arg("600").spawn().unwrap())
        .collect();
    let none = BTreeSet::new();
    let rounds = 20u32;
    let t0 = thread_cpu_ns();
    for _ in 0..rounds {
        std::hint::black_box(scan(Path::new("/proc"), &none));
    }
    let by_comm = thread_cpu_ns() - t0;
    let mut procs = Walker::new("/proc");
    let fio = parse(procs.maybe_walk(1, &ProcScope::default()).unwrap())
        .unwrap()
        .fio;
    let t0 = thread_cpu_ns();
    for _ in 0..rounds {
        std::hint::black_box(scan_pids(Path::new("/proc"), fio.iter().copied(), &none));
    }
    let from_walk = thread_cpu_ns() - t0;
    for k in &mut kids {
        let _ = k.kill();
        let _ = k.wait();
    }
    println!(
        "{} sleepers, {} fio: by comm {:.0} µs a scan, from the walk {:.0} µs a scan",
        n,
        fio.len(),
        by_comm as f64 / f64::from(rounds) / 1e3,
        from_walk as f64 / f64::from(rounds) / 1e3
    );
}
