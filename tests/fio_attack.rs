//! The symlink attack on root's fio, reproduced (issue "Hardening", finding 1): user `nobody`
//! prepares the fio directory and runs a loop that swaps every `pagewatch-*.fio` it can reach
//! for a symlink to a root-owned victim file, while pagewatch (as root) runs a 1 MiB fio write.
//! Before the fix fio wrote through the link into the victim in 4 of 4 runs. Now pagewatch
//! refuses a directory other users can write, or works in a private directory of its own in a
//! sticky one, and the victim is unchanged. Needs root, `setpriv` and fio; skips with a
//! printed reason otherwise.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::mpsc::channel;
use std::time::Duration;

use pagewatch::jobs::fio::{FioDir, FioJob, FioSpec, FioUpdate, find_fio};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const NOBODY: u32 = 65534;
const PRECIOUS: &[u8] = b"root's precious file\n";

fn can_run() -> bool {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: the attack needs root (pagewatch as root, the attacker as nobody)");
        return false;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: setpriv (util-linux) is missing");
        return false;
    }
    if let Err(e) = find_fio() {
        eprintln!("skipped: {e}");
        return false;
    }
    true
}

/// A scene: a root-owned victim, and a directory `shared` with `mode`, owned by `owner`.
struct Scene {
    _top: tempfile::TempDir,
    victim: PathBuf,
    shared: PathBuf,
}

fn scene(mode: u32, owner: u32) -> Scene {
    let top = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::set_permissions(top.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let victim = top.path().join("victim");
    std::fs::write(&victim, PRECIOUS).unwrap();
    let shared = top.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::os::unix::fs::chown(&shared, Some(owner), Some(owner)).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(mode)).unwrap();
    Scene {
        _top: top,
        victim,
        shared,
    }
}

/// The attacker's process, killed when dropped (also when an assertion fails).
struct Attacker(Child);

impl Drop for Attacker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// nobody's loop: every `pagewatch-*.fio` it can reach in `dir` or one level below becomes a
/// symlink to `victim`.
fn swap_loop(dir: &Path, victim: &Path) -> Attacker {
    let script = r#"while :; do for f in "$1"/pagewatch-*.fio "$1"/*/pagewatch-*.fio; do
        case "$f" in *'*'*) ;; *) ln -sfn "$2" "$f" 2>/dev/null ;; esac; done; done"#;
    Command::new("setpriv")
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "--",
            "sh",
            "-c",
            script,
            "swap",
        ])
        .arg(dir)
        .arg(victim)
        .spawn()
        .map(Attacker)
        .unwrap()
}

/// Runs `write,size=1M` in `dir` the way the screen's fio key does; returns the last update.
fn run_write(dir: &mut FioDir) -> FioUpdate {
    let (tx, rx) = channel();
    let tx = std::sync::Mutex::new(tx);
    let notify = Arc::new(move |u: FioUpdate| {
        let _ = tx.lock().unwrap().send(u);
    });
    let spec = FioSpec::parse("write,size=1M").unwrap();
    let job = FioJob::start(Path::new(EXE), &spec, dir, notify).unwrap();
    loop {
        let u = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        if matches!(u, FioUpdate::Finished { .. } | FioUpdate::Failed { .. }) {
            drop(job);
            return u;
        }
    }
}

#[test]
fn a_world_writable_directory_is_refused() {
    if !can_run() {
        return;
    }
    // The explicit --fio-dir case: world-writable, not sticky (owned by nobody or by root).
    for owner in [NOBODY, 0] {
        let s = scene(0o777, owner);
        let attacker = swap_loop(&s.shared, &s.victim);
        let e = format!("{:#}", FioDir::open(Some(&s.shared), false).unwrap_err());
        drop(attacker);
        assert!(
            e.contains("could swap fio's files"),
            "a clear reason expected: {e}"
        );
        assert_eq!(std::fs::read(&s.victim).unwrap(), PRECIOUS);
        assert_eq!(
            std::fs::read_dir(&s.shared).unwrap().count(),
            0,
            "nothing made"
        );
    }
}

#[test]
fn in_a_sticky_tmp_fio_writes_only_its_own_private_file() {
    if !can_run() {
        return;
    }
    // $TMPDIR as on any machine (root-owned, 1777), and nobody's `pagewatch-0` prepared in it,
    // mode 0777, as in the report. pagewatch's base is that $TMPDIR.
    let s = scene(0o1777, 0);
    let planted = s.shared.join("pagewatch-0");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::chown(&planted, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    let attacker = swap_loop(&s.shared, &s.victim);
    let mut dir = FioDir::open(Some(&s.shared), false).unwrap();
    assert_ne!(dir.path(), planted, "never the directory another user made");
    let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o7777, 0o700);
    let last = run_write(&mut dir);
    let file = dir.owned().into_iter().next().unwrap();
    let len = std::fs::symlink_metadata(&file).unwrap().len();
    drop(dir);
    drop(attacker);
    assert_eq!(
        std::fs::read(&s.victim).unwrap(),
        PRECIOUS,
        "victim unchanged"
    );
    assert!(
        matches!(last, FioUpdate::Finished { exit: 0, .. }),
        "fio ran to the end in its private directory: {last:?}"
    );
    assert_eq!(len, 1 << 20, "the 1 MiB went into pagewatch's own file");
}
