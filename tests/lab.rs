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
//! - a recording made in the guest replays on the host to the same JSON the guest printed;
//! - with the memcg writer's writeback capped by io.max, a recording made in the guest and
//!   replayed here names `/box` and its state in batch text wherever the JSON has it
//!   throttling (`iomax.rs`).
//!
//! About 45–75 s a kernel after the first download under qemu's TCG on a shared 2-core machine
//! (the io.max recording is 6 s of it). Skips, saying why, only when the kernel
//! packages cannot be had (no route to the registry) or qemu is missing; `.ci/run` installs
//! qemu-system-x86, busybox-static and cpio.
#![allow(clippy::unwrap_used)]

#[path = "lab/iomax.rs"]
mod iomax;
#[path = "common/iostat.rs"]
mod iostat;
#[path = "common/lab.rs"]
mod lab;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");

/// The guest's output split into `== NAME` sections, or why the lab cannot run here.
fn boot(suite: &str) -> Result<BTreeMap<String, String>, String> {
    let mut g = lab::Guest::new(suite, "checks.sh", Path::new(EXE));
    g.tools = &["iostat"];
    g.boot()
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
    tracepoint_global(suite, &s);
    memcg_domain(suite, &s, version == "6.12.");
    iomax::box_in_text(suite, &s, EXE);
}

/// Two buffered writers under vm.dirty_bytes 16M in the root group (checks.sh, `== trace`):
/// pagewatch arms the tracepoint, decodes this kernel's binary ring-buffer pages with its own
/// `header_page` and `format`, lists both dd writers paused, and the kernel's own figures in
/// the events agree with ours (spec §7): `2·setpoint − limit` is the kernel's freerun
/// `(thresh + bg_thresh) / 2` (or one less, its rounding), equal to the derived freerun, and
/// the limit is not under the derived threshold (the bytes mode fixes both thresholds).
fn tracepoint_global(suite: &str, s: &BTreeMap<String, String>) {
    let samples: Vec<Value> = s["trace"]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(samples.len() >= 6, "{suite}: trace samples: {}", s["trace"]);
    let mut dd = std::collections::BTreeSet::new();
    let (mut checked, mut together) = (0, 0);
    for v in &samples {
        assert!(
            v["tracer"]["error"].is_null(),
            "{suite}: tracer error {}",
            v["tracer"]
        );
        let mut here = 0;
        for r in v["throttled"].as_array().unwrap() {
            if r["source"] == "tracepoint"
                && r["comm"] == "dd"
                && r["pause_ms_per_s"].as_f64().is_some_and(|p| p > 0.0)
            {
                assert_eq!(r["cgroup"], "/", "{suite}: {r}");
                dd.insert(u(r, "/pid"));
                here += 1;
            }
        }
        together = together.max(here);
        let d = &v["dirty"];
        let (Some(limit), Some(setpoint)) = (
            d["kernel_limit_pages"].as_u64(),
            d["kernel_setpoint_pages"].as_u64(),
        ) else {
            continue;
        };
        let (freerun, thresh) = (u(d, "/freerun_pages"), u(d, "/thresh_pages"));
        assert_eq!(thresh, 4096, "{suite}: 16M in pages");
        let kernel_freerun = (2 * setpoint).checked_sub(limit).unwrap();
        println!(
            "{suite} trace: limit {limit} setpoint {setpoint} → kernel freerun {kernel_freerun}; \
             derived freerun {freerun} thresh {thresh} state {}",
            d["state"]
        );
        assert!(
            kernel_freerun == freerun || kernel_freerun + 1 == freerun,
            "{suite}: kernel freerun {kernel_freerun} vs derived {freerun}"
        );
        assert!(
            limit >= thresh,
            "{suite}: limit {limit} under thresh {thresh}"
        );
        checked += 1;
    }
    // Each writer loops over dd runs, so the pids change; both writers show in one sample.
    let states: Vec<(&Value, &Value, &Value)> = samples
        .iter()
        .map(|v| {
            (
                &v["dirty"]["state"],
                &v["tracer"]["state"],
                &v["dirty"]["dirtied_per_s"],
            )
        })
        .collect();
    println!(
        "{suite} trace: paused dd pids {dd:?} (at most {together} in one sample), {checked} \
         samples with the kernel's limit; (dirty state, tracer, dirtied/s) {states:?}"
    );
    assert!(
        together >= 2,
        "{suite}: both dd writers paused, from the tracepoint"
    );
    assert!(checked > 0, "{suite}: no sample had the kernel's limit");
}

fn u(v: &Value, key: &str) -> u64 {
    v.pointer(key)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// The memcg dirty domain of a group capped at 300M while `dd` writes in it (spec §1.8):
/// pagewatch's figures equal the spec's formulas computed here from the same sample's
/// memory.stat, memory.current and memory.max and the global domain, and on 6.10+ they
/// match the kernel's own `WbDirtyThresh` (debugfs wb_stats) within 2 %.
fn memcg_domain(suite: &str, s: &BTreeMap<String, String>, wb_stats: bool) {
    let head = s.keys().find(|k| k.starts_with("memcg-ino ")).unwrap();
    let ino: u64 = head.split(' ').nth(1).unwrap().parse().unwrap();
    let samples: Vec<Value> = s["memcg"]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(samples.len() >= 3, "{suite}: memcg samples: {}", s["memcg"]);
    let (mut throttled_while_global_free, mut with_domain) = (0, 0);
    for v in &samples {
        let doms = v["domains"].as_array().unwrap();
        let g = &doms[0];
        assert_eq!(g["kind"], "global", "{suite}: {g}");
        // The writer pauses now and then (reclaim at memory.max, a journal commit): a
        // sample where /box has no dirty or writeback pages has no domain.
        let Some(m) = doms
            .iter()
            .find(|d| d["kind"] == "memcg" && d["path"] == "/box")
        else {
            let row = v["cgroups"]["rows"]
                .as_array()
                .and_then(|r| r.iter().find(|r| r["path"] == "/box"));
            println!("{suite}: no /box domain in this sample (writer paused): /box {row:?}");
            continue;
        };
        with_domain += 1;
        assert_eq!(u(m, "/cgroup_ino"), ino, "{suite}: inode");
        let row = v["cgroups"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == "/box")
            .unwrap();
        // By hand, spec §1.8, 4 KiB pages, ratio 20/10 (819 and 409 per 4096).
        let pages = |k: &str| u(row, k) / 4096;
        let (current, max) = (pages("/current_bytes"), pages("/max_bytes"));
        assert!(row["high_bytes"].is_null(), "{suite}: memory.high is max");
        let headroom = max - max.min(current);
        let filepages = pages("/file_lru_bytes");
        let m_dirty = pages("/dirty_bytes") + pages("/writeback_bytes");
        let (g_avail, g_dirty) = (
            u(g, "/avail_pages"),
            u(g, "/dirty_pages") + u(g, "/writeback_pages"),
        );
        let clean = filepages - filepages.min(m_dirty);
        let global_clean = g_avail - g_avail.min(g_dirty);
        let other_clean = global_clean - global_clean.min(clean);
        let avail = filepages + headroom.min(other_clean);
        let (thresh, bg) = (819 * avail / 4096, 409 * avail / 4096);
        let got = (
            u(m, "/headroom_pages"),
            u(m, "/avail_pages"),
            u(m, "/thresh_pages"),
            u(m, "/bg_thresh_pages"),
            u(m, "/freerun_pages"),
        );
        assert_eq!(
            got,
            (headroom, avail, thresh, bg, u64::midpoint(thresh, bg)),
            "{suite}: /box domain against the hand computation"
        );
        let kernel = m["kernel_thresh_pages"].as_u64();
        println!(
            "{suite} /box: file {filepages} d+wb {m_dirty} headroom {headroom} avail {avail} \
             thresh {thresh} bg {bg} state {} kernel {kernel:?}; global avail {g_avail} \
             d+wb {g_dirty} freerun {} state {}",
            m["state"],
            u(g, "/freerun_pages"),
            g["state"]
        );
        if wb_stats {
            let k = kernel.unwrap_or_else(|| panic!("{suite}: no WbDirtyThresh for /box"));
            assert!(
                thresh.abs_diff(k) * 50 <= k,
                "{suite}: thresh {thresh} vs the kernel's {k} pages"
            );
        } else {
            assert_eq!(kernel, None, "{suite}: no wb_stats before 6.10");
        }
        let paced = matches!(
            m["state"].as_str(),
            Some("writers_throttled" | "over_thresh" | "at_hard_limit")
        );
        if paced && g_dirty <= u(g, "/freerun_pages") {
            throttled_while_global_free += 1;
        }
    }
    assert!(
        with_domain >= 2,
        "{suite}: /box a domain in {with_domain} samples"
    );
    // On 6.12 (the kernel of the acceptance figures) the container's writers are paced by
    // their own domain while the global one is below its freerun ceiling. Older kernels
    // here often catch the writer between bursts, below its freerun: not asserted.
    assert!(
        !wb_stats || throttled_while_global_free > 0,
        "{suite}: /box never over its freerun while the global domain was under its own"
    );
    tracepoint_in_the_box(suite, &samples, wb_stats);
    limit_reclaim_in_the_box(suite, &samples);
    if wb_stats {
        let last = last_box_thresh(&samples);
        wb_stats_after(suite, &s["wb_stats"], ino, last);
    }
}

/// The writer rewrites 600M in a group capped at 300M, so /box reclaims at its memory.max:
/// every sample whose memcg scan moved without global direct reclaim has the verdict's
/// `cgroup` reclaim state, and at least one names /box (the group at 90 % of its limit that
/// scans most), whatever the memory stall decides for the headline.
fn limit_reclaim_in_the_box(suite: &str, samples: &[Value]) {
    let mut named = 0;
    let mut seen = Vec::new();
    for v in samples {
        let r = &v["reclaim"];
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        let verdict = &v["verdict"]["reclaim"];
        seen.push((f("pgscan_memcg_s"), verdict["state"].clone()));
        if f("pgscan_direct_s") > 0.0 || f("allocstall_s") > 0.0 || f("pgscan_memcg_s") == 0.0 {
            continue;
        }
        assert_eq!(verdict["state"], "cgroup", "{suite}: {verdict}");
        let why = verdict["why"].as_str().unwrap();
        assert!(why.starts_with("cgroup limit reclaim"), "{suite}: {why}");
        named += usize::from(why.starts_with("cgroup limit reclaim in /box:"));
    }
    println!("{suite} limit reclaim: (memcg scan/s, verdict) {seen:?}, /box named {named}");
    assert!(
        named > 0,
        "{suite}: /box never named at its limit: {seen:?}"
    );
}

/// The tracepoint on this kernel (tracefs mounted by boot.sh, root): pagewatch armed it while
/// /box was flushing, read its binary per-CPU buffers with this kernel's `header_page` and
/// `format`; every row it has for /box is the dd there (its cgroup named from the event's
/// `cgroup_ino`) with the limit `balance_dirty_pages()` paced it to.
fn tracepoint_in_the_box(suite: &str, samples: &[Value], paced: bool) {
    let armed = samples
        .iter()
        .filter(|v| v["tracer"]["state"] == "armed")
        .count();
    let errors: Vec<&Value> = samples
        .iter()
        .map(|v| &v["tracer"]["error"])
        .filter(|e| !e.is_null())
        .collect();
    assert!(errors.is_empty(), "{suite}: tracer errors {errors:?}");
    let rows: Vec<&Value> = samples
        .iter()
        .filter_map(|v| v["throttled"].as_array())
        .flatten()
        .filter(|r| r["source"] == "tracepoint")
        .collect();
    println!(
        "{suite}: tracepoint armed in {armed} of {} samples; rows {:?}",
        samples.len(),
        rows.iter()
            .map(|r| (
                &r["comm"],
                &r["cgroup"],
                &r["bdi"],
                &r["pause_ms_per_s"],
                &r["limit_pages"]
            ))
            .collect::<Vec<_>>()
    );
    // Every row of /box is its dd, with the limit the kernel paced it to.
    for r in rows.iter().filter(|r| r["cgroup"] == "/box") {
        assert!(
            r["comm"] == "dd" && r["limit_pages"].as_u64().is_some_and(|l| l > 0),
            "{suite}: {r}"
        );
    }
    if paced {
        assert!(armed > 0, "{suite}: the tracepoint was never armed");
        // Just past its freerun a writer's pause can fall under the kernel's minimum, so it
        // is not put to sleep (a CI run's /box was over it in 3 of 8 samples and no dd
        // slept). A sleeping dd in /box is asserted where io.max holds it at its threshold
        // (`iomax::tracer_follows_the_gate`).
        let paused = rows.iter().any(|r| {
            r["cgroup"] == "/box" && r["pause_ms_per_s"].as_f64().is_some_and(|p| p > 0.0)
        });
        println!("{suite}: a paused dd in /box from the tracepoint: {paused}");
    }
}

/// /box's threshold in the latest sample that has its domain (the writer can pause at the
/// very last one).
fn last_box_thresh(samples: &[serde_json::Value]) -> u64 {
    samples
        .iter()
        .rev()
        .find_map(|v| {
            v["domains"]
                .as_array()?
                .iter()
                .find(|d| d["path"] == "/box")
                .map(|d| u(d, "/thresh_pages"))
        })
        .unwrap()
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

/// The kernel's own `WbDirtyThresh` for the cgroup, read after the samples, against the
/// last derived threshold (within 2 %).
fn wb_stats_after(suite: &str, text: &str, ino: u64, last: u64) {
    let block = text
        .split("WbCgIno:")
        .find(|b| b.split_whitespace().next() == Some(&ino.to_string()))
        .unwrap_or_else(|| panic!("{suite}: no wb for /box in {text}"));
    let kb: u64 = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("WbDirtyThresh:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    println!(
        "{suite}: wb_stats after the samples: WbDirtyThresh {kb} kB = {} pages; last derived {last}",
        kb / 4
    );
    assert!(
        last.abs_diff(kb / 4) * 50 <= kb / 4,
        "{suite}: {last} vs {} pages",
        kb / 4
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
