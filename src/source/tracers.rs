//! The live system's tracers together: the balance_dirty_pages tracepoint (and its writers'
//! thread groups), the sync syscalls, the block requests, the `-below` events and direct reclaim, each in its
//! own tracefs instance, armed, read or disarmed once per sample as the model wants.
//!
//! Owns: holding the five tracers and the lineage reader, calling each once per sample, and
//! keeping off those `--no-trace` names (`NoTrace`).
//! Must not touch: tracefs or /proc directly (each tracer, `source::lineage`), the rest of the
//! sample (`source::fs`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::sample::{Wants, names};

/// The tracers `--no-trace` names: never armed, whatever the model wants (their figures
/// are then absent, as on a machine without tracefs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools, reason = "one switch per tracer")]
pub struct NoTrace {
    /// The balance_dirty_pages tracepoint (the throttled writers).
    pub throttle: bool,
    /// The sync syscalls (the victims' fsync latency).
    pub sync: bool,
    /// The block requests (latency distributions).
    pub block: bool,
    /// The `-below` events (wbt, reclaim throttling).
    pub below: bool,
    /// Direct and memcg reclaim per task.
    pub reclaim: bool,
}

impl NoTrace {
    /// The names `--no-trace` takes.
    pub const NAMES: [&'static str; 6] = ["throttle", "sync", "block", "below", "reclaim", "all"];

    /// The tracers `names` turn off (`all`: every one); an unknown name turns off nothing.
    #[must_use]
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Self {
        let has = |n: &str| names.iter().any(|x| x.as_ref() == n || x.as_ref() == "all");
        Self {
            throttle: has("throttle"),
            sync: has("sync"),
            block: has("block"),
            below: has("below"),
            reclaim: has("reclaim"),
        }
    }
}

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
    /// The tracers never armed (`--no-trace`).
    off: NoTrace,
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
            off: NoTrace::default(),
        }
    }

    /// Never arms the tracers `off` names.
    pub fn turn_off(&mut self, off: NoTrace) {
        self.off = off;
    }

    /// Arms at once what `wants` newly asks for, so that the next sample carries it: the
    /// block tracer for `wants.latency` (with queue time when asked), and the throttle,
    /// sync and reclaim tracers (`Life::arm_ahead`).
    pub fn want(&mut self, wants: &Wants) {
        let latency = if self.off.block {
            &[]
        } else {
            &wants.latency[..]
        };
        self.blk.want(latency, wants.latency_queue);
        let off = self.off;
        self.bdp.arm_ahead(wants.trace && !off.throttle);
        self.sync.arm_ahead(wants.sync && !off.sync);
        self.reclaim.arm_ahead(wants.reclaim && !off.reclaim);
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
        let off = self.off;
        self.bdp
            .sample(wants.trace && !off.throttle, buf, files, fresh);
        let writers = files
            .get(names::TRACE_WRITERS)
            .filter(|_| fresh.contains(&names::TRACE_WRITERS));
        if let Some(text) = self.lineage.read(proc_root, writers.map(String::as_str)) {
            super::put(files, names::THROTTLED_LINEAGE, Cow::Owned(text));
            fresh.push(names::THROTTLED_LINEAGE);
        }
        self.sync.sample(wants.sync && !off.sync, buf, files, fresh);
        self.blk.sample(files, fresh);
        self.below
            .sample(wants.below && !off.below, buf, files, fresh);
        self.reclaim
            .sample(wants.reclaim && !off.reclaim, buf, files, fresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_trace_names_each_tracer_and_all() {
        let off = NoTrace::from_names(&["sync", "block"]);
        assert!(off.sync && off.block && !off.throttle && !off.below && !off.reclaim);
        let all = NoTrace::from_names(&["all"]);
        assert!(all.throttle && all.sync && all.block && all.below && all.reclaim);
        assert_eq!(NoTrace::from_names::<&str>(&[]), NoTrace::default());
    }

    #[test]
    fn a_tracer_turned_off_is_never_armed_however_wanted() {
        // The live /proc: as root with tracefs, a wanted tracer would arm (and put its status).
        let mut t = Tracers::new(Path::new("/proc"), Path::new("/sys"), "/nonexistent".into());
        t.turn_off(NoTrace::from_names(&["all"]));
        let wants = Wants {
            trace: true,
            sync: true,
            below: true,
            reclaim: true,
            latency: vec!["vda".to_owned()],
            ..Wants::default()
        };
        t.want(&wants);
        let (mut files, mut fresh) = (BTreeMap::new(), Vec::new());
        t.sample(
            &wants,
            &mut Vec::new(),
            Path::new("/proc"),
            &mut files,
            &mut fresh,
        );
        assert!(files.is_empty(), "{:?}", files.keys().collect::<Vec<_>>());
    }
}
