//! The kernel lab: pagewatch on real Debian kernels (5.10, 6.1, 6.12) under qemu.
//!
//! `assets/lab/boot.sh` fetches each cloud kernel from the Debian registry once (cached outside
//! the repo, `PAGEWATCH_LAB_CACHE`, default /var/cache/pagewatch-lab), boots it with a busybox
//! initramfs holding this pagewatch, iostat and their libraries and an ext4 image of its own on
//! virtio, and runs `assets/lab/checks.sh` inside. On each kernel this test checks what the
//! kernel reports itself against what pagewatch derives:
//! - MemAvailable equals the derived MemAvailable;
//! - nr_dirty_threshold and the background threshold equal the derived ones in ratio mode,
//!   bytes mode, mixed mode, with bg ≥ thresh, with 300 MiB taken by `pagewatch eat`, and
//!   under a buffered writer;
//! - iostat -x's since-boot report in the guest equals our columns from the same diskstats;
//! - a recording made in the guest replays on the host to the same JSON the guest printed.
//!
//! About 12 s a kernel after the first download. Skips, saying why, only when the kernel
//! packages cannot be had (no route to the registry) or qemu is missing; `.ci/run` installs
//! qemu-system-x86, busybox-static and cpio.
#![allow(clippy::unwrap_used)]

#[path = "common/iostat.rs"]
mod iostat;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");

fn lab_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/lab")
}

/// The guest's output split into `== NAME` sections, or why the lab cannot run here.
fn boot(suite: &str) -> Result<BTreeMap<String, String>, String> {
    for tool in [
        "qemu-system-x86_64",
        "busybox",
        "cpio",
        "mkfs.ext4",
        "iostat",
    ] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map_or(true, |o| !o.status.success())
        {
            return Err(format!(
                "{tool} is not installed (bash .ci/run installs it)"
            ));
        }
    }
    let fetch = Command::new(lab_dir().join("fetch-kernel.sh"))
        .arg(suite)
        .output()
        .unwrap();
    if !fetch.status.success() {
        return Err(format!(
            "the {suite} kernel cannot be fetched: {}",
            String::from_utf8_lossy(&fetch.stderr).trim()
        ));
    }
    let out = Command::new(lab_dir().join("boot.sh"))
        .arg(suite)
        .arg(lab_dir().join("checks.sh"))
        .env("PAGEWATCH_BIN", EXE)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    let Some((inner, _)) = text
        .split_once("==PW-LAB-BEGIN==\n")
        .and_then(|(_, rest)| rest.split_once("==PW-LAB-END=="))
    else {
        panic!(
            "{suite}: the guest printed no results: {}\n{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let mut sections = BTreeMap::new();
    let mut name = String::new();
    for line in inner.lines() {
        if let Some(n) = line.strip_prefix("== ") {
            n.clone_into(&mut name);
            sections.insert(name.clone(), String::new());
        } else if let Some(s) = sections.get_mut(&name) {
            s.push_str(line);
            s.push('\n');
        }
    }
    Ok(sections)
}

fn json(sections: &BTreeMap<String, String>, name: &str, suite: &str) -> Value {
    let text = sections
        .get(name)
        .unwrap_or_else(|| panic!("{suite}: no section {name}: {sections:?}"));
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{suite} {name}: not a batch record ({e}): {text}"))
}

/// The kernel's value and ours must both be there and equal.
fn same(v: &Value, kernel: &str, derived: &str, what: &str) -> u64 {
    let k = v.pointer(kernel).and_then(Value::as_u64);
    let d = v.pointer(derived).and_then(Value::as_u64);
    assert!(k.is_some() && k == d, "{what}: kernel {k:?}, derived {d:?}");
    k.unwrap()
}

fn check_kernel(suite: &str, version: &str) {
    let s = match boot(suite) {
        Ok(s) => s,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let kernel = s.keys().find(|k| k.starts_with("kernel ")).unwrap();
    assert!(kernel.contains(version), "{suite} booted {kernel}");
    let mut avail = BTreeMap::new();
    for mode in [
        "ratio",
        "bytes",
        "mixed",
        "bg_over_thresh",
        "eaten",
        "dirty_load",
    ] {
        let v = json(&s, mode, suite);
        let what = format!("{suite} {mode}");
        let a = same(
            &v,
            "/memory/MemAvailable",
            "/memory/derived_MemAvailable",
            &format!("{what} MemAvailable"),
        );
        avail.insert(mode, a);
        let t = same(
            &v,
            "/dirty/thresh_pages",
            "/dirty/derived_thresh_pages",
            &format!("{what} thresh"),
        );
        let b = same(
            &v,
            "/dirty/bg_thresh_pages",
            "/dirty/derived_bg_thresh_pages",
            &format!("{what} bg_thresh"),
        );
        let mode_of = |k: &str| v.pointer(k).and_then(Value::as_str).unwrap().to_owned();
        let (tm, bm) = (
            mode_of("/dirty/thresh_mode"),
            mode_of("/dirty/bg_thresh_mode"),
        );
        match mode {
            "bytes" => {
                assert_eq!((tm.as_str(), bm.as_str()), ("bytes", "bytes"), "{what}");
                assert_eq!((t, b), (16_384, 8_192), "{what}: 64M and 32M in pages");
            }
            "mixed" => assert_eq!((tm.as_str(), bm.as_str()), ("ratio", "bytes"), "{what}"),
            "bg_over_thresh" => assert_eq!(b, t / 2, "{what}: bg ≥ thresh becomes thresh/2"),
            _ => assert_eq!((tm.as_str(), bm.as_str()), ("ratio", "ratio"), "{what}"),
        }
    }
    // 300 MiB eaten shows in MemAvailable (and so in the thresholds, checked above).
    let taken_kb = avail["ratio"] - avail["eaten"];
    assert!(
        (280_000..330_000).contains(&taken_kb),
        "{suite}: eating 300M took {taken_kb} kB of MemAvailable"
    );

    iostat_matches(suite, &s);
    replay_matches(suite, &s);
}

/// iostat -x since boot, beside /proc/diskstats read before and after it.
fn iostat_matches(suite: &str, s: &BTreeMap<String, String>) {
    let p: Vec<&str> = s["iostat"].split("--\n").collect();
    assert_eq!(p.len(), 5, "{suite} iostat section: {}", s["iostat"]);
    let (n, stable) = iostat::compare_since_boot(p[1], p[0], p[2], p[3], p[4], suite);
    assert!(
        stable.get("vda") == Some(&true),
        "{suite}: vda not compared: {stable:?}"
    );
    assert!(n >= 20, "{suite}: {n} figures compared");
}

/// The guest's recording, replayed here, gives what the guest printed.
fn replay_matches(suite: &str, s: &BTreeMap<String, String>) {
    let tmp = tempfile::tempdir().unwrap();
    let b64 = tmp.path().join("rec.b64");
    std::fs::write(&b64, &s["recording"]).unwrap();
    let rec = tmp.path().join("rec.pwrec");
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("base64 -d {} > {}", b64.display(), rec.display()))
        .status()
        .unwrap();
    assert!(ok.success(), "{suite}: the recording did not decode");
    let host = Command::new(EXE)
        .args([
            "replay",
            rec.to_str().unwrap(),
            "--batch",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(host.status.success(), "{suite}: {host:?}");
    let guest: Vec<&str> = s["guest-replay"]
        .lines()
        .filter(|l| l.starts_with('{'))
        .collect();
    let host_out = String::from_utf8(host.stdout).unwrap();
    let host_lines: Vec<&str> = host_out.lines().collect();
    assert!(
        guest.len() >= 3,
        "{suite}: guest replay: {}",
        s["guest-replay"]
    );
    assert_eq!(
        host_lines, guest,
        "{suite}: host replay differs from the guest's"
    );
}

#[test]
fn bullseye_5_10() {
    check_kernel("bullseye", "5.10.");
}

#[test]
fn bookworm_6_1() {
    check_kernel("bookworm", "6.1.");
}

#[test]
fn trixie_6_12() {
    check_kernel("trixie", "6.12.");
}
