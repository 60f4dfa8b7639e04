//! Whether a disk is saturated, judged once per step by the pipeline (`Judge`) and read by
//! every output: the disk table's colour, batch text and JSON, the report, the metrics.
//!
//! Rotational single-queue disks: %util ≥ 70 warns, ≥ 90 is critical and saturated. Devices
//! that serve requests in parallel reach 100 %util early, so they are judged by their queue
//! and by await against their own **calm baseline**, kept for reads and for writes apart (a
//! direction's calm await says little of the other's: ext4 journal writes took 0.86 ms here
//! where 4k reads took 0.06) and for requests of the sample's size: the await of samples
//! whose queue was short (aqu-sz < 1) and whose mean request of that direction (kB/s over
//! IO/s) was in the same size class (`SizeClass`: 4k and under, then each doubling up to 4M
//! and over), a slowly rising, quickly falling low mark that is frozen while the queue is
//! long. So a flood that lasts minutes does not become its own baseline, as a median over the
//! recent window did; and a request is measured against requests as large, not against 4k
//! reads: a baseline of 0.2 ms learned from 4k reads alone called a writeback of 2.9 MB
//! requests at queue 2.3 "saturated 12.8x" while the device did a third of its bandwidth, the
//! transfer time being most of the await. A class with no calm sample borrows the baseline of
//! the nearest larger class that has one (a larger request is no faster); else it takes an
//! upper bound from a smaller class's baseline: that baseline plus the request's transfer
//! time at the device's peak rate for its direction (a peak is at most the bandwidth, so the
//! time is at least the real one), or the baseline scaled by the most the sizes differ,
//! whichever is smaller (`baseline_in`). Near the bandwidth, where saturation is, the peak is
//! the bandwidth and the bound is close. A direction with no baseline in any class takes the
//! other direction's by the same rule. A sample's reads and writes are judged together: its
//! await against each moving direction's baseline weighted by its IOs (`expected`), so a few
//! slow journal writes beside a flood of reads weigh as few. With a queue (aqu-sz ≥ 1), await
//! ≥ 2× that warns and ≥ 3× is critical. While the direction carrying most IOs has no
//! baseline of its own (pagewatch started during the flood, or that direction was never calm
//! in its sight), a queue `DEEP_QUEUE` deep warns, and with a millisecond's await is critical:
//! a borrowed baseline adds evidence, never clears it. Once saturated, a device stays so while
//! the warning holds, and for `HOLD` samples more, so a flood's dips do not flicker. That hold
//! is not this run's history alone: while another instance on the machine judges the device
//! saturated (its mark in the shared state file, `keep::vouched`), a warning here holds it
//! saturated too, so an instance started 20 s into a randread agrees with one started before
//! it (13 of 38 common seconds did, 2.2x against a 0.25 ms baseline, before the mark). After
//! a loaded sample that could not be judged, no baseline is learned for `UNSURE_SAMPLES`: a
//! flood's dip under queue 1 is no calm (a fresh instance learned a write flood's 3.9 ms).
//!
//! Marks never invent saturation: only a sample that warns by its own evidence is held.
//! Parallel (`parallel`): non-rotational (NVMe, SSD), more than one hardware queue, or a
//! virtual or stacked device by its name (virtio-blk `vd*`, Xen `xvd*`, `nvme*`, `dm-*`,
//! `md*`, `rbd*`, `nbd*`, `loop*`, `zram*`) whatever its rotational flag says: virtio-blk and
//! many cloud volumes report 1. Anything else whose flag is unknown is treated as rotational.
//! Owns: that rule, `SizeClass` and `Judge` (the baselines it keeps); the answer it gives,
//! `Saturation`, sits beside `Disk` (`model::disk`), which carries it.
//! Must not touch: I/O, history keeping for the charts, drawing.

use std::collections::HashMap;
use std::fmt::Write as _;

pub use super::disk::Saturation;
use super::disk::{Columns, Disk};
use crate::parse::baselines::Stored;

#[path = "saturation_keep.rs"]
mod keep;

/// A queue this deep (aqu-sz, averaged over the interval) with an await of at least
/// `DEEP_QUEUE_AWAIT_MS` is saturation on its own when the device has no calm baseline yet,
/// and a warning under it. A device that answers within a millisecond at that depth may keep
/// up (virtio-blk here served 4k random writes 64 deep at 0.7 ms, while 1 MiB writes 32 deep
/// waited 30 ms) or may not (4k reads 64 deep at 0.44 ms, 7× their 0.063 ms one deep): without
/// a baseline the two cannot be told apart, so it is said, not concluded.
pub const DEEP_QUEUE: f64 = 32.0;
/// See `DEEP_QUEUE`.
pub const DEEP_QUEUE_AWAIT_MS: f64 = 1.0;
/// Samples a saturated device stays flagged after its evidence falls below the warning.
pub const HOLD: u32 = 3;
/// Samples after a loaded device could not be judged in which no baseline is learned.
const UNSURE_SAMPLES: u32 = 10;
/// How fast the baseline follows a calm await above it (a fraction of the gap per sample),
/// and below it.
const RISE: f64 = 0.02;
const FALL: f64 = 0.5;
/// Awaits below this are taken as this, so a device that idles at microseconds is not called
/// saturated at a fraction of a millisecond.
const BASELINE_FLOOR_MS: f64 = 0.05;

/// A device's memory between steps.
#[derive(Debug, Clone, Default)]
struct Track {
    /// What the device is (`QueueSettings::identity`), once a sample said: its baselines are
    /// seeded from the stored ones of that identity, and forgotten when another device takes
    /// the name.
    identity: Option<String>,
    /// The settings `identity` was last read from: shared from one slow refresh to the next
    /// (`parse::BlockDevices`), so the same settings again are the same identity without
    /// comparing the strings, two cold reads a device a step (issue 52).
    bound: Option<std::sync::Arc<crate::parse::QueueSettings>>,
    /// Which baselines this run moved itself (the others were seeded): what it hands back.
    own: [[bool; SizeClass::COUNT]; 2],
    /// Per direction and size class, the shallowest queue (aqu-sz ≥ 1) this run saw that
    /// direction carry most IOs at, with its await: evidence that needs no calm sample
    /// (`keep::deeper_than_seen`).
    shallow: [[Option<keep::Point>; SizeClass::COUNT]; 2],
    /// The calm baseline of each direction (reads, then writes) and request size class, ms. Kept
    /// apart because a direction's calm await says little of the other's: journal writes with
    /// FUA on virtio-blk here took 0.86 ms while 4k reads took 0.06.
    baseline_ms: [[Option<f64>; SizeClass::COUNT]; 2],
    /// The most kB/s the device read, and wrote, in one sample: at most its bandwidth for
    /// each, so the transfer time of a request at that rate is at least its real one.
    peak_kb_s: [f64; 2],
    saturated: bool,
    /// Samples since the evidence last held, while saturated.
    quiet: u32,
    /// Samples left in which no baseline is learned: a loaded device this run could not
    /// judge (no calm baseline) dips under a queue of 1 within a flood, and that dip is no
    /// calm (`UNSURE_SAMPLES`).
    unsure: u32,
}

/// Keeps each device's calm baseline and saturation across steps; seeded with the baselines
/// stored by earlier runs (`seed`), it hands back what it learned (`learned`).
#[derive(Debug, Clone, Default)]
pub struct Judge {
    /// Each device's track by name; hashed, as every device of every step is looked up.
    tracks: HashMap<String, Track>,
    /// The stored baselines, by device identity (`seed`).
    stored: std::sync::Arc<Stored>,
    /// What is learned and not yet handed back (`keep::Judge::take_due`).
    unsaid: keep::Unsaid,
    /// The wall time of the step being judged, s, and its interval (`at`): how long this
    /// run's "saturated" stands for the others (`keep::Judge::learned`), and whether theirs
    /// still stands.
    now_s: Option<i64>,
    interval_s: Option<f64>,
}

/// A request size class: 4k and under, then each doubling (4–8k, …, 2–4M), then over 4M.
/// Within a class the transfer time of the largest request is at most twice the smallest's,
/// under the 3× that is critical.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeClass(usize);

impl SizeClass {
    const COUNT: usize = crate::parse::baselines::CLASSES;

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

/// The directions, as the evidence names them.
const DIRS: [&str; 2] = ["reads", "writes"];

/// One direction of a sample: its IOs, their await, kB/s and the size class of its mean
/// request.
struct Flow {
    ops: f64,
    await_ms: f64,
    kb_s: f64,
    class: SizeClass,
}

impl Flow {
    /// The mean request's transfer time at `peak_kb_s`, ms: at most its real one when the
    /// peak is this direction's, since a peak is at most the bandwidth.
    fn transfer_ms(&self, peak_kb_s: f64) -> f64 {
        if self.ops <= 0.0 || self.kb_s <= 0.0 || peak_kb_s <= 0.0 {
            return 0.0;
        }
        self.kb_s / peak_kb_s / self.ops * 1000.0
    }
}

/// One sample's reads and writes: each direction that moved (`flows`), and both together
/// (their await weighted by their IOs). Discards and flushes are left out: a discard's await
/// is the time to trim megabytes (an online-discard mount issues them seconds after files are
/// deleted: 45 MB at 11 ms was seen here beside 0.25 ms reads), not a latency an application
/// waits on.
struct Load {
    flows: [Option<Flow>; 2],
    await_ms: f64,
    ops: f64,
    /// kB/s read and written.
    kb_s: [f64; 2],
}

impl Load {
    fn of(c: &Columns) -> Option<Self> {
        if c.r_s.is_none() && c.w_s.is_none() {
            return None;
        }
        let dirs = [(c.r_s, c.r_await, c.rkB_s), (c.w_s, c.w_await, c.wkB_s)];
        let flows = dirs.map(|(n, a, kb)| {
            let ops = n.unwrap_or(0.0);
            let kb_s = kb.unwrap_or(0.0);
            (ops > 0.0).then(|| Flow {
                ops,
                await_ms: a.unwrap_or(0.0),
                kb_s,
                class: SizeClass::of_kb(kb_s / ops),
            })
        });
        let ops: f64 = flows.iter().flatten().map(|f| f.ops).sum();
        let waited: f64 = flows.iter().flatten().map(|f| f.ops * f.await_ms).sum();
        Some(Self {
            await_ms: if ops > 0.0 { waited / ops } else { 0.0 },
            ops,
            kb_s: dirs.map(|(_, _, kb)| kb.unwrap_or(0.0)),
            flows,
        })
    }

    /// The direction carrying most of the IOs (reads on a tie).
    fn main_dir(&self) -> Option<usize> {
        match (&self.flows[0], &self.flows[1]) {
            (Some(r), Some(w)) => Some(usize::from(w.ops > r.ops)),
            (Some(_), None) => Some(0),
            (None, Some(_)) => Some(1),
            (None, None) => None,
        }
    }
}

/// The baseline one flow is judged against and where it came from.
struct Base {
    ms: f64,
    /// The size class whose baseline it is.
    class: SizeClass,
    /// The direction whose baseline it is: the flow's own, or the other's when the flow's
    /// own has none in any class.
    dir: usize,
}

/// The calm baseline for `flow` from one direction's `table`: its class's; else the nearest
/// larger class's (a larger request is no faster, so that is at least its calm await); else an
/// upper bound from the nearest smaller class's `b`. A calm await is a latency plus a transfer
/// time, both in `b`, so it is at most `b` scaled by the most the sizes can differ, and at most
/// `b` plus the request's transfer at the device's peak rate for the flow's direction
/// (`Flow::transfer_ms`, at least the real transfer time); the smaller bound.
fn baseline_in(
    table: &[Option<f64>; SizeClass::COUNT],
    flow: &Flow,
    peak_kb_s: f64,
) -> Option<(f64, SizeClass)> {
    let class = flow.class;
    if let Some(b) = own_or_larger(table, class) {
        return Some(b);
    }
    let transfer = flow.transfer_ms(peak_kb_s);
    (0..class.0).rev().find_map(|k| {
        let b = table[k]?;
        // The class's largest request over the smaller class's smallest (4K for ≤4K); over
        // 4M there is no largest.
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

fn own_or_larger(
    table: &[Option<f64>; SizeClass::COUNT],
    class: SizeClass,
) -> Option<(f64, SizeClass)> {
    (class.0..SizeClass::COUNT).find_map(|c| table[c].map(|b| (b, SizeClass(c))))
}

impl Track {
    /// The baseline `flow` (direction `dir`) is judged against: its own direction's
    /// (`baseline_in`), else the other direction's by the same rule, so that one known
    /// baseline still judges a flood. `None` when the device has none at all.
    fn base(&self, dir: usize, flow: &Flow) -> Option<Base> {
        [dir, 1 - dir].into_iter().find_map(|from| {
            baseline_in(&self.baseline_ms[from], flow, self.peak_kb_s[dir]).map(|(ms, class)| {
                Base {
                    ms,
                    class,
                    dir: from,
                }
            })
        })
    }

    /// The baseline reported with no IO: the smallest reads' class, else writes'.
    fn idle_baseline(&self) -> Option<f64> {
        self.baseline_ms
            .iter()
            .find_map(|t| own_or_larger(t, SizeClass(0)))
            .map(|b| b.0)
    }
}

impl Judge {
    /// Judges every disk of a step (in place) and moves the baselines on. A device with no
    /// figures this step (first tick, counters reset) keeps its track unchanged.
    pub fn judge(&mut self, disks: &mut [Disk]) {
        for d in disks.iter_mut() {
            if d.is_memory() {
                d.saturation = Saturation {
                    saturation_why: Some(super::disk::MEMORY_WHY.to_owned()),
                    ..Saturation::default()
                };
                continue;
            }
            let t = match self.tracks.get_mut(&d.name) {
                Some(t) => t,
                None => self.tracks.entry(d.name.clone()).or_default(),
            };
            keep::bind(t, d.queue.as_ref(), &self.stored);
            let before = t.baseline_ms;
            let vouched = keep::vouched(t, &self.stored, self.now_s);
            d.saturation = judge_one(t, d, vouched);
            self.unsaid
                .note(&before, &t.baseline_ms, t.identity.is_some());
        }
        // Forget devices that went away, so a long run's map stays bounded.
        if self.tracks.len() > disks.len() {
            self.tracks
                .retain(|name, _| disks.iter().any(|d| &d.name == name));
        }
    }
}

/// Judges `d` on its track `t`; `vouched`: another instance on this machine judges the same
/// device saturated now (`keep::vouched`), so a warning here holds it saturated as that
/// instance's does, whoever started first.
fn judge_one(t: &mut Track, d: &Disk, vouched: bool) -> Saturation {
    let Some(load) = Load::of(&d.cols) else {
        return Saturation {
            saturated: t.saturated,
            baseline_await_ms: t.idle_baseline(),
            ..Saturation::default()
        };
    };
    for (peak, kb) in t.peak_kb_s.iter_mut().zip(load.kb_s) {
        *peak = peak.max(kb);
    }
    let aqu = d.cols.aqu_sz.unwrap_or(0.0);
    let (level, why, unjudged) = if parallel(d) {
        let judged = parallel_level(t, aqu, &load);
        keep::saw(t, aqu, &load);
        judged
    } else {
        let u = d.cols.util_pct.unwrap_or(0.0);
        let level = if u >= 90.0 { 2 } else { u8::from(u >= 70.0) };
        let why = format!("{u:.0} %util on a single-queue rotational disk, queue {aqu:.1}");
        (level, (level > 0).then_some(why), false)
    };
    let adopted = level == 1 && vouched && !t.saturated;
    if level >= 2 || adopted {
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
    // Each direction's baseline for its size class moves only on calm samples: I/O with a
    // short queue, not saturated, and not within `UNSURE_SAMPLES` of a loaded sample that
    // could not be judged.
    if unjudged {
        t.unsure = UNSURE_SAMPLES;
    } else {
        t.unsure = t.unsure.saturating_sub(1);
    }
    if aqu < 1.0 && !t.saturated && t.unsure == 0 {
        for (dir, flow) in load.flows.iter().enumerate() {
            let Some(flow) = flow else { continue };
            let a = flow.await_ms.max(BASELINE_FLOOR_MS);
            t.own[dir][flow.class.0] = true;
            let b = &mut t.baseline_ms[dir][flow.class.0];
            *b = Some(match *b {
                None => a,
                Some(b) if a < b => b + (a - b) * FALL,
                Some(b) => b + (a - b) * RISE,
            });
        }
    }
    let why = match why {
        Some(w) if adopted => Some(format!(
            "{w} (held: another pagewatch on this machine judges it saturated)"
        )),
        Some(w) if t.saturated && level < 2 => Some(format!("{w} (held: saturated before)")),
        None if t.saturated => Some(format!(
            "held: last saturated {} sample{} ago (clears after {HOLD})",
            t.quiet,
            if t.quiet == 1 { "" } else { "s" }
        )),
        w => w,
    };
    Saturation {
        saturated: t.saturated,
        saturation_why: why.filter(|_| level > 0 || t.saturated || unjudged),
        baseline_await_ms: expected(t, &load)
            .map(|e| e.ms)
            .or_else(|| t.idle_baseline().filter(|_| load.ops <= 0.0)),
        saturation_level: if t.saturated { 2 } else { level },
        unjudged: unjudged && !t.saturated,
    }
}

/// The calm await expected of a sample's mix (`ms`), and each moving direction's baseline
/// with its own request size class (`parts`, reads then writes), for the evidence.
struct Expected {
    ms: f64,
    parts: [Option<(SizeClass, Base)>; 2],
}

impl Expected {
    /// What each baseline was: `≤4K reads`, `1M-2M writes, 2M-4M's`, `512K-1M writes, bounded
    /// from ≤4K's`, `≤4K reads, the writes' baseline`, `512K-1M writes, bounded from reads'
    /// ≤4K`; two directions joined by `; `.
    fn what(&self) -> String {
        let mut what = Vec::with_capacity(2);
        for (dir, part) in self.parts.iter().enumerate() {
            let Some((class, b)) = part else { continue };
            let whose = match (b.dir == dir, b.class == *class) {
                (true, _) => format!("{}'s", b.class.label()),
                (false, true) => format!("the {}' baseline", DIRS[b.dir]),
                (false, false) => format!("{}' {}", DIRS[b.dir], b.class.label()),
            };
            let of = match b.class.0.cmp(&class.0) {
                std::cmp::Ordering::Less => format!(", bounded from {whose}"),
                _ if b.dir == dir && b.class == *class => String::new(),
                _ => format!(", {whose}"),
            };
            what.push(format!("{} {}{of}", class.label(), DIRS[dir]));
        }
        what.join("; ")
    }
}

/// The calm await expected of this sample's mix: each moving direction's baseline weighted
/// by its IOs, so a few slow journal writes beside a flood of fast reads weigh as few. `None`
/// when a moving direction has no baseline (the device has none).
fn expected(t: &Track, load: &Load) -> Option<Expected> {
    let mut weighted = 0.0;
    let mut parts = [None, None];
    for (dir, flow) in load.flows.iter().enumerate() {
        let Some(flow) = flow else { continue };
        let b = t.base(dir, flow)?;
        weighted += flow.ops * b.ms;
        parts[dir] = Some((flow.class, b));
    }
    (load.ops > 0.0).then(|| Expected {
        ms: weighted / load.ops,
        parts,
    })
}

/// A parallel device's level, evidence, and whether it is a deep queue not judged: with a
/// queue, await against the calm await expected of the sample's mix (`expected`); and, while
/// the direction carrying most IOs has no calm baseline of its own, a `DEEP_QUEUE` queue
/// warns, and is critical with a millisecond's await. A borrowed baseline only adds evidence:
/// it never clears what the deep queue says.
fn parallel_level(t: &Track, aqu: f64, load: &Load) -> (u8, Option<String>, bool) {
    let await_ms = load.await_ms;
    if load.ops <= 0.0 || aqu < 1.0 {
        return (0, None, false);
    }
    let expected = expected(t, load);
    let ratio = expected
        .as_ref()
        .map(|e| (await_ms / e.ms.max(BASELINE_FLOOR_MS), e));
    let mut level = match ratio {
        Some((r, _)) if r >= 3.0 => 2,
        Some((r, _)) => u8::from(r >= 2.0),
        None => 0,
    };
    let mut why = ratio.filter(|_| level > 0).map(|(r, e)| {
        format!(
            "queue {aqu:.1} deep, await {await_ms:.2} ms, {r:.1}x the {:.2} ms calm baseline \
             ({})",
            e.ms,
            e.what()
        )
    });
    let main = load.main_dir().unwrap_or(0);
    if t.baseline_ms[main].iter().any(Option::is_some) {
        return (level, why, false);
    }
    // No calm baseline of the main direction's own: a deep queue's millisecond, a borrowed
    // baseline's 3x or this run's shallower queue's (`keep::deeper_than_seen`) is
    // saturation; short of that the device is not judged, and says so.
    let none = if t.baseline_ms.iter().flatten().any(Option::is_some) {
        format!(" for {}", DIRS[main])
    } else {
        String::new()
    };
    if aqu >= DEEP_QUEUE && await_ms >= DEEP_QUEUE_AWAIT_MS {
        let why = format!(
            "queue {aqu:.0} deep (≥ {DEEP_QUEUE:.0}), await {await_ms:.2} ms \
             (≥ {DEEP_QUEUE_AWAIT_MS:.0} ms), no calm baseline{none} yet"
        );
        return (2, Some(why), false);
    }
    let inrun = keep::deeper_than_seen(t, main, aqu, load);
    if let Some((l, w)) = &inrun
        && *l > level
    {
        level = *l;
        why = Some(w.clone());
    }
    if level >= 2 {
        return (level, why, false);
    }
    let column = ["r_await", "w_await"][main];
    let main_await = load.flows[main].as_ref().map_or(await_ms, |f| f.await_ms);
    let deep = if aqu >= DEEP_QUEUE {
        format!(" deep (≥ {DEEP_QUEUE:.0})")
    } else {
        String::new()
    };
    let mut evidence = String::new();
    if let Some((_, w)) = inrun {
        let _ = write!(evidence, "; {w}");
    }
    if let Some((r, e)) = ratio {
        let _ = write!(
            evidence,
            "; {r:.1}x the {:.2} ms borrowed ({})",
            e.ms,
            e.what()
        );
    }
    let why = format!(
        "cannot judge yet: no calm baseline{none}; queue {aqu:.0}{deep}, {column} \
         {main_await:.2} ms{evidence}"
    );
    (level.max(u8::from(aqu >= DEEP_QUEUE)), Some(why), true)
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
