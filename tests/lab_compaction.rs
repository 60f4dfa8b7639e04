//! Direct compaction in the kernel lab (issue 56, spec §13): a 6.12 guest of 1 GiB runs
//! assets/lab/compaction.sh: memory fragmented by page cache (two files written a page at a
//! time in turns, one removed: every other page free), THP `always`, then `pagewatch eat 360M` (the most under
//! its safety margin there), whose huge-page faults must compact. pagewatch's compact stalls
//! per second, times each interval, summed over the records after the guest's first
//! `/proc/vmstat` read, equal the guest's own `compact_stall` delta across the eater (nothing
//! else in the guest compacts directly; kcompactd does not count there), which is > 0, and
//! some record shows a rate > 0. On a host the same check (`stalls_live.rs`) skips when free
//! memory comes in whole huge pages; the small fragmented guest must compact. Skips, saying
//! why, without qemu or the kernel. About 40 s; hold `flock -o /tmp/pw-lab.lock`.
#![allow(clippy::unwrap_used)]

#[path = "common/lab.rs"]
mod lab;

fn counter(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

#[test]
fn compact_stalls_per_second_are_the_guests_vmstat_delta() {
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_pagewatch"));
    let out = match lab::Guest::new("trixie", "compaction.sh", exe).boot() {
        Ok(out) => out,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    assert!(out["thp"].starts_with("[always]"), "{}", out["thp"]);
    let delta = |name| counter(&out["after"], name) - counter(&out["before"], name);
    let ours = delta("compact_stall");
    let records: Vec<serde_json::Value> = out["records"]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (mut sum, mut most) = (0.0, 0.0_f64);
    for r in records.iter().skip(1) {
        let rate = r["reclaim"]["compact_stall_s"].as_f64().unwrap();
        sum += rate * r["interval_s"].as_f64().unwrap();
        most = most.max(rate);
    }
    eprintln!(
        "compact_stall ours {ours} ({} → {}), fail {}, success {}, thp_fault_alloc {}, \
         thp_fault_fallback {}; pagewatch Σ rate·dt over {} records {sum:.1}, highest {most:.1}/s; \
         eater {}; {}",
        counter(&out["before"], "compact_stall"),
        counter(&out["after"], "compact_stall"),
        delta("compact_fail"),
        delta("compact_success"),
        delta("thp_fault_alloc"),
        delta("thp_fault_fallback"),
        records.len() - 1,
        out["eat"].trim(),
        out["meminfo_before"].replace('\n', " ")
    );
    assert!(records.len() >= 3, "{} records", records.len());
    assert!(
        ours > 0,
        "the eater's huge-page faults never compacted directly"
    );
    assert!(most > 0.0, "no record showed compact stalls");
    assert!(
        (sum - ours as f64).abs() <= 0.5,
        "pagewatch counted {sum} compact stalls, the guest's vmstat {ours}"
    );
}
