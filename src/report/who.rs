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
use crate::model::commands::{instance_name, walk_bytes};
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
    /// Bytes it dirtied: its rate × the span the rate covers (`commands::walk_bytes`), over
    /// the walks that rated it, each once (the records to the next walk repeat its row).
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
    /// the per-process rows (a walk keeps its `procs::TOP` most active), the most one walk
    /// counted (`Model::commands`), or the processes that exited summed over the walks (each
    /// once: `CommandRow::exited`), whichever is more.
    pub pids: usize,
    /// Their cgroups, when known, sorted.
    pub cgroups: Vec<String>,
    /// Bytes they dirtied: over every process of each walk, each walk once
    /// (`Model::commands`, `commands::walk_bytes`), or summed over the per-process rows
    /// (`Dirtier::dirtied`) where that is more (no walk rolled up, or the command outside a
    /// walk's top commands). The per-process rows alone are a walk's `procs::TOP` most
    /// active: a loop of 150 dd a walk summed 2.2 GB of the 17 GB they dirtied.
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

/// `dirtiers`, a pid's rows kept apart by `name(comm)`. A row's rate covers its own span
/// (`walk_ms`: a process born or exited between two walks covers less than the walk's
/// interval), and the records to the next walk repeat it: each pid's row counts once a walk
/// (`rates_from_walk_ms`), whatever the pace (`commands::walk_bytes`).
fn dirtiers_named(models: &[Model], name: fn(&str) -> &str) -> Vec<Dirtier> {
    let mut by: BTreeMap<(u32, String), Dirtier> = BTreeMap::new();
    let mut counted: BTreeSet<(u32, u64)> = BTreeSet::new();
    for m in models {
        for p in m.processes.iter().flatten() {
            if !counted.insert((p.pid, p.rates_from_walk_ms)) {
                continue;
            }
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
            d.dirtied += walk_bytes(p.dirtied_bytes_per_s, p.walk_ms);
            d.read += walk_bytes(p.read_bytes_per_s, p.walk_ms);
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
        /// From the walks' roll-ups: the most pids one walk counted, the exited summed over
        /// the walks (each walk once), bytes dirtied and read.
        walk_pids: usize,
        walk_exited: usize,
        walks: BTreeSet<u64>,
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
    // name), each walk once: the records to the next walk repeat its rows.
    for m in models {
        for c in m.commands.iter().flatten() {
            // A command that dirtied nothing is listed only for its throttled writers.
            if c.dirtied_bytes_per_s.unwrap_or(0.0) <= 0.0 && !by.contains_key(&c.comm) {
                continue;
            }
            let a = by.entry(c.comm.clone()).or_default();
            a.walk_pids = a.walk_pids.max(c.pids);
            if a.walks.insert(c.rates_from_walk_ms) {
                a.walk_exited += c.exited;
                a.walk_dirtied += walk_bytes(c.dirtied_bytes_per_s, c.walk_ms);
                a.walk_read += walk_bytes(c.read_bytes_per_s, c.walk_ms);
            }
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
            pids: a.pids.len().max(a.walk_pids).max(a.walk_exited),
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
#[path = "who_tests.rs"]
pub(crate) mod tests;
