use std::fmt::Write as _;

use super::*;
use crate::parse::procs::parse;
use crate::parse::procs::tests::stat_line;

/// A stat line with rss (field 24) and majflt (field 12) set.
fn stat(pid: u32, comm: &str, state: char, rss: u64, majflt: u64) -> String {
    let line = stat_line(pid, comm, state, 1, 100 + u64::from(pid), 0);
    let (head, rest) = line.split_once(") ").unwrap();
    let mut f: Vec<String> = rest.split(' ').map(str::to_owned).collect();
    f[24 - 3] = rss.to_string();
    f[12 - 3] = majflt.to_string();
    format!("{head}) {}", f.join(" "))
}

fn mem(
    pid: u32,
    comm: &str,
    state: char,
    rss: u64,
    before: Option<(u64, u64)>,
    wchan: &str,
) -> String {
    let mut t = format!("M {pid} {} {state} {rss} 50", 100 + pid);
    match before {
        Some((r, f)) => drop(writeln!(t, " {r} {f}")),
        None => t.push_str(" - -\n"),
    }
    let _ = write!(
        t,
        "mem {} {} 0 0 8\noom_score_adj 0\nwchan {wchan}\ncomm {comm}\n",
        rss * 4,
        rss * 4
    );
    t
}

fn walk(body: &str) -> Walk {
    let head = "walk 4000000000\nprev 2000000000\nclk_tck 100\ntask_delayacct 0\nscope -\n\
                page_size 4096\n";
    parse(&format!("{head}{body}")).unwrap()
}

#[test]
fn the_largest_leads_and_a_task_stalled_in_reclaim_comes_first() {
    let w = walk(&format!(
        "{}{}{}",
        mem(10, "small", 'S', 1000, Some((1000, 50)), "0"),
        mem(11, "eat", 'S', 1 << 20, Some((1 << 19, 10)), "do_wait"),
        mem(12, "victim", 'D', 200, None, "shrink_folio_list"),
    ));
    let rows = memory_rows(&w);
    let order: Vec<&str> = rows.iter().map(|r| r.comm.as_str()).collect();
    assert_eq!(order, ["victim", "eat", "small"]);
    assert!(rows[0].in_reclaim);
    let eat = &rows[1];
    assert_eq!(eat.rss_bytes, Some(4 << 30));
    assert_eq!(eat.anon_bytes, Some(4 << 30));
    assert_eq!(eat.swap_bytes, Some(8 << 10));
    // 2 GiB more over the 2 s between the walks; 40 faults.
    assert_eq!(eat.rss_growth_bytes_per_s, Some(f64::from(1u32 << 30)));
    assert_eq!(eat.majflt_per_s, Some(20.0));
    assert_eq!(eat.oom_score_adj, Some(0));
    assert_eq!(rows[2].wchan, None, "a running task's wchan 0 is no place");
    assert_eq!(
        rows[0].rss_growth_bytes_per_s, None,
        "first seen: no growth"
    );
}

#[test]
fn reclaim_paths_are_named_and_other_sleeps_are_not() {
    for w in [
        "shrink_folio_list",
        "try_to_free_pages",
        "__alloc_pages_slowpath",
        "reclaim_throttle",
    ] {
        assert!(in_reclaim(w), "{w}");
    }
    for w in [
        "balance_dirty_pages",
        "do_wait",
        "folio_wait_bit_common",
        "0",
    ] {
        assert!(!in_reclaim(w), "{w}");
    }
    // A sleeping task in a reclaim wchan is not stalled (not D).
    let w = walk(&mem(12, "x", 'S', 1, None, "shrink_folio_list"));
    assert!(!memory_rows(&w)[0].in_reclaim);
}

#[test]
fn a_processes_row_has_anon_from_statm_and_growth_from_its_carried_reading() {
    let text = format!(
        "p 7 107\nstat {}\nio absent\nP 7 107\nstat {}\nio absent\nstatm 9000 3000 100 1 0 5000 0\n",
        stat(7, "dd", 'R', 1000, 5),
        stat(7, "dd", 'R', 3000, 25),
    );
    let w = walk(&text);
    let rows = crate::model::procs::derive(None, &w);
    let r = &rows[0];
    assert_eq!(r.rss_bytes, Some(3000 * 4096));
    assert_eq!(r.anon_bytes, Some(2900 * 4096), "resident − shared");
    assert_eq!(r.rss_growth_bytes_per_s, Some(1000.0 * 4096.0));
    assert_eq!(r.majflt_per_s, Some(10.0));
}

#[test]
fn a_bad_memory_record_is_named_by_line() {
    let head = "walk 1\nprev -\nclk_tck 100\n";
    let err = |body: &str| parse(&format!("{head}{body}")).unwrap_err().to_string();
    let e = err("M 3 103 S 1 0 - -\nmem 1 x 0 0 0\n");
    assert!(e.contains(":5:"), "{e}");
    let e = err("M 3 103 S 1\n");
    assert!(e.contains(":4:") && e.contains("bad line"), "{e}");
    let w = parse(&format!(
        "{head}M 3 103 S 1 0 - -\nmem 4 - 0 0 -\ncomm a b\n"
    ))
    .unwrap();
    let r = &w.memory[0];
    assert_eq!(
        (r.vm_rss_kb, r.rss_anon_kb, r.vm_swap_kb),
        (Some(4), None, None)
    );
    assert_eq!(r.stat.comm, "a b", "a comm may hold spaces");
}
