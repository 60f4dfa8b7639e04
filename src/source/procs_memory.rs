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
//! state) read it: about 0.4 ms a walk. A candidate whose main thread has not run since its
//! record was read, and whose state, stat rss and majflt are as they were then, keeps that
//! record's `mem`, `oom_score_adj` and `wchan` lines (a sleeping task sleeps where it slept),
//! for at most `MEM_REUSE_WALKS` walks: `oom_score_adj` can be set from outside, and reclaim
//! can take resident pages without a major fault. Issue 27: on the idle VM the three opens of
//! each of the 15 were most of a walk.

use std::fmt::Write;

use super::procs_visit::{Cached, Extra, Seen, Table, Visit};
use super::read::clean;

/// The largest processes a walk writes memory records for.
pub const MEM_TOP: usize = 15;

/// The walks a memory record's lines are reused for at most (see the module doc).
pub const MEM_REUSE_WALKS: u64 = 5;

impl Cached {
    /// Whether these lines still hold at walk `walk` for a process whose main thread last ran
    /// at walk `ran_at` and whose state, stat rss and majflt are `now`.
    fn fits(&self, ran_at: u64, walk: u64, now: (char, u64, u64)) -> bool {
        ran_at <= self.walk
            && walk < self.walk + MEM_REUSE_WALKS
            && (self.state, self.rss, self.majflt) == now
    }
}

/// The `/proc/PID/status` lines kept (the rest are left out).
const STATUS_KEYS: [&str; 5] = ["VmRSS", "RssAnon", "RssFile", "RssShmem", "VmSwap"];

/// Writes the `M` records of the walk `walk` (see the module doc).
pub(super) fn write(ctx: &mut Visit<'_>, seen: &mut Table, walk: u64) {
    let mut live: Vec<(u32, u64)> = seen
        .iter()
        .filter(|(_, s)| s.walk == walk)
        .map(|(&pid, s)| (pid, s.rss))
        .collect();
    live.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let top = live.iter().take(MEM_TOP);
    let blocked = live
        .iter()
        .skip(MEM_TOP)
        .filter(|(pid, _)| seen.get(pid).is_some_and(|s| s.ident().1 == 'D'))
        .take(MEM_TOP);
    let picked: Vec<u32> = top.chain(blocked).map(|(pid, _)| *pid).collect();
    for pid in picked {
        let Some(s) = seen.get_mut(&pid) else {
            continue;
        };
        let (start, state, stat_text) = s.ident();
        let comm = match (stat_text.find(" ("), stat_text.rfind(')')) {
            (Some(o), Some(c)) if c > o => clean(&stat_text[o + 2..c]).into_owned(),
            _ => continue,
        };
        let _ = write!(ctx.out, "M {pid} {start} {state} {} {}", s.rss, s.majflt());
        match s.before {
            Some((rss, majflt)) => drop(writeln!(ctx.out, " {rss} {majflt}")),
            None => ctx.out.push_str(" - -\n"),
        }
        let reuse =
            (s.memory.as_ref()).filter(|c| c.fits(s.ran_at, walk, (state, s.rss, s.majflt())));
        if let Some(c) = reuse {
            ctx.out.push_str(&c.lines);
        } else {
            let lines = read_lines(ctx, pid, s);
            ctx.out.push_str(&lines);
            s.memory = Some(Box::new(Cached {
                walk,
                state,
                rss: s.rss,
                majflt: s.majflt(),
                lines,
            }));
        }
        let _ = writeln!(ctx.out, "comm {comm}");
    }
}

/// A candidate's `mem`, `oom_score_adj` and `wchan` lines, read now.
fn read_lines(ctx: &mut Visit<'_>, pid: u32, seen: &mut Seen) -> String {
    let mut out = String::new();
    if let Some(status) = ctx.read_kept(pid, seen, Extra::Status) {
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
        out.push_str("mem");
        for v in kb {
            match v {
                Some(v) => drop(write!(out, " {v}")),
                None => out.push_str(" -"),
            }
        }
        out.push('\n');
    }
    if let Some(adj) = ctx.read_kept(pid, seen, Extra::OomScoreAdj) {
        let _ = writeln!(out, "oom_score_adj {}", clean(adj.trim()));
    }
    if let Some(w) = ctx.read_kept(pid, seen, Extra::Wchan) {
        let _ = writeln!(out, "wchan {}", clean(w.trim_end()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_reused_only_while_its_process_sleeps_unchanged() {
        let c = Cached {
            walk: 10,
            state: 'S',
            rss: 500,
            majflt: 3,
            lines: String::new(),
        };
        let same = ('S', 500, 3);
        assert!(
            c.fits(10, 11, same),
            "ran at the walk it was read at, asleep since"
        );
        assert!(c.fits(7, 14, same), "the last walk it may serve");
        assert!(
            !c.fits(7, 15, same),
            "MEM_REUSE_WALKS walks old: read again"
        );
        assert!(!c.fits(11, 12, same), "its main thread ran since");
        assert!(!c.fits(7, 11, ('D', 500, 3)), "another state");
        assert!(!c.fits(7, 11, ('S', 400, 3)), "reclaim took pages");
        assert!(!c.fits(7, 11, ('S', 500, 4)), "a major fault");
    }
}
