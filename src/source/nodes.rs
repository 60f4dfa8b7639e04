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
}
