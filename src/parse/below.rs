//! The throttles below the page cache, as a sample carries them: the `-below` tracer's status
//! and its pseudo-file (`BELOW`), one line per wbt device and per reclaim-throttle reason,
//! reduced at the edge from `wbt:wbt_step`, `wbt:wbt_stat`, `wbt:wbt_lat`,
//! `vmscan:mm_vmscan_throttled` and `vmscan:mm_vmscan_write_folio` (`below_reduce`).
//!
//! Owns: the pseudo-file's text, both ways (`render`, `parse`). Must not touch: tracefs, the
//! records (`below_reduce` decodes them), rates (`model::below` divides by the interval).
//!
//! The pseudo-file, one record a line, `key value` pairs after the kind:
//! - `lost N`: events the kernel dropped this interval;
//! - `wbt DEV steps N down N up N step S window_us W bg B normal N max M lat N lat_max_us L
//!   stat N rmean_ns R rmax_ns X rsamples N wmean_ns W wsamples N`: one device (`DEV` as the
//!   events name it, the BDI `major:minor`); `step`… `max` are the last depths seen since
//!   arming (sticky: wbt keeps its step while idle), the counts are this interval's;
//! - `throttled REASON count N delayed_us D max_us M`: reclaim slept in
//!   `reclaim_throttle()` for `REASON` (`writeback`, `isolated`, `noprogress`, `congested`);
//! - `written file N anon N`: dirty pages reclaim wrote itself (`pageout()`).

use std::fmt::Write;

use serde::Serialize;

use super::trace::{TraceStatus, parse_status};
use crate::sample::RawSample;

/// The `-below` tracer's status (same keys as the balance_dirty_pages tracer's).
pub const STATUS: &str = "sys/kernel/tracing/instances/pagewatch-below/status";
/// The reduced events of the interval (see the module doc).
pub const BELOW: &str = "sys/kernel/tracing/instances/pagewatch-below/below";

/// The reasons of `mm_vmscan_throttled`, by bit (`enum vmscan_throttle_state`).
pub const REASONS: [&str; 4] = ["writeback", "isolated", "noprogress", "congested"];

/// One device's write-back throttling (wbt) state and the interval's events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Wbt {
    /// The BDI as the events name it (`253:0`).
    pub dev: String,
    /// `wbt_step` events this interval (depth changes).
    pub steps: u64,
    /// Of them, scale-downs (the step rose: less depth for writes).
    pub down: u64,
    /// Of them, scale-ups.
    pub up: u64,
    /// The last step seen since arming: 0 the default depth, > 0 halved that many times.
    pub step: Option<i64>,
    /// The monitoring window then, µs.
    pub window_us: u64,
    /// Background writeback's depth.
    pub bg: u64,
    /// Other buffered writes' depth.
    pub normal: u64,
    /// The most writes in flight (sync writes, or reads waiting).
    pub max: u64,
    /// `wbt_lat` events this interval: a window whose fastest read missed the target.
    pub lat: u64,
    /// The slowest of those reads' minima, µs.
    pub lat_max_us: u64,
    /// `wbt_stat` events this interval (windows exceeded or while scaled down).
    pub stat: u64,
    /// The last window's mean read latency, ns.
    pub rmean_ns: i64,
    /// The slowest read of those windows, ns.
    pub rmax_ns: u64,
    /// Reads sampled in those windows.
    pub rsamples: i64,
    /// The last window's mean write latency, ns.
    pub wmean_ns: i64,
    /// Writes sampled in those windows.
    pub wsamples: i64,
}

/// Reclaim's sleeps for one reason this interval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Throttle {
    /// `writeback`, `isolated`, `noprogress` or `congested`.
    pub reason: String,
    /// Sleeps.
    pub count: u64,
    /// Their total, µs.
    pub delayed_us: u64,
    /// The longest, µs.
    pub max_us: u64,
}

/// Dirty pages reclaim wrote itself this interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Written {
    /// File pages.
    pub file: u64,
    /// Anonymous pages (to swap).
    pub anon: u64,
}

/// One interval of the `-below` tracer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Events {
    /// Events the kernel dropped.
    pub lost: u64,
    /// One per device wbt has acted on since arming.
    pub wbt: Vec<Wbt>,
    /// One per reason reclaim slept for this interval.
    pub throttled: Vec<Throttle>,
    /// Dirty pages written by reclaim.
    pub written: Written,
}

/// What a sample carries of the tracer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Below {
    /// Armed, or why not.
    pub status: TraceStatus,
    /// The interval's events, while armed; `None` otherwise.
    pub events: Option<Events>,
    /// Why the pseudo-file could not be read, when it could not.
    pub error: Option<String>,
}

/// The pseudo-file's text.
#[must_use]
pub fn render(e: &Events) -> String {
    let mut s = format!("lost {}\n", e.lost);
    for w in &e.wbt {
        let _ = writeln!(
            s,
            "wbt {} steps {} down {} up {} step {} window_us {} bg {} normal {} max {} lat {} \
             lat_max_us {} stat {} rmean_ns {} rmax_ns {} rsamples {} wmean_ns {} wsamples {}",
            w.dev,
            w.steps,
            w.down,
            w.up,
            w.step.map_or_else(|| "-".to_owned(), |v| v.to_string()),
            w.window_us,
            w.bg,
            w.normal,
            w.max,
            w.lat,
            w.lat_max_us,
            w.stat,
            w.rmean_ns,
            w.rmax_ns,
            w.rsamples,
            w.wmean_ns,
            w.wsamples
        );
    }
    for t in &e.throttled {
        let _ = writeln!(
            s,
            "throttled {} count {} delayed_us {} max_us {}",
            t.reason, t.count, t.delayed_us, t.max_us
        );
    }
    let _ = writeln!(s, "written file {} anon {}", e.written.file, e.written.anon);
    s
}

/// Parses the pseudo-file; an error names its line.
pub fn parse_events(text: &str) -> Result<Events, String> {
    let mut out = Events::default();
    for (i, line) in text.lines().enumerate() {
        let bad = |what: &str| format!("{BELOW}:{}: {what}", i + 1);
        let mut w = line.split_whitespace();
        let Some(kind) = w.next() else { continue };
        let head = match kind {
            "wbt" | "throttled" => Some(w.next().ok_or_else(|| bad("no name"))?),
            _ => None,
        };
        let rest: Vec<&str> = w.collect();
        if rest.len() % 2 != 0 && matches!(kind, "wbt" | "throttled" | "written") {
            return Err(bad("a key without its value"));
        }
        let pairs = || {
            rest.chunks(2)
                .map(|p| (p[0], p.get(1).copied().unwrap_or("")))
        };
        let u = |v: &str| v.parse::<u64>().map_err(|_| bad("not a number"));
        let i64_ = |v: &str| v.parse::<i64>().map_err(|_| bad("not a number"));
        match kind {
            "lost" => out.lost = u(rest.first().copied().unwrap_or(""))?,
            "wbt" => {
                let mut d = Wbt {
                    dev: head.unwrap_or_default().to_owned(),
                    ..Wbt::default()
                };
                for (k, v) in pairs() {
                    match k {
                        "steps" => d.steps = u(v)?,
                        "down" => d.down = u(v)?,
                        "up" => d.up = u(v)?,
                        "step" if v == "-" => d.step = None,
                        "step" => d.step = Some(i64_(v)?),
                        "window_us" => d.window_us = u(v)?,
                        "bg" => d.bg = u(v)?,
                        "normal" => d.normal = u(v)?,
                        "max" => d.max = u(v)?,
                        "lat" => d.lat = u(v)?,
                        "lat_max_us" => d.lat_max_us = u(v)?,
                        "stat" => d.stat = u(v)?,
                        "rmean_ns" => d.rmean_ns = i64_(v)?,
                        "rmax_ns" => d.rmax_ns = u(v)?,
                        "rsamples" => d.rsamples = i64_(v)?,
                        "wmean_ns" => d.wmean_ns = i64_(v)?,
                        "wsamples" => d.wsamples = i64_(v)?,
                        _ => {}
                    }
                }
                out.wbt.push(d);
            }
            "throttled" => {
                let mut t = Throttle {
                    reason: head.unwrap_or_default().to_owned(),
                    ..Throttle::default()
                };
                for (k, v) in pairs() {
                    match k {
                        "count" => t.count = u(v)?,
                        "delayed_us" => t.delayed_us = u(v)?,
                        "max_us" => t.max_us = u(v)?,
                        _ => {}
                    }
                }
                out.throttled.push(t);
            }
            "written" => {
                for (k, v) in pairs() {
                    match k {
                        "file" => out.written.file = u(v)?,
                        "anon" => out.written.anon = u(v)?,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The tracer's part of a sample: `None` when it carries no status (never wanted, older
/// recordings).
#[must_use]
pub fn parse(sample: &RawSample) -> Option<Below> {
    let status_text = sample.file(STATUS)?;
    let (status, mut error) = match parse_status(status_text) {
        Ok(s) => (s, None),
        Err(e) => {
            let st = parse_status("state error\n").ok()?;
            (
                st,
                Some(
                    e.to_string()
                        .replace("instances/pagewatch/", "instances/pagewatch-below/"),
                ),
            )
        }
    };
    let events = sample.file(BELOW).and_then(|t| {
        parse_events(t)
            .map_err(|e| {
                error.get_or_insert(e);
            })
            .ok()
    });
    Some(Below {
        status,
        events,
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Events {
        Events {
            lost: 2,
            wbt: vec![Wbt {
                dev: "253:0".into(),
                steps: 3,
                down: 2,
                up: 1,
                step: Some(2),
                window_us: 50_000,
                bg: 1,
                normal: 2,
                max: 4,
                lat: 5,
                lat_max_us: 91_000,
                stat: 6,
                rmean_ns: 80_000_000,
                rmax_ns: 120_000_000,
                rsamples: 40,
                wmean_ns: -1,
                wsamples: 0,
            }],
            throttled: vec![Throttle {
                reason: "writeback".into(),
                count: 7,
                delayed_us: 700_000,
                max_us: 100_000,
            }],
            written: Written { file: 9, anon: 1 },
        }
    }

    #[test]
    fn the_text_reads_back_as_written() {
        let e = sample();
        assert_eq!(parse_events(&render(&e)).unwrap(), e);
        let none = Events::default();
        assert_eq!(parse_events(&render(&none)).unwrap(), none);
        let mut unknown = sample();
        unknown.wbt[0].step = None;
        assert_eq!(parse_events(&render(&unknown)).unwrap(), unknown);
    }

    #[test]
    fn bad_lines_are_named_and_unknown_keys_skipped() {
        let e = parse_events("lost 0\nwbt 8:0 steps x\n").unwrap_err();
        assert!(e.contains(":2: not a number"), "{e}");
        assert!(parse_events("wbt 8:0 steps\n").is_err());
        assert!(parse_events("wbt\n").is_err());
        let ok = parse_events("wbt 8:0 future 1 steps 2\nsomething new\n").unwrap();
        assert_eq!(ok.wbt[0].steps, 2);
    }

    #[test]
    fn a_sample_without_the_status_has_no_tracer() {
        let mut s = RawSample::default();
        assert_eq!(parse(&s), None);
        s.files.insert(STATUS.into(), "state not-root\n".into());
        let b = parse(&s).unwrap();
        assert_eq!(b.events, None);
        s.files.insert(STATUS.into(), "state armed\n".into());
        s.files.insert(BELOW.into(), render(&sample()));
        assert_eq!(parse(&s).unwrap().events, Some(sample()));
        s.files.insert(BELOW.into(), "lost x\n".into());
        let b = parse(&s).unwrap();
        assert!(b.error.unwrap().contains("pagewatch-below/below:1"));
    }
}
