//! Decoding and reducing the `-below` tracer's records (wbt and reclaim throttling) into one
//! interval's `below::Events`: pure code the source calls at the edge, so that samples and
//! recordings carry a few lines rather than every event.
//!
//! Owns: each event's record layout (found by name in its `format`, so a kernel that moves a
//! field still decodes), the sticky per-device wbt state, and the reduction. Must not touch:
//! tracefs (the source reads the pages and walks them with `trace_raw::walk_page`), the text
//! (`below`).
//!
//! The events (kernel `include/trace/events/wbt.h`, `vmscan.h`; 6.18 here):
//! - `wbt_step` (name, msg, step, window µs, bg, normal, max): wbt changed its depths. `msg` is
//!   a pointer into the kernel, so the direction is read from the step: a higher step is a
//!   scale-down (the device's reads were too slow, writes get less depth). The first event
//!   of a device since arming has nothing to compare with: it counts as a step, in neither
//!   direction.
//! - `wbt_stat` (name, rmean, rmin, rmax, rnr_samples, …, wmean, …): one window's latency
//!   statistics, emitted when the window exceeded the target or while scaled down.
//! - `wbt_lat` (name, lat µs): the window's fastest read missed the target (`latency_exceeded`).
//! - `mm_vmscan_throttled` (nid, usec_timeout, usec_delayed, reason: `1 << reason`).
//! - `mm_vmscan_write_folio` (pfn, reclaim_flags; `mm_vmscan_writepage` before 5.19):
//!   reclaim wrote a dirty page itself; flags `RECLAIM_WB_ANON` 1, `RECLAIM_WB_FILE` 2.

use std::collections::BTreeMap;

use super::below::{Events, REASONS, Throttle, Wbt};
use super::trace::{TraceFormat, parse_format};
use super::trace_raw::{Field, event_id};

/// The events the tracer enables, under `events/`; the last two are alternatives (the one
/// the kernel has).
pub const EVENTS: [&str; 6] = [
    "wbt/wbt_step",
    "wbt/wbt_stat",
    "wbt/wbt_lat",
    "vmscan/mm_vmscan_throttled",
    "vmscan/mm_vmscan_write_folio",
    "vmscan/mm_vmscan_writepage",
];

#[derive(Debug, Clone, Copy)]
enum Kind {
    Step,
    Stat,
    Lat,
    Throttled,
    Written,
}

/// One event's layout: its kind, the `name` string's place, and its integer fields in the
/// order `Kind` reads them.
#[derive(Debug, Clone)]
struct Layout {
    kind: Kind,
    name: Option<(usize, usize)>,
    fields: Vec<Field>,
}

/// Every enabled event's layout, by event id.
#[derive(Debug, Clone, Default)]
pub struct Layouts {
    by_id: BTreeMap<u16, Layout>,
}

impl Layouts {
    /// The layouts of `(event dir, format text)` pairs; an event whose format lacks a field
    /// it needs is an error naming it.
    pub fn new(formats: &[(&str, &str)]) -> Result<Self, String> {
        let mut by_id = BTreeMap::new();
        for (dir, text) in formats {
            let fmt = parse_format(text).map_err(|e| format!("{dir}: {e}"))?;
            let (kind, names): (Kind, &[&str]) = match dir.rsplit('/').next().unwrap_or("") {
                "wbt_step" => (Kind::Step, &["step", "window", "bg", "normal", "max"]),
                "wbt_stat" => (
                    Kind::Stat,
                    &["rmean", "rmax", "rnr_samples", "wmean", "wnr_samples"],
                ),
                "wbt_lat" => (Kind::Lat, &["lat"]),
                "mm_vmscan_throttled" => (Kind::Throttled, &["usec_delayed", "reason"]),
                "mm_vmscan_write_folio" | "mm_vmscan_writepage" => {
                    (Kind::Written, &["reclaim_flags"])
                }
                other => return Err(format!("{other}: not an event of this tracer")),
            };
            let id = fmt
                .id
                .and_then(|i| u16::try_from(i).ok())
                .ok_or_else(|| format!("{dir}: no ID"))?;
            let fields = names
                .iter()
                .map(|n| Field::find(&fmt, n).ok_or_else(|| format!("{dir}: no integer {n}")))
                .collect::<Result<Vec<_>, _>>()?;
            let name = match kind {
                Kind::Step | Kind::Stat | Kind::Lat => {
                    Some(name_field(&fmt).ok_or_else(|| format!("{dir}: no name field"))?)
                }
                _ => None,
            };
            by_id.insert(id, Layout { kind, name, fields });
        }
        Ok(Self { by_id })
    }
}

/// A device name as the pseudo-file can carry it: one word of printable ASCII (a damaged
/// record's bytes become `?`), never empty.
fn clean_name(b: &[u8]) -> String {
    let s: String = b
        .iter()
        .map(|&c| if c.is_ascii_graphic() { c as char } else { '?' })
        .collect();
    if s.is_empty() { "?".to_owned() } else { s }
}

fn name_field(fmt: &TraceFormat) -> Option<(usize, usize)> {
    let f = fmt.fields.iter().find(|f| f.name == "name" && f.size > 0)?;
    Some((f.offset as usize, f.size as usize))
}

/// The reduction's state: the wbt devices seen since arming (their depths stay as last
/// seen) and the interval's counts.
#[derive(Debug, Clone, Default)]
pub struct Reducer {
    layouts: Layouts,
    wbt: BTreeMap<String, Wbt>,
    throttled: [Throttle; 4],
    written: super::below::Written,
    lost: u64,
    /// Records of events not in the layouts, or too short for theirs.
    pub other: u64,
}

impl Reducer {
    /// A reducer for these layouts.
    #[must_use]
    pub fn new(layouts: Layouts) -> Self {
        Self {
            layouts,
            ..Self::default()
        }
    }

    /// Adds events the kernel dropped.
    pub fn lost(&mut self, n: u64) {
        self.lost = self.lost.saturating_add(n);
    }

    /// Takes one record (the bytes after the entry header).
    pub fn record(&mut self, rec: &[u8]) {
        let Some(l) = event_id(rec).and_then(|id| self.layouts.by_id.get(&id)) else {
            self.other += 1;
            return;
        };
        let v: Option<Vec<i128>> = l.fields.iter().map(|f| f.get(rec)).collect();
        let Some(v) = v else {
            self.other += 1;
            return;
        };
        let u = |x: i128| u64::try_from(x).unwrap_or(0);
        let i = |x: i128| i64::try_from(x).unwrap_or(0);
        let name = l.name.and_then(|(at, n)| {
            let b = rec.get(at..at + n)?;
            let b = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
            Some(clean_name(b))
        });
        match l.kind {
            Kind::Step | Kind::Stat | Kind::Lat => {
                let Some(name) = name else {
                    self.other += 1;
                    return;
                };
                let d = self.wbt.entry(name.clone()).or_insert_with(|| Wbt {
                    dev: name,
                    ..Wbt::default()
                });
                match l.kind {
                    Kind::Step => {
                        let step = i(v[0]);
                        d.steps += 1;
                        match d.step {
                            Some(before) if step > before => d.down += 1,
                            Some(before) if step < before => d.up += 1,
                            _ => {}
                        }
                        d.step = Some(step);
                        d.window_us = u(v[1]);
                        (d.bg, d.normal, d.max) = (u(v[2]), u(v[3]), u(v[4]));
                    }
                    Kind::Stat => {
                        d.stat += 1;
                        d.rmean_ns = i(v[0]);
                        d.rmax_ns = d.rmax_ns.max(u(v[1]));
                        d.rsamples = d.rsamples.saturating_add(i(v[2]));
                        d.wmean_ns = i(v[3]);
                        d.wsamples = d.wsamples.saturating_add(i(v[4]));
                    }
                    _ => {
                        d.lat += 1;
                        d.lat_max_us = d.lat_max_us.max(u(v[0]));
                    }
                }
            }
            Kind::Throttled => {
                let (delayed, reason) = (u(v[0]), u(v[1]));
                for (bit, t) in self.throttled.iter_mut().enumerate() {
                    if reason & (1 << bit) != 0 {
                        t.count += 1;
                        t.delayed_us = t.delayed_us.saturating_add(delayed);
                        t.max_us = t.max_us.max(delayed);
                    }
                }
            }
            Kind::Written => {
                let flags = u(v[0]);
                if flags & 1 != 0 {
                    self.written.anon += 1;
                }
                if flags & 2 != 0 {
                    self.written.file += 1;
                }
            }
        }
    }

    /// The interval's events; the counts start again, the depths stay.
    pub fn take(&mut self) -> Events {
        let wbt = self
            .wbt
            .values_mut()
            .map(|d| {
                let out = d.clone();
                *d = Wbt {
                    dev: std::mem::take(&mut d.dev),
                    step: d.step,
                    window_us: d.window_us,
                    bg: d.bg,
                    normal: d.normal,
                    max: d.max,
                    ..Wbt::default()
                };
                out
            })
            .collect();
        let throttled = self
            .throttled
            .iter_mut()
            .zip(REASONS)
            .filter(|(t, _)| t.count > 0)
            .map(|(t, r)| Throttle {
                reason: r.to_owned(),
                ..std::mem::take(t)
            })
            .collect();
        Events {
            lost: std::mem::take(&mut self.lost),
            wbt,
            throttled,
            written: std::mem::take(&mut self.written),
        }
    }
}

#[cfg(test)]
#[path = "below_reduce_tests.rs"]
mod tests;
