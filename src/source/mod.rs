//! Sources of raw samples: THE ONLY CODE THAT READS /proc, /sys OR THE CLOCK.
//!
//! Owns: reading kernel files into `RawSample`s, live (`FsSource`) or from captured trees
//! (`TreeSource`), and what the sources below `fs` share: `Source`, `SLOW_REFRESH_TICKS` and
//! `put` (so the tracers need not import the `FsSource` that holds them). Must not touch:
//! parsing beyond splitting out device names, derivation, UI.

pub mod baselines;
mod bdi_stats;
mod below;
pub mod blk;
mod block_id;
mod cachestat;
pub use cachestat::{Cachestat, cachestat};
mod cgroup_scope;
mod cgroups;
mod clock;
mod collect;
mod dirty_files;
mod disk_lines;
mod fs;
mod host;
mod lineage;
mod mountinfo;
pub use mountinfo::first_of as first_mount_of;
mod moved;
mod nodes;
mod pid_list;
pub mod procs;
pub(crate) mod procs_memory;
mod procs_visit;
mod read;
mod reclaim_trace;
mod scope;
mod sync_trace;
mod task_delays;
mod taskstats;
mod trace;
pub mod trace_guard;
pub mod trace_instance;
mod tracer_life;
mod tracers;
mod tree;
mod writer_files;
mod zram;

pub use clock::{Clock, SystemClock, Ticker, Wake, thread_cpu_ns};
pub use fs::FsSource;
pub use host::HostInfo;
pub use sync_trace::SyncTracer;
pub use trace::{TRACE_READ_CAP, Tracer};
pub use trace_instance::remove_instance as remove_trace_instance;
pub use tracers::NoTrace;

#[cfg(test)]
pub use tree::test_samples;
pub use tree::{TreeSource, parse_uptime_cs};

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::Result;
use crate::sample::{RawSample, Wants};

/// Anything that yields raw samples: live /proc, a captured tree sequence, a recording.
pub trait Source {
    /// The next sample, or `None` when a finite source is exhausted.
    fn next_sample(&mut self) -> Result<Option<RawSample>>;

    /// Hands back a sample the caller is done with, so the source can reuse its allocations
    /// for the next one. Optional: sources that do not reuse anything drop it.
    fn recycle(&mut self, used: RawSample) {
        drop(used);
    }

    /// Asks for the rarely re-read files (zoneinfo, sysctls, block settings) to be read again
    /// on the next sample, because figures derived from them no longer match the kernel's.
    /// Optional: sources that read everything every time ignore it.
    fn refresh_soon(&mut self) {}

    /// What to collect beyond the base files from the next sample on (processes, the
    /// tracepoint, the cgroup tree every tick). Optional: sources that cannot (recordings,
    /// captured trees) ignore it and carry what they carry.
    fn want(&mut self, wants: &Wants) {
        let _ = wants;
    }

    /// Keeps the disks' calm baselines the pipeline learned (`Step::learned`) for the next
    /// run. Optional: only the live source stores them (`FsSource::with_baselines`); a
    /// recording or a tree replayed must not teach the machine's store.
    fn keep_baselines(&mut self, learned: &crate::parse::baselines::Stored) {
        let _ = learned;
    }
}

/// Files that change rarely (zoneinfo, the vm sysctls, the /sys/block listing and queue
/// settings) are re-read every this many samples, or sooner on `FsSource::refresh_soon`; in
/// between, the sample carries the last text read. Measured kernel cost here: zoneinfo
/// 46–64 µs, each vm sysctl 3–8 µs, listing /sys/block 45 µs.
pub const SLOW_REFRESH_TICKS: u32 = 15;

/// Sets `files[name]` to `text`, reusing the entry's key and buffer when it is there.
fn put(files: &mut BTreeMap<String, String>, name: &str, text: Cow<'_, str>) {
    match files.get_mut(name) {
        Some(v) => {
            v.clear();
            v.push_str(&text);
            crate::malloc::fit_string(v);
        }
        None => {
            files.insert(name.to_owned(), text.into_owned());
        }
    }
}

#[cfg(test)]
mod put_tests {
    /// A file's buffer is reused, but a burst's text (1,100 processes' walk: 1.2 MB) does not
    /// keep its room for every smaller text after it (issue 52: RSS).
    #[test]
    fn a_file_after_a_burst_gives_its_room_back() {
        let mut files = std::collections::BTreeMap::new();
        super::put(&mut files, "procs", "x".repeat(1 << 20).into());
        super::put(&mut files, "procs", "walk 1\n".into());
        assert!(
            files["procs"].capacity() < 4096,
            "{}",
            files["procs"].capacity()
        );
        super::put(&mut files, "procs", "y".repeat(100 << 10).into());
        super::put(&mut files, "procs", "z".repeat(60 << 10).into());
        assert!(files["procs"].capacity() >= 100 << 10, "kept for reuse");
    }
}
