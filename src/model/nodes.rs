//! NUMA nodes (spec §12): each node's free pages against its own watermarks, its dirty +
//! writeback pages against its `node_dirty_limit()`, and its spill counters. Only on machines
//! with more than one node (the source reads no node file otherwise).
//!
//! Owns: the per-node figures and the verdict's node note. Must not touch: I/O.

use serde::Serialize;

use super::dirty::dirtyable;
use super::rate::per_sec;
use super::zones;
use crate::parse::node::NodeStat;
use crate::parse::{Snapshot, VmSysctl};

/// One node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[allow(missing_docs)]
pub struct Node {
    /// Node number.
    pub node: u32,
    /// Free pages (`nr_free_pages`) against the Σ of its zones' watermarks (spec §12.4).
    pub free_pages: u64,
    pub min_pages: u64,
    pub low_pages: u64,
    pub high_pages: u64,
    /// `nr_dirty + nr_writeback`: what `node_dirty_ok()` compares.
    pub dirty_writeback_pages: u64,
    /// `node_dirtyable_memory()` (spec §12.1); `None` without zoneinfo.
    pub dirtyable_pages: Option<u64>,
    /// `node_dirty_limit()` for a task that is not RT (spec §12.1); `None` without zoneinfo.
    pub dirty_limit_pages: Option<u64>,
    /// Past its dirty share: new page-cache pages go to other nodes (spec §12.2).
    pub past_dirty_share: bool,
    /// Spill counters per second: allocations placed here although another node was
    /// preferred / preferring here and placed elsewhere / for a task on another node.
    pub numa_miss_s: Option<f64>,
    pub numa_foreign_s: Option<f64>,
    pub other_node_s: Option<f64>,
}

/// `node_dirty_limit()` (spec §12.1), not RT: the ratio of the node's dirtyable memory, or
/// `dirty_bytes` in pages scaled by the node's share of the global dirtyable memory.
#[must_use]
pub fn dirty_limit(
    node_dirtyable: u64,
    global_dirtyable: u64,
    s: &VmSysctl,
    page: u64,
) -> Option<u64> {
    match s.dirty_bytes.filter(|b| *b > 0) {
        Some(bytes) => {
            let pages = u128::from(bytes.div_ceil(page));
            let limit = pages * u128::from(node_dirtyable) / u128::from(global_dirtyable.max(1));
            u64::try_from(limit).ok()
        }
        None => Some(s.dirty_ratio? * node_dirtyable / 100),
    }
    .map(|d| d.min(u64::from(u32::MAX)))
}

/// Derives every node; empty on a single node.
#[must_use]
pub fn derive(prev: Option<&Snapshot>, cur: &Snapshot, dt_s: Option<f64>) -> Vec<Node> {
    if cur.nodes.len() < 2 {
        return Vec::new();
    }
    let zones = cur.zones.as_deref();
    let global = zones.map(|z| {
        let free = cur.nodes.iter().filter_map(|n| n.nr_free_pages).sum();
        let lru = cur
            .nodes
            .iter()
            .map(|n| n.nr_active_file.unwrap_or(0) + n.nr_inactive_file.unwrap_or(0))
            .sum();
        dirtyable(free, lru, zones::totalreserve(z))
    });
    cur.nodes
        .iter()
        .map(|n| {
            let before = prev.and_then(|p| p.nodes.iter().find(|o| o.node == n.node));
            node(n, before, cur, global, dt_s)
        })
        .collect()
}

fn node(
    n: &NodeStat,
    before: Option<&NodeStat>,
    cur: &Snapshot,
    global: Option<u64>,
    dt_s: Option<f64>,
) -> Node {
    let free = n.nr_free_pages.unwrap_or(0);
    let own: Option<Vec<crate::parse::Zone>> = cur
        .zones
        .as_deref()
        .map(|z| z.iter().filter(|z| z.node == n.node).cloned().collect());
    let marks = own.as_deref().map(|z| zones::watermarks(z, free));
    let lru = n.nr_active_file.unwrap_or(0) + n.nr_inactive_file.unwrap_or(0);
    // node_dirtyable_memory(): no `+ 1` (that is the global one's).
    let node_dirtyable = own
        .as_deref()
        .map(|z| free - free.min(zones::totalreserve(z)) + lru);
    let limit = node_dirtyable
        .zip(global)
        .and_then(|(d, g)| dirty_limit(d, g, &cur.sysctl, cur.page_size));
    let dw = n.nr_dirty.unwrap_or(0) + n.nr_writeback.unwrap_or(0);
    let r = |f: fn(&NodeStat) -> Option<u64>| per_sec(before.and_then(f), f(n), dt_s);
    Node {
        node: n.node,
        free_pages: free,
        min_pages: marks.as_ref().map_or(0, |w| w.min_pages),
        low_pages: marks.as_ref().map_or(0, |w| w.low_pages),
        high_pages: marks.as_ref().map_or(0, |w| w.high_pages),
        dirty_writeback_pages: dw,
        dirtyable_pages: node_dirtyable,
        dirty_limit_pages: limit,
        past_dirty_share: limit.is_some_and(|l| dw > l),
        numa_miss_s: r(|s| s.numa_miss),
        numa_foreign_s: r(|s| s.numa_foreign),
        other_node_s: r(|s| s.other_node),
    }
}

/// The verdict's node note (spec §12.2), from the node states at the sample and the spill
/// counters over the interval before it: `numa_foreign` rises on the node that was preferred
/// and refused, `numa_miss` on the node that got the page. `dirtied_s`: pages dirtied per
/// second over the same interval (`nr_dirtied`). `None` while no node is past its share.
/// - nothing dirtied (the writer paused): `node 0 past its dirty share: nothing dirtied this
///   interval`: no page-cache allocation was made, so none could spill;
/// - every node past: `every node past its dirty share: …`, the slow path places page cache
///   without the shares (spec §12.2), with the `numa_miss` seen before they all passed;
/// - a node past with its own `numa_foreign` rising (or unread) and another's `numa_miss`:
///   `node 0 past its dirty share: page-cache allocations go to node 1 (node 1 numa_miss
///   N/s)`, the receiver the one whose `numa_miss` rose most;
/// - a node past that took another's allocations (its `numa_miss`, that node's
///   `numa_foreign`): the spill ran into it before it passed its share, said as such;
/// - else `… no allocation spilled to another node (numa_miss 0/s)` when every node's
///   `numa_miss` was read as 0 (a writer bound to the node cannot spill), or the bare state
///   (rates unknown on the first sample, or a `numa_miss` no refusing node accounts for).
#[must_use]
pub fn note(nodes: &[Node], dirtied_s: Option<f64>) -> Option<String> {
    let past: Vec<&Node> = nodes.iter().filter(|n| n.past_dirty_share).collect();
    let first = past.first()?;
    let every = past.len() == nodes.len();
    let head = if every {
        "every node past its dirty share".to_owned()
    } else {
        format!("node {} past its dirty share", first.node)
    };
    if dirtied_s.is_some_and(|d| d <= 0.0) {
        return Some(format!("{head}: nothing dirtied this interval"));
    }
    let most_missed = |among: &mut dyn Iterator<Item = &Node>| -> Option<Node> {
        among
            .filter(|n| rate(n.numa_miss_s) > 0.0)
            .max_by(|a, b| rate(a.numa_miss_s).total_cmp(&rate(b.numa_miss_s)))
            .copied()
    };
    if every {
        let seen = most_missed(&mut nodes.iter())
            .map(|n| {
                format!(
                    " (node {} numa_miss {:.0}/s this interval)",
                    n.node,
                    rate(n.numa_miss_s)
                )
            })
            .unwrap_or_default();
        return Some(format!(
            "{head}: the allocator's slow path ignores the shares, page cache is placed as if \
             there were none{seen}"
        ));
    }
    // A spill away from a node past its share: it refused (numa_foreign, where read), another
    // got the pages (numa_miss).
    for x in &past {
        if x.numa_foreign_s.is_some_and(|f| f <= 0.0) {
            continue;
        }
        if let Some(y) = most_missed(&mut nodes.iter().filter(|n| n.node != x.node)) {
            return Some(format!(
                "node {} past its dirty share: page-cache allocations go to node {} (node {} \
                 numa_miss {:.0}/s)",
                x.node,
                y.node,
                y.node,
                rate(y.numa_miss_s)
            ));
        }
    }
    // A spill into a node now past its share, from one within its share now.
    let refused = nodes
        .iter()
        .filter(|n| !n.past_dirty_share && rate(n.numa_foreign_s) > 0.0)
        .max_by(|a, b| rate(a.numa_foreign_s).total_cmp(&rate(b.numa_foreign_s)));
    if let (Some(r), Some(x)) = (refused, most_missed(&mut past.iter().copied())) {
        return Some(format!(
            "node {} past its dirty share, having taken allocations meant for node {} this \
             interval (node {} numa_miss {:.0}/s, node {} numa_foreign {:.0}/s); node {} is \
             within its share now",
            x.node,
            r.node,
            x.node,
            rate(x.numa_miss_s),
            r.node,
            rate(r.numa_foreign_s),
            r.node
        ));
    }
    // "numa_miss 0/s" only where every node's was read as 0: unread rates (first sample), or a
    // numa_miss no refusing node accounts for, get the bare state.
    if nodes.iter().all(|n| n.numa_miss_s == Some(0.0)) {
        return Some(format!(
            "{head}: no allocation spilled to another node (numa_miss 0/s)"
        ));
    }
    Some(head)
}

/// A rate read as 0 where unknown.
fn rate(r: Option<f64>) -> f64 {
    r.unwrap_or(0.0)
}

#[cfg(test)]
#[path = "nodes_tests.rs"]
mod tests;
