//! Issue 54's acceptance in the kernel lab, for one kernel a test file (`lab_scope.rs` 6.12,
//! `lab_scope_6_1.rs`, `lab_scope_5_10.rs`, each under 90 s): inside a container the cgroup
//! is the machine. Owns: booting `assets/lab/scope.sh` and the checks on what it printed.
//! Must not touch: anything of the host but the qemu guest `common/lab.rs` boots.
//!
//! `assets/lab/scope.sh` makes `/box` with memory.max 256M, a `dd` rewriting 1 GiB buffered
//! in it, and runs pagewatch in `/box` in its own cgroup namespace (util-linux's
//! `unshare --cgroup`, copied in with its libraries: busybox's has no `--cgroup`; the cgroup2
//! mount is the host's, so mountinfo shows its root as `/..` and pagewatch finds its own pid
//! in `/box/cgroup.procs`), then from the root group with `--cgroup /box`. Both ways:
//! - `scope.path` is `/box` and `scope.memory_max_bytes` 268435456;
//! - the verdict's dirty domain is `cgroup /box` in every record;
//! - on 6.12 some record reads "writers throttled" (or over the threshold) for /box while the
//!   host's global domain is below background (printed on the older kernels);
//! - on 6.12 the scope's threshold and the kernel's `WbDirtyThresh` (debugfs wb_stats, read in
//!   the same tick) are within 1 page in some record and never more than `SKEW_PAGES` apart
//!   (the kernel reads /box's moving counters at another moment; seen: 0 pages in 3 to 6
//!   records of 6, 6 to 18 in the others); once the writer has stopped, within 1 page in
//!   every record; before 6.10 there is no wb_stats and `scope.missing` names it.
//!
//! About 60 s a kernel under TCG on a shared 2-core machine; all three run in CI.
//! As uid 1000 in /box (util-linux's `setpriv`): the scope's memory figures and domain are
//! there, and `scope.missing` names what needs root (wb_stats, the throttle tracepoint).
//! The static binary (`packaging/static.sh`, as `static_build.rs` builds it) alone in an empty
//! root with /proc and /sys bind-mounted read-only, in /box and its own namespace: the same
//! scope, limit and verdict.
//! Skips, saying why, when qemu, busybox, util-linux's unshare or setpriv, or a kernel is
//! missing.
#![allow(clippy::unwrap_used, dead_code)]

#[path = "lab.rs"]
mod lab;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");
const MAX_256M: u64 = 268_435_456;

/// How far apart the scope's threshold and the kernel's `WbDirtyThresh` may be while /box's
/// writer runs: the kernel computes its figure (`cgwb_calc_thresh()` → `mem_cgroup_wb_stats()`,
/// `mm/page-writeback.c`, `mm/memcontrol.c`) at another moment than pagewatch reads
/// memory.stat and memory.current. With the group at its limit m_avail = filepages + headroom
/// = max − (current − filepages) (spec §1.8), and two reads of it can differ by the charge
/// stock memory.current holds before use (`MEMCG_CHARGE_BATCH`, 64 pages a CPU) and the
/// memory.stat updates not yet flushed (flushed past 64 a CPU): 2·64·2 vCPUs = 256 pages of
/// m_avail, 256·819/4096 = 51 pages of threshold. Seen: 0 to 18 (`assets/lab/scope-skew.sh`
/// reads the inputs just before and just after wb_stats: the kernel's figure 13 pages above
/// both neighbours in some triples, so not a missing term but the inputs moving; with the
/// writer stopped it is exact, which `check_still` asserts).
const SKEW_PAGES: u64 = 51;

fn records(suite: &str, text: &str, section: &str) -> Vec<Value> {
    let v: Vec<Value> = text
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        v.len() >= 4,
        "{suite} {section}: {} records: {text}",
        v.len()
    );
    v
}

fn u(v: &Value, p: &str) -> Option<u64> {
    v.pointer(p).and_then(Value::as_u64)
}

/// The checks on one way of choosing the scope (`how` starts with `how`).
fn check(suite: &str, section: &str, text: &str, how: &str, wb_stats: bool) {
    let recs = records(suite, text, section);
    let mut throttled_while_host_calm = 0;
    let mut exact = 0;
    for r in &recs {
        let s = &r["scope"];
        assert_eq!(s["path"], "/box", "{suite} {section}: {s}");
        assert!(
            s["how"].as_str().is_some_and(|h| h.starts_with(how)),
            "{suite} {section}: how {}",
            s["how"]
        );
        assert_eq!(
            u(s, "/memory_max_bytes"),
            Some(MAX_256M),
            "{suite} {section}"
        );
        assert_eq!(
            r["verdict"]["dirty"]["domain"], "cgroup /box",
            "{suite} {section}"
        );
        let d = &s["domain"];
        assert_eq!(d["path"], "/box", "{suite} {section}: {s}");
        let thresh = u(d, "/thresh_pages").unwrap();
        let kernel = u(d, "/kernel_thresh_pages");
        let global = &r["domains"][0];
        println!(
            "{suite} {section}: verdict {} {}, /box thresh {thresh} kernel {kernel:?} d+wb {} \
             freerun {}; host {} ({})",
            r["verdict"]["dirty"]["domain"],
            r["verdict"]["dirty"]["state"],
            u(d, "/dirty_pages").unwrap_or(0) + u(d, "/writeback_pages").unwrap_or(0),
            d["freerun_pages"],
            global["state"],
            r["verdict"]["dirty"]["host"]
        );
        if wb_stats {
            let k = kernel.unwrap_or_else(|| panic!("{suite} {section}: no WbDirtyThresh: {d}"));
            assert!(
                thresh.abs_diff(k) <= SKEW_PAGES,
                "{suite} {section}: thresh {thresh} vs the kernel's {k}: more than the \
                 {SKEW_PAGES} pages the reads' skew explains"
            );
            exact += usize::from(thresh.abs_diff(k) <= 1);
        } else {
            assert_eq!(kernel, None, "{suite}: no wb_stats before 6.10");
            assert!(
                s["missing"].as_array().unwrap().iter().any(|m| m
                    .as_str()
                    .unwrap()
                    .starts_with("sys/kernel/debug/bdi/*/wb_stats")),
                "{suite} {section}: the missing wb_stats is not named: {}",
                s["missing"]
            );
        }
        let paced = matches!(
            r["verdict"]["dirty"]["state"].as_str(),
            Some("writers_throttled" | "over_thresh" | "at_hard_limit")
        );
        if paced && global["state"] == "below_background" {
            throttled_while_host_calm += 1;
        }
    }
    println!(
        "{suite} {section}: {throttled_while_host_calm} of {} records throttled in /box while \
         the host was below background; thresholds within 1 page of the kernel's in {exact}",
        recs.len()
    );
    // On 6.12 (the kernel of the acceptance figures) /box's writer is paced by its own domain
    // while the host's is below background. Older kernels here often catch the writer between
    // bursts (6.1 inside: flushing in 3 of 6 records, never over freerun): not asserted.
    assert!(
        !wb_stats || throttled_while_host_calm > 0,
        "{suite} {section}: /box never throttled while the host was calm"
    );
    // While the writer runs the two reads see different inputs (SKEW_PAGES); a derivation off
    // by more than a page would be off in all records.
    assert!(
        !wb_stats || exact > 0,
        "{suite} {section}: within 1 page of WbDirtyThresh in {exact} of {}",
        recs.len()
    );
}

/// With /box's writer stopped and its pages clean, its counters hold still and pagewatch reads
/// the inputs the kernel reads: the derived threshold (spec §1.8) is the kernel's
/// `WbDirtyThresh` to the page in every record (the kernel's wb share is the whole domain's
/// with one wb in it: `__wb_calc_thresh`'s fraction is 1 once its completions are counted).
fn check_still(suite: &str, text: &str) {
    let recs = records(suite, text, "still");
    for r in &recs {
        let d = &r["scope"]["domain"];
        assert_eq!(d["path"], "/box", "{suite} still: {d}");
        let thresh = u(d, "/thresh_pages").unwrap();
        let k = u(d, "/kernel_thresh_pages")
            .unwrap_or_else(|| panic!("{suite} still: no WbDirtyThresh: {d}"));
        println!("{suite} still: /box thresh {thresh} kernel {k}");
        assert!(
            thresh.abs_diff(k) <= 1,
            "{suite} still: thresh {thresh} vs the kernel's {k} with /box's counters still"
        );
    }
}

/// As uid 1000 in /box: the scope's memory figures and domain are there, and what needs
/// root is named (wb_stats, the tracepoint).
fn check_nonroot(suite: &str, text: &str) {
    let recs = records(suite, text, "nonroot");
    for r in &recs {
        let s = &r["scope"];
        assert_eq!(s["path"], "/box", "{suite} nonroot: {s}");
        assert_eq!(u(s, "/memory_max_bytes"), Some(MAX_256M), "{suite} nonroot");
        assert!(
            u(s, "/memory_current_bytes").is_some(),
            "{suite} nonroot: {s}"
        );
        assert!(u(s, "/file_bytes").is_some(), "{suite} nonroot: {s}");
        assert!(
            u(s, "/domain/thresh_pages").is_some(),
            "{suite} nonroot: {s}"
        );
        assert_eq!(
            r["verdict"]["dirty"]["domain"], "cgroup /box",
            "{suite} nonroot"
        );
        let missing: Vec<&str> = s["missing"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            missing
                .iter()
                .any(|m| m.starts_with("sys/kernel/debug/bdi/*/wb_stats")),
            "{suite} nonroot: {missing:?}"
        );
        println!(
            "{suite} nonroot: tracer {}, missing {missing:?}",
            r["tracer"]
        );
    }
    // The tracepoint is wanted once a domain is throttled: from then on its need of root is
    // named.
    assert!(
        recs.iter().any(|r| r["scope"]["missing"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m.as_str().unwrap().contains("need root (euid 1000)"))),
        "{suite} nonroot: the tracepoint's need of root never named"
    );
}

/// The static binary, built (or found up to date) by `packaging/static.sh` as
/// `static_build.rs` does; why not, when it cannot be had.
fn static_bin() -> Result<PathBuf, String> {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/static.sh"))
        .env("CARGO_TARGET_DIR", target)
        .output()
        .map_err(|e| format!("static.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "static.sh failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(target.join("x86_64-unknown-linux-gnu/dist/pagewatch"))
}

/// The static binary alone in an empty root, /proc and /sys bind-mounted read-only, in /box
/// and its own cgroup namespace: the same scope as the dynamic one's inside.
fn check_empty_root(suite: &str, s: &BTreeMap<String, String>, wb_stats: bool) {
    assert_eq!(
        s["empty-root-files"].split_whitespace().collect::<Vec<_>>(),
        ["pagewatch", "proc", "sys"],
        "{suite}: the empty root"
    );
    for r in records(suite, &s["empty-root"], "empty-root") {
        let sc = &r["scope"];
        assert_eq!(sc["path"], "/box", "{suite} empty root: {sc}");
        assert!(
            sc["how"].as_str().unwrap().starts_with("cgroup namespace"),
            "{suite} empty root: {sc}"
        );
        assert_eq!(
            u(sc, "/memory_max_bytes"),
            Some(MAX_256M),
            "{suite} empty root"
        );
        assert!(
            u(sc, "/domain/thresh_pages").is_some(),
            "{suite} empty root: {sc}"
        );
        assert_eq!(
            r["verdict"]["dirty"]["domain"], "cgroup /box",
            "{suite} empty root"
        );
        // debugfs is bind-mounted too: the kernel's own threshold where the kernel has it.
        assert_eq!(
            u(sc, "/domain/kernel_thresh_pages").is_some(),
            wb_stats,
            "{suite} empty root: {sc}"
        );
        println!(
            "{suite} empty root: /box {} max {} thresh {} kernel {}",
            r["verdict"]["dirty"]["state"],
            sc["memory_max_bytes"],
            sc["domain"]["thresh_pages"],
            sc["domain"]["kernel_thresh_pages"]
        );
    }
}

/// Boots `suite` with `assets/lab/scope.sh` and checks what it printed; skips, saying why,
/// where the lab cannot run.
pub fn check_kernel(suite: &str, version: &str) {
    let static_path = static_bin().map(|p| p.display().to_string());
    let mut env = vec![("LAB_EXTRA", "unshare setpriv")];
    match &static_path {
        Ok(p) => env.push(("LAB_STATIC", p.as_str())),
        Err(why) => println!("{suite}: no empty-root run: {why}"),
    }
    let mut g = lab::Guest::new(suite, "scope.sh", Path::new(EXE));
    g.env = &env;
    g.tools = &["unshare", "setpriv"];
    let s = match g.boot() {
        Ok(s) => s,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let kernel = s.keys().find(|k| k.starts_with("kernel ")).unwrap();
    assert!(kernel.contains(version), "{suite}: {kernel}");
    let facts = &s["inside-facts"];
    assert!(
        facts.starts_with("0::/\n"),
        "{suite}: /proc/self/cgroup: {facts}"
    );
    assert!(
        facts.contains(" /.. /sys/fs/cgroup "),
        "{suite}: mountinfo: {facts}"
    );
    let wb_stats = version == "6.12.";
    check(suite, "inside", &s["inside"], "cgroup namespace", wb_stats);
    check(suite, "host", &s["host"], "--cgroup", wb_stats);
    check_nonroot(suite, &s["nonroot"]);
    if wb_stats {
        check_still(suite, &s["still"]);
    }
    if static_path.is_ok() {
        check_empty_root(suite, &s, wb_stats);
    }
}
