//! The report's "sync waits" table: the victims of a flood, the processes that waited in
//! fsync, fdatasync, sync_file_range and msync(MS_SYNC) over the recording, from each
//! record's sync rows (`model::sync`, recorded while the sync tracer was armed: writers
//! throttled, or the processes view on screen; `model::who`). A process
//! that waits in fsync is not in IO wait and dirties little, so neither the throttled nor
//! the dirtiers' table names it.
//!
//! Owns: summing those rows by process and the table. Must not touch: I/O, derivation (the
//! records carry the rows).
//!
//! Each record's rows cover its own interval: calls = per_s × interval, waited = wait ms/s ×
//! interval, the longest wait the largest `max_ms` (a call still waiting at a read counts
//! there too, so a victim stuck across records shows its longest wait seen).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::md::{cell, secs};
use crate::model::Model;

/// One process's sync calls over the report's records.
#[derive(Debug, Clone, PartialEq)]
pub struct Victim {
    /// Its pid.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Sync calls completed.
    pub calls: f64,
    /// Seconds spent in them.
    pub waited_s: f64,
    /// The longest wait seen, ms.
    pub max_ms: Option<f64>,
}

/// The processes with sync calls, longest waited first; records whose tracer did not
/// measure are left out.
#[must_use]
pub fn victims(models: &[Model]) -> Vec<Victim> {
    let mut by: BTreeMap<(u32, String), Victim> = BTreeMap::new();
    for (m, s) in measured(models) {
        let dt = m.interval_s.unwrap_or(0.0);
        for r in &s.rows {
            let v = by.entry((r.pid, r.comm.clone())).or_insert_with(|| Victim {
                pid: r.pid,
                comm: r.comm.clone(),
                calls: 0.0,
                waited_s: 0.0,
                max_ms: None,
            });
            v.calls += r.per_s * dt;
            v.waited_s += r.wait_ms_per_s * dt / 1000.0;
            if let Some(x) = r.max_ms {
                v.max_ms = Some(v.max_ms.map_or(x, |m| m.max(x)));
            }
        }
    }
    let mut v: Vec<Victim> = by.into_values().collect();
    v.sort_by(|a, b| {
        b.waited_s
            .total_cmp(&a.waited_s)
            .then(b.max_ms.unwrap_or(0.0).total_cmp(&a.max_ms.unwrap_or(0.0)))
            .then(a.pid.cmp(&b.pid))
    });
    v
}

/// Most rows the table shows.
const ROWS: usize = 10;

/// Writes the table of `v` (`victims(models)`); nothing when no record measured a sync call.
pub fn render(o: &mut String, models: &[Model], v: &[Victim]) {
    if v.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "Sync waits (the victims: fsync, fdatasync, sync_file_range, msync calls timed by the \
         sync tracer while it was armed), longest waited first:\n"
    );
    let _ = writeln!(
        o,
        "| pid | command | calls | waited | mean | longest |\n|---|---|---|---|---|---|"
    );
    let ms = |x: f64| format!("{x:.1} ms");
    // A wait of one fsync is milliseconds: seconds only from one up.
    let waited = |s: f64| {
        if s < 1.0 {
            format!("{:.0} ms", s * 1000.0)
        } else {
            secs(s)
        }
    };
    for x in v.iter().take(ROWS) {
        let mean = (x.calls >= 0.5).then(|| ms(x.waited_s * 1000.0 / x.calls));
        let _ = writeln!(
            o,
            "| {} | {} | {:.0} | {} | {} | {} |",
            x.pid,
            cell(if x.comm.is_empty() { "?" } else { &x.comm }),
            x.calls,
            waited(x.waited_s),
            mean.unwrap_or_else(|| "-".into()),
            x.max_ms.map_or_else(|| "-".into(), ms),
        );
    }
    if v.len() > ROWS {
        // The rest by command, most waited first (a loop of short-lived fsyncers is one).
        let mut by: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
        for x in &v[ROWS..] {
            let e = by.entry(x.comm.as_str()).or_default();
            *e = (e.0 + 1, e.1 + x.calls, e.2 + x.waited_s);
        }
        let mut rest: Vec<_> = by.into_iter().collect();
        rest.sort_by(|a, b| b.1.2.total_cmp(&a.1.2).then(a.0.cmp(b.0)));
        let parts: Vec<String> = rest
            .iter()
            .map(|(comm, (n, calls, w))| {
                let comm = if comm.is_empty() { "?" } else { comm };
                format!("{} ×{n} ({calls:.0} calls, {})", cell(comm), waited(*w))
            })
            .collect();
        let _ = writeln!(
            o,
            "\n{} more processes: {}.",
            v.len() - ROWS,
            parts.join(", ")
        );
    }
    let lost: u64 = measured(models).map(|(_, s)| s.lost + s.unpaired).sum();
    if lost > 0 {
        let _ = writeln!(
            o,
            "\n{lost} sync events were lost or left unpaired (the tracer's buffer wrapped): the \
             calls above are undercounted, their waits and longest from the calls it paired."
        );
    }
    let _ = writeln!(o);
}

/// The records whose sync tracer measured, with their sync figures.
fn measured(models: &[Model]) -> impl Iterator<Item = (&Model, &crate::model::sync::Sync)> {
    (models.iter()).filter_map(|m| Some((m, m.sync.as_ref().filter(|s| s.measured())?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sync::{Sync, SyncRate};
    use crate::parse::sync_calls::SyncSource;
    use crate::parse::trace::TraceState;

    fn model(interval_s: f64, rows: Vec<SyncRate>, cpu_ms: Option<f64>) -> Model {
        let s = crate::source::test_samples("live-idle");
        let snap = crate::parse::Snapshot::parse(&s[0]).unwrap();
        let mut m = Model::derive(None, &snap, crate::model::Options::default());
        m.interval_s = Some(interval_s);
        m.sync = Some(Sync {
            state: TraceState::Armed,
            source: SyncSource::Syscalls,
            why: None,
            lost: 0,
            unpaired: 0,
            cpu_ms,
            rows,
        });
        m
    }

    fn rate(pid: u32, comm: &str, per_s: f64, wait_ms_per_s: f64, max_ms: f64) -> SyncRate {
        SyncRate {
            pid,
            comm: comm.into(),
            per_s,
            mean_ms: Some(wait_ms_per_s / per_s),
            max_ms: Some(max_ms),
            wait_ms_per_s,
        }
    }

    #[test]
    fn calls_and_waits_add_up_over_the_records_and_the_unmeasured_are_left_out() {
        // A database fsyncing 20 times a second at 8 ms, then at 30 ms during a flood; a dd
        // that fsynced once for 250 ms; a record whose tracer had not read yet (just armed).
        let models = vec![
            model(
                1.0,
                vec![rate(900, "postgres", 20.0, 160.0, 12.0)],
                Some(0.1),
            ),
            model(
                2.0,
                vec![
                    rate(900, "postgres", 20.0, 600.0, 95.0),
                    rate(31, "dd", 0.5, 125.0, 250.0),
                ],
                Some(0.1),
            ),
            model(1.0, vec![rate(900, "postgres", 99.0, 999.0, 999.0)], None),
        ];
        let v = victims(&models);
        assert_eq!(v.len(), 2);
        // postgres: 20 + 40 calls, 0.16 + 1.2 s waited, longest 95 ms.
        assert_eq!((v[0].pid, v[0].calls, v[0].max_ms), (900, 60.0, Some(95.0)));
        assert!((v[0].waited_s - 1.36).abs() < 1e-12, "{}", v[0].waited_s);
        assert_eq!((v[1].pid, v[1].calls, v[1].max_ms), (31, 1.0, Some(250.0)));
        assert!((v[1].waited_s - 0.25).abs() < 1e-12);
        let mut o = String::new();
        render(&mut o, &models, &victims(&models));
        assert!(
            o.contains("| 900 | postgres | 60 | 1.4 s | 22.7 ms | 95.0 ms |"),
            "{o}"
        );
        assert!(
            o.contains("| 31 | dd | 1 | 250 ms | 250.0 ms | 250.0 ms |"),
            "{o}"
        );
        assert!(!o.contains("lost"), "{o}");
        // Events the kernel dropped, or left unpaired, are said: the calls are undercounted.
        let mut lossy = models.clone();
        let s = lossy[1].sync.as_mut().unwrap();
        (s.lost, s.unpaired) = (40, 2);
        let mut o = String::new();
        render(&mut o, &lossy, &victims(&lossy));
        assert!(
            o.contains("\n42 sync events were lost or left unpaired"),
            "{o}"
        );
        let mut none = String::new();
        render(&mut none, &models[2..], &victims(&models[2..]));
        assert!(none.is_empty(), "nothing measured: no table");
    }

    #[test]
    fn past_ten_rows_the_rest_is_one_line_by_command() {
        // Twelve dd waiting 10, 20 … 120 ms, and a db 5 ms: the db and dd 1 and 2 are the
        // rest, by command.
        let mut rows: Vec<SyncRate> = (1..=12)
            .map(|p| rate(p, "dd", 1.0, 10.0 * f64::from(p), 10.0 * f64::from(p)))
            .collect();
        rows.push(rate(99, "db", 2.0, 5.0, 3.0));
        let mut o = String::new();
        let models = [model(1.0, rows, Some(0.1))];
        render(&mut o, &models, &victims(&models));
        assert!(
            o.contains("| 12 | dd | 1 | 120 ms |"),
            "the longest first: {o}"
        );
        assert!(
            o.contains("\n3 more processes: dd ×2 (2 calls, 30 ms), db ×1 (2 calls, 5 ms)."),
            "{o}"
        );
    }
}
