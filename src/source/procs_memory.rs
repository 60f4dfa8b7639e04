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
//! M 4242 987654 S 1048576 17 262144 17   pid, start time, state, stat rss (pages) and majflt,
//!                                        and both at the previous walk (- - when unseen)
//! mem 4194304 4190000 4304 0 0           status VmRSS RssAnon RssFile RssShmem VmSwap, kB
//! oom_score_adj 1000                     /proc/PID/oom_score_adj
//! wchan hrtimer_nanosleep                /proc/PID/wchan
//! comm pagewatch-eat                     its command name (last: it may hold spaces)
//! ```
//!
//! About 100 bytes a record: 1.5 KB a walk at most (`MEM_TOP` and as many in D state).
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
pub const MEM_TOP: usize = 15;

/// The `/proc/PID/status` lines kept (the rest are left out).
const STATUS_KEYS: [&str; 5] = ["VmRSS", "RssAnon", "RssFile", "RssShmem", "VmSwap"];

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
        let (start, state, stat_text) = s.ident();
        let comm = match (stat_text.find(" ("), stat_text.rfind(')')) {
            (Some(o), Some(c)) if c > o => &stat_text[o + 2..c],
            _ => continue,
        };
        let _ = write!(ctx.out, "M {pid} {start} {state} {} {}", s.rss, s.majflt());
        match s.before {
            Some((rss, majflt)) => drop(writeln!(ctx.out, " {rss} {majflt}")),
            None => ctx.out.push_str(" - -\n"),
        }
        let comm = clean(comm).into_owned();
        let dir = ctx.root.join(pid.to_string());
        if let Some(status) = ctx.read_small(&dir.join("status")) {
            let mut kb = [None; 5];
            for line in status
                .lines()
                .filter(|l| l.starts_with("Vm") || l.starts_with("Rss"))
            {
                if let Some((key, value)) = line.split_once(':')
                    && let Some(i) = STATUS_KEYS.iter().position(|k| *k == key)
                {
                    kb[i] = value
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok();
                }
            }
            ctx.out.push_str("mem");
            for v in kb {
                match v {
                    Some(v) => drop(write!(ctx.out, " {v}")),
                    None => ctx.out.push_str(" -"),
                }
            }
            ctx.out.push('\n');
        }
        if let Some(adj) = ctx.read_small(&dir.join("oom_score_adj")) {
            let _ = writeln!(ctx.out, "oom_score_adj {}", clean(adj.trim()));
        }
        if let Some(w) = ctx.read_small(&dir.join("wchan")) {
            let _ = writeln!(ctx.out, "wchan {}", clean(w.trim_end()));
        }
        let _ = writeln!(ctx.out, "comm {comm}");
    }
}
