//! The NUMA nodes' `vmstat` and `numastat` (spec §12), read every tick on machines with more
//! than one node.
//!
//! Owns: the `Nodes` collector. Must not touch: parsing beyond finding node numbers.
//!
//! Cost budget: a single-node machine reads no node file at all: the node list comes from the
//! `Node N,` headers of the zoneinfo text the slow refresh reads anyway. With N nodes, two
//! small sysfs reads per node per tick.

use std::path::{Path, PathBuf};

use super::collect::{Collect, Pass, put_listed, refresh_text};
use crate::Result;
use crate::parse::node::sample_name;
use crate::sample::names;

/// The nodes' files, with their sample names; empty on a single node.
pub(super) struct Nodes {
    dir: PathBuf,
    files: Vec<(String, PathBuf)>,
    listed: Vec<u32>,
}

/// The node numbers of a zoneinfo text (`Node 1, zone   Normal`), in order, once each.
fn nodes_of(zoneinfo: &str) -> Vec<u32> {
    let mut out: Vec<u32> = zoneinfo
        .lines()
        .filter_map(|l| {
            l.strip_prefix("Node ")?
                .split(',')
                .next()?
                .trim()
                .parse()
                .ok()
        })
        .collect();
    out.dedup();
    out.sort_unstable();
    out.dedup();
    out
}

impl Nodes {
    pub fn new(sys_root: &Path) -> Self {
        Self {
            dir: sys_root.join("devices/system/node"),
            files: Vec::new(),
            listed: Vec::new(),
        }
    }

    fn list(&mut self, zoneinfo: &str) {
        let now = nodes_of(zoneinfo);
        if now == self.listed {
            return;
        }
        self.files = if now.len() > 1 {
            now.iter()
                .flat_map(|&n| {
                    ["vmstat", "numastat"]
                        .map(|f| (sample_name(n, f), self.dir.join(format!("node{n}/{f}"))))
                })
                .collect()
        } else {
            Vec::new()
        };
        self.listed = now;
    }
}

impl<'a> Collect<'a> for Nodes {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if let Some(text) = refresh_text(pass, names::ZONEINFO) {
            self.list(&text);
        }
        put_listed(&self.files, pass);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_come_from_zoneinfo_headers() {
        let z =
            "Node 0, zone      DMA\n  pages free 3\nNode 0, zone   Normal\nNode 1, zone   Normal\n";
        assert_eq!(nodes_of(z), vec![0, 1]);
        assert_eq!(nodes_of("Node 0, zone DMA\nNode 0, zone Normal\n"), vec![0]);
    }

    /// The node files one refresh and one ordinary tick put in the sample, with `zoneinfo`
    /// fresh on the refresh, under a sys root holding both nodes' files.
    fn node_files_read(zoneinfo: &str) -> Vec<String> {
        let sys = tempfile::tempdir().unwrap();
        for n in 0..2 {
            let dir = sys.path().join(format!("devices/system/node/node{n}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("vmstat"), "nr_free_pages 1\n").unwrap();
            std::fs::write(dir.join("numastat"), "numa_miss 1\n").unwrap();
        }
        let mut nodes = Nodes::new(sys.path());
        let mut read = Vec::new();
        for refresh in [true, false] {
            let mut files = std::collections::BTreeMap::new();
            files.insert(names::ZONEINFO.to_owned(), zoneinfo.to_owned());
            let (mut buf, wants) = (Vec::new(), crate::sample::Wants::default());
            let mut pass = Pass {
                files: &mut files,
                fresh: vec![names::ZONEINFO],
                buf: &mut buf,
                mono_ns: 0,
                wall_ms: 0,
                refresh,
                wants: &wants,
            };
            nodes.collect(&mut pass).unwrap();
            read.extend(
                pass.fresh
                    .iter()
                    .filter(|n| **n != names::ZONEINFO)
                    .map(|n| (*n).to_owned()),
            );
        }
        read
    }

    /// A single node (issue 56: "pays no cost for it"): no node file is read, on the refresh
    /// or on a tick, although the sys root has node0's; with two, both nodes' two files each
    /// time.
    #[test]
    fn a_single_node_reads_no_node_file() {
        assert!(node_files_read("Node 0, zone DMA\nNode 0, zone Normal\n").is_empty());
        let two = node_files_read("Node 0, zone Normal\nNode 1, zone Normal\n");
        assert_eq!(two.len(), 8, "{two:?}");
        assert!(two.contains(&sample_name(1, "numastat")), "{two:?}");
    }
}
