//! The report's "who" section: who was throttled, for how long and in which cgroup, and the
//! processes that dirtied the most, from the records' throttled-writer rows (tracepoint or
//! wchan) and process walks; then both rolled up by command, so a shell loop of short-lived
//! `dd` writers reads as `dd ×40` with their total rather than forty rows of a second each;
//! then the sync waits (`report::victims`).
//!
//! Owns: those three tables. Must not touch: I/O, derivation (the records carry the rows).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::md::{at, cell, secs};
use crate::fmt::Bytes;
use crate::model::Model;
use crate::model::commands::instance_name;
use crate::model::throttled::{ThrottleSource, Throttled};
use crate::parse::trace::TraceState;

/// One throttled writer over the report's records.
#[derive(Debug, Clone, PartialEq)]
pub struct Writer {
    /// Task id and command.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Its cgroup, when known.
    pub cgroup: Option<String>,
    /// Seconds of records in which it was throttled (`throttled`: the verdict's rule).
    pub listed_s: f64,
    /// Seconds it slept in balance_dirty_pages (Σ pause ms/s × interval); `None` when no
    /// record had a pause figure (wchan rows without delay accounting).
    pub paused_s: Option<f64>,
    /// When it was first throttled, ms since the epoch.
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

/// One command's dirtying and throttling over its pids and the report's records.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The command name.
    pub comm: String,
    /// At least this many pids of that name dirtied or were throttled: the distinct pids of
    /// the per-process rows (a walk keeps its `procs::TOP` most active), or the most one walk
    /// counted (`Model::commands`), whichever is more.
    pub pids: usize,
    /// Their cgroups, when known, sorted.
    pub cgroups: Vec<String>,
    /// Bytes they dirtied: over every process of each walk (`Model::commands`, rate × the
    /// record's interval), or summed over the per-process rows (`Dirtier::dirtied`) where
    /// that is more (no walk rolled up, or the command outside a walk's top commands). The
    /// per-process rows alone are a walk's `procs::TOP` most active: a loop of 150 dd a walk
    /// summed 2.2 GB of the 17 GB they dirtied.
    pub dirtied: f64,
    /// Bytes read from storage for them, likewise (over every process of the name in the
    /// walks' roll-ups; over those that dirtied in the per-process rows).
    pub read: f64,
    /// Seconds of records in which at least one of them was listed throttled (wall time, so a
    /// loop of writers one after another adds up, and two at once count once).
    pub listed_s: f64,
    /// Seconds they slept in balance_dirty_pages, summed over pids (`Writer::paused_s`); can
    /// exceed `listed_s` when several slept at once. `None` when no row had a pause figure.
    pub paused_s: Option<f64>,
}

/// Whether a row shows its writer throttled in the record, as the verdict counts it
/// (`verdict::fold_dirty`): a tracepoint row with a pause, or a task seen in
/// balance_dirty_pages (wchan). A tracepoint row with no pause passed through without sleeping.
fn throttled(t: &Throttled) -> bool {
    match t.source {
        ThrottleSource::Tracepoint => t.pause_ms_per_s.is_some_and(|p| p > 0.0),
        ThrottleSource::Wchan => true,
    }
}

/// The throttled writers, longest paused (then listed) first; a writer whose rows all passed
/// through without a pause is left out, as the verdict leaves it out. A pid's rows are one
/// writer under the name it keeps (`commands::instance_name`).
#[must_use]
pub fn writers(models: &[Model]) -> Vec<Writer> {
    writers_named(models, instance_name)
}

/// `writers`, a pid's rows kept apart by `name(comm)`.
fn writers_named(models: &[Model], name: fn(&str) -> &str) -> Vec<Writer> {
    let mut by: BTreeMap<(u32, String), Writer> = BTreeMap::new();
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        for t in m.throttled.iter().filter(|t| throttled(t)) {
            let comm = name(&t.comm);
            let w = by
                .entry((t.pid, comm.to_owned()))
                .or_insert_with(|| Writer {
                    pid: t.pid,
                    comm: comm.to_owned(),
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

/// The processes by bytes dirtied, most first; those that dirtied nothing are left out. A
/// pid's rows are one process under the name it keeps (`commands::instance_name`).
#[must_use]
pub fn dirtiers(models: &[Model]) -> Vec<Dirtier> {
    dirtiers_named(models, instance_name)
}

/// `dirtiers`, a pid's rows kept apart by `name(comm)`.
fn dirtiers_named(models: &[Model], name: fn(&str) -> &str) -> Vec<Dirtier> {
    let mut by: BTreeMap<(u32, String), Dirtier> = BTreeMap::new();
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        // A row's rate covers its own span (`walk_ms`): a process born or exited between two
        // walks covers less than the walk's interval (`commands[].walk_ms`), and the records
        // repeating the row over that interval must count its bytes once, not interval/span
        // times.
        let interval_ms = m.commands.iter().flatten().find_map(|c| c.walk_ms);
        for p in m.processes.iter().flatten() {
            let share = match (p.walk_ms, interval_ms) {
                (Some(s), Some(i)) if i > 0 => (s as f64 / i as f64).min(1.0),
                _ => 1.0,
            };
            let dt = dt * share;
            let comm = name(&p.comm);
            let d = by
                .entry((p.pid, comm.to_owned()))
                .or_insert_with(|| Dirtier {
                    pid: p.pid,
                    comm: comm.to_owned(),
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

/// The per-pid writers and dirtiers rolled up by command name: most dirtied first, then
/// longest paused, then by name.
#[must_use]
pub fn commands(models: &[Model]) -> Vec<Command> {
    #[derive(Default)]
    struct Acc {
        pids: BTreeSet<u32>,
        cgroups: BTreeSet<String>,
        dirtied: f64,
        read: f64,
        listed_s: f64,
        paused_s: Option<f64>,
        /// From the walks' roll-ups: the most pids one walk counted, bytes dirtied and read.
        walk_pids: usize,
        walk_dirtied: f64,
        walk_read: f64,
    }
    let mut by: BTreeMap<String, Acc> = BTreeMap::new();
    let name = |comm: &str| crate::model::commands::rollup_name(comm).into_owned();
    // Each comm a pid had apart: a kernel worker rolls up by the work it did then.
    for d in dirtiers_named(models, as_is) {
        let a = by.entry(name(&d.comm)).or_default();
        a.pids.insert(d.pid);
        a.cgroups.extend(d.cgroup);
        a.dirtied += d.dirtied;
        a.read += d.read;
    }
    for w in writers_named(models, as_is) {
        let a = by.entry(name(&w.comm)).or_default();
        a.pids.insert(w.pid);
        a.cgroups.extend(w.cgroup);
        if let Some(p) = w.paused_s {
            *a.paused_s.get_or_insert(0.0) += p;
        }
    }
    // Every process of each walk, rolled up (`CommandRow::comm` is already the roll-up
    // name): a rate over the walk, repeated by the records until the next walk, so × each
    // record's interval adds the walk's bytes once.
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        for c in m.commands.iter().flatten() {
            // A command that dirtied nothing is listed only for its throttled writers.
            if c.dirtied_bytes_per_s.unwrap_or(0.0) <= 0.0 && !by.contains_key(&c.comm) {
                continue;
            }
            let a = by.entry(c.comm.clone()).or_default();
            a.walk_pids = a.walk_pids.max(c.pids);
            a.walk_dirtied += c.dirtied_bytes_per_s.unwrap_or(0.0) * dt;
            a.walk_read += c.read_bytes_per_s.unwrap_or(0.0) * dt;
        }
    }
    // Listed: once per record for each command with any row in it.
    for m in models {
        let dt = m.interval_s.unwrap_or(0.0);
        let listed: BTreeSet<String> = m
            .throttled
            .iter()
            .filter(|t| throttled(t))
            .map(|t| name(&t.comm))
            .collect();
        for comm in listed {
            if let Some(a) = by.get_mut(&comm) {
                a.listed_s += dt;
            }
        }
    }
    let mut v: Vec<Command> = by
        .into_iter()
        .map(|(comm, a)| Command {
            comm,
            pids: a.pids.len().max(a.walk_pids),
            cgroups: a.cgroups.into_iter().collect(),
            dirtied: a.dirtied.max(a.walk_dirtied),
            read: a.read.max(a.walk_read),
            listed_s: a.listed_s,
            paused_s: a.paused_s,
        })
        .collect();
    v.sort_by(|a, b| {
        b.dirtied
            .total_cmp(&a.dirtied)
            .then(
                b.paused_s
                    .unwrap_or(0.0)
                    .total_cmp(&a.paused_s.unwrap_or(0.0)),
            )
            .then(b.listed_s.total_cmp(&a.listed_s))
            .then_with(|| a.comm.cmp(&b.comm))
    });
    v
}

/// Why records listed wchan rows rather than the tracepoint's: its state in the first
/// record that listed a wchan row while the tracepoint was not armed (`not-root`,
/// `no-tracefs`, …, with the source's words); `None` when every such record had it armed
/// (a walk saw a writer the armed tracepoint had not).
fn why_wchan(models: &[Model]) -> Option<String> {
    let m = models.iter().find(|m| {
        let armed = m
            .tracer
            .as_ref()
            .is_some_and(|t| t.state == TraceState::Armed);
        !armed
            && m.throttled
                .iter()
                .any(|t| t.source == ThrottleSource::Wchan)
    })?;
    let Some(t) = &m.tracer else {
        return Some("The tracepoint had not been asked for yet in those records.".into());
    };
    let state = serde_json::to_value(t.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    Some(match &t.why {
        Some(why) => format!("The tracepoint was not armed in those records: {state} ({why})."),
        None => format!("The tracepoint was not armed in those records: {state}."),
    })
}

/// A comm as it is (`commands` rolls each up by `rollup_name`).
fn as_is(comm: &str) -> &str {
    comm
}

/// Most rows a table shows.
const ROWS: usize = 10;

/// Writes the section; nothing when the records carry no throttled writer, no walk and no
/// sync call (`report::victims`).
pub fn render(o: &mut String, models: &[Model], started: i64) {
    let (w, d) = (writers(models), dirtiers(models));
    let v = super::victims::victims(models);
    if w.is_empty() && d.is_empty() && v.is_empty() {
        return;
    }
    let _ = writeln!(o, "## Who\n");
    if !w.is_empty() {
        let _ = writeln!(
            o,
            "Throttled writers (balance_dirty_pages): seconds listed (records in which the \
             writer was paused, as the verdict counts them), seconds paused, and where they \
             wrote. Rows from the tracepoint are exact; wchan rows are sampled at each process \
             walk, so they are approximate.{}\n",
            why_wchan(models).map_or_else(String::new, |w| format!(" {w}"))
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
    by_command(o, &commands(models));
    super::victims::render(o, models, &v);
}

/// The rolled-up table.
fn by_command(o: &mut String, c: &[Command]) {
    if c.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "By command, over all its pids (a loop of short-lived writers adds up here): bytes \
         and pauses summed over the pids; listed is the time any of them was throttled.\n"
    );
    let _ = writeln!(
        o,
        "| command × pids | cgroup | dirtied | read from storage | listed | paused |\n|---|---|---|---|---|---|"
    );
    for x in c.iter().take(ROWS) {
        let cgroup = match x.cgroups.as_slice() {
            [] => "-".to_owned(),
            [one] => one.clone(),
            many => format!("{} cgroups", many.len()),
        };
        let listed = if x.listed_s > 0.0 {
            secs(x.listed_s)
        } else {
            "-".to_owned()
        };
        let _ = writeln!(
            o,
            "| {} ×{} | {} | {} | {} | {listed} | {} |",
            cell(&x.comm),
            x.pids,
            cell(&cgroup),
            Bytes(x.dirtied),
            Bytes(x.read),
            x.paused_s.map_or_else(|| "-".to_owned(), secs),
        );
    }
    let _ = writeln!(o);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::procs::ProcRow;

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
            walk_ms: Some(1000),
            rates_from_walk_ms: 0,
            reaped_children: false,
            reaped_dirtied_bytes: None,
            cmdline: None,
            exited: false,
            exit_delays: None,
            reaped_io: None,
            ..ProcRow::default()
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
        // Passing through balance_dirty_pages without a pause is not being throttled: pid 7's
        // third row and pid 11 (only such rows) do not count.
        m[2].throttled = vec![
            writer(9, None, ThrottleSource::Wchan),
            writer(7, Some(0.0), ThrottleSource::Tracepoint),
            writer(11, Some(0.0), ThrottleSource::Tracepoint),
        ];
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

    /// Wchan rows say why the tracepoint was not there: the state in the first record that
    /// listed one unarmed; nothing when it was armed.
    #[test]
    fn wchan_rows_say_why_the_tracepoint_was_not_armed() {
        use crate::model::throttled::Tracer;
        let tracer = |state| Tracer {
            state,
            why: Some("no tracefs mount in mountinfo".into()),
            events: 0,
            lost: 0,
            capped: false,
            error: None,
        };
        let mut m = models(2);
        m[1].throttled = vec![writer(9, None, ThrottleSource::Wchan)];
        assert_eq!(
            why_wchan(&m).as_deref(),
            Some("The tracepoint had not been asked for yet in those records.")
        );
        m[1].tracer = Some(tracer(TraceState::NoTracefs));
        let mut o = String::new();
        render(&mut o, &m, 0);
        assert!(
            o.contains(
                "approximate. The tracepoint was not armed in those records: no-tracefs (no \
                 tracefs mount in mountinfo)."
            ),
            "{o}"
        );
        m[1].tracer = Some(tracer(TraceState::Armed));
        assert_eq!(why_wchan(&m), None);
    }

    /// A workqueue thread renamed for each work item (the kernel's `kworker/u8:0+flush-254:0`,
    /// then `kworker/u8:0-writeback`) is one row; a pid that exec'd is two.
    #[test]
    fn a_kworker_renamed_between_walks_is_one_row() {
        let mut m = models(3);
        let named = |comm: &str, dirtied: f64| ProcRow {
            comm: comm.into(),
            ..proc_row(12, dirtied)
        };
        m[0].processes = Some(vec![named("kworker/u8:0+flush-254:0", 100.0)]);
        m[1].processes = Some(vec![
            named("kworker/u8:0-writeback", 20.0),
            ProcRow {
                comm: "bash".into(),
                ..proc_row(40, 5.0)
            },
        ]);
        m[2].processes = Some(vec![
            named("kworker/u8:0", 3.0),
            ProcRow {
                comm: "dd".into(),
                ..proc_row(40, 7.0)
            },
        ]);
        let d = dirtiers(&m);
        let got: Vec<(u32, &str, f64)> = (d.iter())
            .map(|d| (d.pid, d.comm.as_str(), d.dirtied))
            .collect();
        assert_eq!(
            got,
            [
                (12, "kworker/u8:0", 123.0),
                (40, "dd", 7.0),
                (40, "bash", 5.0)
            ]
        );
    }

    /// A row of a process that lived 1 s of a 3 s walk (born or exited between walks), at
    /// 100 B/s: the three records repeating it add its 100 bytes once, not 300.
    #[test]
    #[allow(clippy::float_cmp, reason = "whole bytes")]
    fn a_row_shorter_than_its_walk_counts_its_bytes_once() {
        let mut m = models(3);
        for x in &mut m {
            x.processes = Some(vec![
                proc_row(1, 100.0),
                ProcRow {
                    walk_ms: Some(3000),
                    ..proc_row(2, 100.0)
                },
            ]);
            x.commands = Some(crate::model::commands::roll_up(
                x.processes.as_deref().unwrap(),
                Some(3000),
            ));
        }
        let d = dirtiers(&m);
        let got: Vec<(u32, f64)> = d.iter().map(|d| (d.pid, d.dirtied.round())).collect();
        assert_eq!(got, [(2, 300.0), (1, 100.0)]);
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "sums of whole MiB and tenths of a second")]
    fn a_loop_of_short_lived_writers_rolls_up_by_command() {
        use ThrottleSource::{Tracepoint, Wchan};
        const MIB: f64 = 1024.0 * 1024.0;
        let named = |comm: &str, pid: u32, dirtied_mib: f64| ProcRow {
            comm: comm.into(),
            ..proc_row(pid, dirtied_mib * MIB)
        };
        let paced = |comm: &str, pid: u32, ms: Option<f64>, src| Throttled {
            comm: comm.into(),
            ..writer(pid, ms, src)
        };
        // Four one-second records (the tree has three intervals: the last one again, a
        // second later).
        let mut m = models(3);
        m.push(m[2].clone());
        m[3].time_ms = 4000;
        // A shell loop starts a new dd each second (two overlap at the second record); fio
        // runs throughout; bash walks by without dirtying; dd 105 exits without dirtying.
        m[0].processes = Some(vec![named("dd", 101, 4.0), named("fio", 7, 5.0)]);
        m[0].throttled = vec![
            paced("dd", 101, Some(200.0), Tracepoint),
            paced("fio", 7, Some(300.0), Tracepoint),
        ];
        m[1].processes = Some(vec![
            named("dd", 102, 5.0),
            named("dd", 103, 6.0),
            named("fio", 7, 5.0),
        ]);
        m[1].throttled = vec![
            paced("dd", 102, Some(100.0), Tracepoint),
            paced("dd", 103, Some(100.0), Tracepoint),
            paced("fio", 7, Some(300.0), Tracepoint),
        ];
        m[2].processes = Some(vec![named("dd", 104, 7.0), named("bash", 50, 0.0)]);
        m[2].throttled = vec![paced("dd", 104, None, Wchan)];
        m[3].processes = Some(vec![named("dd", 105, 0.0), named("fio", 7, 5.0)]);
        // fio passes through balance_dirty_pages without a pause: not throttled there.
        m[3].throttled = vec![paced("fio", 7, Some(0.0), Tracepoint)];
        let c = commands(&m);
        assert_eq!(c.len(), 2, "{c:?}");
        // dd: pids 101–104 (105 dirtied nothing and was never throttled); 4 + 5 + 6 + 7 =
        // 22 MiB; read 10 B/s × 1 s by each; listed in records 0, 1, 2 (102 and 103 at once
        // count once): 3 s; paused 0.2 + 0.1 + 0.1 = 0.4 s (104's wchan row has no figure).
        assert_eq!(
            (
                c[0].comm.as_str(),
                c[0].pids,
                c[0].dirtied,
                c[0].read,
                c[0].listed_s
            ),
            ("dd", 4, 22.0 * MIB, 40.0, 3.0)
        );
        assert!((c[0].paused_s.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(c[0].cgroups, ["/box"]);
        // fio: one pid, 3 × 5 = 15 MiB, listed 2 s (not the last record), paused 0.3 + 0.3 =
        // 0.6 s.
        assert_eq!(
            (c[1].comm.as_str(), c[1].pids, c[1].dirtied, c[1].listed_s),
            ("fio", 1, 15.0 * MIB, 2.0)
        );
        assert!((c[1].paused_s.unwrap() - 0.6).abs() < 1e-12);
        let mut o = String::new();
        render(&mut o, &m, 0);
        assert!(
            o.contains("| dd ×4 | /box | 22.0M | 40B | 3.0 s | 0.4 s |"),
            "{o}"
        );
        assert!(
            o.contains("| fio ×1 | /box | 15.0M | 30B | 2.0 s | 0.6 s |"),
            "{o}"
        );
        // The per-pid table still lists each dd on its own.
        assert!(o.contains("| 104 | dd | - | 7.0M | 10B |"), "{o}");
    }

    /// A shell loop of 30 dd a walk, 1 MiB/s each over a 2 s walk: the per-process rows keep
    /// the walk's `TOP` most active, the roll-up every one; the command adds up all 30.
    #[test]
    #[allow(clippy::float_cmp, reason = "whole MiB")]
    fn a_loop_wider_than_the_rows_kept_adds_up_from_the_walks() {
        use crate::model::procs::TOP;
        const MIB: f64 = 1024.0 * 1024.0;
        let mut m = models(2);
        for (w, x) in m.iter_mut().enumerate() {
            let all: Vec<ProcRow> = (0..30)
                .map(|i| ProcRow {
                    comm: "dd".into(),
                    walk_ms: Some(2000),
                    ..proc_row(100 * (w as u32 + 1) + i, MIB)
                })
                .collect();
            x.commands = Some(crate::model::commands::roll_up(&all, Some(2000)));
            x.processes = Some(all[..TOP].to_vec());
        }
        assert!(m.iter().all(|x| x.interval_s == Some(1.0)));
        let c = commands(&m);
        // 30 × 1 MiB/s over each of two 1 s records; the per-process rows alone: 20 × 2.
        assert_eq!((c[0].comm.as_str(), c[0].dirtied), ("dd", 60.0 * MIB));
        assert_eq!(
            dirtiers(&m).iter().map(|d| d.dirtied).sum::<f64>(),
            40.0 * MIB
        );
        // 40 distinct pids in the rows, 30 in one walk: at least 40.
        assert_eq!(c[0].pids, 2 * TOP);
        assert_eq!(c[0].read, 30.0 * 10.0 * 2.0);
        // Without the walks' roll-ups (an older model), the rows' sums stand.
        for x in &mut m {
            x.commands = None;
        }
        assert_eq!(commands(&m)[0].dirtied, 40.0 * MIB);
    }

    #[test]
    fn nothing_to_say_writes_nothing() {
        let mut o = String::new();
        render(&mut o, &models(2), 0);
        assert!(o.is_empty());
    }
}
