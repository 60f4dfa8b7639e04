//! The throttles below the page cache, derived: each ext4 journal's commit rates and times
//! (and whether fsync waits on it), each device's wbt depths and read latency, and reclaim's
//! sleeps on writeback and the dirty pages it wrote itself.
//!
//! Owns: `Journal`, `Below` and their rules (`fsync_bound`, `limiting`). Must not touch: I/O,
//! parsing, display.
//!
//! **The journal rule.** An ext4 fsync in data=ordered mode forces a jbd2 commit and waits
//! for it (`jbd2_complete_transaction`); the commit first writes the transaction's ordered
//! data (a buffered flood's pages included), then the log blocks, then a cache flush. So
//! while commits are being asked for (`requested` grew in the interval) each fsync takes at
//! least a commit. The kernel's moving average of the commit time (`(new + 3·old) / 4`, µs)
//! follows the last few commits; when it is at least `FSYNC_COMMIT_MS` (an HDD's seek and
//! flush take about 10 ms; an idle commit here took 0.7 ms) **and** at least
//! `COMMIT_OVER_WRITE` times the device's write await (so the time is the commit's own
//! serialized work, not every write being slow, which the saturation verdict covers),
//! fsync is slow because of the journal. The phase the time goes to is taken from the
//! averages since mount (whole jiffies: 4 ms steps at HZ=250; all zero means "under a
//! jiffy", and no phase is named). The since-mount averages of the other figures are
//! shown as the kernel gives them: their interval means cannot be recovered from averages
//! rounded to jiffies (the rounding error of the product grows with the transaction count).

use serde::Serialize;

use super::Disk;
use crate::parse::Snapshot;
use crate::parse::below::Events;
use crate::parse::jbd2;
use crate::parse::trace::TraceState;

/// A commit this long (ms, the kernel's moving average) makes fsync "slow because of the
/// journal"...
pub const FSYNC_COMMIT_MS: f64 = 20.0;
/// ...when it is also this many times the device's write await.
pub const COMMIT_OVER_WRITE: f64 = 4.0;

/// One ext4 journal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Journal {
    /// The jbd2 name (`vda-8`).
    pub journal: String,
    /// The device it is on (`vda`).
    pub device: String,
    /// Commits per second in the interval; `None` on the first sample.
    pub commits_per_s: Option<f64>,
    /// Of them, asked for (fsync, sync) rather than timed.
    pub requested_per_s: Option<f64>,
    /// The kernel's moving average of the commit time, ms.
    pub commit_ms: Option<f64>,
    /// Since mount, per transaction, ms: waiting for it to start, the request delay, open,
    /// locked, flushing data, logging.
    pub wait_ms: Option<u64>,
    /// See `wait_ms`.
    pub request_delay_ms: Option<u64>,
    /// See `wait_ms`.
    pub running_ms: Option<u64>,
    /// See `wait_ms`.
    pub locked_ms: Option<u64>,
    /// See `wait_ms`.
    pub flushing_ms: Option<u64>,
    /// See `wait_ms`.
    pub logging_ms: Option<u64>,
    /// Blocks per transaction since mount.
    pub blocks: Option<u64>,
    /// Transactions since mount.
    pub transactions: u64,
    /// fsync is slow because of the journal (the module's rule).
    pub fsync_bound: bool,
    /// The evidence, when `fsync_bound`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The device of a jbd2 name: `vda-8` → `vda` (the part before the last `-`).
#[must_use]
pub fn journal_device(name: &str) -> &str {
    name.rsplit_once('-').map_or(name, |(d, _)| d)
}

/// The journals of `cur`, with rates against `prev`.
#[must_use]
pub fn journals(
    prev: Option<&Snapshot>,
    cur: &Snapshot,
    dt_s: Option<f64>,
    disks: &[Disk],
) -> Vec<Journal> {
    cur.journals
        .iter()
        .map(|j| {
            let before = prev.and_then(|p| p.journals.iter().find(|x| x.name == j.name));
            let rate = |f: fn(&jbd2::Journal) -> u64| {
                let (b, dt) = (before?, dt_s?);
                Some(f(j).checked_sub(f(b))? as f64 / dt)
            };
            let a = j.avg;
            let device = journal_device(&j.name).to_owned();
            let mut out = Journal {
                journal: j.name.clone(),
                commits_per_s: rate(|x| x.transactions),
                requested_per_s: rate(|x| x.requested),
                commit_ms: a.map(|a| a.commit_us as f64 / 1000.0),
                wait_ms: a.map(|a| a.wait_ms),
                request_delay_ms: a.map(|a| a.request_delay_ms),
                running_ms: a.map(|a| a.running_ms),
                locked_ms: a.map(|a| a.locked_ms),
                flushing_ms: a.map(|a| a.flushing_ms),
                logging_ms: a.map(|a| a.logging_ms),
                blocks: a.map(|a| a.blocks),
                transactions: j.transactions,
                fsync_bound: false,
                why: None,
                device,
            };
            let w_await = disks
                .iter()
                .find(|d| d.name == out.device)
                .and_then(|d| d.cols.w_await);
            out.why = fsync_bound(&out, w_await);
            out.fsync_bound = out.why.is_some();
            out
        })
        .collect()
}

/// The module's rule: `Some(evidence)` when fsync is slow because of the journal.
fn fsync_bound(j: &Journal, w_await: Option<f64>) -> Option<String> {
    let requested = j.requested_per_s.filter(|r| *r > 0.0)?;
    let commit = j.commit_ms.filter(|c| *c >= FSYNC_COMMIT_MS)?;
    if w_await.is_some_and(|w| commit < COMMIT_OVER_WRITE * w) {
        return None;
    }
    let phases = [
        ("flushing data", j.flushing_ms),
        ("logging", j.logging_ms),
        ("locked", j.locked_ms),
        ("waiting to start", j.wait_ms),
    ];
    let top = phases
        .iter()
        .filter_map(|(n, v)| Some((*n, (*v)?)))
        .filter(|(_, v)| *v > 0)
        .max_by_key(|(_, v)| *v)
        .map(|(n, v)| format!("; since mount most goes to {n} ({v} ms a commit)"))
        .unwrap_or_default();
    let write = w_await.map_or(String::new(), |w| format!(", writes take {w:.1} ms"));
    Some(format!(
        "fsync slow because of the journal: {} commits take {commit:.0} ms ({requested:.1} \
         forced/s{write}){top}",
        j.journal
    ))
}

/// One device's write-back throttling (wbt), as the `-below` tracer saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WbtRow {
    /// The disk (`vda`), or the BDI (`254:0`) when no disk has that number.
    pub device: String,
    /// The device's `wbt_lat_usec`, when read.
    pub wbt_lat_usec: Option<u64>,
    /// The last step seen: 0 the default depths, each step above halves them.
    pub step: Option<i64>,
    /// Background writeback's depth, other buffered writes', and the most in flight.
    pub depth_bg: u64,
    /// See `depth_bg`.
    pub depth_normal: u64,
    /// See `depth_bg`.
    pub depth_max: u64,
    /// Scale-downs in the interval (reads too slow: less depth for writes).
    pub scale_downs: u64,
    /// Scale-ups in the interval.
    pub scale_ups: u64,
    /// Windows whose fastest read missed the target.
    pub lat_exceeded: u64,
    /// The slowest of those reads' minima, ms.
    pub read_min_max_ms: Option<f64>,
    /// The last exceeded or scaled window's mean read latency, ms.
    pub read_mean_ms: Option<f64>,
    /// wbt is holding writes below its default depths (step > 0: its reads missed the
    /// target, so it halved the writes' depth `step` times). At step 0 background writeback
    /// still gets a quarter of the depth, wbt's design; below 0 writes get more.
    pub limiting: bool,
}

/// Reclaim's sleeps for one reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThrottleRow {
    /// `writeback`, `isolated`, `noprogress` or `congested`.
    pub reason: String,
    /// Sleeps per second.
    pub per_s: f64,
    /// Time asleep, ms per second.
    pub sleep_ms_per_s: f64,
    /// The longest sleep, ms.
    pub max_ms: f64,
}

/// The `-below` tracer's figures of one interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Below {
    /// Armed, or why not.
    pub state: TraceState,
    /// Why, for a state other than armed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Events the kernel dropped in the interval.
    pub lost: u64,
    /// One per device wbt acted on since arming.
    pub wbt: Vec<WbtRow>,
    /// Reclaim's sleeps by reason (`mm_vmscan_throttled`).
    pub reclaim_throttled: Vec<ThrottleRow>,
    /// Dirty file pages reclaim wrote itself, per second (`mm_vmscan_write_folio`).
    pub reclaim_wrote_file_per_s: Option<f64>,
    /// Anonymous pages reclaim wrote to swap, per second.
    pub reclaim_wrote_anon_per_s: Option<f64>,
}

/// The tracer's figures, `None` when the sample does not carry it.
#[must_use]
pub fn derive(cur: &Snapshot, dt_s: Option<f64>) -> Option<Below> {
    let b = cur.below.as_ref()?;
    let why = b.error.clone().or_else(|| b.status.why.clone());
    let mut out = Below {
        state: b.status.state,
        why,
        lost: 0,
        wbt: Vec::new(),
        reclaim_throttled: Vec::new(),
        reclaim_wrote_file_per_s: None,
        reclaim_wrote_anon_per_s: None,
    };
    let Some(e) = &b.events else {
        return Some(out);
    };
    fill(&mut out, e, cur, dt_s);
    Some(out)
}

fn fill(out: &mut Below, e: &Events, cur: &Snapshot, dt_s: Option<f64>) {
    out.lost = e.lost;
    let per_s = |n: u64| dt_s.filter(|d| *d > 0.0).map(|d| n as f64 / d);
    for w in &e.wbt {
        let device = cur
            .disks
            .iter()
            .find(|d| format!("{}:{}", d.major, d.minor) == w.dev)
            .map_or_else(|| w.dev.clone(), |d| d.name.clone());
        let wbt_lat_usec = cur
            .block
            .as_ref()
            .and_then(|b| b.get(&device))
            .and_then(|q| q.wbt_lat_usec);
        let ms = |ns: i64| (ns > 0).then(|| ns as f64 / 1e6);
        out.wbt.push(WbtRow {
            device,
            wbt_lat_usec,
            step: w.step,
            depth_bg: w.bg,
            depth_normal: w.normal,
            depth_max: w.max,
            scale_downs: w.down,
            scale_ups: w.up,
            lat_exceeded: w.lat,
            read_min_max_ms: (w.lat > 0).then(|| w.lat_max_us as f64 / 1000.0),
            read_mean_ms: if w.stat > 0 { ms(w.rmean_ns) } else { None },
            limiting: w.step.is_some_and(|s| s > 0),
        });
    }
    for t in &e.throttled {
        let (Some(n), Some(ms)) = (per_s(t.count), per_s(t.delayed_us)) else {
            continue;
        };
        out.reclaim_throttled.push(ThrottleRow {
            reason: t.reason.clone(),
            per_s: n,
            sleep_ms_per_s: ms / 1000.0,
            max_ms: t.max_us as f64 / 1000.0,
        });
    }
    out.reclaim_wrote_file_per_s = per_s(e.written.file);
    out.reclaim_wrote_anon_per_s = per_s(e.written.anon);
}

/// The reclaim evidence the tracer adds to the verdict: sleeps on writeback and pages
/// reclaim wrote itself; `None` when it saw neither.
#[must_use]
pub fn reclaim_note(b: &Below) -> Option<String> {
    let mut parts = Vec::new();
    for t in &b.reclaim_throttled {
        parts.push(format!(
            "reclaim slept {:.0} ms/s on {} (mm_vmscan_throttled)",
            t.sleep_ms_per_s, t.reason
        ));
    }
    let file = b.reclaim_wrote_file_per_s.unwrap_or(0.0);
    if file > 0.0 {
        parts.push(format!(
            "reclaim wrote {file:.0} dirty file pages/s itself: the dirty limits are too high for this memory"
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
#[path = "below_tests.rs"]
mod tests;
