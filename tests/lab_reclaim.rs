//! The reclaim tracer's events on the lab kernels (5.10, 6.1, 6.12) under qemu: each has the
//! four vmscan reclaim events (`parse::reclaim_trace::EVENTS`, spec §3.3), and pagewatch's
//! layouts accept their `format` files as the guest's tracefs gives them (5.10's `gfp_flags`
//! is a 4-byte `gfp_t` at 12, later kernels' an `unsigned long` at 16; every end has
//! `nr_reclaimed`). A bare guest (busybox only) reading tracefs: about 10 s a kernel. Skips,
//! saying why, where qemu or a kernel is missing.
#![allow(clippy::unwrap_used)]

#[path = "common/lab.rs"]
mod lab;

use std::path::Path;

use pagewatch::parse::reclaim_trace::{EVENTS, Layouts};

const EXE: &str = env!("CARGO_BIN_EXE_pagewatch");

fn check(suite: &str, release: &str) {
    let mut g = lab::Guest::new(suite, "reclaim-events.sh", Path::new(EXE));
    g.env = &[("LAB_BARE", "1")];
    let out = match g.boot() {
        Ok(o) => o,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    assert!(out["uname"].starts_with(release), "{out:?}");
    let formats: Vec<(&str, &str)> = EVENTS.iter().map(|e| (*e, out[*e].as_str())).collect();
    for (e, f) in &formats {
        assert!(f.contains("ID:"), "{suite}: {e}: {f}");
    }
    let layouts = Layouts::new(&formats).unwrap_or_else(|e| panic!("{suite}: {e}"));
    // A record of the end event as this kernel lays it out: id, flags, pid, nr_reclaimed.
    let id: u16 = out[EVENTS[1]]
        .lines()
        .find_map(|l| l.strip_prefix("ID: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut rec = id.to_ne_bytes().to_vec();
    rec.extend([0, 0]);
    rec.extend(4242i32.to_ne_bytes());
    rec.extend(37u64.to_ne_bytes());
    let r = layouts.decode(&rec, 5).unwrap();
    assert_eq!((r.tid, r.reclaimed), (4242, 37), "{suite}");
}

#[test]
fn bullseye_5_10() {
    check("bullseye", "5.10.");
}

#[test]
fn bookworm_6_1() {
    check("bookworm", "6.1.");
}

#[test]
fn trixie_6_12() {
    check("trixie", "6.12.");
}
