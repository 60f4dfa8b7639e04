//! The early warning (issue 50, item 8): the first seconds of a flood look healthy. For 6 s,
//! 600 MB/s was dirtied, the victim's fsyncs took 14–18 ms (40x its quiet 0.4 ms) and vda's
//! queue was 2–3 at w_await 5–9 ms, while every output said "global below background; no
//! disk saturated; no reclaim stall".
//!
//! Below freerun (no domain's writers throttled yet), while dirtying outruns writeback by
//! `OUTRUN_BYTES_PER_S` or more, warn when a victim's fsync mean is `VICTIM_RATIO` times its
//! own calm (`story`), or a disk under load (queue ≥ 1) waits `DISK_RATIO` times its calm
//! baseline for the sample's mix (`saturation`) with freerun `DISK_HORIZON_S` away or
//! nearer (a build's link bursts the disk as far, with freerun tens of seconds away); and say when freerun will be reached at this
//! rate: (freerun − (nr_dirty + nr_writeback)) / (dirtied − written), spec §1.4.
//!
//! Owns: `warn`, `outrun_pages_per_s` (which `story` also reads: a step where dirtying
//! outruns writeback is not calm). Must not touch: I/O, the clock, the other answers.

use super::Model;
use super::answers::{Early, Story, Victim};
use super::dirty::{Dirty, State};

/// Dirtying outruns writeback from this many bytes a second more dirtied than written: a
/// 4 KiB write and fsync every 100 ms is 40 kB/s, written as fast.
pub const OUTRUN_BYTES_PER_S: f64 = 1024.0 * 1024.0;
/// A victim's fsync mean this many times its own calm warns...
pub const VICTIM_RATIO: f64 = 10.0;
/// ...or a disk's await this many times its calm baseline...
const DISK_RATIO: f64 = 3.0;
/// ...with at least this queue (aqu-sz) and this many IOs a second, and freerun this many
/// seconds away or nearer at this rate: builds on this machine dirtied 30-240 MB/s past
/// writeback (rust-lld linking) and sent vda 3-7x its calm at queue 1-9 for a second, with
/// freerun 15-42 s away; incident 1's flood had it 0.7 s and 3 s away.
const DISK_QUEUE: f64 = 1.0;
const DISK_OPS_PER_S: f64 = 5.0;
const DISK_HORIZON_S: f64 = 10.0;

/// Pages a second dirtied beyond those written back, when that is at least
/// `OUTRUN_BYTES_PER_S`; `None` otherwise or without both rates.
#[must_use]
pub fn outrun_pages_per_s(d: &Dirty) -> Option<f64> {
    let net = d.dirtied_per_s? - d.written_per_s?;
    (net * d.page_size.max(1) as f64 >= OUTRUN_BYTES_PER_S).then_some(net)
}

/// The early warning of `m`, whose story is `story`: `None` at or past freerun (the verdict
/// says so), while writeback keeps up, or with no figure far above its calm.
#[must_use]
pub fn warn(m: &Model, story: &Story) -> Option<Early> {
    let throttled = |s: Option<State>| s.is_some_and(|s| s >= State::WritersThrottled);
    if throttled(m.dirty.state)
        || m.domains.iter().any(|d| throttled(d.state))
        || m.verdict.as_ref().is_some_and(|v| throttled(v.dirty.state))
    {
        return None;
    }
    let net = outrun_pages_per_s(&m.dirty)?;
    let d = &m.dirty;
    let freerun_in_s = d
        .freerun_pages
        .zip(d.dirty_writeback_pages)
        .map(|(f, now)| f.saturating_sub(now) as f64 / net);
    let soon = freerun_in_s.is_some_and(|s| s <= DISK_HORIZON_S);
    let what = victim(&story.victims).or_else(|| soon.then(|| disk(m)).flatten())?;
    Some(Early {
        what,
        outrun_bytes_per_s: net * m.page_size as f64,
        freerun_in_s,
    })
}

/// The first fsync victim at `VICTIM_RATIO` times its calm or more.
fn victim(victims: &[Victim]) -> Option<String> {
    victims
        .iter()
        .filter(|v| v.figure == "fsync")
        .find(|v| v.ratio.is_some_and(|r| r >= VICTIM_RATIO))
        .map(Victim::text)
}

/// The disk furthest above its calm baseline, at `DISK_RATIO` or more, under load.
fn disk(m: &Model) -> Option<String> {
    m.disks
        .iter()
        .filter_map(|d| {
            let c = &d.cols;
            if c.aqu_sz.unwrap_or(0.0) < DISK_QUEUE {
                return None;
            }
            let dirs = [(c.r_s, c.r_await), (c.w_s, c.w_await)];
            let (ops, sum) = dirs.iter().fold((0.0, 0.0), |(n, s), (o, a)| match (o, a) {
                (Some(o), Some(a)) => (n + o, s + o * a),
                _ => (n, s),
            });
            let base = d.saturation.baseline_await_ms.filter(|b| *b > 0.0)?;
            if ops < DISK_OPS_PER_S {
                return None;
            }
            let await_ms = sum / ops;
            let ratio = await_ms / base;
            (ratio >= DISK_RATIO).then_some((ratio, d.name.as_str(), await_ms, base))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(r, name, a, b)| format!("{name} await {a:.2} ms, {r:.0}x its calm {b:.2} ms"))
}

#[cfg(test)]
#[path = "early_tests.rs"]
pub(crate) mod tests;
