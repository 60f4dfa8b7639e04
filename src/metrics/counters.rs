//! The counters a live run accumulates sample by sample, so a scrape every 15 s still sees a
//! 3-second episode that a gauge would have missed: seconds each dirty domain spent in each
//! state, seconds with direct reclaim and with stalling cgroup limit reclaim, seconds each
//! device was saturated against its own baseline, seconds throttled writers slept (by cgroup),
//! and the samples taken.
//!
//! Each sample's interval (the exact time since the previous read, `Model::interval_s`) is
//! credited to what that sample found; the first sample credits nothing. A domain, device or
//! cgroup not seen for `FORGET_MS` is dropped, so a host with short-lived cgroups keeps a
//! bounded set of series (one that comes back starts again from 0, a counter reset to
//! Prometheus).
//! Owns: `Counters`. Must not touch: I/O, the clock, the text formats.

use std::collections::BTreeMap;

use crate::metrics::families::{STATES, kind, paused_seconds};
use crate::model::Model;
use crate::model::dirty::State;

/// Series not seen for this long (ms of sample time) are dropped.
pub const FORGET_MS: i64 = 600_000;

/// A counter and when its subject was last seen.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Seen<T> {
    /// The accumulated value.
    pub value: T,
    /// Wall time of the last sample that had the subject, ms.
    pub last_ms: i64,
}

/// A dirty domain's key: its `kind` label and its path.
pub type DomainKey = (&'static str, String);

/// Everything accumulated since pagewatch started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// Seconds in each state (indexed as `families::STATES`), per dirty domain.
    pub states: BTreeMap<DomainKey, Seen<[f64; 5]>>,
    /// Seconds of intervals in which direct reclaim ran (pgscan_direct or allocstall > 0).
    pub direct_reclaim_s: f64,
    /// Seconds of intervals in which cgroup limit reclaim ran with memory stalled (the
    /// verdict's rule, `ReclaimVerdict::limit_stalls`).
    pub limit_stall_s: f64,
    /// Seconds each device was saturated (warn or worse, `model::saturation`).
    pub saturated_s: BTreeMap<String, Seen<f64>>,
    /// Seconds throttled writers slept in balance_dirty_pages(), by cgroup (spec §7).
    pub paused_s: BTreeMap<String, Seen<f64>>,
    /// Each timed device's latency histograms summed since pagewatch started (issue 25), by
    /// (device, `read`/`write`, `device`/`queue`).
    pub latency: BTreeMap<LatencyKey, Seen<crate::parse::blk_lat::Hist>>,
}

/// A latency histogram's key: device, `op` label, `stage` label.
pub type LatencyKey = (String, &'static str, &'static str);

/// The index of a state in `families::STATES`.
fn index(s: State) -> usize {
    STATES.iter().position(|x| *x == s).unwrap_or(0)
}

impl Counters {
    /// Credits record `m`'s interval. `saturation` holds each device's level this record
    /// (`model::saturation`, judged by the pipeline; 2 = saturated), by name.
    pub fn observe(&mut self, m: &Model, saturation: &[(&str, u8)]) {
        let dt = m
            .interval_s
            .filter(|d| d.is_finite() && *d > 0.0)
            .unwrap_or(0.0);
        let now = m.time_ms;
        for d in &m.domains {
            let key = (kind(d.kind), d.path.clone());
            let e = self.states.entry(key).or_default();
            e.last_ms = now;
            if let Some(s) = d.state {
                e.value[index(s)] += dt;
            }
        }
        if m.reclaim.direct_ran() {
            self.direct_reclaim_s += dt;
        }
        if m.verdict.as_ref().is_some_and(|v| v.reclaim.limit_stalls()) {
            self.limit_stall_s += dt;
        }
        for (name, level) in saturation {
            let e = seen(&mut self.saturated_s, name, now);
            if *level >= 2 {
                e.value += dt;
            }
        }
        for (cgroup, s) in paused_seconds(m) {
            if s.is_finite() {
                seen(&mut self.paused_s, cgroup, now).value += s;
            }
        }
        for d in &m.disks {
            let Some(l) = &d.lat_hist else { continue };
            let l = &l.lat;
            for (op, stage, h) in [
                ("read", "device", &l.read_dev),
                ("write", "device", &l.write_dev),
                ("read", "queue", &l.read_queue),
                ("write", "queue", &l.write_queue),
            ] {
                // Queue time not measured (`--queue-time` not given): no series, not zeros.
                if stage == "queue" && l.queue_off {
                    continue;
                }
                let e = self.latency.entry((d.name.clone(), op, stage)).or_default();
                e.value.merge(h);
                e.last_ms = now;
            }
        }
        let keep = |last: i64| now.saturating_sub(last) <= FORGET_MS;
        self.latency.retain(|_, e| keep(e.last_ms));
        self.states.retain(|_, e| keep(e.last_ms));
        self.saturated_s.retain(|_, e| keep(e.last_ms));
        self.paused_s.retain(|_, e| keep(e.last_ms));
    }
}

/// The entry for `name`, marked seen at `now` (the name is cloned only when new).
fn seen<'a>(map: &'a mut BTreeMap<String, Seen<f64>>, name: &str, now: i64) -> &'a mut Seen<f64> {
    if !map.contains_key(name) {
        map.insert(name.to_owned(), Seen::default());
    }
    let e = map.get_mut(name).expect("inserted above");
    e.last_ms = now;
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::domains::Kind;
    use crate::model::throttled::{ThrottleSource, Throttled};

    fn model() -> Model {
        let s = crate::source::test_samples("live-idle");
        let p = crate::parse::Snapshot::parse(&s[0]).unwrap();
        let c = crate::parse::Snapshot::parse(&s[1]).unwrap();
        Model::derive(Some(&p), &c, crate::model::Options::default())
    }

    /// `m` at `t_ms` after an interval of `dt` s, the global domain in state `s`.
    fn at(m: &Model, t_ms: i64, dt: f64, s: State) -> Model {
        let mut m = m.clone();
        m.time_ms = t_ms;
        m.interval_s = Some(dt);
        m.domains.truncate(1);
        m.domains[0].state = Some(s);
        m.reclaim.pgscan_direct_s = Some(0.0);
        m.reclaim.allocstall_s = Some(0.0);
        m
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "sums of whole seconds are exact")]
    fn a_three_second_episode_stays_in_the_counter() {
        let base = model();
        assert_eq!(base.domains[0].kind, Kind::Global);
        let mut c = Counters::default();
        // 1 s samples: 5 below background, 3 throttled (a short episode), 7 below again; a
        // scrape every 15 s sees the gauge below background both times, the counter 3 s more.
        let mut t = 1_000_000;
        let mut seq = vec![State::BelowBackground; 5];
        seq.extend([State::WritersThrottled; 3]);
        seq.extend([State::BelowBackground; 7]);
        for s in seq {
            t += 1000;
            c.observe(&at(&base, t, 1.0, s), &[]);
        }
        let g = &c.states[&("global", "/".to_owned())].value;
        assert_eq!(g[index(State::BelowBackground)], 12.0);
        assert_eq!(g[index(State::WritersThrottled)], 3.0);
        assert_eq!(g.iter().sum::<f64>(), 15.0);
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "zeros are exact")]
    fn intervals_are_credited_as_measured_and_the_first_credits_nothing() {
        let base = model();
        let mut c = Counters::default();
        let mut first = at(&base, 1_000, 1.0, State::BackgroundFlushing);
        first.interval_s = None;
        c.observe(&first, &[("vda", 2)]);
        assert_eq!(c.states[&("global", "/".to_owned())].value, [0.0; 5]);
        assert_eq!(c.saturated_s["vda"].value, 0.0);
        // 0.98 s then 1.03 s: a jittery sampler is counted exactly.
        let mut m = at(&base, 1_980, 0.98, State::BackgroundFlushing);
        m.reclaim.allocstall_s = Some(2.0);
        c.observe(&m, &[("vda", 2), ("sda", 0)]);
        let mut m = at(&base, 3_010, 1.03, State::BackgroundFlushing);
        m.reclaim.pgscan_direct_s = Some(10.0);
        c.observe(&m, &[("vda", 1), ("sda", 0)]);
        let g = &c.states[&("global", "/".to_owned())].value;
        assert!((g[index(State::BackgroundFlushing)] - 2.01).abs() < 1e-9);
        assert!((c.direct_reclaim_s - 2.01).abs() < 1e-9);
        // A warning (level 1) is not saturation: only the first record's 0.98 s counts.
        assert!((c.saturated_s["vda"].value - 0.98).abs() < 1e-9);
        assert_eq!(c.saturated_s["sda"].value, 0.0);
    }

    #[test]
    fn stalling_limit_reclaim_is_counted_by_the_verdicts_rule() {
        let base = model();
        let mut c = Counters::default();
        // Limit reclaim each second; memory stalled 20 %, 0.5 %, then 3 % of the interval.
        for (t, stall) in [(2_000, 20.0), (3_000, 0.5), (4_000, 3.0)] {
            let mut m = at(&base, t, 1.0, State::BelowBackground);
            m.reclaim.pgscan_memcg_s = Some(458_500.0);
            let psi = crate::model::cpu::PsiFigures {
                avg10: 0.0,
                avg60: 0.0,
                total_pct: Some(stall),
            };
            m.pressure.memory = Some(crate::model::Pressure {
                some: Some(psi),
                full: None,
            });
            m.verdict = Some(crate::model::verdict::derive(&m));
            c.observe(&m, &[]);
        }
        assert!((c.limit_stall_s - 2.0).abs() < 1e-9, "{}", c.limit_stall_s);
        assert!(c.direct_reclaim_s.abs() < 1e-9);
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "zeros are exact")]
    fn paused_seconds_by_cgroup_and_forgotten_series() {
        let base = model();
        let row = |cg: &str, ms| Throttled {
            cgroup: Some(cg.into()),
            pause_ms_per_s: Some(ms),
            ..Throttled::new(1, "dd", ThrottleSource::Tracepoint)
        };
        let mut c = Counters::default();
        let mut m = at(&base, 10_000, 2.0, State::WritersThrottled);
        m.throttled = vec![row("/box", 250.0), row("/box", 150.0), row("/other", 50.0)];
        c.observe(&m, &[("vdb", 0)]);
        // 400 ms/s × 2 s = 0.8 s; 50 ms/s × 2 s = 0.1 s.
        assert!((c.paused_s["/box"].value - 0.8).abs() < 1e-9);
        assert!((c.paused_s["/other"].value - 0.1).abs() < 1e-9);
        // Ten minutes and a second later, without /box, /other or vdb: all three are dropped,
        // the global domain (seen every sample) is kept.
        let m = at(
            &base,
            10_000 + FORGET_MS + 1_000,
            1.0,
            State::BelowBackground,
        );
        c.observe(&m, &[]);
        assert!(c.paused_s.is_empty());
        assert!(c.saturated_s.is_empty());
        assert_eq!(c.states.len(), 1);
    }
}
