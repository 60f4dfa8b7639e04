//! The memory half of the process walk: after every process is visited, the `M` records of
//! the largest by resident memory and of those in D state (a task stalled in reclaim), for
//! the memory sort (`model::procs_memory`).
//!
//! Owns: choosing the memory candidates and writing their records. Must not touch: rates,
//! the visit itself (`procs_visit`), listing processes.
//!
//! # The records
//!
//! ```text
//! M 4242 987654             a memory candidate: pid, start time
//! stat 4242 (eat) S 1 …     its stat line as last read (field 24 rss, field 12 majflt)
//! before 262144 17          its rss pages and majflt at the previous walk (when seen there)
//! VmRSS: 4194304 kB         five lines of /proc/PID/status: VmRSS, RssAnon, RssFile,
//! RssAnon: 4190000 kB       RssShmem, VmSwap (VmSwap is in no cheaper file)
//! oom_score_adj 1000        /proc/PID/oom_score_adj
//! wchan shrink_folio_list   /proc/PID/wchan
//! ```
//!
//! # Cost and freshness
//!
//! The candidates are ranked by the stat `rss` the visit already read: every process whose
//! main thread ran, and every multi-threaded one (its other threads can allocate while the
//! main one sleeps), has it from this walk. A single-threaded process that did not run kept
//! its memory, short of reclaim taking some (swap-out, file pages dropped), which only lowers
//! it: the `status` read of the candidates gives the figures shown. `status` costs the kernel
//! ~15 µs (it walks many fields), so only `MEM_TOP` candidates (and at most `MEM_TOP` in D
//! state) read it: about 0.4 ms a walk.

use std::collections::HashMap;
use std::fmt::Write;

use super::procs_visit::{Seen, Visit};
use super::read::clean;

/// The largest processes a walk writes memory records for.
pub const MEM_TOP: usize = 20;

/// The `/proc/PID/status` lines kept (the rest are left out).
const STATUS_KEYS: [&str; 5] = ["VmRSS:", "RssAnon:", "RssFile:", "RssShmem:", "VmSwap:"];

/// Writes the `M` records of the walk `walk` (see the module doc).
pub(super) fn write(ctx: &mut Visit<'_>, seen: &HashMap<u32, Seen>, walk: u64) {
    let mut live: Vec<(&u32, &Seen)> = seen.iter().filter(|(_, s)| s.walk == walk).collect();
    live.sort_unstable_by(|a, b| b.1.rss.cmp(&a.1.rss).then(a.0.cmp(b.0)));
    let top = live.iter().take(MEM_TOP);
    let blocked = live
        .iter()
        .skip(MEM_TOP)
        .filter(|(_, s)| s.ident().1 == 'D')
        .take(MEM_TOP);
    for &(&pid, s) in top.chain(blocked) {
        let (start, _, stat_text) = s.ident();
        if stat_text.is_empty() {
            continue;
        }
        let _ = writeln!(ctx.out, "M {pid} {start}\nstat {stat_text}");
        if let Some((rss, majflt)) = s.before {
            let _ = writeln!(ctx.out, "before {rss} {majflt}");
        }
        let dir = ctx.root.join(pid.to_string());
        if let Some(status) = ctx.read_small(&dir.join("status")) {
            for line in status.lines() {
                if let Some((key, value)) = line.split_once(char::is_whitespace)
                    && STATUS_KEYS.contains(&key)
                {
                    let _ = writeln!(ctx.out, "{key} {}", clean(value.trim()));
                }
            }
        }
        if let Some(adj) = ctx.read_small(&dir.join("oom_score_adj")) {
            let _ = writeln!(ctx.out, "oom_score_adj {}", clean(adj.trim()));
        }
        if let Some(w) = ctx.read_small(&dir.join("wchan")) {
            let _ = writeln!(ctx.out, "wchan {}", clean(w.trim_end()));
        }
    }
}
