//! Who stalled in direct reclaim over a report's records: each process's time in reclaim
//! (the reclaim tracer's `model::reclaim_tasks`), summed over the records with direct
//! reclaim and divided by their seconds.
//!
//! Owns: `reclaimers` and its wording (`named`). Must not touch: how a record's figures are
//! paired (`model::reclaim_tasks`), the tables.

use std::collections::BTreeMap;

use crate::model::Model;

/// One process's time in direct reclaim over the report's direct-reclaim seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Reclaimer {
    /// `comm[pid]`.
    pub name: String,
    /// Milliseconds in reclaim per second of direct reclaim.
    pub ms_per_s: f64,
}

/// The processes timed in reclaim in the records where direct reclaim ran, most first;
/// empty when the tracer was never armed there.
#[must_use]
pub fn reclaimers(models: &[Model]) -> Vec<Reclaimer> {
    let mut ms: BTreeMap<String, f64> = BTreeMap::new();
    let mut seconds = 0.0;
    for m in models.iter().filter(|m| m.reclaim.direct_ran()) {
        let dt = m.interval_s.unwrap_or(0.0);
        seconds += dt;
        for r in m.reclaim_tasks.iter().flat_map(|t| &t.rows) {
            let comm = if r.comm.is_empty() { "?" } else { &r.comm };
            *ms.entry(format!("{comm}[{}]", r.pid)).or_default() += r.ms_per_s * dt;
        }
    }
    let mut out: Vec<Reclaimer> = ms
        .into_iter()
        .filter(|_| seconds > 0.0)
        .map(|(name, ms)| Reclaimer {
            name,
            ms_per_s: ms / seconds,
        })
        .collect();
    out.sort_by(|a, b| b.ms_per_s.total_cmp(&a.ms_per_s).then(a.name.cmp(&b.name)));
    out
}

/// `fio[1234] 230 ms/s, pagewatch-eat[99] 40 ms/s`: the first `n`; `None` when none.
#[must_use]
pub fn named(rs: &[Reclaimer], n: usize) -> Option<String> {
    let parts: Vec<String> = rs
        .iter()
        .take(n)
        .map(|r| format!("{} {:.0} ms/s", r.name, r.ms_per_s))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::reclaim_tasks::{ReclaimTasks, TaskRow};

    #[test]
    fn time_in_reclaim_is_averaged_over_the_seconds_of_direct_reclaim() {
        let samples = crate::source::test_samples("live-idle");
        let m0 = crate::pipeline::derive_all(&samples, crate::model::Options::default())
            .models
            .remove(0);
        let row = |pid, comm: &str, ms| TaskRow {
            pid,
            comm: comm.into(),
            ms_per_s: ms,
            in_reclaim: false,
            stalls: 1,
            reclaimed_pages: 0,
            memcg: false,
        };
        let with = |direct: bool, rows: Vec<TaskRow>| {
            let mut m = m0.clone();
            m.interval_s = Some(1.0);
            m.reclaim.allocstall_s = Some(if direct { 50.0 } else { 0.0 });
            m.reclaim.pgscan_direct_s = Some(0.0);
            m.reclaim_tasks = Some(ReclaimTasks {
                rows,
                ..ReclaimTasks::default()
            });
            m
        };
        // Two seconds of direct reclaim: fio 300 then 100 ms/s, the eater 40 in the second;
        // a quiet second after (its stray row is not counted).
        let models = [
            with(true, vec![row(7, "fio", 300.0)]),
            with(
                true,
                vec![row(7, "fio", 100.0), row(99, "pagewatch-eat", 40.0)],
            ),
            with(false, vec![row(5, "bash", 900.0)]),
        ];
        let rs = reclaimers(&models);
        assert_eq!(
            named(&rs, 3).as_deref(),
            Some("fio[7] 200 ms/s, pagewatch-eat[99] 20 ms/s")
        );
        assert_eq!(named(&reclaimers(&models[2..]), 3), None);
    }
}
