//! A real fio started by hand with `--output` (skipped with a reason when fio is not
//! installed): the file pagewatch measures for it is its data file, held by its worker, never
//! the report file its main process holds (issue #24, item 7). Also with `--thread`, where the
//! workers share the main process's fds. fio is started as from a shell that holds a file
//! open (`flock LOCK fio ...`): that inherited file is no data file either (issue #51). Files
//! under /var/tmp/pw-jobs-test-PID, removed after.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pagewatch::jobs::foreign::{ForeignFio, scan};
use pagewatch::jobs::job_files::foreign_view;

/// The test directory, removed when dropped.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs fio with `extra` options on `dir/f`, report in `dir/out.txt`; returns the scanned run
/// once its data file is open (by a worker, or by the main process with `--thread`), and the
/// run as the app is told about it (measured while fio still runs).
fn run_fio(dir: &Path, extra: &[&str]) -> (ForeignFio, pagewatch::jobs::protocol::ForeignFio) {
    let (file, out) = (dir.join("f"), dir.join("out.txt"));
    let mut args = vec![
        "--name=x".to_owned(),
        format!("--filename={}", file.display()),
        "--size=64m".into(),
        "--rw=write".into(),
        "--bs=64k".into(),
        "--time_based".into(),
        "--runtime=6".into(),
        format!("--output={}", out.display()),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    // As `flock LOCK fio ...` does: fio and its workers inherit fd 9, open on `dir/lock`.
    let mut fio = Command::new("sh")
        .arg("-c")
        .arg("exec 9>>\"$0\"; exec fio \"$@\"")
        .arg(dir.join("lock"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut found = None;
    while t0.elapsed() < Duration::from_secs(6) && found.is_none() {
        std::thread::sleep(Duration::from_millis(200));
        found = scan(Path::new("/proc"), &BTreeSet::new())
            .into_iter()
            .find(|r| r.pid == fio.id() && r.files().iter().any(|f| f.path == file));
    }
    let pacer = std::sync::Mutex::default();
    let view = found.as_ref().map(|r| foreign_view(r, None, &pacer));
    // SIGTERM: fio stops its workers and exits; a worker still there (still named fio) is
    // killed by its pid.
    let _ = Command::new("kill").arg(fio.id().to_string()).status();
    let _ = fio.wait();
    for p in found.iter().flat_map(|r| &r.procs) {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", p.pid)).unwrap_or_default();
        if comm.trim() != "fio" {
            continue;
        }
        let _ = Command::new("kill")
            .args(["-9", &p.pid.to_string()])
            .stderr(Stdio::null())
            .status();
    }
    (
        found.expect("fio's data file never showed up open"),
        view.unwrap(),
    )
}

#[test]
fn the_measured_file_is_the_data_file_never_the_report() {
    if Command::new("fio").arg("--version").output().is_err() {
        println!("skipped: fio is not installed");
        return;
    }
    let dir = Dir(PathBuf::from(format!(
        "/var/tmp/pw-jobs-test-{}",
        std::process::id()
    )));
    std::fs::create_dir_all(&dir.0).unwrap();
    let (file, out) = (dir.0.join("f"), dir.0.join("out.txt"));
    for extra in [&[][..], &["--thread"][..]] {
        let (run, view) = run_fio(&dir.0, extra);
        // The traps: the main process holds the report (its first file was measured
        // before), and the file inherited from the caller, as the workers do.
        let main = &run.procs[0];
        assert_eq!(main.pid, run.pid);
        for held in [&out, &dir.0.join("lock")] {
            assert!(
                main.files.iter().any(|f| &f.path == held),
                "{extra:?}: {} not held: {run:?}",
                held.display()
            );
        }
        let paths: Vec<&str> = view.files.iter().map(|f| f.path.as_str()).collect();
        println!("{extra:?}: workers {} files {paths:?}", view.workers);
        assert_eq!(paths, vec![file.to_str().unwrap()], "{extra:?}");
        assert_eq!(view.files[0].size_bytes, 64 << 20, "{extra:?}");
        assert!(
            view.files[0].cached_pages > 0,
            "{extra:?}: written, so cached"
        );
        if extra.is_empty() {
            assert!(view.workers >= 1, "forked workers: {run:?}");
        }
    }
}
