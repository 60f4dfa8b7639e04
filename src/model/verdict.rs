//! The verdict: the answers a user reads first, computed once per step from everything the
//! interval showed, and used by every output (screen, batch text and JSON, report, metrics).
//!
//! - **Dirty state per domain.** The sampled counters are one instant; the tracepoint and the
//!   walk's wchan see the whole interval. A writer paused in `balance_dirty_pages()` means its
//!   domain was above freerun during the interval (the tracepoint fires only there, spec §7),
//!   so that domain's state is at least "writers throttled" whatever the snapshot read; a
//!   writer it stopped (`task_ratelimit` 0) means the domain reached its hard limit in the
//!   interval: "at hard limit" (spec §1.10). Both are the interval's, so every instance
//!   sampling the same seconds answers the same whatever instant it read. Each
//!   tracepoint row is put in the domain that paced it: the kernel's freerun of that domain
//!   is `2·setpoint − limit` on every kernel (before the 6.14-stable fix `limit` is the
//!   global one and `setpoint` mixes it with the throttling domain's freerun; after it both
//!   are the throttling domain's, spec §7), so the row goes to the candidate domain (global,
//!   its memcg, its capped device) whose freerun is nearest that figure.
//! - **Disk saturation** against the device's own calm baseline (`saturation::Judge`).
//! - **Worst latency** weighted by IOPS: a direction with a handful of IOs is not a headline.
//! - **Reclaim**: direct reclaim and allocstall in the interval beat a watermark snapshot.
//!   Direct compaction (`compact_stall`, spec §13) is the allocating task's other stall,
//!   which allocstall does not count: it answers `direct` too, alone or beside reclaim.
//!   cgroup limit reclaim (a task charging past its memcg's `memory.max`/`high`, or v1
//!   `limit_in_bytes`, reclaims in its own context) counts in neither allocstall nor
//!   pgscan_direct, only in pgscan_anon/file (spec §3.2): it comes next, and is headline news
//!   when tasks stalled on memory for `LIMIT_STALL_PCT` of the interval (memory PSI `some`:
//!   the charge path accounts its reclaim as a memory stall since 5.8). Seen: a v1 memcg of
//!   256 MB with a dd writing 1.6 GB/s read "no reclaim scanning" while the memcg scanned
//!   458k pages/s, the dd slept in `reclaim_throttle` and memory PSI some was 20 %.
//!
//! - **Early warning** (`early`): told after the story, and worded in the headline after the
//!   dirty state it qualifies (`warn_early`).
//!
//! Owns: `fold_dirty`, `derive`, `worst_latency`, the reclaim answer and the headline (the
//! answers' types are `answers`).
//! Must not touch: I/O, the clock, formatting beyond the evidence strings.

use super::Model;
pub use super::answers::{
    DirtyVerdict, Early, LIMIT_STALL_PCT, Latency, RECLAIM_WHO, ReclaimState, ReclaimVerdict, Sure,
    Verdict,
};
use super::dirty::State;
use super::domains::{Domain, Kind};
use super::throttled::{ROOT_CGROUP_INO, ThrottleSource, Throttled};
use crate::fmt::pages;

/// A direction counts for the worst latency from this many IOs per second...
const MIN_OPS_PER_S: f64 = 5.0;
/// ...and this share of its device's IOs.
const MIN_OPS_SHARE: f64 = 0.1;

/// Folds the interval's throttled writers into the dirty domains: assigns each row the
/// domain that paced it (`Throttled::domain`; a memcg-paced row's `limit_pages` becomes that
/// domain's threshold when the kernel reported the global limit), sums the tracepoint's
/// pauses per domain, and raises a domain with throttled writers to at least
/// `WritersThrottled`, and to `AtHardLimit` when the kernel stopped one of them. The global
/// domain's state is copied to `Dirty::state`.
pub fn fold_dirty(m: &mut Model) {
    let armed = m
        .tracer
        .as_ref()
        .is_some_and(|t| t.state == crate::parse::trace::TraceState::Armed);
    let global_freerun = m.domains.first().and_then(|d| d.freerun_pages);
    for d in &mut m.domains {
        d.sampled_state = d.state;
        d.throttled_by_tracepoint_ms_per_s = armed.then_some(0.0);
        d.throttled_writers = 0;
        d.wchan_writers = 0;
    }
    for row in &mut m.throttled {
        let Some(i) = pacing_domain(row, &m.domains) else {
            continue;
        };
        let dom = &mut m.domains[i];
        row.domain = Some(dom.path.clone());
        if dom.kind == Kind::Memcg
            && row.source == ThrottleSource::Tracepoint
            && row
                .limit_pages
                .zip(global_freerun)
                .is_some_and(|(l, f)| l > f)
        {
            // The kernel's `limit` is the global domain's (before the 6.14-stable fix): the
            // memcg's own hard limit is max(m_thresh, its dirty_limit), not exported; its
            // threshold is the figure we have (spec §1.8, §1.10).
            row.kernel_limit_pages = row.limit_pages;
            row.limit_pages = dom.thresh_pages;
        }
        let paused = row.paused();
        if row.source == ThrottleSource::Tracepoint {
            let sum = dom.throttled_by_tracepoint_ms_per_s.get_or_insert(0.0);
            *sum += row.pause_ms_per_s.unwrap_or(0.0);
        }
        if paused && !row.is_self {
            dom.throttled_writers += 1;
            dom.wchan_writers += usize::from(row.source == ThrottleSource::Wchan);
            // Stopped (task_ratelimit 0) is the kernel saying the domain reached its hard
            // limit in the interval (spec §1.10, §7).
            let floor = if row.stopped.is_some_and(|n| n > 0) {
                State::AtHardLimit
            } else {
                State::WritersThrottled
            };
            dom.state = Some(dom.state.map_or(floor, |s| s.max(floor)));
        }
    }
    if let Some(g) = m.domains.first().filter(|d| d.kind == Kind::Global) {
        m.dirty.sampled_state = m.dirty.state;
        m.dirty.state = g.state;
    }
    super::scope::refresh_domain(m.scope.as_mut(), &m.domains);
}

/// The index of the domain that paced `row`: for a tracepoint row, the candidate whose
/// freerun is nearest the kernel's (`2·setpoint − limit`); for a wchan row, its memcg's
/// domain when that domain is at least flushing, else the global one.
fn pacing_domain(row: &Throttled, domains: &[Domain]) -> Option<usize> {
    let global = domains.iter().position(|d| d.kind == Kind::Global);
    let memcg = domains.iter().position(|d| {
        d.kind == Kind::Memcg
            && match row.source {
                ThrottleSource::Tracepoint => {
                    row.cgroup_ino.is_some_and(|i| i != ROOT_CGROUP_INO)
                        && d.cgroup_ino == row.cgroup_ino
                }
                ThrottleSource::Wchan => row.cgroup.as_deref() == Some(d.path.as_str()),
            }
    });
    let bdi = domains
        .iter()
        .position(|d| d.kind == Kind::Bdi && row.bdi.as_deref() == Some(d.path.as_str()));
    let candidates = [global, memcg, bdi];
    match row.source {
        ThrottleSource::Tracepoint => {
            let Some(kernel_freerun) = row
                .setpoint_pages
                .zip(row.limit_pages)
                .map(|(s, l)| (2 * s).saturating_sub(l))
            else {
                return global;
            };
            candidates
                .into_iter()
                .flatten()
                .filter_map(|i| Some((i, domains[i].freerun_pages?)))
                .min_by_key(|(_, f)| f.abs_diff(kernel_freerun))
                .map(|(i, _)| i)
                .or(global)
        }
        ThrottleSource::Wchan => memcg
            .filter(|&i| {
                domains[i]
                    .state
                    .is_some_and(|s| s >= State::BackgroundFlushing)
            })
            .or(global),
    }
}

/// The domain the dirty answer is about, and the host's line beside it: in a scope (issue 54)
/// its domains (its own and those below it), with the host's global domain as the second
/// line; else, or when the scope has no domain of its own (cgroup v1, no memory.stat read),
/// every domain.
fn judged(m: &Model) -> (Option<&Domain>, Option<String>) {
    let ps = m.page_size;
    // A scope without a domain of its own (cgroup v1, no memory.stat read) is judged as the
    // machine.
    let scope = m
        .scope
        .as_ref()
        .and_then(|v| v.path.as_deref())
        .filter(|p| super::scope::own_domain(&m.domains, p).is_some());
    let worst = match scope {
        Some(p) => {
            super::domains::most_severe(m.domains.iter().filter(|d| super::scope::within(d, p)))
                .or_else(|| super::scope::own_domain(&m.domains, p))
        }
        None => super::domains::most_severe(&m.domains),
    };
    let host = scope
        .and(m.domains.first())
        .map(|g| format!("host {}", g.summary(ps)));
    (worst, host)
}

/// The dirty answer from the folded domains: the most severe state (the most constrained
/// domain breaks ties), with its evidence.
fn dirty_verdict(m: &Model) -> DirtyVerdict {
    let ps = m.page_size;
    let (worst, host) = judged(m);
    let writers: Vec<&Throttled> = m.throttled.iter().filter(|r| !r.is_self).collect();
    let tp_pause: f64 = writers
        .iter()
        .filter(|r| r.source == ThrottleSource::Tracepoint)
        .filter_map(|r| r.pause_ms_per_s)
        .sum();
    let any_tp = writers
        .iter()
        .any(|r| r.source == ThrottleSource::Tracepoint);
    let Some(d) = worst else {
        return DirtyVerdict {
            state: None,
            domain: "global".into(),
            sure: Sure::Sampled,
            writers: writers.len(),
            pause_ms_per_s: any_tp.then_some(tp_pause),
            why: "no dirty thresholds in this sample".into(),
            host,
        };
    };
    let counts = match d.dirty_writeback().zip(d.freerun_pages) {
        Some((x, f)) => {
            let cmp = if x > f { '>' } else { '≤' };
            format!(
                "sampled d+wb {} {cmp} freerun {}",
                pages(x, ps),
                pages(f, ps)
            )
        }
        None => "sampled counts unknown".into(),
    };
    let here: Vec<&&Throttled> = writers
        .iter()
        .filter(|r| r.domain.as_deref() == Some(d.path.as_str()))
        .collect();
    // A pause figure is only ever beside the writers it sums: writers the walk's wchan saw in
    // balance_dirty_pages() without a tracepoint pause are counted apart.
    let paused = here
        .iter()
        .filter(|r| r.source == ThrottleSource::Tracepoint)
        .filter(|r| r.pause_ms_per_s.is_some_and(|p| p > 0.0))
        .count();
    let in_bdp = here
        .iter()
        .filter(|r| r.source == ThrottleSource::Wchan)
        .count();
    let (sure, why) = if here.iter().any(|r| r.source == ThrottleSource::Tracepoint) {
        let p: f64 = here.iter().filter_map(|r| r.pause_ms_per_s).sum();
        let more = match in_bdp {
            0 => String::new(),
            w => format!(", {w} more seen there (wchan)"),
        };
        let stops = match here.iter().filter_map(|r| r.stopped).sum::<u64>() {
            0 => String::new(),
            1 => ", stopped at the hard limit once".into(),
            n => format!(", stopped at the hard limit {n} times"),
        };
        let tp = if paused > 0 {
            format!("{paused} writer{} paused {p:.0} ms/s", plural(paused))
        } else {
            let n = here.len() - in_bdp;
            format!("{n} writer{} not paused", plural(n))
        };
        (
            Sure::Exact,
            format!("{tp} in balance_dirty_pages (tracepoint){stops}{more}; {counts}"),
        )
    } else if !here.is_empty() {
        (
            Sure::Approximate,
            format!(
                "{} writer{} seen in balance_dirty_pages (wchan); {counts}",
                here.len(),
                plural(here.len())
            ),
        )
    } else {
        (Sure::Sampled, counts)
    };
    DirtyVerdict {
        state: d.state,
        domain: d.label(),
        sure,
        writers: writers.len(),
        pause_ms_per_s: any_tp.then_some(tp_pause),
        why,
        host,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The direction with the highest await among those carrying real load: at least
/// `MIN_OPS_PER_S` IOs a second and `MIN_OPS_SHARE` of their device's IOs.
#[must_use]
pub fn worst_latency(disks: &[super::Disk]) -> Option<Latency> {
    let mut worst: Option<Latency> = None;
    for d in disks.iter().filter(|d| !d.is_memory()) {
        let c = &d.cols;
        let dirs = [
            ("r_await", c.r_s, c.r_await),
            ("w_await", c.w_s, c.w_await),
            ("d_await", c.d_s, c.d_await),
        ];
        let total: f64 = dirs.iter().filter_map(|(_, n, _)| *n).sum();
        for (column, n, a) in dirs {
            let (Some(n), Some(a)) = (n, a) else { continue };
            if n < MIN_OPS_PER_S || n < MIN_OPS_SHARE * total {
                continue;
            }
            if worst.as_ref().is_none_or(|w| a > w.await_ms) {
                worst = Some(Latency {
                    device: d.name.clone(),
                    column,
                    await_ms: a,
                    ops_per_s: n,
                });
            }
        }
    }
    worst
}

/// The direct answer's evidence: direct reclaim's figures, direct compaction's (spec §13),
/// or both.
fn direct_why(r: &super::Reclaim) -> String {
    let v = |x: Option<f64>| x.unwrap_or(0.0);
    let reclaim = r.direct_ran().then(|| {
        format!(
            "direct reclaim: {:.0} allocstall/s, scanning {:.0} pages/s",
            v(r.allocstall_s),
            v(r.pgscan_direct_s)
        )
    });
    let compaction = r.compaction_ran().then(|| {
        format!(
            "direct compaction: {:.0} stalls/s, {:.0} failed/s",
            v(r.compact_stall_s),
            v(r.compact_fail_s)
        )
    });
    match (reclaim, compaction) {
        (Some(a), Some(b)) => format!("{a}; {b}"),
        (a, b) => a.or(b).unwrap_or_default(),
    }
}

/// Who reclaims: direct reclaim, allocstall or direct compaction in the interval first, then cgroup limit
/// reclaim, then kswapd's scan, then the watermark snapshot.
fn reclaim_verdict(m: &Model) -> ReclaimVerdict {
    let r = &m.reclaim;
    let v = |x: Option<f64>| x.unwrap_or(0.0);
    let stall_pct = m
        .pressure
        .memory
        .and_then(|p| p.some)
        .and_then(|s| s.total_pct);
    let tasks = m.reclaim_tasks.as_ref();
    let named = tasks.and_then(|t| t.named(RECLAIM_WHO));
    let answer = |state, why: String| ReclaimVerdict {
        state,
        sure: Sure::Sampled,
        why,
        stall_pct,
        who: match state {
            ReclaimState::Direct | ReclaimState::Cgroup => tasks
                .map(|t| {
                    let named = |r: &&super::reclaim_tasks::TaskRow| {
                        r.ms_per_s >= super::reclaim_tasks::NAMED_MS_PER_S
                    };
                    t.rows
                        .iter()
                        .filter(named)
                        .take(RECLAIM_WHO)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        },
    };
    if r.direct_ran() || r.compaction_ran() {
        // Who stalled, timed by the reclaim tracer (spec §3.3), leads.
        let why = match &named {
            Some(n) => {
                let figures = direct_why(r);
                let figures = figures.strip_prefix("direct reclaim: ").unwrap_or(&figures);
                format!("direct reclaim: {n}; {figures}")
            }
            None => direct_why(r),
        };
        // Who stalled longest in direct compaction, from delay accounting (spec §13.1).
        let compacting = r
            .compaction_ran()
            .then(|| super::task_delays::longest_compacting(m.processes_by_memory.as_deref()))
            .flatten()
            .map(|c| format!("; {c}"))
            .unwrap_or_default();
        return answer(ReclaimState::Direct, format!("{why}{compacting}"));
    }
    if r.limit_ran() {
        let within = limit_group(m)
            .map(|g| format!(" in {g}"))
            .or_else(|| reclaiming_process(m))
            .unwrap_or_default();
        let stall = stall_pct
            .map(|p| format!(", memory stalled {p:.0}% of the interval (PSI some)"))
            .unwrap_or_default();
        let who = named.map(|n| format!("; stalled: {n}")).unwrap_or_default();
        return answer(
            ReclaimState::Cgroup,
            format!(
                "cgroup limit reclaim{within}: scanning {:.0} pages/s{stall}{who}",
                v(r.pgscan_memcg_s)
            ),
        );
    }
    if v(r.pgscan_kswapd_s) > 0.0 {
        return answer(
            ReclaimState::Kswapd,
            format!("kswapd scanning {:.0} pages/s", v(r.pgscan_kswapd_s)),
        );
    }
    match &r.watermarks {
        Some(w) if w.free_pages < w.min_pages => answer(
            ReclaimState::Direct,
            "free memory below the min watermark at the read".into(),
        ),
        Some(w) if w.free_pages < w.low_pages => answer(
            ReclaimState::Kswapd,
            "free memory below the low watermark at the read: kswapd is woken".into(),
        ),
        _ => answer(
            ReclaimState::None,
            "no reclaim scanning in the interval".into(),
        ),
    }
}

/// Without a group read (cgroup v1, where none is), the group of a process the last walk saw
/// in a reclaim path (`procs_memory::in_reclaim`), outside the root group: ` in
/// memory:/box (dd[7] seen in reclaim_throttle)`. One instant of one task, so it says "seen".
fn reclaiming_process(m: &Model) -> Option<String> {
    m.processes.as_ref()?.iter().find_map(|p| {
        let wchan = p.wchan.as_deref()?;
        let group = p.cgroup.as_deref()?;
        let root = matches!(group, "/" | "memory:/");
        (!root && super::procs_memory::in_reclaim(wchan))
            .then(|| format!(" in {group} ({}[{}] seen in {wchan})", p.comm, p.pid))
    })
}

/// The cgroup (v2) at its limit that reclaims: of the groups read this tick that scanned and
/// hold at least 90 % of their `memory.max` or `memory.high`, the one scanning most, the
/// deeper on a tie (memory.stat counts a group's descendants, so an ancestor scans as much).
/// `None` on cgroup v1, where no group is read (`source::cgroups`).
fn limit_group(m: &Model) -> Option<&str> {
    let rows = &m.cgroups.as_ref()?.rows;
    rows.iter()
        .filter(|g| g.pgscan_per_s.is_some_and(|s| s > 0.0))
        .filter(|g| {
            let limit = match (g.max_bytes, g.high_bytes) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(l) => l,
                    None => return false,
                },
            };
            // Compared in tenths: 90 % of the limit.
            g.current_bytes
                .is_some_and(|c| c.saturating_mul(10) >= limit.saturating_mul(9))
        })
        .max_by(|a, b| {
            a.pgscan_per_s
                .unwrap_or(0.0)
                .total_cmp(&b.pgscan_per_s.unwrap_or(0.0))
                .then(a.depth.cmp(&b.depth))
        })
        .map(|g| g.path.as_str())
}

/// Computes the verdict of a model whose domains are folded (`fold_dirty`) and whose disks
/// are judged (`saturation::Judge`).
#[must_use]
pub fn derive(m: &Model) -> Verdict {
    let dirty = dirty_verdict(m);
    let queue = |d: &super::Disk| d.cols.aqu_sz.unwrap_or(0.0);
    let mut sat: Vec<&super::Disk> = m.disks.iter().filter(|d| d.saturation.saturated).collect();
    sat.sort_by(|a, b| queue(b).total_cmp(&queue(a)));
    let saturation_why = sat.first().and_then(|d| {
        d.saturation
            .saturation_why
            .as_ref()
            .map(|w| format!("{}: {w}", d.name))
    });
    let saturated: Vec<String> = sat.iter().map(|d| d.name.clone()).collect();
    let unjudged = if sat.is_empty() {
        m.disks
            .iter()
            .filter(|d| d.saturation.unjudged)
            .max_by(|a, b| queue(a).total_cmp(&queue(b)))
            .and_then(|d| {
                Some(format!(
                    "{}: {}",
                    d.name,
                    d.saturation.saturation_why.as_ref()?
                ))
            })
    } else {
        None
    };
    let worst_latency = worst_latency(&m.disks);
    let mut reclaim = reclaim_verdict(m);
    if let Some(note) = m.below.as_ref().and_then(super::below::reclaim_note) {
        reclaim.why = format!("{}; {note}", reclaim.why);
    }
    let journal = m
        .journals
        .iter()
        .filter(|j| j.fsync_bound)
        .max_by(|a, b| {
            a.commit_ms
                .unwrap_or(0.0)
                .total_cmp(&b.commit_ms.unwrap_or(0.0))
        })
        .and_then(|j| j.why.clone());
    let mut v = Verdict {
        dirty,
        saturated,
        saturation_why,
        unjudged,
        worst_latency,
        reclaim,
        journal,
        nodes: super::nodes::note(&m.nodes, m.dirty.dirtied_per_s),
        early: None,
        headline: String::new(),
        // Told by the pipeline, which keeps the calm it is told against (`story::Calm`).
        story: super::answers::Story::default(),
    };
    v.headline = headline(&v);
    v
}

/// Sets the early warning (`early::warn`, told by the pipeline after the story it reads) and
/// words it in the headline.
pub fn warn_early(v: &mut Verdict, early: Option<Early>) {
    v.early = early;
    v.headline = headline(v);
}

/// The headline of `v`: its answers in one line, worst first (`answers_line`), then the
/// journal's evidence when fsync waits on it.
fn headline(v: &Verdict) -> String {
    let line = answers_line(
        &v.dirty,
        v.saturation_why.as_deref(),
        v.unjudged.as_deref(),
        &v.reclaim,
        v.early.as_ref(),
    );
    let line = match &v.journal {
        Some(j) => format!("{line}; {j}"),
        None => line,
    };
    match &v.nodes {
        Some(n) => format!("{line}; {n}"),
        None => line,
    }
}

/// `sat`: the saturated disk and why (`vda: …`); `unjudged`: the deep queue not judged, when
/// none is saturated. When nothing is wrong (no throttling, no saturated disk, no reclaim
/// stall) the line names all three, a deep queue not judged in the disks' place; otherwise the
/// wrong ones, worst first, a deep queue not judged among them. An early warning follows the
/// dirty state it qualifies (`global below background, early warning: …`).
fn answers_line(
    d: &DirtyVerdict,
    sat: Option<&str>,
    unjudged: Option<&str>,
    r: &ReclaimVerdict,
    early: Option<&Early>,
) -> String {
    let early = early.map(|e| format!(", {}", e.line())).unwrap_or_default();
    let throttled = d.state.filter(|s| *s >= State::WritersThrottled);
    let disks = match (sat, unjudged) {
        (Some(s), _) => Some(format!("saturated {s}")),
        (None, Some(u)) => Some(u.to_owned()),
        (None, None) => None,
    };
    if throttled.is_none() && sat.is_none() && !r.stalls() {
        let dirty = d.state.map_or("dirty pages unknown".to_owned(), |s| {
            format!("{} {}", d.domain, s.label())
        });
        let disks = disks.unwrap_or_else(|| "no disk saturated".to_owned());
        return format!("{dirty}{early}; {disks}; no reclaim stall");
    }
    let mut parts = Vec::new();
    if !early.is_empty() {
        let dirty = d.state.map_or("dirty pages unknown".to_owned(), |s| {
            format!("{} {}", d.domain, s.label())
        });
        parts.push(format!("{dirty}{early}"));
    }
    if let Some(s) = throttled {
        let pause = d
            .pause_ms_per_s
            .filter(|p| *p > 0.0)
            .map(|p| format!(", paused {p:.0} ms/s"))
            .unwrap_or_default();
        parts.push(format!("{} {}{pause}", d.domain, s.label()));
    }
    parts.extend(disks);
    if r.stalls() {
        parts.push(r.why.clone());
    }
    parts.join("; ")
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
