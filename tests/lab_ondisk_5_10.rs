//! Issue 53's acceptance in the kernel lab on bullseye (5.10): `common/lab_ondisk.rs` says
//! what is checked. Before 6.10 debugfs `stats` is the root wb's alone (spec §15.1), so the
//! disk figures are apportioned from meminfo and the ETA is at the measured write rate (a
//! `sync` takes within ±30 % of it); there is no cachestat (6.5+), and the dirty files say so. About 30 s under TCG; skips, saying why, where the lab cannot run. Hold
//! `flock -o /tmp/pw-lab.lock`.
#![allow(clippy::unwrap_used)]

#[path = "common/lab_ondisk.rs"]
mod lab_ondisk;

#[test]
fn bullseye_device_figures_hold_and_the_file_table_says_why_it_is_empty() {
    let Some(run) = lab_ondisk::run("bullseye") else {
        return;
    };
    assert!(run.kernel.starts_with("5.10."), "{}", run.kernel);
    lab_ondisk::device_figures_hold(run);
    // Apportioned, at the measured write rate: the ETA holds here (seen: 6.00 s printed, sync
    // 7.01 s), unlike 6.12's from `BdiWriteBandwidth` (`lab_ondisk.rs`).
    lab_ondisk::sync_takes_the_printed_eta(run);
    // The root wb's `stats` are never used here: every figure is apportioned.
    for n in 1..=run.records.len() {
        assert_eq!(run.vda(n)["dirty_from"], "apportioned", "record {n}");
    }
    let mut said = 0;
    for n in 1..=run.records.len() {
        let t = &run.record(n)["dirty_files"];
        if t.is_null() {
            continue;
        }
        assert_eq!(t["files"], serde_json::json!([]), "record {n}");
        assert!(
            t["note"]
                .as_str()
                .is_some_and(|s| s.contains("cachestat(2) is missing")),
            "record {n}: {t}"
        );
        said += 1;
    }
    assert!(said > 0, "no record carried the dirty files");
}
