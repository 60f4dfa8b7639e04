//! The live system's tracers together: the balance_dirty_pages tracepoint (and its writers'
//! thread groups), the sync syscalls, the block requests, the `-below` events and direct reclaim, each in its
//! own tracefs instance, armed, read or disarmed once per sample as the model wants.
//!
//! Owns: holding the five tracers and the lineage reader, and calling each once per sample.
//! Must not touch: tracefs or /proc directly (each tracer, `source::lineage`), the rest of the
//! sample (`source::fs`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::sample::{Wants, names};

/// Every tracer of the live system.
pub struct Tracers {
    /// The balance_dirty_pages tracepoint.
    bdp: super::Tracer,
    /// The sync syscalls' tracer.
    sync: super::SyncTracer,
    /// The block tracer (`Wants::latency`).
    blk: super::blk::BlkTracer,
    /// The `-below` tracer (wbt, reclaim throttling).
    below: super::below::BelowTracer,
    /// Who stalls in direct reclaim (`Wants::reclaim`).
    reclaim: super::reclaim_trace::ReclaimTracer,
    /// The thread groups and parents of the tracepoint's writers (`source::lineage`).
    lineage: super::lineage::Lineage,
}

impl Tracers {
    /// The tracers of the system at `proc_root`/`sys_root`, none armed yet; `guard_exe`
    /// (pagewatch's own binary) is each instance's cleanup guard.
    #[must_use]
    pub fn new(proc_root: &Path, sys_root: &Path, guard_exe: PathBuf) -> Self {
        let (p, g) = (proc_root.to_path_buf(), guard_exe);
        Self {
            bdp: super::Tracer::new(p.clone(), g.clone()),
            sync: super::SyncTracer::new(p.clone(), g.clone()),
            blk: super::blk::BlkTracer::new(p.clone(), PathBuf::from(sys_root), g.clone()),
            below: super::below::BelowTracer::new(p.clone(), g.clone()),
            reclaim: super::reclaim_trace::ReclaimTracer::new(p, g),
            lineage: super::lineage::Lineage::default(),
        }
    }

    /// Arms the block tracer for `latency` at once (with queue time when `queue`), so that
    /// the next sample carries it.
    pub fn want_latency(&mut self, latency: &[String], queue: bool) {
        self.blk.want(latency, queue);
    }

    /// Arms, reads or disarms each tracer for this sample, putting their texts in `files`
    /// and their names in `fresh`.
    pub fn sample(
        &mut self,
        wants: &Wants,
        buf: &mut Vec<u8>,
        proc_root: &Path,
        files: &mut BTreeMap<String, String>,
        fresh: &mut Vec<&str>,
    ) {
        self.bdp.sample(wants.trace, buf, files, fresh);
        let writers = files
            .get(names::TRACE_WRITERS)
            .filter(|_| fresh.contains(&names::TRACE_WRITERS));
        if let Some(text) = self.lineage.read(proc_root, writers.map(String::as_str)) {
            super::put(files, names::THROTTLED_LINEAGE, Cow::Owned(text));
            fresh.push(names::THROTTLED_LINEAGE);
        }
        self.sync.sample(wants.sync, buf, files, fresh);
        self.blk.sample(files, fresh);
        self.below.sample(wants.below, buf, files, fresh);
        self.reclaim.sample(wants.reclaim, buf, files, fresh);
    }
}
