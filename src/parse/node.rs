//! `/sys/devices/system/node/nodeN/vmstat` and `numastat` → `NodeStat` (spec §12): a NUMA
//! node's free, file LRU, dirty and writeback pages and its spill counters.
//!
//! Owns: the sample names of those files and their parsing. Must not touch: the node's dirty
//! limit or any judgement (model/nodes does that).

use serde::Serialize;

use crate::sample::RawSample;
use crate::{Error, Result};

/// Where the nodes' files start among a sample's names.
pub const PREFIX: &str = "sys/devices/system/node/node";

/// The sample name of node `n`'s `file` (`vmstat`, `numastat`).
#[must_use]
pub fn sample_name(n: u32, file: &str) -> String {
    format!("{PREFIX}{n}/{file}")
}

/// One node's figures (pages, and cumulative allocation counts). `None`: not printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub struct NodeStat {
    pub node: u32,
    pub nr_free_pages: Option<u64>,
    pub nr_inactive_file: Option<u64>,
    pub nr_active_file: Option<u64>,
    pub nr_dirty: Option<u64>,
    pub nr_writeback: Option<u64>,
    /// Allocations placed here although another node was preferred.
    pub numa_miss: Option<u64>,
    /// Allocations that preferred this node and were placed elsewhere.
    pub numa_foreign: Option<u64>,
    /// Allocations placed here for a task running on another node (numastat `other_node`,
    /// vmstat `numa_other`).
    pub other_node: Option<u64>,
}

/// Fills `s` from the `name value` lines of `text` (file `file`), the names it knows.
fn fill(s: &mut NodeStat, file: &str, text: &str) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        let mut w = line.split_ascii_whitespace();
        let (Some(name), Some(value)) = (w.next(), w.next()) else {
            continue;
        };
        let slot = match name {
            "nr_free_pages" => &mut s.nr_free_pages,
            "nr_inactive_file" => &mut s.nr_inactive_file,
            "nr_active_file" => &mut s.nr_active_file,
            "nr_dirty" => &mut s.nr_dirty,
            "nr_writeback" => &mut s.nr_writeback,
            "numa_miss" => &mut s.numa_miss,
            "numa_foreign" => &mut s.numa_foreign,
            "other_node" | "numa_other" => &mut s.other_node,
            _ => continue,
        };
        let v = value
            .parse::<u64>()
            .ok()
            .or_else(|| value.parse::<i64>().ok().map(|v| v.max(0).unsigned_abs()))
            .ok_or_else(|| Error::parse(file, i + 1, format!("{name} {value:?}")))?;
        *slot = Some(v);
    }
    Ok(())
}

/// The nodes a sample carries (those with a `vmstat`), in node order, and the first error
/// among them (that node is left out).
#[must_use]
pub fn from_sample(sample: &RawSample) -> (Vec<NodeStat>, Option<String>) {
    let mut error = None;
    let mut out = Vec::new();
    for (k, text) in sample
        .files
        .range::<String, _>(PREFIX.to_owned()..)
        .take_while(|(k, _)| k.starts_with(PREFIX))
    {
        let Some(n) = k
            .strip_prefix(PREFIX)
            .and_then(|r| r.strip_suffix("/vmstat"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let mut s = NodeStat {
            node: n,
            ..NodeStat::default()
        };
        let numastat = sample_name(n, "numastat");
        let read = fill(&mut s, k, text).and_then(|()| match sample.file(&numastat) {
            Some(t) => fill(&mut s, &numastat, t),
            None => Ok(()),
        });
        match read {
            Ok(()) => out.push(s),
            Err(e) => {
                error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    out.sort_by_key(|s| s.node);
    (out, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_nodes_with_numastat_and_a_bad_one_left_out() {
        let mut s = RawSample::default();
        for (k, v) in [
            (
                "sys/devices/system/node/node0/vmstat",
                "nr_free_pages 1000\nnuma_miss 3\nnr_inactive_file 200\nnr_active_file 100\n\
                 nr_dirty 70\nnr_writeback 5\n",
            ),
            (
                "sys/devices/system/node/node0/numastat",
                "numa_hit 9\nnuma_miss 3\nnuma_foreign 40\ninterleave_hit 1\nlocal_node 9\nother_node 2\n",
            ),
            (
                "sys/devices/system/node/node1/vmstat",
                "nr_free_pages 500\nnr_dirty 1\n",
            ),
            ("sys/devices/system/node/node2/vmstat", "nr_dirty x\n"),
        ] {
            s.files.insert(k.to_owned(), v.to_owned());
        }
        let (nodes, err) = from_sample(&s);
        assert_eq!(nodes.len(), 2);
        let n0 = nodes[0];
        assert_eq!(
            (n0.nr_free_pages, n0.nr_dirty, n0.nr_writeback),
            (Some(1000), Some(70), Some(5))
        );
        assert_eq!(
            (n0.numa_miss, n0.numa_foreign, n0.other_node),
            (Some(3), Some(40), Some(2))
        );
        assert_eq!(
            (nodes[1].node, nodes[1].numa_miss),
            (1, None),
            "absent, not zero"
        );
        assert!(err.unwrap().contains("node2/vmstat:1"));
    }
}
