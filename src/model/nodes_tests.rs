use super::*;
use crate::parse::Zone;
use std::sync::Arc;

fn zone(node: u32, free: u64, min: u64, low: u64, high: u64, managed: u64) -> Zone {
    Zone {
        node,
        name: "Normal".into(),
        free,
        min,
        low,
        high,
        managed,
        protection: vec![0, 0, 0, 0],
        ..Zone::default()
    }
}

fn stat(node: u32, free: u64, lru: (u64, u64), dirty: u64, wb: u64, miss: u64) -> NodeStat {
    NodeStat {
        node,
        nr_free_pages: Some(free),
        nr_inactive_file: Some(lru.0),
        nr_active_file: Some(lru.1),
        nr_dirty: Some(dirty),
        nr_writeback: Some(wb),
        numa_miss: Some(miss),
        numa_foreign: Some(0),
        other_node: Some(0),
    }
}

fn snap(nodes: Vec<NodeStat>, ratio: u64, bytes: u64) -> Snapshot {
    let mut s = Snapshot {
        page_size: 4096,
        nodes,
        zones: Some(Arc::from(vec![
            zone(0, 0, 1_000, 1_250, 1_500, 100_000),
            zone(1, 0, 2_000, 2_500, 3_000, 200_000),
        ])),
        ..Snapshot::default()
    };
    s.sysctl.dirty_ratio = Some(ratio);
    s.sysctl.dirty_bytes = Some(bytes);
    s
}

#[test]
fn node_dirty_limit_by_hand_ratio_and_bytes() {
    // Node 0: free 40 000, reserve min(100 000, 1 500 + 0) = 1 500, file LRU 30 000 + 20 000:
    // dirtyable 40 000 − 1 500 + 50 000 = 88 500; ratio 20 → 17 700 pages.
    // Node 1: free 100 000 − 3 000 + 10 000 = 107 000 → 21 400.
    let a = snap(
        vec![
            stat(0, 40_000, (30_000, 20_000), 17_000, 800, 0),
            stat(1, 100_000, (6_000, 4_000), 10, 0, 500),
        ],
        20,
        0,
    );
    let b = snap(
        vec![
            stat(0, 40_000, (30_000, 20_000), 17_000, 800, 0),
            stat(1, 100_000, (6_000, 4_000), 10, 0, 2_500),
        ],
        20,
        0,
    );
    let n = derive(Some(&a), &b, Some(2.0));
    assert_eq!(n[0].dirtyable_pages, Some(88_500));
    assert_eq!(n[0].dirty_limit_pages, Some(17_700));
    assert_eq!(n[0].dirty_writeback_pages, 17_800);
    assert!(n[0].past_dirty_share, "17 800 > 17 700");
    assert_eq!(n[1].dirty_limit_pages, Some(21_400));
    assert!(!n[1].past_dirty_share);
    assert_eq!(n[1].numa_miss_s, Some(1_000.0));
    assert_eq!(
        (n[0].min_pages, n[0].low_pages, n[0].high_pages),
        (1_000, 1_250, 1_500)
    );
    assert_eq!(
        note(&n).as_deref(),
        Some("node 0 past its dirty share: page-cache allocations go to node 1")
    );
    // The same with no allocation missing its node (a writer bound to node 0 cannot spill,
    // as in the lab): no spill is claimed.
    let mut bound = n.clone();
    bound[1].numa_miss_s = Some(0.0);
    assert_eq!(
        note(&bound).as_deref(),
        Some("node 0 past its dirty share: no allocation spilled to another node (numa_miss 0/s)")
    );
    bound[1].past_dirty_share = true;
    assert_eq!(
        note(&bound).as_deref(),
        Some("node 0 past its dirty share: every node is past its share")
    );
    // dirty_bytes 200 MiB = 51 200 pages; global dirtyable 140 000 − 4 500 + 60 000 + 1 =
    // 195 501; node 0: 51 200 · 88 500 / 195 501 = 23 177 (floor): within its share.
    let c = snap(b.nodes.clone(), 20, 200 << 20);
    let n = derive(Some(&a), &c, Some(2.0));
    assert_eq!(n[0].dirty_limit_pages, Some(23_177));
    assert!(!n[0].past_dirty_share);
    assert_eq!(note(&n), None);
}

#[test]
fn a_single_node_has_no_node_figures() {
    let one = snap(vec![stat(0, 40_000, (1, 1), 0, 0, 0)], 20, 0);
    assert!(derive(None, &one, None).is_empty());
    assert!(derive(None, &snap(Vec::new(), 20, 0), None).is_empty());
}
