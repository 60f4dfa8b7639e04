//! The one file to copy onto a server (issue #26): `packaging/static.sh` builds pagewatch with
//! glibc linked in (profile `dist`, `+crt-static`), and that file runs where nothing else is:
//! - in an empty root: a chroot holding only the binary, with /proc and /sys bind-mounted (in
//!   a mount namespace of its own, `unshare -m`, so the mounts vanish with it, whatever fails);
//! - in the kernel lab's bare busybox guest on 5.10 and 6.12, no shared library copied in.
//!
//! The dynamic build is run in the same empty root and must fail there: the root is really
//! empty. `--version` says the version, the commit and the build kind, in a fixed format.
//!
//! The static build (LTO) takes minutes the first time; `static.sh` is a no-op when it is up
//! to date (`.ci/run` runs it before the suite, printing the size). The chroot test needs
//! root and the lab tests qemu; each skips, saying why, without.
#![allow(clippy::unwrap_used)]

#[path = "common/lab.rs"]
mod lab;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The static binary, built (or found up to date) once per run by `packaging/static.sh`,
/// which also fails when it is over the size budget or not static.
fn static_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // CARGO_TARGET_TMPDIR is <target dir>/tmp.
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
        let out = Command::new("bash")
            .arg(repo().join("packaging/static.sh"))
            .env("CARGO_TARGET_DIR", target)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "static.sh failed:\n{said}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        println!(
            "{}",
            said.lines()
                .filter(|l| l.starts_with("static.sh:"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        target.join("x86_64-unknown-linux-gnu/dist/pagewatch")
    })
}

/// `pagewatch 0.1.0 (commit abc1234, dynamic build, x86_64-unknown-linux-gnu)`: the parts
/// after the name, checked one by one.
fn check_version(line: &str, kind: &str) {
    let rest = line
        .trim_end()
        .strip_prefix(&format!("pagewatch {} (commit ", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{line:?}"));
    let (commit, rest) = rest.split_once(", ").unwrap_or_else(|| panic!("{line:?}"));
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{line:?}"
    );
    let head = Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if let Some(head) = head {
        assert_eq!(commit, head, "{line:?}: built from HEAD");
    }
    assert_eq!(
        rest,
        format!(
            "{kind} build, {}-unknown-linux-gnu)",
            std::env::consts::ARCH
        ),
        "{line:?}"
    );
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn version_names_the_commit_and_the_build_kind() {
    check_version(&stdout(Command::new(EXE).arg("--version")), "dynamic");
    // -V stays the bare version (the man page's title uses it).
    assert_eq!(
        stdout(Command::new(EXE).arg("-V")).trim(),
        format!("pagewatch {}", env!("CARGO_PKG_VERSION"))
    );
}

/// Two batch records, each a JSON object with the kernel's MemAvailable.
fn check_batch(json: &str, where_: &str) {
    let lines: Vec<&str> = json.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 2, "{where_}: {json}");
    for l in lines {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{where_}: {e}: {l}"));
        assert!(
            v.pointer("/memory/MemAvailable")
                .and_then(Value::as_u64)
                .is_some_and(|m| m > 0),
            "{where_}: {l}"
        );
    }
}

/// A directory holding only `bin` (as /pagewatch) and empty /proc and /sys; removed on drop
/// unless something is still mounted under it (then left, and the test fails, rather than
/// recursing into a live /proc or /sys).
struct EmptyRoot(Option<tempfile::TempDir>);

impl EmptyRoot {
    fn new(bin: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for d in ["proc", "sys"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::copy(bin, dir.path().join("pagewatch")).unwrap();
        Self(Some(dir))
    }

    fn path(&self) -> &Path {
        self.0.as_ref().unwrap().path()
    }

    /// Runs `/pagewatch ARGS` chrooted in it, /proc and /sys bind-mounted in a private mount
    /// namespace: when the namespace's last process exits, the mounts are gone.
    fn run(&self, args: &str) -> std::process::Output {
        let r = self.path().display();
        Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(format!(
                "mount --bind /proc {r}/proc && mount --rbind /sys {r}/sys && \
                 exec chroot {r} /pagewatch {args}"
            ))
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .output()
            .unwrap()
    }
}

impl Drop for EmptyRoot {
    fn drop(&mut self) {
        let dir = self.0.take().unwrap();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let p = dir.path().to_string_lossy().into_owned();
        if mounts.lines().any(|l| l.contains(&p)) {
            let kept = dir.keep();
            // Already failing: one panic is enough.
            assert!(
                std::thread::panicking(),
                "mounts left under {}: not removed",
                kept.display()
            );
        }
    }
}

#[test]
fn the_static_binary_runs_in_an_empty_root() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: the chroot needs root");
        return;
    }
    if Command::new("unshare").arg("--version").output().is_err() {
        println!("skipped: no unshare (util-linux)");
        return;
    }
    let root = EmptyRoot::new(static_bin());
    let entries: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        entries.len(),
        3,
        "only the binary, proc and sys: {entries:?}"
    );

    let v = root.run("--version");
    assert!(v.status.success(), "{v:?}");
    check_version(&String::from_utf8_lossy(&v.stdout), "static");
    let out = root.run("--batch --count 2 --format json");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    check_batch(&String::from_utf8_lossy(&out.stdout), "chroot");
    println!("stderr in the empty root: {err:?}");

    // The control: the dynamic build cannot even start there (no loader, no libc).
    let dynamic = EmptyRoot::new(Path::new(EXE));
    let d = dynamic.run("--version");
    assert!(
        !d.status.success(),
        "the dynamic build ran in the empty root: {d:?}"
    );
}

/// Boots `suite` with only busybox and the static binary in the initramfs; the guest's
/// `== NAME` sections, or why the lab cannot run here.
fn bare_guest(suite: &str) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut g = lab::Guest::new(suite, "static-checks.sh", static_bin());
    g.env = &[("LAB_BARE", "1"), ("LAB_DISK", "64M"), ("LAB_MEM", "512")];
    g.boot()
}

fn check_bare_guest(suite: &str, version: &str) {
    let s = match bare_guest(suite) {
        Ok(s) => s,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let kernel = s.keys().find(|k| k.starts_with("kernel ")).unwrap();
    assert!(kernel.contains(version), "{suite} booted {kernel}");
    assert_eq!(
        s["shared-objects"], "",
        "{suite}: shared objects in the guest"
    );
    check_version(&s["version"], "static");
    assert!(s.contains_key("status 0"), "{suite}: {s:?}");
    check_batch(&s["batch"], suite);
    println!("{suite} ({kernel}): ran; stderr {:?}", s["stderr"]);
}

#[test]
fn bare_guest_bullseye_5_10() {
    check_bare_guest("bullseye", "5.10.");
}

#[test]
fn bare_guest_trixie_6_12() {
    check_bare_guest("trixie", "6.12.");
}
