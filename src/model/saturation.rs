//! Whether a disk is saturated, judged once per step by the pipeline (`Judge`) and read by
//! every output: the disk table's colour, batch text and JSON, the report, the metrics.
//!
//! Rotational single-queue disks: %util ≥ 70 warns, ≥ 90 is critical and saturated. Devices
//! that serve requests in parallel reach 100 %util early, so they are judged by their queue
//! and by await against their own **calm baseline** for requests of the sample's size: the
//! await of samples whose queue was short (aqu-sz < 1) and whose mean request (kB/s over
//! IO/s, reads and writes) was in the same size class (`SizeClass`: 4k and under, then each
//! doubling up to 4M and over), a slowly rising, quickly falling low mark that is frozen
//! while the queue is long. So a flood that lasts minutes does not become its own baseline,
//! as a median over the recent window did; and a request is measured against requests as
//! large, not against 4k reads: a baseline of 0.2 ms learned from 4k reads alone called a
//! writeback of 2.9 MB requests at queue 2.3 "saturated 12.8x" while the device did a third
//! of its bandwidth, the transfer time being most of the await. A class with no calm sample
//! borrows the baseline of the nearest larger class that has one (a larger request is no
//! faster); else it takes an upper bound from a smaller class's baseline: that baseline plus
//! the request's transfer time at the device's peak read and write rates (a peak is at most
//! the bandwidth, so the time is at least the real one), or the baseline scaled by the most
//! the sizes differ, whichever is smaller (`Track::baseline_for`). Near the bandwidth, where
//! saturation is, the peak is the bandwidth and the bound is close. With a queue (aqu-sz ≥ 1),
//! await ≥ 2× that baseline warns and ≥ 3× is critical; a queue `DEEP_QUEUE` deep with a
//! millisecond's await is critical on its own when no baseline is known (pagewatch started
//! during the flood). Once saturated, a device stays so while the warning holds, and for
//! `HOLD` samples more, so a flood's dips do not flicker.
//! Parallel (`parallel`): non-rotational (NVMe, SSD), more than one hardware queue, or a
//! virtual or stacked device by its name (virtio-blk `vd*`, Xen `xvd*`, `nvme*`, `dm-*`,
//! `md*`, `rbd*`, `nbd*`, `loop*`, `zram*`) whatever its rotational flag says: virtio-blk and
//! many cloud volumes report 1. Anything else whose flag is unknown is treated as rotational.
//! Owns: that rule, `Saturation` (a disk's answer), `SizeClass` and `Judge` (the baselines it
//! keeps).
//! Must not touch: I/O, history keeping for the charts, drawing.

use std::collections::BTreeMap;

use serde::Serialize;

use super::disk::{Columns, Disk};

/// A queue this deep (aqu-sz, averaged over the interval) with an await of at least
/// `DEEP_QUEUE_AWAIT_MS` is saturation on its own when the device has no calm baseline yet. A
/// device that still answers within a millisecond at that depth keeps up: virtio-blk here
/// served 4k random writes 64 deep at 0.7 ms, while 1 MiB writes 32 deep waited 30 ms.
pub const DEEP_QUEUE: f64 = 32.0;
/// See `DEEP_QUEUE`.
pub const DEEP_QUEUE_AWAIT_MS: f64 = 1.0;
/// Samples a saturated device stays flagged after its evidence falls below the warning.
pub const HOLD: u32 = 3;
/// How fast the baseline follows a calm await above it (a fraction of the gap per sample),
/// and below it.
const RISE: f64 = 0.02;
const FALL: f64 = 0.5;
/// Awaits below this are taken as this, so a device that idles at microseconds is not called
/// saturated at a fraction of a millisecond.
const BASELINE_FLOOR_MS: f64 = 0.05;

/// One device's saturation answer at a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Saturation {
    /// Saturated (critical, or held after it).
    pub saturated: bool,
    /// Why, in one line: `queue 144 deep, await 3.0 ms vs 0.4 ms calm baseline`.
    pub saturation_why: Option<String>,
    /// The calm baseline await it was judged against, ms: that of the sample's request size
    /// class, else the nearest larger class's, else the bound from a smaller class's
    /// (`Track::baseline_for`); the smallest class's when no IO moved.
    pub baseline_await_ms: Option<f64>,
    /// 0 fine, 1 warn, 2 critical (the table's colour).
    pub saturation_level: u8,
}

/// A device's memory between steps.
#[derive(Debug, Clone, Default)]
struct Track {
    /// The calm baseline of each request size class, ms.
    baseline_ms: [Option<f64>; SizeClass::COUNT],
    /// The most kB/s the device read, and wrote, in one sample: at most its bandwidth for
    /// each, so the transfer time of a request at that rate is at least its real one.
    peak_kb_s: [f64; 2],
    saturated: bool,
    /// Samples since the evidence last held, while saturated.
    quiet: u32,
}

/// Keeps each device's calm baseline and saturation across steps.
#[derive(Debug, Clone, Default)]
pub struct Judge {
    tracks: BTreeMap<String, Track>,
}

/// A request size class: 4k and under, then each doubling (4–8k, …, 2–4M), then over 4M.
/// Within a class the transfer time of the largest request is at most twice the smallest's,
/// under the 3× that is critical.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeClass(usize);

impl SizeClass {
    const COUNT: usize = 12;

    /// The class of a mean request of `kb` kB.
    #[must_use]
    pub fn of_kb(kb: f64) -> Self {
        let mut class = 0;
        let mut upper = 4.0;
        while kb > upper && class < Self::COUNT - 1 {
            class += 1;
            upper *= 2.0;
        }
        Self(class)
    }

    /// Its bounds for the evidence line: `≤4K`, `4K-8K`, …, `2M-4M`, `>4M`.
    fn label(self) -> String {
        let size = |kb: u32| {
            if kb >= 1024 {
                format!("{}M", kb / 1024)
            } else {
                format!("{kb}K")
            }
        };
        let upper = 4u32 << self.0.min(Self::COUNT - 2);
        match self.0 {
            0 => format!("≤{}", size(upper)),
            c if c == Self::COUNT - 1 => format!(">{}", size(upper)),
            _ => format!("{}-{}", size(upper / 2), size(upper)),
        }
    }
}

/// One sample's reads and writes together: their await, weighted by their IOs; the IOs; and
/// the size class of their mean request. Discards and flushes are left out: a discard's await
/// is the time to trim megabytes (an online-discard mount issues them seconds after files are
/// deleted: 45 MB at 11 ms was seen here beside 0.25 ms reads), not a latency an application
/// waits on.
struct Load {
    await_ms: f64,
    ops: f64,
    /// kB/s read and written.
    kb_s: [f64; 2],
    class: SizeClass,
}

impl Load {
    fn of(c: &Columns) -> Option<Self> {
        let dirs = [(c.r_s, c.r_await), (c.w_s, c.w_await)];
        let ops: f64 = dirs.iter().filter_map(|(n, _)| *n).sum();
        if c.r_s.is_none() && c.w_s.is_none() {
            return None;
        }
        let sum: f64 = dirs
            .iter()
            .map(|(n, a)| n.unwrap_or(0.0) * a.unwrap_or(0.0))
            .sum();
        let kb = c.rkB_s.unwrap_or(0.0) + c.wkB_s.unwrap_or(0.0);
        Some(Self {
            await_ms: if ops > 0.0 { sum / ops } else { 0.0 },
            ops,
            kb_s: [c.rkB_s.unwrap_or(0.0), c.wkB_s.unwrap_or(0.0)],
            class: SizeClass::of_kb(if ops > 0.0 { kb / ops } else { 0.0 }),
        })
    }

    /// The mean request's transfer time at the device's peak rates, ms: at most its real
    /// one, since a peak is at most the bandwidth.
    fn transfer_ms(&self, peak_kb_s: [f64; 2]) -> f64 {
        if self.ops <= 0.0 {
            return 0.0;
        }
        let s: f64 = (0..2)
            .filter(|&i| self.kb_s[i] > 0.0 && peak_kb_s[i] > 0.0)
            .map(|i| self.kb_s[i] / peak_kb_s[i])
            .sum();
        s / self.ops * 1000.0
    }
}

impl Track {
    /// The baseline for `load`'s size class, with the class it came from: its own; else the
    /// nearest larger class's (a larger request is no faster, so that is at least its calm
    /// await); else an upper bound from the nearest smaller class's `b`. A calm await is a
    /// latency plus a transfer time, both in `b`, so it is at most `b` scaled by the most
    /// the sizes can differ, and at most `b` plus the request's transfer at the device's
    /// peak rates (`Load::transfer_ms`, at least the real transfer time); the smaller bound.
    /// Without IO, the smallest class's.
    fn baseline_for(&self, load: Option<&Load>) -> Option<(f64, SizeClass)> {
        let Some(load) = load else {
            return self.own_or_larger(SizeClass(0));
        };
        let class = load.class;
        if let Some(b) = self.own_or_larger(class) {
            return Some(b);
        }
        let transfer = load.transfer_ms(self.peak_kb_s);
        (0..class.0).rev().find_map(|k| {
            let b = self.baseline_ms[k]?;
            // The class's largest request over the smaller class's smallest (4K for ≤4K);
            // over 4M there is no largest.
            let scaled = (class.0 < SizeClass::COUNT - 1)
                .then(|| b * f64::from(1u32 << (class.0 - k + usize::from(k > 0))));
            let plus = (transfer > 0.0).then_some(b + transfer);
            let bound = match (scaled, plus) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            bound.map(|v| (v, SizeClass(k)))
        })
    }

    fn own_or_larger(&self, class: SizeClass) -> Option<(f64, SizeClass)> {
        (class.0..SizeClass::COUNT).find_map(|c| self.baseline_ms[c].map(|b| (b, SizeClass(c))))
    }
}

impl Judge {
    /// Judges every disk of a step (in place) and moves the baselines on. A device with no
    /// figures this step (first tick, counters reset) keeps its track unchanged.
    pub fn judge(&mut self, disks: &mut [Disk]) {
        for d in disks.iter_mut() {
            let t = match self.tracks.get_mut(&d.name) {
                Some(t) => t,
                None => self.tracks.entry(d.name.clone()).or_default(),
            };
            d.saturation = judge_one(t, d);
        }
        // Forget devices that went away, so a long run's map stays bounded.
        if self.tracks.len() > disks.len() {
            self.tracks
                .retain(|name, _| disks.iter().any(|d| &d.name == name));
        }
    }
}

fn judge_one(t: &mut Track, d: &Disk) -> Saturation {
    let Some(load) = Load::of(&d.cols) else {
        return Saturation {
            saturated: t.saturated,
            baseline_await_ms: t.baseline_for(None).map(|b| b.0),
            ..Saturation::default()
        };
    };
    for (peak, kb) in t.peak_kb_s.iter_mut().zip(load.kb_s) {
        *peak = peak.max(kb);
    }
    let base = t.baseline_for(Some(&load));
    let aqu = d.cols.aqu_sz.unwrap_or(0.0);
    let (level, why) = if parallel(d) {
        parallel_level(aqu, &load, base, t.baseline_ms.iter().any(Option::is_some))
    } else {
        let u = d.cols.util_pct.unwrap_or(0.0);
        let level = if u >= 90.0 { 2 } else { u8::from(u >= 70.0) };
        let why = format!("{u:.0} %util on a single-queue rotational disk, queue {aqu:.1}");
        (level, (level > 0).then_some(why))
    };
    if level >= 2 {
        t.saturated = true;
        t.quiet = 0;
    } else if t.saturated {
        if level == 1 {
            t.quiet = 0;
        } else {
            t.quiet += 1;
            if t.quiet > HOLD {
                t.saturated = false;
            }
        }
    }
    // The calm baseline of the sample's size class moves only on calm samples: I/O with a
    // short queue, not saturated.
    if load.ops > 0.0 && aqu < 1.0 && !t.saturated {
        let a = load.await_ms.max(BASELINE_FLOOR_MS);
        let b = &mut t.baseline_ms[load.class.0];
        *b = Some(match *b {
            None => a,
            Some(b) if a < b => b + (a - b) * FALL,
            Some(b) => b + (a - b) * RISE,
        });
    }
    let why = match why {
        Some(w) if t.saturated && level < 2 => Some(format!("{w} (held: saturated before)")),
        None if t.saturated => Some(format!(
            "held {} sample(s) after the last evidence",
            t.quiet
        )),
        w => w,
    };
    Saturation {
        saturated: t.saturated,
        saturation_why: why.filter(|_| level > 0 || t.saturated),
        baseline_await_ms: t.baseline_for(Some(&load)).map(|b| b.0),
        saturation_level: if t.saturated { 2 } else { level },
    }
}

/// A parallel device's level and evidence: a queue with await against the calm baseline of
/// its requests' size, or a deep queue without one.
fn parallel_level(
    aqu: f64,
    load: &Load,
    base: Option<(f64, SizeClass)>,
    any_baseline: bool,
) -> (u8, Option<String>) {
    let await_ms = load.await_ms;
    if load.ops <= 0.0 || aqu < 1.0 {
        return (0, None);
    }
    match base {
        Some((b, from)) => {
            let ratio = await_ms / b.max(BASELINE_FLOOR_MS);
            let level = if ratio >= 3.0 {
                2
            } else {
                u8::from(ratio >= 2.0)
            };
            let of = match from.0.cmp(&load.class.0) {
                std::cmp::Ordering::Equal => String::new(),
                std::cmp::Ordering::Less => format!(", bounded from {}'s", from.label()),
                std::cmp::Ordering::Greater => format!(", {}'s", from.label()),
            };
            let why = format!(
                "queue {aqu:.1} deep, await {await_ms:.2} ms, {ratio:.1}x the {b:.2} ms calm \
                 baseline ({} requests{of})",
                load.class.label()
            );
            (level, (level > 0).then_some(why))
        }
        None if aqu >= DEEP_QUEUE && await_ms >= DEEP_QUEUE_AWAIT_MS => {
            let size = if any_baseline {
                format!(" for {} requests", load.class.label())
            } else {
                String::new()
            };
            let why = format!(
                "queue {aqu:.0} deep (≥ {DEEP_QUEUE:.0}), await {await_ms:.2} ms (≥ {DEEP_QUEUE_AWAIT_MS:.0} ms), \
                 no calm baseline{size} yet"
            );
            (2, Some(why))
        }
        None => (0, None),
    }
}

/// Whether `d` serves requests in parallel (see the module doc).
#[must_use]
pub fn parallel(d: &Disk) -> bool {
    const VIRTUAL: [&str; 9] = [
        "vd", "xvd", "nvme", "dm-", "md", "rbd", "nbd", "loop", "zram",
    ];
    let q = d.queue.as_ref();
    q.and_then(|q| q.rotational) == Some(false)
        || q.and_then(|q| q.hw_queues).is_some_and(|n| n > 1)
        || VIRTUAL.iter().any(|p| d.name.starts_with(p))
}

#[cfg(test)]
#[path = "saturation_tests.rs"]
mod tests;
