//! The headline figures of a report: the verdict over the period in one line (seconds with
//! writers throttled and in which dirty domains, each saturated disk with the evidence of its
//! worst record, seconds of direct reclaim and of stalling cgroup limit reclaim), who did it
//! and to whom (`story`), lowest MemAvailable, highest dirty against the threshold, the worst
//! disk latency under load.
//!
//! Owns: `ReportSummary`, the verdict line, and how they are computed from the analysed
//! records (each judged by the pipeline's verdict). Must not touch: I/O, Markdown.

use std::collections::BTreeMap;

use super::periods::{self, Period};
use super::series::{SYSTEM, dirty_pct_of_thresh};
use super::story::PeriodStory;
use super::types::{At, DiskReport, WorstAwait};
use crate::model::Model;
use crate::model::dirty::State;
use crate::model::domains::Kind;
use crate::model::throttled::ThrottleSource;

/// Headline figures for the closing note.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportSummary {
    /// Records in the report period.
    pub records: usize,
    /// Samples of the whole recording that failed to parse and were skipped.
    pub skipped_samples: usize,
    /// Lowest MemAvailable, MiB.
    pub min_mem_available_mib: Option<At>,
    /// Highest nr_dirty + nr_writeback as a percentage of the dirty threshold.
    pub max_dirty_pct_of_thresh: Option<At>,
    /// The verdict over the period in one line (`Verdict: writers throttled
    /// 9.0 s (global), vda saturated 13.0 s (queue …), direct reclaim 4.0 s`).
    pub verdict: String,
    /// Seconds with writers throttled (or over the threshold) in any dirty domain.
    pub throttled_s: f64,
    /// Seconds each dirty domain had writers throttled (`global`, `cgroup /box`, `bdi 0:52`),
    /// longest first.
    pub throttled_by_domain: Vec<(String, f64)>,
    /// Seconds, of those, with a writer stopped at a domain's hard limit (the state the
    /// screen and batch call "at hard limit": the tracepoint's `task_ratelimit` 0).
    pub at_hard_limit_s: f64,
    /// Seconds throttled writers slept in balance_dirty_pages, summed over writers (the
    /// tracepoint's pauses, pagewatch aside); `None` without any tracepoint row.
    pub paused_s: Option<f64>,
    /// Seconds with direct reclaim.
    pub direct_reclaim_s: f64,
    /// Who stalled in it, most first (the reclaim tracer, `report::reclaimers`).
    pub reclaimers: Vec<super::reclaimers::Reclaimer>,
    /// Seconds with cgroup limit reclaim stalling tasks.
    pub limit_stall_s: f64,
    /// The worst await of any disk and direction over a loaded period, weighted by IOs
    /// (`load::worst_under_load`).
    pub worst_await: Option<WorstAwait>,
    /// Seconds each saturated disk was saturated (disks never saturated are left out).
    pub saturated_s: Vec<(String, f64)>,
    /// Seconds each disk held a deep queue that was not judged (no calm baseline of its own;
    /// `Saturation::unjudged`), apart from the saturated ones.
    pub unjudged_s: Vec<(String, f64)>,
    /// Who did it, who suffered, who took the memory, over the records (`report::story`):
    /// the report's first paragraph.
    pub story: PeriodStory,
    /// Files written (by `report::write`).
    pub files: Vec<std::path::PathBuf>,
}

fn extreme(models: &[Model], get: impl Fn(&Model) -> Option<f64>, max: bool) -> Option<At> {
    models
        .iter()
        .filter_map(|m| {
            get(m).map(|value| At {
                value,
                time_ms: m.time_ms,
            })
        })
        .reduce(|a, b| {
            let better = if max {
                b.value > a.value
            } else {
                b.value < a.value
            };
            if better { b } else { a }
        })
}

pub(crate) fn summarise(
    models: &[Model],
    throttled: &[Period],
    [direct, limit_stall]: [&[Period]; 2],
    disks: &[DiskReport],
    skipped: usize,
) -> ReportSummary {
    let mut s = ReportSummary {
        records: models.len(),
        skipped_samples: skipped,
        min_mem_available_mib: extreme(models, SYSTEM[0].3, false),
        max_dirty_pct_of_thresh: extreme(models, dirty_pct_of_thresh, true),
        verdict: String::new(),
        throttled_s: periods::total_seconds(throttled),
        throttled_by_domain: by_domain(models),
        at_hard_limit_s: at_hard_limit(models),
        paused_s: paused(models),
        direct_reclaim_s: periods::total_seconds(direct),
        reclaimers: super::reclaimers::reclaimers(models),
        limit_stall_s: periods::total_seconds(limit_stall),
        worst_await: super::load::worst_under_load(models),
        saturated_s: disks
            .iter()
            .filter(|d| !d.saturated.is_empty())
            .map(|d| (d.name.clone(), periods::total_seconds(&d.saturated)))
            .collect(),
        unjudged_s: disks
            .iter()
            .filter(|d| !d.unjudged.is_empty())
            .map(|d| (d.name.clone(), periods::total_seconds(&d.unjudged)))
            .collect(),
        story: super::story::period_story(models),
        files: Vec::new(),
    };
    s.verdict = verdict_line(&s, disks);
    s
}

fn throttling(s: Option<State>) -> bool {
    s.is_some_and(|s| s >= State::WritersThrottled)
}

/// Seconds each domain had writers throttled (its folded state), longest first, then by name.
fn by_domain(models: &[Model]) -> Vec<(String, f64)> {
    let mut by: BTreeMap<String, f64> = BTreeMap::new();
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        let mut labels: Vec<String> = m
            .domains
            .iter()
            .filter(|d| throttling(d.state))
            .map(crate::model::domains::Domain::label)
            .collect();
        // A record without domains still has the global state line.
        if throttling(m.dirty.state) && !m.domains.iter().any(|d| d.kind == Kind::Global) {
            labels.push("global".to_owned());
        }
        for l in labels {
            *by.entry(l).or_default() += dt;
        }
    }
    let mut v: Vec<(String, f64)> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// Seconds of the records in which any dirty domain was at its hard limit.
fn at_hard_limit(models: &[Model]) -> f64 {
    models
        .iter()
        .filter(|m| {
            let mut states = m.domains.iter().map(|d| d.state).chain([m.dirty.state]);
            states.any(|s| s == Some(State::AtHardLimit))
        })
        .map(|m| m.interval_s.unwrap_or(0.0))
        .sum()
}

/// Σ pause ms/s × interval over the tracepoint's rows, pagewatch's own aside.
fn paused(models: &[Model]) -> Option<f64> {
    let mut total: Option<f64> = None;
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        for r in m
            .throttled
            .iter()
            .filter(|r| r.source == ThrottleSource::Tracepoint && !r.is_self)
        {
            *total.get_or_insert(0.0) += r.pause_ms_per_s.unwrap_or(0.0) * dt / 1000.0;
        }
    }
    total
}

/// The verdict over the period: throttled writers and their domains, each saturated disk with
/// the evidence of its worst record, direct reclaim; what did not happen is said too.
fn verdict_line(s: &ReportSummary, disks: &[DiskReport]) -> String {
    let mut parts = Vec::new();
    if s.throttled_s > 0.0 {
        let domains = match s.throttled_by_domain.as_slice() {
            [(one, _)] => one.clone(),
            many => many
                .iter()
                .map(|(d, t)| format!("{d} {t:.1} s"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let pause = s
            .paused_s
            .filter(|p| *p > 0.0)
            .map(|p| format!("writers paused {p:.1} s in all, tracepoint"));
        let limit = (s.at_hard_limit_s > 0.0)
            .then(|| format!("at the hard limit {:.1} s", s.at_hard_limit_s));
        let detail: Vec<String> = [Some(domains), limit, pause]
            .into_iter()
            .flatten()
            .filter(|d| !d.is_empty())
            .collect();
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(" ({})", detail.join("; "))
        };
        parts.push(format!("writers throttled {:.1} s{detail}", s.throttled_s));
    } else {
        parts.push("no writers throttled".to_owned());
    }
    let said = |spans: &[Period], why: &Option<String>, name: &str, what: &str| {
        let why = why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default();
        format!("{name} {what} {:.1} s{why}", periods::total_seconds(spans))
    };
    let mut any = false;
    for d in disks.iter().filter(|d| !d.saturated.is_empty()) {
        any = true;
        parts.push(said(&d.saturated, &d.worst_why, &d.name, "saturated"));
    }
    // Never "no disk saturated" beside a loaded disk nothing could judge.
    if !any && disks.iter().all(|d| d.unjudged.is_empty()) {
        parts.push("no disk saturated".to_owned());
    }
    // A deep queue no baseline could judge, said beside the saturated ones: saturated or
    // keeping up, the record does not know.
    for d in disks.iter().filter(|d| !d.unjudged.is_empty()) {
        parts.push(said(&d.unjudged, &d.unjudged_why, &d.name, "not judged"));
    }
    if s.direct_reclaim_s > 0.0 {
        let who = super::reclaimers::named(&s.reclaimers, 3)
            .map(|n| format!(" (stalled in it: {n})"))
            .unwrap_or_default();
        parts.push(format!("direct reclaim {:.1} s{who}", s.direct_reclaim_s));
    } else {
        parts.push("no direct reclaim".to_owned());
    }
    // Said only when it happened: most machines have no memory limits to reclaim at.
    if s.limit_stall_s > 0.0 {
        parts.push(format!(
            "cgroup limit reclaim stalling {:.1} s",
            s.limit_stall_s
        ));
    }
    format!("Verdict: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::domains::Domain;
    use crate::model::throttled::Throttled;
    use crate::report::periods::{Flag, merge};

    /// Three one-second records of the idle tree.
    fn models() -> Vec<Model> {
        crate::report::who::tests::models(3)
    }

    fn row(comm: &str, ms: f64, source: ThrottleSource) -> Throttled {
        Throttled {
            pause_ms_per_s: Some(ms),
            ..Throttled::new(7, comm, source)
        }
    }

    fn on(m: &Model) -> Flag {
        Flag {
            time_ms: m.time_ms,
            interval_s: 1.0,
            on: true,
            peak: 0.0,
            severe: false,
        }
    }

    /// The seconds a writer was stopped at the hard limit (what the screen's state line says
    /// then) are said beside the throttled ones.
    #[test]
    #[allow(clippy::float_cmp, reason = "sums of whole seconds")]
    fn the_verdict_says_the_seconds_at_the_hard_limit() {
        let mut m = models();
        let states = [
            State::AtHardLimit,
            State::WritersThrottled,
            State::BelowBackground,
        ];
        for (m, g) in m.iter_mut().zip(states) {
            m.domains[0].state = Some(g);
            m.dirty.state = Some(g);
        }
        let throttled = merge(m[..2].iter().map(on));
        let s = summarise(&m, &throttled, [&[], &[]], &[], 0);
        assert_eq!(s.at_hard_limit_s, 1.0);
        assert!(
            s.verdict
                .starts_with("Verdict: writers throttled 2.0 s (global; at the hard limit 1.0 s)"),
            "{}",
            s.verdict
        );
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "sums of whole seconds")]
    fn the_verdict_names_each_domain_the_pauses_and_the_disk_evidence() {
        let mut m = models();
        let global = m[0].domains[0].clone();
        assert_eq!(global.kind, Kind::Global);
        let boxd = Domain {
            kind: Kind::Memcg,
            path: "/box".into(),
            ..global.clone()
        };
        // The container throttles all three seconds, the global domain only the first.
        let states = [
            State::WritersThrottled,
            State::BackgroundFlushing,
            State::BelowBackground,
        ];
        for (m, g) in m.iter_mut().zip(states) {
            m.domains = vec![
                Domain {
                    state: Some(g),
                    ..global.clone()
                },
                Domain {
                    state: Some(State::WritersThrottled),
                    ..boxd.clone()
                },
            ];
            m.dirty.state = Some(g);
        }
        // Pauses: fio 300 ms/s and dd 200 ms/s from the tracepoint count; pagewatch's own row
        // and a wchan row's delay-accounting figure do not.
        let mut me = row("pagewatch", 500.0, ThrottleSource::Tracepoint);
        me.is_self = true;
        m[0].throttled = vec![row("fio", 300.0, ThrottleSource::Tracepoint), me];
        m[1].throttled = vec![
            row("dd", 200.0, ThrottleSource::Tracepoint),
            row("dd", 100.0, ThrottleSource::Wchan),
        ];
        let throttled = merge(m.iter().map(on));
        let disk = DiskReport {
            name: "sdb".into(),
            rows: Vec::new(),
            saturated: merge(m[1..].iter().map(on)),
            worst_why: Some("95 %util on a single-queue rotational disk, queue 3.0".into()),
            unjudged: Vec::new(),
            unjudged_why: None,
            chart: "disk-sdb.svg".into(),
        };
        let s = summarise(&m, &throttled, [&[], &[]], &[disk], 0);
        assert_eq!(s.throttled_s, 3.0);
        assert_eq!(
            s.throttled_by_domain,
            [("cgroup /box".to_owned(), 3.0), ("global".to_owned(), 1.0)]
        );
        assert!((s.paused_s.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(
            s.verdict,
            "Verdict: writers throttled 3.0 s (cgroup /box 3.0 s, global 1.0 s; writers paused \
             0.5 s in all, tracepoint); sdb saturated 2.0 s (95 %util on a single-queue \
             rotational disk, queue 3.0); no direct reclaim"
        );
        // A loaded disk no baseline judged is said in the place of "no disk saturated".
        let vda = DiskReport {
            name: "vda".into(),
            rows: Vec::new(),
            saturated: Vec::new(),
            worst_why: None,
            unjudged: merge(m[..1].iter().map(on)),
            unjudged_why: Some(
                "queue 52 deep (≥ 32), await 0.44 ms (< 1 ms), no calm baseline \
                                yet"
                .into(),
            ),
            chart: "disk-vda.svg".into(),
        };
        let s = summarise(&m, &throttled, [&[], &[]], &[vda], 0);
        assert!(
            s.verdict.contains(
                "; vda not judged 1.0 s (queue 52 deep (≥ 32), await 0.44 ms (< 1 ms), no calm \
                 baseline yet); no direct reclaim"
            ),
            "{}",
            s.verdict
        );
        // Stalling cgroup limit reclaim is said only when it happened, after direct reclaim.
        let limit = merge(m[1..].iter().map(on));
        let s = summarise(&m, &throttled, [&[], &limit], &[], 0);
        assert_eq!(s.limit_stall_s, 2.0);
        assert!(
            s.verdict
                .ends_with("; no direct reclaim; cgroup limit reclaim stalling 2.0 s"),
            "{}",
            s.verdict
        );
    }
}
