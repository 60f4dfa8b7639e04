//! Real fio runs through `FioJob` (skipped, with a printed reason, when fio is not installed):
//! live figures, file reuse, refusals, stop, kill, and no fio left behind when the
//! process that started the guard is SIGKILLed. Files are ≤ 32 MiB in temporary directories.
#![allow(clippy::unwrap_used)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use pagewatch::jobs::fio::{FioDir, FioJob, FioSpec, FioUpdate, find_fio};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");

fn have_fio() -> bool {
    match find_fio() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// A directory on a real disk (/var/tmp, not a possible tmpfs /tmp).
fn disk_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("pagewatch-fio-test")
        .tempdir_in("/var/tmp")
        .unwrap()
}

fn start(spec: &str, dir: &mut FioDir) -> (FioJob, Receiver<FioUpdate>) {
    let (tx, rx) = channel();
    let tx = std::sync::Mutex::new(tx);
    let notify = Arc::new(move |u: FioUpdate| {
        let _ = tx.lock().unwrap().send(u);
    });
    let job = FioJob::start(Path::new(EXE), &FioSpec::parse(spec).unwrap(), dir, notify).unwrap();
    (job, rx)
}

/// Collects updates until the last one (Finished or Failed).
fn collect(rx: &Receiver<FioUpdate>, limit: Duration) -> Vec<FioUpdate> {
    let deadline = Instant::now() + limit;
    let mut all = Vec::new();
    while let Ok(u) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let last = matches!(u, FioUpdate::Finished { .. } | FioUpdate::Failed { .. });
        all.push(u);
        if last {
            return all;
        }
    }
    panic!("no final update within {limit:?}: {all:?}");
}

fn lives(all: &[FioUpdate]) -> Vec<&pagewatch::jobs::fio::FioLive> {
    all.iter()
        .filter_map(|u| {
            if let FioUpdate::Live(l) = u {
                Some(l)
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn randread_reports_live_figures_and_reuses_its_file() {
    if !have_fio() {
        return;
    }
    let tmp = disk_dir();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let (job, rx) = start("randread,size=32M,runtime=3", &mut dir);
    assert!(job.argv().contains(&"--readonly".to_string()));
    assert!(job.prepare_argv().is_some(), "a new file is laid out first");
    let all = collect(&rx, Duration::from_secs(60));
    assert!(
        matches!(all.first(), Some(FioUpdate::Preparing { .. })),
        "{:?}",
        all.first()
    );
    // The layout's fio is reported as ours before the job's (the foreign-fio scan leaves
    // out both; it once listed the layout as "fio N (not ours)").
    let layout = all
        .iter()
        .position(|u| matches!(u, FioUpdate::LayoutStarted { .. }));
    let job_start = all
        .iter()
        .position(|u| matches!(u, FioUpdate::Started { .. }));
    assert!(
        matches!((layout, job_start), (Some(l), Some(s)) if l < s),
        "{all:?}"
    );
    let live = lives(&all);
    assert!(live.len() >= 2, "{all:?}");
    assert!(live.iter().all(|l| l.jobs[0].read.iops > 0.0), "{live:?}");
    let Some(FioUpdate::Finished { summary, exit, .. }) = all.last() else {
        panic!("{all:?}")
    };
    assert_eq!(*exit, 0);
    assert!(
        summary.read.ios > 0 && summary.error.is_none() && !summary.partial,
        "{summary:?}"
    );
    assert!((2900..=3500).contains(&summary.runtime_ms), "{summary:?}");
    assert!(summary.fio_version.starts_with("fio-"));
    let file = job.file().to_path_buf();
    let made = std::fs::metadata(&file).unwrap().modified().unwrap();
    drop(job);

    let (again, rx) = start("randread,size=32M,runtime=2", &mut dir);
    assert_eq!(again.file(), file);
    assert!(again.prepare_argv().is_none(), "no second layout");
    let all = collect(&rx, Duration::from_secs(30));
    assert!(!all.iter().any(|u| matches!(
        u,
        FioUpdate::Preparing { .. } | FioUpdate::LayoutStarted { .. }
    )));
    assert!(
        matches!(all.last(), Some(FioUpdate::Finished { .. })),
        "{all:?}"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        made,
        "read-only run left it alone"
    );
    drop(again);
    dir.cleanup().unwrap();
    assert!(!file.exists());
}

#[test]
fn write_never_touches_a_file_pagewatch_did_not_create() {
    let tmp = disk_dir();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    // Only root could plant it in pagewatch's private directory: still refused.
    let name = dir
        .path()
        .join(format!("pagewatch-{}-8M.fio", std::process::id()));
    std::fs::write(&name, b"not yours").unwrap();
    let notify = Arc::new(|_u: FioUpdate| {});
    let spec = FioSpec::parse("write,size=8M").unwrap();
    match FioJob::start(Path::new(EXE), &spec, &mut dir, notify) {
        Err(e) => assert!(e.to_string().contains("did not create"), "{e}"),
        Ok(_) if !have_fio() => {}
        Ok(_) => panic!("started on a foreign file"),
    }
    drop(dir);
    assert_eq!(std::fs::read(&name).unwrap(), b"not yours");
}

#[test]
fn devices_and_missing_dirs_are_refused() {
    for bad in ["/dev/null", "/dev/loop0", "/no/such/dir"] {
        if bad.starts_with("/dev") && !Path::new(bad).exists() {
            continue;
        }
        let e = FioDir::open(Some(Path::new(bad)), false).unwrap_err();
        let text = format!("{e:#}");
        assert!(text.contains(bad), "{text}");
    }
}

#[test]
fn stop_gives_the_final_result_within_seconds() {
    if !have_fio() {
        return;
    }
    let tmp = disk_dir();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let (job, rx) = start("randread,size=16M,runtime=30", &mut dir);
    let mut seen = Vec::new();
    while !matches!(seen.last(), Some(FioUpdate::Live(_))) {
        seen.push(rx.recv_timeout(Duration::from_secs(30)).unwrap());
    }
    let asked = Instant::now();
    job.stop();
    let all = collect(&rx, Duration::from_secs(15));
    let took = asked.elapsed();
    let Some(FioUpdate::Finished { summary, exit, .. }) = all.last() else {
        panic!("{all:?}")
    };
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(*exit, 128, "fio's exit code after SIGINT");
    assert!(
        !summary.partial && summary.read.ios > 0 && summary.runtime_ms < 10_000,
        "{summary:?}"
    );
    assert!(
        all.iter()
            .any(|u| matches!(u, FioUpdate::Message(m) if m.contains("terminating on signal 2"))),
        "{all:?}"
    );
}

#[test]
fn kill_now_keeps_the_last_periodic_figures_as_partial() {
    if !have_fio() {
        return;
    }
    let tmp = disk_dir();
    let mut dir = FioDir::open(Some(tmp.path()), false).unwrap();
    let (job, rx) = start("randread,size=16M,runtime=30", &mut dir);
    let mut n_live = 0;
    while n_live < 2 {
        if let FioUpdate::Live(_) = rx.recv_timeout(Duration::from_secs(30)).unwrap() {
            n_live += 1;
        }
    }
    job.kill_now();
    let all = collect(&rx, Duration::from_secs(10));
    let Some(FioUpdate::Finished { summary, exit, .. }) = all.last() else {
        panic!("{all:?}")
    };
    assert_eq!(*exit, 137);
    assert!(summary.partial && summary.read.ios > 0, "{summary:?}");
}

/// (pid, ppid, comm) of every live process.
fn processes() -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        if fields[0] != "Z" {
            out.push((
                pid,
                fields[1].parse().unwrap(),
                stat[open + 1..close].to_string(),
            ));
        }
    }
    out
}

fn descendants(root: u32) -> Vec<(u32, String)> {
    let all = processes();
    let mut found = vec![(root, String::new())];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i].0;
        found.extend(
            all.iter()
                .filter(|p| p.1 == parent)
                .map(|p| (p.0, p.2.clone())),
        );
        i += 1;
    }
    found.remove(0);
    found
}

fn alive(pids: &[u32]) -> Vec<(u32, String)> {
    processes()
        .into_iter()
        .filter(|p| pids.contains(&p.0) && p.2 == "fio")
        .map(|p| (p.0, p.2))
        .collect()
}

#[test]
fn sigkill_of_the_parent_leaves_no_fio_behind() {
    if !have_fio() {
        return;
    }
    let tmp = disk_dir();
    let file: PathBuf = tmp.path().join("data.fio");
    std::fs::write(&file, vec![7u8; 16 << 20]).unwrap();
    let fio = find_fio().unwrap();
    // sh plays pagewatch: it starts the guard and is SIGKILLed. fio's workers call setsid(), so
    // they are found as descendants, not by process group.
    let script = r#"PAGEWATCH_PARENT_PID=$$ "$0" __guard -- "$1" --name=orphan "--filename=$2" --rw=randread --bs=8k --size=16M --numjobs=2 --time_based=1 --runtime=60 --readonly --output-format=json --status-interval=1 --eta=never >/dev/null 2>&1 & wait"#;
    let mut sh = Command::new("sh")
        .args(["-c", script, EXE])
        .arg(&fio)
        .arg(&file)
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let fios = loop {
        let fios: Vec<u32> = descendants(sh.id())
            .into_iter()
            .filter(|p| p.1 == "fio")
            .map(|p| p.0)
            .collect();
        if fios.len() >= 3 {
            break fios;
        }
        assert!(
            Instant::now() < deadline,
            "fio and its 2 workers never showed up: {:?}",
            descendants(sh.id())
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    sh.kill().unwrap();
    sh.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = alive(&fios);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_guard_refuses_a_parent_that_is_not_pagewatch() {
    let out = Command::new(EXE)
        .args(["__guard", "--", "true"])
        .env("PAGEWATCH_PARENT_PID", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is gone"),
        "{out:?}"
    );
    let out = Command::new(EXE)
        .args(["__guard", "--", "true"])
        .env_remove("PAGEWATCH_PARENT_PID")
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn the_guard_passes_the_exit_code_on() {
    // The test process is the parent here.
    let run = |args: &[&str]| {
        Command::new(EXE)
            .arg("__guard")
            .arg("--")
            .args(args)
            .env("PAGEWATCH_PARENT_PID", std::process::id().to_string())
            .process_group(0)
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(run(&["sh", "-c", "exit 3"]), Some(3));
    assert_eq!(run(&["sh", "-c", "kill -TERM $$"]), Some(128 + 15));
}
