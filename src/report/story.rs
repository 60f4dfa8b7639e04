//! Who did it, who suffered and who took the memory over a report's records: each record's
//! verdict names them for its own step (`model::story`); this sums what they named over the
//! period (issue 50: the report's verdict named neither the culprit nor the victim, and a
//! memory-pressure report never named the eater).
//!
//! - **The culprit**: the command with the most bytes dirtied while named a culprit (and read
//!   from storage, in the records that named it beside a saturated disk, whose readers are
//!   culprits too), with the most processes one record counted. The records to the next
//!   walk repeat the walk's roll-up and with it its rate, which covers the walk's own span
//!   (`walk_ms`), not theirs: each walk counts its rate × the seconds of its records that
//!   named the command, at most its span (`commands::walk_bytes`), so a walk is never
//!   counted more than once (a 1 s walk repeated by the four records to the next read 20 dd
//!   of 800 MiB as 3.1G).
//! - **The victim**: the process furthest above its own calm (its ratio), at its worst
//!   record; a process never seen calm ranks after any with a ratio, by its score.
//! - **The memory taker**: the process that grew the most while named, with the largest
//!   resident size those records saw. Its growth is a walk's too (`walk_interval_ms`), and
//!   is counted the same way: per walk (a walk's row repeats its resident size), its rate ×
//!   the seconds its records named the process, at most the walk's span.
//! - **Why the thresholds moved**: the text of the record with the lowest threshold among
//!   those that said it (the largest fall).
//!
//! Nothing is said of what no record named. Owns: `PeriodStory` and the sentences that say
//! it (Markdown for the report, plain for the terminal). Must not touch: I/O, telling each step's story (`model::story`).

use std::collections::BTreeMap;

use super::md::{at, cell};
use crate::fmt::Bytes;
use crate::model::Model;
use crate::model::answers::Victim;
use crate::model::commands::{CommandRow, walk_bytes};

/// The culprit over the period.
#[derive(Debug, Clone, PartialEq)]
pub struct CulpritSum {
    /// The command.
    pub comm: String,
    /// The most processes one record counted for it (exited ones included).
    pub pids: usize,
    /// Bytes dirtied while named: over each walk, its rate × the seconds its records named
    /// the command, at most the walk's span (see the module doc).
    pub dirtied: f64,
    /// Bytes read from storage while named beside a saturated disk, counted the same way.
    pub read: f64,
}

/// The victim over the period, at its worst record.
#[derive(Debug, Clone, PartialEq)]
pub struct VictimAt {
    /// The record's victim (pid, comm, figure, value, calm, ratio).
    pub victim: Victim,
    /// When, ms since the epoch.
    pub time_ms: i64,
}

/// The memory taker over the period.
#[derive(Debug, Clone, PartialEq)]
pub struct TakerSum {
    /// Process id.
    pub pid: u32,
    /// Command.
    pub comm: String,
    /// Bytes it grew while named: over each walk, its growth rate × the seconds its records
    /// named it, at most the walk's span (see the module doc).
    pub grew: f64,
    /// The largest resident size those records saw, bytes.
    pub rss_bytes: Option<u64>,
}

/// Who and whom over a report's records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeriodStory {
    /// The command that dirtied (and read, beside a saturated disk) the most while named a
    /// culprit.
    pub culprit: Option<CulpritSum>,
    /// The process furthest above its calm.
    pub victim: Option<VictimAt>,
    /// The process that grew the most while named the memory taker.
    pub memory_taker: Option<TakerSum>,
    /// Why the thresholds moved, at the largest fall.
    pub thresholds_moved: Option<String>,
}

/// The story of `models` over the period.
#[must_use]
pub fn period_story(models: &[Model]) -> PeriodStory {
    PeriodStory {
        culprit: culprit(models),
        victim: victim(models),
        memory_taker: memory_taker(models),
        thresholds_moved: thresholds_moved(models),
    }
}

fn culprit(models: &[Model]) -> Option<CulpritSum> {
    let mut by: BTreeMap<&str, CulpritSum> = BTreeMap::new();
    // Per command and walk: the walk's roll-up row, and the seconds of the records that
    // repeated it and named the command, [all, beside a saturated disk (its reads count)].
    let mut walks: BTreeMap<(&str, u64), (&CommandRow, [f64; 2])> = BTreeMap::new();
    for m in models {
        let (Some(v), Some(dt)) = (&m.verdict, m.interval_s) else {
            continue;
        };
        for c in &v.story.culprits {
            let e = by.entry(&c.comm).or_insert_with(|| CulpritSum {
                comm: c.comm.clone(),
                pids: 0,
                dirtied: 0.0,
                read: 0.0,
            });
            e.pids = e.pids.max(c.pids);
            // The roll-up row that named it (`model::story` names culprits from it).
            if let Some(r) = m.commands.iter().flatten().find(|r| r.comm == c.comm) {
                let named = &mut walks
                    .entry((&c.comm, r.rates_from_walk_ms))
                    .or_insert((r, [0.0; 2]))
                    .1;
                named[0] += dt;
                if c.read_bytes_per_s.is_some() {
                    named[1] += dt;
                }
            }
        }
    }
    for ((comm, _), (r, [named_s, reading_s])) in walks {
        let bytes =
            |rate: Option<f64>, s: f64| walk_bytes(rate, r.walk_ms).min(rate.unwrap_or(0.0) * s);
        if let Some(e) = by.get_mut(comm) {
            e.dirtied += bytes(r.dirtied_bytes_per_s, named_s);
            e.read += bytes(r.read_bytes_per_s, reading_s);
        }
    }
    // The first of equals by name: the map's order.
    let moved = |c: &CulpritSum| c.dirtied + c.read;
    by.into_values()
        .reduce(|a, b| if moved(&b) > moved(&a) { b } else { a })
}

fn victim(models: &[Model]) -> Option<VictimAt> {
    let key = |v: &Victim| (v.ratio.is_some(), crate::model::story::score(v));
    let mut best: Option<VictimAt> = None;
    for m in models {
        let Some(verdict) = &m.verdict else { continue };
        for v in &verdict.story.victims {
            let (has, s) = key(v);
            let better = best.as_ref().is_none_or(|b| {
                let (bh, bs) = key(&b.victim);
                (has, s) > (bh, bs)
            });
            if better {
                best = Some(VictimAt {
                    victim: v.clone(),
                    time_ms: m.time_ms,
                });
            }
        }
    }
    best
}

/// A memory taker's growth at one walk: bytes/s, the span it covers (ms), seconds named.
type TakerWalk = (f64, Option<u64>, f64);

fn memory_taker(models: &[Model]) -> Option<TakerSum> {
    let mut by: BTreeMap<(u32, &str), TakerSum> = BTreeMap::new();
    // Per process and walk (its resident size, which the records to the next walk repeat and
    // a walk that saw it grow changes): the growth rate, the span it covers, the seconds
    // named.
    let mut walks: BTreeMap<(u32, &str, Option<u64>), TakerWalk> = BTreeMap::new();
    for m in models {
        let Some(t) = m
            .verdict
            .as_ref()
            .and_then(|v| v.story.memory_taker.as_ref())
        else {
            continue;
        };
        let e = by.entry((t.pid, &t.comm)).or_insert_with(|| TakerSum {
            pid: t.pid,
            comm: t.comm.clone(),
            grew: 0.0,
            rss_bytes: None,
        });
        e.rss_bytes = e.rss_bytes.max(t.rss_bytes);
        let w = (walks.entry((t.pid, &t.comm, t.rss_bytes))).or_insert((
            t.growth_bytes_per_s,
            m.walk_interval_ms,
            0.0,
        ));
        w.2 += m.interval_s.unwrap_or(0.0);
    }
    for ((pid, comm, _), (rate, span_ms, named_s)) in walks {
        let secs = span_ms.map_or(named_s, |ms| named_s.min(ms as f64 / 1000.0));
        if let Some(e) = by.get_mut(&(pid, comm)) {
            e.grew += rate * secs;
        }
    }
    by.into_values()
        .reduce(|a, b| if b.grew > a.grew { b } else { a })
}

/// The text of the record with the lowest dirty threshold among those that said why it
/// moved: the same threshold `model::story` compares (the kernel's, else derived).
fn thresholds_moved(models: &[Model]) -> Option<String> {
    let mut best: Option<(f64, &str)> = None;
    for m in models {
        let Some(text) = m
            .verdict
            .as_ref()
            .and_then(|v| v.story.thresholds_moved.as_deref())
        else {
            continue;
        };
        let d = &m.dirty;
        let t = d
            .thresh_pages
            .or(d.derived_thresh_pages)
            .map_or(f64::INFINITY, |p| p as f64 * m.page_size as f64);
        if best.is_none_or(|(b, _)| t < b) {
            best = Some((t, text));
        }
    }
    best.map(|(_, t)| t.to_owned())
}

impl PeriodStory {
    /// The story as sentences of Markdown (`Culprit: **fio** ×2, 38.2G dirtied while named
    /// the culprit. Victim: …`); `None` when no record named anybody. `started` is the
    /// recording's start, for the victim's moment.
    #[must_use]
    pub fn paragraph(&self, started: i64) -> Option<String> {
        self.say(started, &|n| format!("**{}**", cell(n)), &cell)
    }

    /// The same sentences as plain text for a terminal (`Culprit: fio ×2, …`), control
    /// characters escaped.
    #[must_use]
    pub fn text(&self, started: i64) -> Option<String> {
        let plain = |s: &str| crate::fmt::escape_controls(s).into_owned();
        self.say(started, &plain, &plain)
    }

    /// The sentences, each name written by `name` and any other recorded text by `quote`.
    fn say(
        &self,
        started: i64,
        name: &dyn Fn(&str) -> String,
        quote: &dyn Fn(&str) -> String,
    ) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(c) = &self.culprit {
            let n = if c.pids > 1 {
                format!(" ×{}", c.pids)
            } else {
                String::new()
            };
            let mut what = Vec::new();
            if c.dirtied > 0.0 || c.read <= 0.0 {
                what.push(format!("{} dirtied", Bytes(c.dirtied)));
            }
            if c.read > 0.0 {
                what.push(format!("{} read", Bytes(c.read)));
            }
            parts.push(format!(
                "Culprit: {}{n}, {} while named the culprit.",
                name(&c.comm),
                what.join(" and ")
            ));
        }
        if let Some(v) = &self.victim {
            let w = &v.victim;
            parts.push(format!(
                "Victim: {} {}, at {}.",
                name(&format!("{}[{}]", w.comm, w.pid)),
                w.figures(),
                at(v.time_ms, started)
            ));
        }
        if let Some(t) = &self.memory_taker {
            let rss = t
                .rss_bytes
                .map(|r| format!(" (resident {} at most)", Bytes(r as f64)))
                .unwrap_or_default();
            parts.push(format!(
                "Memory taker: {} grew {} while memory ran short{rss}.",
                name(&format!("{}[{}]", t.comm, t.pid)),
                Bytes(t.grew)
            ));
        }
        if let Some(t) = &self.thresholds_moved {
            parts.push(format!("{}.", quote(t)));
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

#[cfg(test)]
#[path = "story_tests.rs"]
mod tests;
