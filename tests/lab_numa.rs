//! NUMA nodes in the kernel lab (spec §12): a 6.12 guest with two nodes (assets/lab/boot.sh
//! with `LAB_NUMA=1`) runs assets/lab/numa.sh.
//!
//! Part 1: a dd bound to node 0 by a cpuset writes 48 MiB and ends, with the flusher's
//! periodic writeback off, so node 0's dirty pages and file LRU stay as they are. In a try
//! where node 0's `nr_dirty + nr_writeback` (its own `nodeN/vmstat`) moved under 1 % across a
//! pagewatch record, the record's node 0 dirty + writeback equals it within 1 %, and its
//! `node_dirty_limit` equals this test's own from node 0's zoneinfo, file LRU and
//! `dirty_ratio` (read right after) with the free pages the record read. (A 600 MiB writer
//! stopped mid-way, as before, left the flusher and kswapd moving node 0 under the checks.
//! With the 48 MiB writer too, the limit came out 3 pages apart twice (ours 20 166 against
//! 20 163, 15 993 against 15 990, the same free pages): node 0's file LRU had moved across
//! the record, seen once as 12 294 → 12 342 over the first one (what adds those pages is not
//! settled). A try counts only while the LRU, read before and after the record, holds; the
//! later tries hold and agree to the page.)
//!
//! Part 2, the spill: node 0 pushed past its share (ratio 40, background 39) by a dd bound to
//! it, then a paced writer on node 0's CPU free to use both nodes, so the kernel places its
//! page cache on node 1 while the flusher stays off and nothing throttles the writer (see
//! numa.sh). In every try whose verdict names a node past its share and a spill (`(node Y
//! numa_miss N/s`), N is pagewatch's own rate for node Y, above 0, and node Y's `numa_miss`
//! (its `numastat`, read by this test before and after the record) rose across the record by
//! at least that rate × interval; a spill away from node X (`go to node Y`) has node X's
//! `numa_foreign` rising too. Tries with no node past, nothing dirtied or no spill named are
//! printed and left out; at least one try must name a spill. Skips, saying why, without qemu
//! or the kernel. About 35 s; hold `flock -o /tmp/pw-lab.lock`.
#![allow(clippy::unwrap_used)]

#[path = "common/lab.rs"]
mod lab;

use std::collections::BTreeMap;

/// `name value` of a `vmstat`-like text, and `path:name value` of a grep over two files.
fn value(text: &str, file: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let l = l.strip_prefix(file).unwrap_or(l);
            let (n, v) = l.split_once(' ')?;
            (n == name).then(|| v.trim().parse().ok())?
        })
        .unwrap_or_else(|| panic!("no {file}{name} in {text}"))
}

/// Node 0's `totalreserve_pages` from zoneinfo (spec §1.3): Σ min(managed, high − boost +
/// max(protection)) over its zones.
fn node0_reserve(zoneinfo: &str) -> u64 {
    let mut total = 0;
    for block in zoneinfo.split("Node ").skip(1) {
        if !block.starts_with("0,") {
            continue;
        }
        let field = |name: &str| -> u64 {
            block
                .lines()
                .find_map(|l| {
                    let mut w = l.split_whitespace();
                    (w.next()? == name).then(|| w.next()?.parse().ok())?
                })
                .unwrap_or(0)
        };
        let prot = block
            .lines()
            .find_map(|l| l.trim().strip_prefix("protection: ("))
            .map_or(0, |p| {
                p.trim_end_matches(')')
                    .split(',')
                    .filter_map(|v| v.trim().parse::<u64>().ok())
                    .max()
                    .unwrap_or(0)
            });
        let managed = field("managed");
        total += managed.min(field("high").saturating_sub(field("boost")) + prot);
    }
    total
}

fn check_try(out: &BTreeMap<String, String>, i: u32) -> Option<String> {
    let node0 = "/sys/devices/system/node/node0/vmstat:";
    let dw = |s: &str| value(s, node0, "nr_dirty") + value(s, node0, "nr_writeback");
    let (before, after) = (
        dw(&out[&format!("before{i}")]),
        dw(&out[&format!("after{i}")]),
    );
    let lru = |s: &str| value(s, node0, "nr_inactive_file") + value(s, node0, "nr_active_file");
    let lru_before = lru(&out[&format!("before{i}")]);
    let lru_after = lru(&out[&format!("after{i}")]);
    if before.abs_diff(after) * 100 > before.max(1) || lru_before != lru_after {
        eprintln!(
            "try {i} left out: node 0 dirty+writeback {before} → {after}, file LRU \
             {lru_before} → {lru_after}"
        );
        return None;
    }
    let rec: serde_json::Value = serde_json::from_str(out[&format!("sample{i}")].trim()).unwrap();
    let n0 = &rec["nodes"][0];
    assert_eq!(n0["node"], 0, "{rec}");
    let ours = n0["dirty_writeback_pages"].as_u64().unwrap();
    assert!(
        ours.abs_diff(before) * 100 <= before,
        "node 0 dirty + writeback: pagewatch {ours}, node0/vmstat {before} → {after}"
    );
    let state = &out[&format!("state{i}")];
    let vm = |name| value(state, "", name);
    let free = n0["free_pages"].as_u64().unwrap();
    let free_after = vm("nr_free_pages");
    let reserve = node0_reserve(state);
    // The file LRU as it was across the record (it held), not as read after it.
    let dirtyable = free - free.min(reserve) + lru_before;
    assert_eq!(vm("dirty_bytes"), 0, "the guest runs in ratio mode");
    let limit = vm("dirty_ratio") * dirtyable / 100;
    let theirs = n0["dirty_limit_pages"].as_u64().unwrap();
    assert_eq!(
        theirs,
        limit,
        "node_dirty_limit: pagewatch {theirs}, ours {limit} (free {free}, {free_after} after; \
         reserve {reserve}; file LRU {lru_before}, {} after; dirtyable pagewatch {}, ours \
         {dirtyable})",
        vm("nr_inactive_file") + vm("nr_active_file"),
        n0["dirtyable_pages"]
    );
    Some(format!(
        "try {i}: node 0 dirty+writeback {ours} (vmstat {before} → {after}); node_dirty_limit \
         {theirs} (ours {limit}; free {free}, {free_after} once pagewatch exited); past its \
         share {}; verdict {}",
        n0["past_dirty_share"], rec["verdict"]["nodes"]
    ))
}

/// The spill a node note names, `(node Y numa_miss N/s`: Y and N as printed.
fn named_spill(note: &str) -> Option<(usize, String)> {
    let rest = &note[note.find("(node ")? + "(node ".len()..];
    let (y, rest) = rest.split_once(" numa_miss ")?;
    Some((y.parse().ok()?, rest.split_once("/s")?.0.to_owned()))
}

/// A spill try: `None` (printed) when no node was past its share at the record, nothing was
/// dirtied in its interval, or its note names no spill; else, the note naming the node past
/// its share and the receiver Y: Y's `numa_miss` rose in pagewatch's interval (its rate, as
/// the note prints it) and across this test's window (Y's `numastat`, read before and after
/// the record), by at least pagewatch's rate × interval; a spill away from node X (`go to
/// node Y`) has X's `numa_foreign` rising across the window too.
fn check_spill(out: &BTreeMap<String, String>, i: u32) -> Option<String> {
    let rec: serde_json::Value =
        serde_json::from_str(out[&format!("spill_sample{i}")].trim()).unwrap();
    let note = rec["verdict"]["nodes"].as_str().unwrap_or("");
    let nodes = rec["nodes"].as_array().unwrap();
    let dirtied = rec["dirty"]["dirtied_per_s"].as_f64().unwrap();
    let seen = |n: &serde_json::Value| {
        format!(
            "node {} dirty+writeback {} of {} past {} numa_miss {}/s numa_foreign {}/s",
            n["node"],
            n["dirty_writeback_pages"],
            n["dirty_limit_pages"],
            n["past_dirty_share"],
            n["numa_miss_s"],
            n["numa_foreign_s"]
        )
    };
    let state = format!(
        "{}; {}; dirtied {dirtied:.0}/s; verdict {note:?}",
        seen(&nodes[0]),
        seen(&nodes[1])
    );
    if note.contains("nothing dirtied this interval") {
        assert!(dirtied <= 0.0, "{rec}");
    }
    let Some((to, printed)) = named_spill(note) else {
        eprintln!("spill try {i} left out (no spill named): {state}");
        return None;
    };
    let past: Vec<bool> = nodes
        .iter()
        .map(|n| n["past_dirty_share"] == true)
        .collect();
    let from = if note.starts_with("every node past") {
        assert!(past.iter().all(|p| *p), "{state}");
        None
    } else {
        let x: usize = note
            .strip_prefix("node ")
            .and_then(|r| r.split_once(' '))
            .and_then(|(x, _)| x.parse().ok())
            .unwrap_or_else(|| panic!("{state}"));
        let n = &nodes[x];
        assert!(past[x], "{state}");
        assert!(
            n["dirty_writeback_pages"].as_u64() > n["dirty_limit_pages"].as_u64(),
            "{state}"
        );
        note.contains(&format!("go to node {to} ")).then_some(x)
    };
    let rate = nodes[to]["numa_miss_s"].as_f64().unwrap();
    assert!(rate > 0.0, "{state}");
    assert_eq!(printed, format!("{rate:.0}"), "{state}");
    let numastat = |when: &str, node: usize, name: &str| {
        let file = format!("/sys/devices/system/node/node{node}/numastat:");
        value(&out[&format!("spill_{when}{i}")], &file, name)
    };
    let (before, after) = (
        numastat("before", to, "numa_miss"),
        numastat("after", to, "numa_miss"),
    );
    let dt = rec["interval_s"].as_f64().unwrap();
    assert!(
        after > before,
        "the note names node {to}'s numa_miss but its numastat stayed at {before}: {state}"
    );
    // The record's interval lies within this test's two reads.
    assert!(
        rate * dt <= (after - before) as f64 + 1.0,
        "pagewatch's node {to} numa_miss {rate}/s × {dt} s is more than numastat's {before} → \
         {after}: {state}"
    );
    if let Some(x) = from {
        assert_ne!(x, to, "{state}");
        let (fb, fa) = (
            numastat("before", x, "numa_foreign"),
            numastat("after", x, "numa_foreign"),
        );
        assert!(fa > fb, "node {x} numa_foreign stayed at {fb}: {state}");
    }
    Some(format!(
        "spill try {i}: node {to} numa_miss {before} → {after} (+{}), pagewatch {rate:.0}/s × \
         {dt:.2} s; {state}",
        after - before
    ))
}

#[test]
fn node_0_dirty_and_its_dirty_limit_are_the_kernels() {
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_pagewatch"));
    let mut guest = lab::Guest::new("trixie", "numa.sh", exe);
    guest.env = &[("LAB_NUMA", "1")];
    let out = match guest.boot() {
        Ok(out) => out,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    assert_eq!(
        out["nodes"].lines().next().map(str::trim),
        Some("2"),
        "{out:?}"
    );
    let seen: Vec<String> = (1..=3).filter_map(|i| check_try(&out, i)).collect();
    for s in &seen {
        eprintln!("{s}");
    }
    assert!(
        !seen.is_empty(),
        "node 0's dirty pages moved 1 % or more in every try"
    );
    let spilled: Vec<String> = (1..=6).filter_map(|i| check_spill(&out, i)).collect();
    for s in &spilled {
        eprintln!("{s}");
    }
    assert!(
        !spilled.is_empty(),
        "no try's verdict named a node past its share with a spill"
    );
}
