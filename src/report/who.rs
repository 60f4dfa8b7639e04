//! The report's "who" section: who was throttled, for how long and in which cgroup, and the
//! processes that dirtied the most, from the records' throttled-writer rows (tracepoint or
//! wchan) and process walks.
//!
//! Owns: those two tables. Must not touch: I/O, derivation (the records carry the rows).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::md::{at, cell, secs};
use crate::fmt::Bytes;
use crate::model::Model;
use crate::model::throttled::ThrottleSource;

/// One throttled writer over the report's records.
#[derive(Debug, Clone, PartialEq)]
pub struct Writer {
    /// Task id and command.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Its cgroup, when known.
    pub cgroup: Option<String>,
    /// Seconds of records in which it was listed.
    pub listed_s: f64,
    /// Seconds it slept in balance_dirty_pages (Σ pause ms/s × interval); `None` when no
    /// record had a pause figure (wchan rows without delay accounting).
    pub paused_s: Option<f64>,
    /// When it was first listed, ms since the epoch.
    pub first_ms: i64,
    /// Whether any of its rows came from the tracepoint (else wchan: approximate).
    pub exact: bool,
}

/// One process's dirtying over the report's records.
#[derive(Debug, Clone, PartialEq)]
pub struct Dirtier {
    /// Its pid.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Its cgroup, when known.
    pub cgroup: Option<String>,
    /// Bytes it dirtied (Σ dirtied bytes/s × interval over the records that saw it).
    pub dirtied: f64,
    /// Bytes read from storage for it, likewise.
    pub read: f64,
}

/// The throttled writers, longest paused (then listed) first.
#[must_use]
pub fn writers(models: &[Model]) -> Vec<Writer> {
    let mut by: BTreeMap<(u32, String), Writer> = BTreeMap::new();
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        for t in &m.throttled {
            let w = by.entry((t.pid, t.comm.clone())).or_insert_with(|| Writer {
                pid: t.pid,
                comm: t.comm.clone(),
                cgroup: None,
                listed_s: 0.0,
                paused_s: None,
                first_ms: m.time_ms,
                exact: false,
            });
            w.listed_s += dt;
            if let Some(p) = t.pause_ms_per_s {
                *w.paused_s.get_or_insert(0.0) += p * dt / 1000.0;
            }
            if t.cgroup.is_some() {
                w.cgroup.clone_from(&t.cgroup);
            }
            w.exact |= t.source == ThrottleSource::Tracepoint;
        }
    }
    let mut v: Vec<Writer> = by.into_values().collect();
    v.sort_by(|a, b| {
        b.paused_s
            .unwrap_or(0.0)
            .total_cmp(&a.paused_s.unwrap_or(0.0))
            .then(b.listed_s.total_cmp(&a.listed_s))
            .then(a.pid.cmp(&b.pid))
    });
    v
}

/// The processes by bytes dirtied, most first; those that dirtied nothing are left out.
#[must_use]
pub fn dirtiers(models: &[Model]) -> Vec<Dirtier> {
    let mut by: BTreeMap<(u32, String), Dirtier> = BTreeMap::new();
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        for p in m.processes.iter().flatten() {
            let d = by
                .entry((p.pid, p.comm.clone()))
                .or_insert_with(|| Dirtier {
                    pid: p.pid,
                    comm: p.comm.clone(),
                    cgroup: p.cgroup.clone(),
                    dirtied: 0.0,
                    read: 0.0,
                });
            d.dirtied += p.dirtied_bytes_per_s.unwrap_or(0.0) * dt;
            d.read += p.read_bytes_per_s.unwrap_or(0.0) * dt;
        }
    }
    let mut v: Vec<Dirtier> = by.into_values().filter(|d| d.dirtied > 0.0).collect();
    v.sort_by(|a, b| b.dirtied.total_cmp(&a.dirtied).then(a.pid.cmp(&b.pid)));
    v
}

/// Most rows a table shows.
const ROWS: usize = 10;

/// Writes the section; nothing when the records carry no throttled writer and no walk.
pub fn render(o: &mut String, models: &[Model], started: i64) {
    let (w, d) = (writers(models), dirtiers(models));
    if w.is_empty() && d.is_empty() {
        return;
    }
    let _ = writeln!(o, "## Who\n");
    if !w.is_empty() {
        let _ = writeln!(
            o,
            "Throttled writers (balance_dirty_pages): seconds listed, seconds paused, and \
             where they wrote. Rows from the tracepoint are exact; wchan rows (no root) are \
             sampled at each process walk, so they are approximate.\n"
        );
        let _ = writeln!(
            o,
            "| pid | command | cgroup | listed | paused | first seen | source |\n|---|---|---|---|---|---|---|"
        );
        for x in w.iter().take(ROWS) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} |",
                x.pid,
                cell(&x.comm),
                cell(x.cgroup.as_deref().unwrap_or("-")),
                secs(x.listed_s),
                x.paused_s.map_or_else(|| "-".to_owned(), secs),
                at(x.first_ms, started),
                if x.exact { "tracepoint" } else { "wchan" }
            );
        }
        let _ = writeln!(o);
    }
    if !d.is_empty() {
        let _ = writeln!(
            o,
            "Top dirtiers (`/proc/PID/io` write_bytes, counted when pages are dirtied; flusher \
             writeback is nobody's):\n"
        );
        let _ = writeln!(
            o,
            "| pid | command | cgroup | dirtied | read from storage |\n|---|---|---|---|---|"
        );
        for x in d.iter().take(ROWS) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                x.pid,
                cell(&x.comm),
                cell(x.cgroup.as_deref().unwrap_or("-")),
                Bytes(x.dirtied),
                Bytes(x.read)
            );
        }
        let _ = writeln!(o);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::procs::ProcRow;
    use crate::model::throttled::Throttled;

    fn models(n: usize) -> Vec<Model> {
        let s = crate::source::test_samples("live-idle");
        let snaps: Vec<_> = s
            .iter()
            .map(|r| crate::parse::Snapshot::parse(r).unwrap())
            .collect();
        (1..=n)
            .map(|i| {
                let mut m = Model::derive(
                    Some(&snaps[i - 1]),
                    &snaps[i],
                    crate::model::Options::default(),
                );
                m.interval_s = Some(1.0);
                m.time_ms = 1000 * i64::try_from(i).unwrap();
                m
            })
            .collect()
    }

    fn writer(pid: u32, ms: Option<f64>, source: ThrottleSource) -> Throttled {
        Throttled {
            cgroup: Some("/box".into()),
            pause_ms_per_s: ms,
            ..Throttled::new(pid, format!("w{pid}"), source)
        }
    }

    fn proc_row(pid: u32, dirtied: f64) -> ProcRow {
        ProcRow {
            pid,
            comm: format!("p{pid}"),
            cgroup: None,
            dirtied_bytes_per_s: Some(dirtied),
            read_bytes_per_s: Some(10.0),
            rchar_per_s: None,
            wchar_per_s: None,
            cache_hit_est_pct: None,
            iowait_ms_per_s: None,
            state: 'R',
            wchan: None,
            no_permission: false,
            rss_bytes: None,
            anon_bytes: None,
            rss_growth_bytes_per_s: None,
            majflt_per_s: None,
        }
    }

    #[test]
    fn writers_add_up_listed_and_paused_seconds() {
        let mut m = models(3);
        m[0].throttled = vec![writer(7, Some(200.0), ThrottleSource::Tracepoint)];
        m[1].throttled = vec![
            writer(7, Some(300.0), ThrottleSource::Tracepoint),
            writer(9, None, ThrottleSource::Wchan),
        ];
        m[2].throttled = vec![writer(9, None, ThrottleSource::Wchan)];
        let w = writers(&m);
        assert_eq!(w.len(), 2);
        // pid 7: listed 2 s, paused 0.2 + 0.3 = 0.5 s, first at the first record.
        assert_eq!((w[0].pid, w[0].listed_s, w[0].first_ms), (7, 2.0, 1000));
        assert!((w[0].paused_s.unwrap() - 0.5).abs() < 1e-12);
        assert!(w[0].exact);
        // pid 9: listed 2 s, no pause figure, approximate.
        assert_eq!(
            (w[1].pid, w[1].listed_s, w[1].paused_s, w[1].exact),
            (9, 2.0, None, false)
        );
        let mut o = String::new();
        render(&mut o, &m, 0);
        assert!(o.contains("| 7 | w7 | /box | 2.0 s | 0.5 s |"), "{o}");
        assert!(o.contains("| 9 | w9 | /box | 2.0 s | - |"), "{o}");
    }

    #[test]
    fn dirtiers_integrate_rates_and_skip_the_idle() {
        let mut m = models(2);
        m[0].processes = Some(vec![proc_row(1, 1000.0), proc_row(2, 0.0)]);
        m[1].processes = Some(vec![proc_row(1, 3000.0), proc_row(3, 5000.0)]);
        let d = dirtiers(&m);
        let got: Vec<(u32, f64, f64)> = d.iter().map(|d| (d.pid, d.dirtied, d.read)).collect();
        assert_eq!(got, [(3, 5000.0, 10.0), (1, 4000.0, 20.0)]);
    }

    #[test]
    fn nothing_to_say_writes_nothing() {
        let mut o = String::new();
        render(&mut o, &models(2), 0);
        assert!(o.is_empty());
    }
}
