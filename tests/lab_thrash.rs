//! The kernel lab's thrashing check (issue 25 §3), on real Debian kernels (5.10, 6.1, 6.12)
//! under qemu, as `tests/lab.rs` boots them (`assets/lab/boot.sh`), with its own guest script
//! `assets/lab/thrash.sh`: a group `/thrash` capped at 64M re-reads a 160M file, `/calm`
//! re-reads 16M inside its own 64M and `/busy` rewrites 64M, while `pagewatch record` samples
//! them without the cgroups view open. On the host, from the guest's recording:
//! - every memory.stat rate of `/thrash` in the replayed JSON (`refault_file_per_s`,
//!   `refault_anon_per_s`, `activate_per_s`, `pgscan_per_s`, `pgsteal_per_s`,
//!   `pgmajfault_per_s`) equals the difference of the counters in the two samples' raw
//!   memory.stat text over the difference of their timestamps, computed here;
//! - `/thrash` refaults its file pages, and leads the cgroups view sorted by refaults (`s`).
//!
//! Skips, saying why, when qemu or the kernel packages cannot be had (as `tests/lab.rs`).
//! `PAGEWATCH_LAB_OUTPUT=DIR` keeps each guest's output as `DIR/SUITE.txt` and checks a kept
//! one instead of booting again (to work on the host side without the guest's minute).
#![allow(clippy::unwrap_used)]

#[path = "common/lab.rs"]
mod lab;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use pagewatch::app::{Action, App, CgroupSort, Look, Msg};
use pagewatch::sample::{RawSample, names};
use pagewatch::source::HostInfo;
use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");

/// The guest's output split into `== NAME` sections, or why the lab cannot run here; kept in
/// `PAGEWATCH_LAB_OUTPUT` when that is set (and read back from there on the next run).
fn boot(suite: &str) -> Result<BTreeMap<String, String>, String> {
    let mut g = lab::Guest::new(suite, "thrash.sh", Path::new(EXE));
    g.keep = std::env::var_os("PAGEWATCH_LAB_OUTPUT").map(Into::into);
    g.boot()
}

/// A memory.stat counter from the raw text, by hand (not pagewatch's parser).
fn counter(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().unwrap())
    })
}

/// The counters behind each JSON rate: (field, memory.stat keys summed).
const RATES: [(&str, &[&str]); 6] = [
    ("refault_file_per_s", &["workingset_refault_file"]),
    ("refault_anon_per_s", &["workingset_refault_anon"]),
    (
        "activate_per_s",
        &["workingset_activate_anon", "workingset_activate_file"],
    ),
    ("pgscan_per_s", &["pgscan"]),
    ("pgsteal_per_s", &["pgsteal"]),
    ("pgmajfault_per_s", &["pgmajfault"]),
];

fn thrash_stat(s: &RawSample) -> Option<&str> {
    s.file(&names::cgroup_file("/thrash", "memory.stat"))
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
    println!("{suite} /thrash memory.stat:\n{}", s["memory.stat"]);
    for key in RATES.iter().flat_map(|r| r.1.iter()) {
        assert!(
            counter(&s["memory.stat"], key).is_some(),
            "{suite}: memory.stat has no {key}"
        );
    }
    assert!(
        s.keys().any(|k| k == "record-exit 0"),
        "{suite}: record failed: {:?}",
        s.keys()
    );
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
    let samples = pagewatch::record::read(&rec).unwrap().samples;
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
    let lines: Vec<Value> = String::from_utf8(host.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // A record for every sample but the first (no interval yet), stamped with its wall time.
    assert_eq!(
        lines.len() + 1,
        samples.len(),
        "{suite}: one record a sample"
    );
    let (mut checked, mut refaulting, mut pages) = (0, 0, 0);
    for (j, v) in lines.iter().enumerate() {
        let i = j + 1;
        assert_eq!(v["time_ms"].as_i64(), Some(samples[i].wall_ms), "{suite}");
        let rows = v["cgroups"]["rows"].as_array().unwrap();
        let row = rows.iter().find(|r| r["path"] == "/thrash");
        let (Some(a), Some(b)) = (thrash_stat(&samples[i - 1]), thrash_stat(&samples[i])) else {
            println!("{suite} sample {i}: /thrash not in both samples: {row:?}");
            continue;
        };
        let row = row.unwrap_or_else(|| panic!("{suite} sample {i}: no /thrash row"));
        let dt = (samples[i].mono_ns - samples[i - 1].mono_ns) as f64 / 1e9;
        for (field, keys) in RATES {
            let sum = |t: &str| keys.iter().map(|k| counter(t, k).unwrap()).sum::<u64>();
            let want = (sum(b) - sum(a)) as f64 / dt;
            let got = row[field]
                .as_f64()
                .unwrap_or_else(|| panic!("{suite}: {field} {row}"));
            assert!(
                (got - want).abs() <= 1e-9 * want.max(1.0),
                "{suite} sample {i} {field}: pagewatch {got}, memory.stat {want}"
            );
        }
        let d = counter(b, "workingset_refault_file").unwrap()
            - counter(a, "workingset_refault_file").unwrap();
        pages += d;
        refaulting += usize::from(d > 0);
        checked += 1;
        let top: Vec<(&Value, &Value, &Value)> = rows
            .iter()
            .map(|r| (&r["path"], &r["refault_file_per_s"], &r["pgscan_per_s"]))
            .collect();
        println!(
            "{suite} sample {i}: dt {dt:.3} s, /thrash +{d} file refaults; (path, refault_file/s, pgscan/s) {top:?}"
        );
    }
    assert!(checked >= 3, "{suite}: /thrash rated in {checked} samples");
    assert!(
        refaulting + 1 >= checked && pages >= 4096,
        "{suite}: /thrash refaulted in {refaulting} of {checked} intervals, {pages} pages"
    );
    leads_the_view(suite, &samples);
}

/// The cgroups view sorted by refaults (`c`, then `s`) has /thrash first at every sample
/// where it has a rate, and draws it on the first row.
fn leads_the_view(suite: &str, samples: &[RawSample]) {
    let host = HostInfo {
        hostname: "lab".into(),
        kernel: suite.into(),
        cpus: 2,
    };
    let mut app = App::new(host, Look::default(), 0.5);
    app.update(Msg::Action(Action::Cgroups));
    app.update(Msg::Action(Action::Sort));
    assert_eq!(app.ui.cgroup_sort, CgroupSort::Refault);
    let mut led = 0;
    for s in samples {
        app.update(Msg::Sample(s.clone()));
        let order = app.sorted_cgroups();
        if order
            .iter()
            // While it refaults: a sample in which it only scanned (its first pass over the
            // file) ties the others at 0 refaults/s.
            .any(|r| r.path == "/thrash" && r.refault_file_per_s.is_some_and(|v| v > 0.0))
        {
            assert_eq!(order[0].path, "/thrash", "{suite}: {order:?}");
            led += 1;
        }
    }
    // Under TCG on a loaded host the guest gets 5-7 sample pairs, not all of them refaulting.
    assert!(led >= 2, "{suite}: /thrash led in {led} samples");
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 48)).unwrap();
    t.draw(|f| pagewatch::ui::draw(f, &app)).unwrap();
    let screen = t.backend().to_string();
    let mut rows = screen.lines().skip_while(|l| !l.contains("│CGROUP"));
    let first = rows.nth(1).unwrap();
    println!("{suite}: the view sorted by refaults:\n{screen}");
    assert!(first.starts_with("\"│/thrash "), "{suite}: {first}");
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
