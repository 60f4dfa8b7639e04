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
//! memory PSI stalls): the memory sort's "who". The tracepoint is armed only while some
//! dirty domain is at least flushing in the background or pages are dirtied fast (writers
//! can be throttled soon; it fires only above freerun, spec §7). The `-below` tracer (wbt, reclaim
//! throttling) is armed while a device's detail view is open, a disk is saturated or reclaim
//! scans. Each stays on for `LINGER_S` after the last reason, so a writer that pauses for a
//! second does not drop off the list. The sync syscalls are timed (`Wants::sync`, which costs
//! every task on the machine a check on each syscall) while writers are throttled, in every
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
/// 2 s, and its walk was half the pane's cost on the idle VM (issue 27).
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
    wants: Wants,
}

impl Gate {
    /// The wants in force.
    #[must_use]
    pub fn wants(&self) -> &Wants {
        &self.wants
    }

    /// Updates the gate with a new model; returns the new wants when they changed.
    pub fn update(&mut self, m: &Model, view: &View) -> Option<Wants> {
        let dt = m.interval_s.unwrap_or(0.0);
        let anon = m.memory.AnonPages;
        let taking = memory_taken(m, self.last_anon_kb, anon, dt);
        self.last_anon_kb = anon;
        let reason = busy(m) || taking;
        let walk = view.processes || reason;
        let trace = throttling_near(m);
        let cpus_busy = m
            .cpu
            .and_then(|c| c.busy_pct())
            .is_none_or(|b| b >= QUIET_CPU_PCT);
        let active = linger(&mut self.active_quiet_s, reason || cpus_busy, dt);
        let pace = match (view.processes, active) {
            (true, true) => Pace::Shown,
            (true, false) => Pace::Quiet,
            (false, _) => Pace::Attribute,
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
        let learn = syncing(m) && self.learning(dt);
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
mod tests {
    use super::*;

    /// The idle tree's model below background, with no domain and nobody throttled.
    fn below_background() -> Model {
        let mut m = model("live-idle", 1);
        m.dirty.state = Some(State::BelowBackground);
        m.domains.clear();
        m.throttled.clear();
        m
    }

    fn model(tree: &str, root: usize) -> Model {
        let samples = crate::source::test_samples(tree);
        let p = crate::parse::Snapshot::parse(&samples[root - 1]).unwrap();
        let c = crate::parse::Snapshot::parse(&samples[root]).unwrap();
        Model::derive(Some(&p), &c, super::super::Options::default())
    }

    #[test]
    fn an_idle_machine_wants_nothing_and_a_pane_wants_a_walk() {
        let mut m = model("live-idle", 1);
        m.procs_blocked = Some(0);
        m.dirty.state = Some(State::BelowBackground);
        for d in &mut m.disks {
            d.cols.util_pct = Some(1.0);
            d.cols.aqu_sz = Some(0.0);
        }
        m.dirty.dirtied_per_s = Some(1.0);
        let mut g = Gate::default();
        assert_eq!(
            g.update(&m, &View::default()),
            None,
            "nothing wanted, nothing changed"
        );
        let view = View {
            processes: true,
            scope: Some("/box".into()),
            ..View::default()
        };
        let w = g.update(&m, &view).unwrap();
        assert_eq!(w.procs.unwrap().cgroup.as_deref(), Some("/box"));
        assert!(!w.trace);
        // In a scope, the walk is the scope's unless the pane chose a group.
        m.scope = Some(crate::model::scope::ScopeView {
            path: Some("/ctr".into()),
            ..Default::default()
        });
        let mut g = Gate::default();
        let w = g
            .update(
                &m,
                &View {
                    processes: true,
                    ..View::default()
                },
            )
            .unwrap();
        assert_eq!(w.procs.unwrap().cgroup.as_deref(), Some("/ctr"));
        let w = g.update(&m, &view).unwrap();
        assert_eq!(w.procs.unwrap().cgroup.as_deref(), Some("/box"));
    }

    #[test]
    fn the_pane_is_walked_fast_only_while_the_machine_is_not_quiet() {
        let mut m = model("live-idle", 1);
        m.procs_blocked = Some(0);
        m.dirty.state = Some(State::BelowBackground);
        m.dirty.dirtied_per_s = Some(1.0);
        for d in &mut m.disks {
            d.cols.util_pct = Some(1.0);
            d.cols.aqu_sz = Some(0.0);
        }
        m.interval_s = Some(1.0);
        let view = View {
            processes: true,
            ..View::default()
        };
        let cpu = |m: &mut Model, busy: f64| {
            let c = m.cpu.get_or_insert_with(Default::default);
            c.user_pct = Some(busy);
            c.system_pct = Some(0.0);
        };
        let mut g = Gate::default();
        cpu(&mut m, 20.0);
        let w = g.update(&m, &view).unwrap();
        assert_eq!(
            w.procs.as_ref().unwrap().pace,
            Pace::Shown,
            "busy CPUs: every 2 s"
        );
        cpu(&mut m, 1.0);
        for _ in 0..9 {
            assert_eq!(g.update(&m, &view), None, "lingering");
        }
        let w = g.update(&m, &view).unwrap();
        assert_eq!(
            w.procs.as_ref().unwrap().pace,
            Pace::Quiet,
            "quiet for 10 s: the quiet period"
        );
        cpu(&mut m, 1.0);
        m.procs_blocked = Some(1);
        let w = g.update(&m, &view).unwrap();
        assert_eq!(
            w.procs.unwrap().pace,
            Pace::Shown,
            "a task in IO wait: fast again at once"
        );
    }

    #[test]
    fn a_writer_seen_in_balance_dirty_pages_arms_the_tracepoint() {
        let mut m = model("live-idle", 1);
        m.dirty.state = Some(State::BelowBackground);
        m.domains.clear();
        let mut g = Gate::default();
        assert!(!g.update(&m, &View::default()).is_some_and(|w| w.trace));
        m.throttled = vec![super::super::throttled::Throttled::new(
            42,
            "dd",
            super::super::throttled::ThrottleSource::Wchan,
        )];
        let w = g.update(&m, &View::default()).unwrap();
        assert!(w.trace, "a task in balance_dirty_pages is reason enough");
    }

    /// Two instances started at different moments of one flood must arm alike: a sampled
    /// count that lands in a trough below background (small thresholds, bursts) must not keep
    /// the tracepoint off while pages are dirtied fast (issue 50: an 80x24 instance read
    /// "below background" in the same second as a 160x48 one's "writers throttled").
    #[test]
    fn pages_dirtied_fast_arm_the_tracepoint_below_background() {
        let mut m = below_background();
        m.dirty.dirtied_per_s = Some(1.0);
        let mut g = Gate::default();
        assert!(!g.update(&m, &View::default()).is_some_and(|w| w.trace));
        // 600 MB/s dirtied, as in the flood's first seconds.
        m.dirty.dirtied_per_s = Some(600e6 / m.page_size as f64);
        let w = g.update(&m, &View::default()).unwrap();
        assert!(
            w.trace,
            "pages dirtied fast: writers can cross freerun any moment"
        );
    }

    #[test]
    fn the_sync_calls_are_timed_while_writers_are_throttled_in_every_mode() {
        let mut m = below_background();
        let mut g = Gate::default();
        assert!(
            !g.update(&m, &View::default()).is_some_and(|w| w.sync),
            "nothing armed at idle"
        );
        m.throttled = vec![super::super::throttled::Throttled::new(
            42,
            "dd",
            super::super::throttled::ThrottleSource::Wchan,
        )];
        // Batch, record, serve and the default screen hand the gate the same view: no pane,
        // no --view (issue 50: plain batch never timed the victim of a throttled flood).
        assert!(
            g.update(&m, &View::default()).unwrap().sync,
            "a throttled interval arms it"
        );
        m.throttled.clear();
        let procs = View {
            processes: true,
            ..View::default()
        };
        let w = Gate::default().update(&m, &procs).unwrap();
        assert!(
            !w.sync,
            "the processes view shows them, the gate decides: one answer in every view"
        );
    }

    #[test]
    fn the_sync_calls_are_timed_once_dirtying_outruns_writeback() {
        let mut m = below_background();
        let page = m.page_size as f64;
        // A 4 KiB write and fsync every 100 ms: 40 kB/s dirtied and as much written.
        m.dirty.dirtied_per_s = Some(40e3 / page);
        m.dirty.written_per_s = Some(40e3 / page);
        let mut g = Gate::default();
        assert!(!g.update(&m, &View::default()).is_some_and(|w| w.sync));
        // A flood's first second: 600 MB/s dirtied, 100 MB/s written, nobody throttled yet.
        m.dirty.dirtied_per_s = Some(600e6 / page);
        m.dirty.written_per_s = Some(100e6 / page);
        assert!(
            g.update(&m, &View::default()).unwrap().sync,
            "the early warning times the victims before freerun"
        );
    }

    #[test]
    fn the_sync_calls_are_timed_while_the_disks_flush_steadily() {
        let mut m = below_background();
        m.dirty.dirtied_per_s = Some(0.0);
        for d in &mut m.disks {
            d.cols.f_s = Some(0.2);
        }
        let mut g = Gate::default();
        assert!(
            !g.update(&m, &View::default()).is_some_and(|w| w.sync),
            "a journal's commit every 5 s"
        );
        m.disks[0].cols.f_s = Some(12.0);
        let mut armed = Vec::new();
        for _ in 0..120 {
            g.update(&m, &View::default());
            armed.push(g.wants().sync);
        }
        assert!(
            armed[0],
            "an fsync loop: its calm is learnt before the flood"
        );
        // Steps of about 1 s (this tree's interval): armed for the first 10 of every 60.
        let on: Vec<usize> = (0..100).filter(|i| armed[*i]).collect();
        let want: Vec<usize> = (0..10).chain(60..70).collect();
        assert_eq!(on, want, "a window of each period, not the whole time");
    }

    #[test]
    fn the_below_tracer_is_armed_by_the_detail_view_a_saturated_disk_or_reclaim() {
        let mut m = model("live-idle", 1);
        m.reclaim.pgscan_kswapd_s = Some(0.0);
        m.reclaim.pgscan_direct_s = Some(0.0);
        for d in &mut m.disks {
            d.saturation.saturated = false;
        }
        assert!(!below_wanted(&m, &View::default()), "idle: nothing armed");
        let detail = View {
            detail: true,
            ..View::default()
        };
        assert!(below_wanted(&m, &detail));
        m.reclaim.pgscan_kswapd_s = Some(12.0);
        assert!(below_wanted(&m, &View::default()), "kswapd scans");
        m.reclaim.pgscan_kswapd_s = Some(0.0);
        m.disks[0].saturation.saturated = true;
        assert!(below_wanted(&m, &View::default()), "a saturated disk");
        let mut g = Gate::default();
        assert!(g.update(&m, &View::default()).unwrap().below);
    }

    #[test]
    fn memory_taken_fast_wants_a_walk() {
        let mut m = model("live-idle", 1);
        m.interval_s = Some(1.0);
        m.procs_blocked = Some(0);
        m.dirty.dirtied_per_s = Some(0.0);
        m.reclaim.pgscan_direct_s = Some(0.0);
        m.pressure.memory = None;
        for d in &mut m.disks {
            d.cols.util_pct = Some(0.0);
            d.cols.aqu_sz = Some(0.0);
        }
        m.memory.AnonPages = Some(1 << 20);
        let mut g = Gate::default();
        assert!(
            g.update(&m, &View::default())
                .is_none_or(|w| w.procs.is_none())
        );
        m.memory.AnonPages = Some((1 << 20) + 32 * 1024);
        assert!(
            g.update(&m, &View::default()).is_none(),
            "32 MiB/s is not fast"
        );
        m.memory.AnonPages = Some((1 << 20) + 32 * 1024 + 512 * 1024);
        let w = g.update(&m, &View::default()).unwrap();
        assert!(w.procs.is_some(), "512 MiB/s of anon growth wants a walk");
        let mut g = Gate::default();
        m.reclaim.pgscan_direct_s = Some(10.0);
        assert!(
            g.update(&m, &View::default()).unwrap().procs.is_some(),
            "direct reclaim"
        );
    }

    #[test]
    fn latency_is_timed_for_the_view_and_saturated_disks_only() {
        let mut m = model("live-idle", 1);
        m.interval_s = Some(1.0);
        for d in &mut m.disks {
            d.saturation.saturated = false;
        }
        let mut g = Gate::default();
        let _ = g.update(&m, &View::default());
        assert!(g.wants().latency.is_empty(), "nothing armed at idle");
        let first = m.disks[0].name.clone();
        let view = View {
            latency: vec!["zz".into(), first.clone()],
            ..View::default()
        };
        let w = g.update(&m, &view).unwrap();
        let mut want = vec!["zz".to_owned(), first.clone()];
        want.sort();
        assert_eq!(w.latency, want, "the view's, sorted");
        assert!(g.update(&m, &View::default()).unwrap().latency.is_empty());
        // A saturated disk is timed, and for LINGER_S after.
        m.disks[0].saturation.saturated = true;
        assert_eq!(g.update(&m, &View::default()).unwrap().latency, [first]);
        m.disks[0].saturation.saturated = false;
        for _ in 0..9 {
            assert_eq!(g.update(&m, &View::default()), None, "lingering");
        }
        assert!(g.update(&m, &View::default()).unwrap().latency.is_empty());
    }

    #[test]
    fn reasons_linger_ten_seconds() {
        let mut m = model("live-idle", 1);
        m.interval_s = Some(1.0);
        m.procs_blocked = Some(2);
        m.dirty.state = Some(State::WritersThrottled);
        let mut g = Gate::default();
        let w = g.update(&m, &View::default()).unwrap();
        assert!(w.procs.is_some() && w.trace);
        m.procs_blocked = Some(0);
        m.dirty.state = Some(State::BelowBackground);
        m.dirty.dirtied_per_s = Some(0.0);
        for d in &mut m.disks {
            d.cols.util_pct = Some(0.0);
            d.cols.aqu_sz = Some(0.0);
        }
        for _ in 0..9 {
            assert_eq!(g.update(&m, &View::default()), None, "still lingering");
        }
        let w = g.update(&m, &View::default()).unwrap();
        assert_eq!(w, Wants::default(), "off after 10 quiet seconds");
    }

    #[test]
    fn the_reclaim_tracer_is_armed_while_tasks_enter_reclaim_in_every_mode() {
        let mut m = model("live-idle", 1);
        m.reclaim.allocstall_s = Some(0.0);
        m.reclaim.pgscan_direct_s = Some(0.0);
        m.reclaim.pgscan_memcg_s = Some(0.0);
        let mut g = Gate::default();
        assert!(!g.update(&m, &View::default()).is_some_and(|w| w.reclaim));
        m.reclaim.allocstall_s = Some(3.0);
        assert!(
            g.update(&m, &View::default()).unwrap().reclaim,
            "allocstall"
        );
        let mut m2 = m.clone();
        m2.reclaim.allocstall_s = Some(0.0);
        m2.reclaim.pgscan_memcg_s = Some(500.0);
        let mut g = Gate::default();
        assert!(
            g.update(&m2, &View::default()).unwrap().reclaim,
            "memcg limit"
        );
    }

    #[test]
    fn the_dirty_files_scan_takes_the_fastest_dirtiers_first() {
        // qemu (pid 100, many open images) dirties 2 MiB/s, dd (pid 900) 128 MiB/s, a
        // throttled tar 0 (it sleeps in balance_dirty_pages), sh nothing: dd first, so the
        // 20-file budget reaches its file (a live run listed only qemu's when pids were
        // taken in pid order).
        let mut m = model("live-idle", 1);
        let row = |pid: u32, comm: &str, mib: f64| crate::model::proc_row::ProcRow {
            pid,
            comm: comm.into(),
            dirtied_bytes_per_s: Some(mib * 1_048_576.0),
            ..Default::default()
        };
        let mut tar = row(300, "tar", 0.0);
        tar.wchan = Some("balance_dirty_pages".into());
        m.processes = Some(vec![
            row(100, "qemu", 2.0),
            row(900, "dd", 128.0),
            tar,
            row(5, "sh", 0.0),
        ]);
        assert_eq!(top_dirtiers(&m), [900, 100, 300]);
        m.processes = None;
        assert!(top_dirtiers(&m).is_empty());
    }
}
