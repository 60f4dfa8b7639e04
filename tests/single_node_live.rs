//! A single-node machine pays nothing for the NUMA node lines (issue 56, spec §12):
//! `no_node_file_is_opened_on_one_node` runs `pagewatch --batch --format json` for five
//! samples under `strace -f -e trace=open,openat,openat2` and finds no
//! `/sys/devices/system/node/` path opened (while `/proc/zoneinfo`, where the node list comes
//! from, is), and no `nodes` in any record or verdict. Skips, saying why, on a machine with
//! more than one node or without strace. About 3 s.
#![allow(clippy::unwrap_used)]

#[path = "common/live.rs"]
mod live;

use std::process::Command;

fn why_not() -> Option<String> {
    let nodes = std::fs::read_dir("/sys/devices/system/node").map_or(1, |d| {
        d.filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.strip_prefix("node")
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .count()
    });
    if nodes > 1 {
        return Some(format!("this machine has {nodes} NUMA nodes"));
    }
    if !live::have("strace") {
        return Some("strace is not installed".into());
    }
    None
}

#[test]
fn no_node_file_is_opened_on_one_node() {
    if let Some(why) = why_not() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_pagewatch"))
        .args([
            "--batch",
            "--format",
            "json",
            "-n",
            "5",
            "-i",
            "0.2",
            "--no-config",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let opened = std::fs::read_to_string(&log).unwrap();
    let zoneinfo = opened
        .lines()
        .filter(|l| l.contains("\"/proc/zoneinfo\""))
        .count();
    assert!(
        zoneinfo > 0,
        "strace saw no open of /proc/zoneinfo:\n{opened}"
    );
    let node: Vec<&str> = opened
        .lines()
        .filter(|l| l.contains("/sys/devices/system/node/"))
        .collect();
    assert!(node.is_empty(), "node files opened on one node: {node:#?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 5);
    for r in &records {
        assert!(r.get("nodes").is_none(), "{}", r["nodes"]);
        assert!(r["verdict"].get("nodes").is_none(), "{}", r["verdict"]);
    }
    eprintln!(
        "{} opens over 5 samples, /proc/zoneinfo {zoneinfo} times, no node file",
        opened.lines().count()
    );
}
