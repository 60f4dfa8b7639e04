//! When to collect the "who" data (processes, the throttle tracepoint, the cgroup tree): the
//! one gate the screen and batch mode share.
//!
//! Owns: `Gate`, which turns the latest model and what the screen shows into `Wants`. Must
//! not touch: the source (callers hand it the wants), I/O.
//!
//! A full process walk costs about 12 µs a process (spec §11: 12.5 ms at 1,000), far over an
//! idle monitor's budget at 1 Hz, so it runs only when there is something to attribute:
//! the processes pane is open, a task is in IO wait, a disk is busy, pages are dirtied
//! fast, or memory is taken fast or under pressure (anon pages grow, direct reclaim scans,
//! memory PSI stalls): the memory sort's "who"; and while the sync calls' learning window
//! is open (the disks flush steadily: someone's calm fsync is learnt on the walk's rows).
//! The tracepoint is armed only while some dirty domain is at least flushing in the
//! background or pages are dirtied fast (writers can be throttled soon; it fires only above
//! freerun, spec §7), and from the first sample, whose rates are still unknown: an instance
//! started in the middle of a flood judges its first interval on the writers' pauses, as one
//! started before it does, whatever count its first read happened to land on. The `-below`
//! tracer (wbt, reclaim throttling) is armed while a device's detail view is open, a disk is
//! saturated or reclaim scans. Each stays on for `LINGER_S` after the last reason, so a
//! writer that pauses for a second does not drop off the list. The sync syscalls are timed
//! (`Wants::sync`, which costs every task on the machine a check on each syscall) while
//! writers are throttled, in every
//! mode alike (the victims beside the culprits: the screen's throttled table, batch JSON's
//! `processes[]`, a recording's report, issue 50); the processes view shows them while they
//! are timed but does not arm them, since what they teach the story (each process's calm
//! fsync, against which victims are named) must not depend on the view; never at idle. A
//! device's block requests are timed
//! (issue 25) while the view asks (the detail view, `--latency`) and for `LINGER_S` after the
//! verdict last flagged it saturated; never otherwise.

use super::Model;
use super::dirty::State;
use crate::sample::{Pace, ProcScope, Wants};

/// Seconds the walk and the tracepoint stay on after their last reason.
pub const LINGER_S: f64 = 10.0;

/// The CPUs count as quiet below this user + system %, of all CPUs. While the machine is quiet
/// (that, and no reason to walk besides the pane itself) the processes pane is walked at the
/// quiet pace (`Pace::Quiet`, every 10 s): a table of sleeping processes does not change in
/// 5 s, and its walk was half the pane's cost on the idle VM (issue 27).
const QUIET_CPU_PCT: f64 = 5.0;

/// A disk counts as busy from this %util, or this queue depth (aqu-sz)...
const BUSY_UTIL_PCT: f64 = 50.0;
const BUSY_AQU_SZ: f64 = 1.0;
/// ...and pages are "dirtied fast" from this many bytes a second.
const FAST_DIRTYING_BYTES_PER_S: f64 = 1024.0 * 1024.0;
/// Memory is "taken fast" from this growth of AnonPages a second...
const FAST_ANON_BYTES_PER_S: f64 = 64.0 * 1024.0 * 1024.0;
/// ...and "under pressure" from this memory PSI `some` avg10, %.
const MEMORY_PSI_SOME_PCT: f32 = 1.0;

/// What the screen shows that decides the wants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
// Independent facts about what is on screen, not the states of one thing.
#[allow(clippy::struct_excessive_bools)]
pub struct View {
    /// The processes pane is shown.
    pub processes: bool,
    /// The cgroups pane is shown.
    pub cgroups: bool,
    /// The cgroup the processes pane is scoped to, if any.
    pub scope: Option<String>,
    /// Devices whose latency the user asked for: the disk detail view's (`Enter` on a disk)
    /// and `--latency DEV`.
    pub latency: Vec<String>,
    /// Queue time is asked for (`--queue-time`).
    pub queue_time: bool,
    /// A device's detail view is shown (the `-below` tracer shows its wbt state there).
    pub detail: bool,
}

/// Turns each model into the wants for the next sample, with `LINGER_S` of hysteresis.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    /// Seconds since the last reason to walk the processes; `None`: never, or lapsed.
    procs_quiet_s: Option<f64>,
    /// Seconds since the last reason to arm the tracepoint.
    trace_quiet_s: Option<f64>,
    /// Seconds since the last reason to time the sync syscalls.
    sync_quiet_s: Option<f64>,
    /// Where the steady flushing is in its learning cycle (`SYNC_LEARN_PERIOD_S`), s.
    sync_cycle_s: f64,
    /// Seconds since each device was last flagged saturated (block latency, `LINGER_S`).
    saturated_quiet_s: std::collections::BTreeMap<String, f64>,
    /// Seconds since the last reason to arm the `-below` tracer.
    below_quiet_s: Option<f64>,
    /// Seconds since direct or memcg reclaim last ran (the reclaim tracer).
    reclaim_quiet_s: Option<f64>,
    /// Seconds since the machine was last busy enough to walk the pane at the fast period.
    active_quiet_s: Option<f64>,
    /// AnonPages (kB) of the last model, for its growth.
    last_anon_kb: Option<u64>,
    /// Seconds since the last reason to walk other than the processes view.
    happening_quiet_s: Option<f64>,
    wants: Wants,
}

impl Gate {
    /// The wants in force.
    #[must_use]
    pub fn wants(&self) -> &Wants {
        &self.wants
    }

    /// Whether the walk in force is wanted for what happens (with `LINGER_S`), not only for
    /// the processes view: every view and mode walks then. The story learns a process's calm
    /// (`story::Calm`) only from such walks, or an instance showing the view named victims
    /// against calm figures that batch and the default screen never saw (issue 50's one
    /// answer).
    #[must_use]
    pub fn walks_for_what_happens(&self) -> bool {
        self.happening_quiet_s.is_some()
    }

    /// Updates the gate with a new model; returns the new wants when they changed.
    pub fn update(&mut self, m: &Model, view: &View) -> Option<Wants> {
        let dt = m.interval_s.unwrap_or(0.0);
        let anon = m.memory.AnonPages;
        let taking = memory_taken(m, self.last_anon_kb, anon, dt);
        self.last_anon_kb = anon;
        let reason = busy(m) || taking;
        // The sync calls' learning window (see `sync` below) walks too: its figures ride on
        // the walk's rows, and without them no calm is learnt and the early warning, which
        // needs one, never fires (a batch started beside an fsync loop walked only when a
        // task happened to be in D state at a read).
        let learn = syncing(m) && self.learning(dt);
        let happening = reason || learn;
        linger(&mut self.happening_quiet_s, happening, dt);
        let walk = view.processes || happening;
        // No rate yet (the first sample): armed until the rates say otherwise.
        let trace = throttling_near(m) || m.interval_s.is_none();
        let cpus_busy = m
            .cpu
            .and_then(|c| c.busy_pct())
            .is_none_or(|b| b >= QUIET_CPU_PCT);
        let active = linger(&mut self.active_quiet_s, reason || cpus_busy, dt);
        // One pace for the pane and every other mode while anything happens: the same walks,
        // so the same rates and culprits in every instance (`Pace::Attribute`).
        let pace = if view.processes && !active {
            Pace::Quiet
        } else {
            Pace::Attribute
        };
        // The pane's chosen group, else the scope's (issue 54: its processes only).
        let cgroup = view
            .scope
            .clone()
            .or_else(|| m.scope.as_ref().and_then(|s| s.path.clone()));
        let procs = linger(&mut self.procs_quiet_s, walk, dt).then_some(ProcScope { cgroup, pace });
        // The victims' sync latency: gathered while writers are throttled and from the moment
        // dirtying outruns writeback (the early warning's victim route needs the fsyncs of a
        // flood's first seconds, before any writer is throttled), whatever the mode (what is
        // measured follows what happens, not the output), and shown in the processes view.
        // While the disks flush steadily and nothing else asks, someone syncs: their calm is
        // learnt in a short window of each period, since the armed syscall tracepoints slow
        // every syscall of the machine a little (docs/PERFORMANCE.md). Not for the processes
        // view alone: an instance showing it learnt calm fsyncs that batch never saw, and
        // named other victims in the same second.
        let sync = !m.throttled.is_empty() || super::early::outrun_pages_per_s(&m.dirty).is_some();
        let next = Wants {
            procs: procs.clone(),
            trace: linger(&mut self.trace_quiet_s, trace, dt),
            sync: linger(&mut self.sync_quiet_s, sync, dt) || learn,
            cgroups_every_tick: view.cgroups,
            latency: self.latency(m, view, dt),
            latency_queue: view.queue_time,
            below: linger(&mut self.below_quiet_s, below_wanted(m, view), dt),
            // Who stalls in reclaim: timed while tasks enter it (allocstall, direct or memcg
            // scanning), whatever the mode.
            reclaim: linger(
                &mut self.reclaim_quiet_s,
                m.reclaim.direct_ran() || m.reclaim.limit_ran(),
                dt,
            ),
            delays: super::task_delays::pids(
                m.task_delayacct,
                m.processes_by_memory.as_deref(),
                procs.is_some(),
            ),
            dirty_files: if procs.is_some() {
                top_dirtiers(m)
            } else {
                Vec::new()
            },
        };
        (next != self.wants).then(|| {
            self.wants = next.clone();
            next
        })
    }
}

impl Gate {
    /// Whether the steady flushing's learning window is open: the first `SYNC_LEARN_ON_S` of
    /// every `SYNC_LEARN_PERIOD_S` it lasts.
    fn learning(&mut self, dt: f64) -> bool {
        let open = self.sync_cycle_s < SYNC_LEARN_ON_S;
        self.sync_cycle_s = (self.sync_cycle_s + dt) % SYNC_LEARN_PERIOD_S;
        open
    }

    /// The devices to time (sorted, once each): those the view asks for, and those the
    /// verdict flagged saturated in the last `LINGER_S`.
    fn latency(&mut self, m: &Model, view: &View, dt: f64) -> Vec<String> {
        for q in self.saturated_quiet_s.values_mut() {
            *q += dt;
        }
        for d in m.disks.iter().filter(|d| d.saturation.saturated) {
            self.saturated_quiet_s.insert(d.name.clone(), 0.0);
        }
        self.saturated_quiet_s.retain(|_, q| *q < LINGER_S);
        let mut devs: Vec<String> = view
            .latency
            .iter()
            .chain(self.saturated_quiet_s.keys())
            .cloned()
            .collect();
        devs.sort();
        devs.dedup();
        devs
    }
}

/// Flush requests a second, over all disks, from which someone is taken to sync steadily: a
/// 4 KiB write and fsync every 100 ms flushes vda 10-20 times a second here, a journal's
/// commit every 5 s 0.2.
pub const SYNCING_FLUSHES_PER_S: f64 = 1.0;
/// While the disks flush steadily, the sync calls are timed for this long...
pub const SYNC_LEARN_ON_S: f64 = 10.0;
/// ...in every this long.
pub const SYNC_LEARN_PERIOD_S: f64 = 60.0;

/// Whether the disks flush at `SYNCING_FLUSHES_PER_S` or more (iostat -x's f/s, spec §5).
fn syncing(m: &Model) -> bool {
    m.disks.iter().filter_map(|d| d.cols.f_s).sum::<f64>() >= SYNCING_FLUSHES_PER_S
}

/// Whether the reason holds now or held less than `LINGER_S` ago; keeps the quiet time.
fn linger(quiet_s: &mut Option<f64>, reason: bool, dt: f64) -> bool {
    *quiet_s = if reason {
        Some(0.0)
    } else {
        quiet_s.map(|q| q + dt).filter(|q| *q < LINGER_S)
    };
    quiet_s.is_some()
}

/// Something to attribute: a task in IO wait, a busy disk, or fast dirtying.
fn busy(m: &Model) -> bool {
    m.procs_blocked.is_some_and(|n| n > 0)
        || m.disks.iter().any(|d| {
            d.cols.util_pct.is_some_and(|u| u >= BUSY_UTIL_PCT)
                || d.cols.aqu_sz.is_some_and(|q| q >= BUSY_AQU_SZ)
        })
        || dirtied_fast(m)
}

/// Memory taken fast (AnonPages grew `FAST_ANON_BYTES_PER_S` since the last model) or
/// under pressure (direct reclaim scanned, direct compaction stalled, or memory PSI `some`
/// avg10 at least `MEMORY_PSI_SOME_PCT`).
fn memory_taken(m: &Model, last_kb: Option<u64>, now_kb: Option<u64>, dt: f64) -> bool {
    let grew = match (last_kb, now_kb) {
        (Some(a), Some(b)) if dt > 0.0 => {
            b.saturating_sub(a) as f64 * 1024.0 / dt >= FAST_ANON_BYTES_PER_S
        }
        _ => false,
    };
    grew || m.reclaim.pgscan_direct_s.is_some_and(|s| s > 0.0)
        || m.reclaim.compaction_ran()
        || m.pressure
            .memory
            .and_then(|p| p.some)
            .is_some_and(|s| s.avg10 >= MEMORY_PSI_SOME_PCT)
}

/// The `-below` tracer (wbt depths, reclaim throttled on writeback) is worth its cost: a
/// device's detail view is open, a device is saturated (is wbt holding writes back to protect
/// reads?), or reclaim is active (kswapd or direct scanning: does it sleep on writeback, or
/// write dirty pages itself?).
fn below_wanted(m: &Model, view: &View) -> bool {
    let scanning = |s: Option<f64>| s.is_some_and(|s| s > 0.0);
    view.detail
        || m.disks.iter().any(|d| d.saturation.saturated)
        || scanning(m.reclaim.pgscan_kswapd_s)
        || scanning(m.reclaim.pgscan_direct_s)
}

/// Some dirty domain (global, a memcg's, a capped device's) flushes in the background or
/// worse: writers can be throttled soon. Or a writer was seen in `balance_dirty_pages()` (the
/// walk's wchan, or the tracepoint itself while armed): with small thresholds the count
/// crosses them in bursts, and a sampled state can read "below background" for several
/// samples in a row while writers are being paced.
///
/// Or pages are dirtied fast (`FAST_DIRTYING_BYTES_PER_S`): the event fires only above
/// freerun (spec §7), so armed below it the tracepoint costs nothing, and a sampled count
/// that lands in a trough cannot decide, by when this instance happened to start, whether
/// the writers' pauses are seen.
fn throttling_near(m: &Model) -> bool {
    let near = |s: Option<State>| s.is_some_and(|s| s != State::BelowBackground);
    near(m.dirty.state)
        || m.domains.iter().any(|d| near(d.state))
        || !m.throttled.is_empty()
        || dirtied_fast(m)
}

/// Pages dirtied at `FAST_DIRTYING_BYTES_PER_S` or more.
fn dirtied_fast(m: &Model) -> bool {
    let page = m.page_size as f64;
    m.dirty
        .dirtied_per_s
        .is_some_and(|p| p * page >= FAST_DIRTYING_BYTES_PER_S)
}

/// Dirtying from this much counts for the dirty-files scan (1 MiB/s).
const DIRTIER_BYTES_PER_S: f64 = 1_048_576.0;
/// At most this many dirtiers' files are scanned.
const DIRTIERS: usize = 5;

/// The processes whose open files the dirty-files scan measures (spec §15.4): the last
/// walk's top dirtiers from `DIRTIER_BYTES_PER_S`, and the writers throttled in
/// `balance_dirty_pages`, at most `DIRTIERS`, the fastest first: the scan measures their
/// files in this order until its budget is spent, so a process with many open files (a
/// qemu holding its images) does not crowd out the writer.
fn top_dirtiers(m: &Model) -> Vec<u32> {
    let Some(rows) = &m.processes else {
        return Vec::new();
    };
    let mut rows: Vec<_> = rows
        .iter()
        .filter(|p| {
            p.dirtied_bytes_per_s.unwrap_or(0.0) >= DIRTIER_BYTES_PER_S
                || p.wchan.as_deref() == Some("balance_dirty_pages")
        })
        .collect();
    rows.sort_by(|a, b| {
        b.dirtied_bytes_per_s
            .unwrap_or(0.0)
            .total_cmp(&a.dirtied_bytes_per_s.unwrap_or(0.0))
    });
    rows.iter().take(DIRTIERS).map(|p| p.pid).collect()
}

#[cfg(test)]
#[path = "who_tests.rs"]
mod tests;
