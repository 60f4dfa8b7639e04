//! Per-device `iostat -x` columns (spec §5.2), computed exactly as sysstat does, over the exact
//! elapsed time between two diskstats reads.
//!
//! As iostat (`write_stats()`, spec §5.2): a device that appeared since the last read, or
//! was re-inserted (its I/O count and every sector count went back), is counted from 0: its
//! counters started at 0 inside the interval. So is a device whose number changed under the
//! same name (another device, created since the last read; iostat would difference the two).
//! Differences from iostat, on purpose: a device whose I/O count went back without that
//! pattern (a 32-bit count wrapped on an old kernel), or whose line was skipped last time,
//! gets no figures for that tick instead of iostat's garbage; a direction whose counters went
//! back nulls only its own columns; a counter group the previous line lacked (flushes after an
//! 18-field line) has no figure rather than the whole since-boot count; rates use the
//! monotonic clock rather than /proc/uptime's centiseconds.
//! Like iostat, devices with no I/O since boot are left out, and partitions only on request.
//! Owns: disk derivation, the disk row (`Disk`) with the saturation answer it carries
//! (`Saturation`, judged by `saturation::Judge`), and putting the interval's latency on the
//! rows (`fill_latency`, figures from `latency`). Must not touch: I/O.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;

use super::latency::{DiskLatency, LatCols, Timed};
use crate::parse::blk_lat::Blk;
use crate::parse::diskstats::Skipped;
use crate::parse::{BlockDevices, DiskCounters, QueueSettings, Snapshot};

/// The iostat -x columns. Keys follow iostat's names with `/` and `-` as `_` and `%x` as
/// `x_pct`. `None` when the kernel lacks the counter (discard before 4.18, flush before 5.5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[allow(missing_docs, non_snake_case)]
pub struct Columns {
    pub r_s: Option<f64>,
    pub w_s: Option<f64>,
    pub d_s: Option<f64>,
    pub f_s: Option<f64>,
    pub rkB_s: Option<f64>,
    pub wkB_s: Option<f64>,
    pub dkB_s: Option<f64>,
    pub rrqm_s: Option<f64>,
    pub wrqm_s: Option<f64>,
    pub drqm_s: Option<f64>,
    pub rrqm_pct: Option<f64>,
    pub wrqm_pct: Option<f64>,
    pub drqm_pct: Option<f64>,
    pub r_await: Option<f64>,
    pub w_await: Option<f64>,
    pub d_await: Option<f64>,
    pub f_await: Option<f64>,
    pub rareq_sz: Option<f64>,
    pub wareq_sz: Option<f64>,
    pub dareq_sz: Option<f64>,
    pub aqu_sz: Option<f64>,
    pub util_pct: Option<f64>,
}

impl Columns {
    /// Every column under iostat -x's printed name, in iostat's order.
    #[must_use]
    pub fn named(&self) -> [(&'static str, Option<f64>); 22] {
        [
            ("r/s", self.r_s),
            ("rkB/s", self.rkB_s),
            ("rrqm/s", self.rrqm_s),
            ("%rrqm", self.rrqm_pct),
            ("r_await", self.r_await),
            ("rareq-sz", self.rareq_sz),
            ("w/s", self.w_s),
            ("wkB/s", self.wkB_s),
            ("wrqm/s", self.wrqm_s),
            ("%wrqm", self.wrqm_pct),
            ("w_await", self.w_await),
            ("wareq-sz", self.wareq_sz),
            ("d/s", self.d_s),
            ("dkB/s", self.dkB_s),
            ("drqm/s", self.drqm_s),
            ("%drqm", self.drqm_pct),
            ("d_await", self.d_await),
            ("dareq-sz", self.dareq_sz),
            ("f/s", self.f_s),
            ("f_await", self.f_await),
            ("aqu-sz", self.aqu_sz),
            ("%util", self.util_pct),
        ]
    }

    /// A column by iostat's printed name (`r/s`, `%util`, …); `None` for an unknown name.
    #[must_use]
    pub fn get(&self, iostat_name: &str) -> Option<Option<f64>> {
        self.named()
            .into_iter()
            .find(|(n, _)| *n == iostat_name)
            .map(|(_, v)| v)
    }
}

/// One device's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disk {
    /// Kernel name (`sda`, `nvme0n1`, `dm-0`).
    pub name: String,
    /// Device-mapper name for dm-N devices.
    pub dm_name: Option<String>,
    /// Whether this is a partition rather than a whole disk.
    pub partition: bool,
    /// I/Os in flight at the read (a gauge).
    pub in_flight: u64,
    /// Queue settings from /sys/block (whole disks only).
    pub queue: Option<std::sync::Arc<QueueSettings>>,
    /// iostat -x columns; all `None` on a device's first tick or after a counter reset.
    #[serde(flatten)]
    pub cols: Columns,
    /// The seconds `cols` cover when longer than the record's interval: the device's line
    /// was carried from an earlier read (`source::disk_lines`, many devices) and it moved
    /// since; `None` (left out of JSON) when they cover the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_s: Option<f64>,
    /// Whether it is saturated, and why (`saturation::Judge`, filled by the pipeline).
    #[serde(flatten)]
    pub saturation: Saturation,
    /// Latency percentiles of the interval while its requests are timed (`--latency`, the
    /// detail view, or saturated); `None` otherwise (`model::latency`).
    #[serde(flatten)]
    pub latency: Timed,
    /// The interval's latency histograms behind them (heat map, report, `/metrics`).
    #[serde(skip)]
    pub lat_hist: Option<std::sync::Arc<DiskLatency>>,
    /// I/Os completed since boot (reads, writes, discards, flushes): among devices idle for as
    /// long as the history holds, the one the machine uses sorts first (`SortKey::sort`).
    #[serde(skip)]
    pub ios_since_boot: u64,
    /// Its data waiting to be written and when it will be (`drain`, spec §15.5): JSON's
    /// `dirty_bytes`, `writeback_bytes`, `drain_bytes_per_s`, `drain_eta_s`.
    #[serde(flatten)]
    pub drain: super::drain::Drain,
}

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
    /// The warning is a deep queue that no calm baseline of its own can judge yet
    /// (`DEEP_QUEUE` under a millisecond): saturated or keeping up, not known. The verdict
    /// says so in place of "no disk saturated".
    #[serde(skip)]
    pub unjudged: bool,
}

/// What the latency tracer reads of each disk to tell a blind tracer from a quiet disk
/// (`latency::tracer`).
#[must_use]
pub fn seen_by_latency_tracer(disks: &[Disk]) -> Vec<super::latency::Seen<'_>> {
    disks
        .iter()
        .map(|d| {
            let c = &d.cols;
            super::latency::Seen {
                name: &d.name,
                events: d.latency.lat_events,
                carried: d.span_s.is_some(),
                completions_per_s: [c.r_s, c.w_s, c.d_s, c.f_s].iter().flatten().sum(),
                sample_every: d.latency.lat_sample_every,
            }
        })
        .collect()
}

/// Sets each disk's data waiting to be written and its drain (`drain::derive`, spec §15.5);
/// `dirty` and `writeback` are the machine's pages.
pub fn fill_drain(disks: &mut [Disk], cur: &Snapshot, dirty: Option<u64>, writeback: Option<u64>) {
    let rows: Vec<super::drain::Seen<'_>> = disks
        .iter()
        .map(|d| super::drain::Seen {
            name: &d.name,
            partition: d.partition,
            wkb_s: d.cols.wkB_s,
        })
        .collect();
    let drains = super::drain::derive(&rows, cur, dirty, writeback);
    for (d, x) in disks.iter_mut().zip(drains) {
        d.drain = x;
    }
}

/// The disk whose waiting data takes longest to drain, from `drain::LONG_DRAIN_S`, in words
/// (`vda: 2.0G to write, ~67 s at 30.5M/s (kernel)`): why a process blocked in a sync wait
/// waits (spec §15.5).
#[must_use]
pub fn longest_drain(disks: &[Disk]) -> Option<String> {
    let d = disks
        .iter()
        .filter(|d| d.drain.shown())
        .filter(|d| {
            d.drain
                .drain_eta_s
                .is_some_and(|e| e >= super::drain::LONG_DRAIN_S)
        })
        .max_by(|a, b| {
            let eta = |d: &Disk| d.drain.drain_eta_s.unwrap_or(0.0);
            eta(a).total_cmp(&eta(b))
        })?;
    Some(format!("{}: {}", d.name, d.drain.text()?))
}

/// Sets each disk's latency from the snapshot's histograms (by name); the others keep none.
pub fn fill_latency(disks: &mut [Disk], blk: Option<&Blk>) {
    let Some(l) = blk.and_then(|b| b.latency.as_ref()) else {
        return;
    };
    for d in disks {
        if let Some(dl) = l.devices.iter().find(|x| x.name == d.name) {
            let dl = DiskLatency {
                lat: dl.clone(),
                ring_lost: l.lost,
            };
            d.latency = LatCols::of(&dl).into();
            d.lat_hist = Some(std::sync::Arc::new(dl));
        }
    }
}

/// The saturation answer of a zram device: compressed memory, not a disk (spec §14.2), so
/// neither judged against a baseline nor the verdict's worst latency.
pub const MEMORY_WHY: &str = "memory (zram): compressed RAM, not judged as a disk";

impl Disk {
    /// A zram device: its IOs are page copies with compression, which iostat's queue,
    /// await and %util say nothing about (spec §14.2).
    #[must_use]
    pub fn is_memory(&self) -> bool {
        self.name.starts_with("zram")
    }
}

#[cfg(test)]
impl Disk {
    /// A whole disk with these columns and nothing else known (no queue settings, no
    /// verdict yet): the start of most tests' disks. By value: the callers write the columns
    /// in place.
    #[allow(clippy::large_types_passed_by_value)]
    pub(crate) fn from_cols(name: &str, cols: Columns) -> Self {
        Self {
            name: name.into(),
            dm_name: None,
            partition: false,
            in_flight: 0,
            queue: None,
            cols,
            span_s: None,
            saturation: Saturation::default(),
            latency: Timed::default(),
            lat_hist: None,
            ios_since_boot: 0,
            drain: super::drain::Drain::default(),
        }
    }
}

/// One direction's counters: ios, merges, sectors, milliseconds.
#[derive(Clone, Copy)]
struct Dir {
    ios: u64,
    merges: u64,
    sectors: u64,
    ms: u64,
}

struct DirFigures {
    per_s: f64,
    kb_s: f64,
    rqm_s: f64,
    rqm_pct: f64,
    await_ms: f64,
    areq_sz: f64,
}

/// The difference of a millisecond field the kernel prints as `%u` (spec §4): modulo 2^32, as
/// iostat takes it, so a wrap between the two reads is still the right difference. A value
/// past 32 bits (not the kernel's) must not go backwards.
fn ms_delta(p: u64, c: u64) -> Option<u64> {
    match (u32::try_from(p), u32::try_from(c)) {
        (Ok(p), Ok(c)) => Some(u64::from(c.wrapping_sub(p))),
        _ => c.checked_sub(p),
    }
}

/// `write_ext_stat()` for one direction. `None` if one of its counters went backwards (a
/// reset or a re-inserted device); the other directions keep their figures.
fn dir_figures(p: Dir, c: Dir, dt_s: f64) -> Option<DirFigures> {
    let ios = c.ios.checked_sub(p.ios)? as f64;
    let merges = c.merges.checked_sub(p.merges)? as f64;
    let sectors = c.sectors.checked_sub(p.sectors)? as f64;
    let ms = ms_delta(p.ms, c.ms)? as f64;
    Some(DirFigures {
        per_s: ios / dt_s,
        kb_s: sectors / dt_s / 2.0,
        rqm_s: merges / dt_s,
        rqm_pct: if merges + ios > 0.0 {
            merges / (merges + ios) * 100.0
        } else {
            0.0
        },
        await_ms: if ios > 0.0 { ms / ios } else { 0.0 },
        areq_sz: if ios > 0.0 { sectors / ios / 2.0 } else { 0.0 },
    })
}

fn reads(d: &DiskCounters) -> Dir {
    Dir {
        ios: d.reads,
        merges: d.reads_merged,
        sectors: d.sectors_read,
        ms: d.read_ms,
    }
}
fn writes(d: &DiskCounters) -> Dir {
    Dir {
        ios: d.writes,
        merges: d.writes_merged,
        sectors: d.sectors_written,
        ms: d.write_ms,
    }
}
fn discards(d: &DiskCounters) -> Option<Dir> {
    Some(Dir {
        ios: d.discards?,
        merges: d.discards_merged?,
        sectors: d.sectors_discarded?,
        ms: d.discard_ms?,
    })
}
fn flushes(d: &DiskCounters) -> Option<Dir> {
    Some(Dir {
        ios: d.flushes?,
        merges: 0,
        sectors: 0,
        ms: d.flush_ms?,
    })
}

/// Whether `c` is `p`'s device removed and re-inserted, by iostat's rule (`write_stats()`):
/// its I/O count went back, and each sector count went back or was 0. A 32-bit count that
/// wrapped on an old kernel leaves the other sector counts going on, so it is not taken for one.
#[must_use]
pub fn reinserted(p: &DiskCounters, c: &DiskCounters) -> bool {
    let back = |p: u64, c: u64| p == 0 || c < p;
    c.total_ios() < p.total_ios()
        && back(p.sectors_read, c.sectors_read)
        && back(p.sectors_written, c.sectors_written)
        && back(
            p.sectors_discarded.unwrap_or(0),
            c.sectors_discarded.unwrap_or(0),
        )
}

/// The iostat -x columns between two reads of one device, `dt_s` seconds apart. A device
/// re-inserted since `p` (`reinserted`) is counted from 0, as iostat does. A direction whose
/// counters went backwards has no figures, the rest stand; `None` when the device's total I/O
/// count went backwards otherwise (a wrapped 32-bit count: counting from 0 would report every
/// I/O since boot as this interval's).
#[must_use]
pub fn columns(p: &DiskCounters, c: &DiskCounters, dt_s: f64) -> Option<Columns> {
    if reinserted(p, c) {
        return columns(&c.zeroed(), c, dt_s);
    }
    let r = dir_figures(reads(p), reads(c), dt_s);
    let w = dir_figures(writes(p), writes(c), dt_s);
    let d = discards(p)
        .zip(discards(c))
        .and_then(|(p, c)| dir_figures(p, c, dt_s));
    let f = flushes(p)
        .zip(flushes(c))
        .and_then(|(p, c)| dir_figures(p, c, dt_s));
    if c.total_ios() < p.total_ios() {
        return None;
    }
    let ticks = ms_delta(p.io_ticks_ms, c.io_ticks_ms).map(|t| t as f64);
    let weighted = ms_delta(p.weighted_ms, c.weighted_ms).map(|t| t as f64);
    let get = |x: &Option<DirFigures>, f: fn(&DirFigures) -> f64| x.as_ref().map(f);
    Some(Columns {
        r_s: get(&r, |x| x.per_s),
        w_s: get(&w, |x| x.per_s),
        d_s: get(&d, |x| x.per_s),
        f_s: get(&f, |x| x.per_s),
        rkB_s: get(&r, |x| x.kb_s),
        wkB_s: get(&w, |x| x.kb_s),
        dkB_s: get(&d, |x| x.kb_s),
        rrqm_s: get(&r, |x| x.rqm_s),
        wrqm_s: get(&w, |x| x.rqm_s),
        drqm_s: get(&d, |x| x.rqm_s),
        rrqm_pct: get(&r, |x| x.rqm_pct),
        wrqm_pct: get(&w, |x| x.rqm_pct),
        drqm_pct: get(&d, |x| x.rqm_pct),
        r_await: get(&r, |x| x.await_ms),
        w_await: get(&w, |x| x.await_ms),
        d_await: get(&d, |x| x.await_ms),
        f_await: get(&f, |x| x.await_ms),
        rareq_sz: get(&r, |x| x.areq_sz),
        wareq_sz: get(&w, |x| x.areq_sz),
        dareq_sz: get(&d, |x| x.areq_sz),
        aqu_sz: weighted.map(|w| w / (dt_s * 1000.0)),
        util_pct: ticks.and_then(|t| util_pct(t, dt_s)),
    })
}

/// %util (spec §5.2), `None` past 200 %: io_ticks cannot advance faster than the clock, so
/// such a figure (1,000,000 % from a garbled counter) is not the device's. Up to that,
/// the figure is iostat's, which does not clamp (timing skew can show a little over 100).
fn util_pct(ticks_ms: f64, dt_s: f64) -> Option<f64> {
    Some(ticks_ms / (dt_s * 1000.0) * 100.0).filter(|u| *u <= 200.0)
}

/// Whether `name` is a whole disk. With the /sys/block listing (`whole`, names as in
/// diskstats): listed; or, for a name the listing does not know (a disk hot-plugged since it
/// was read), not a partition of another device of this diskstats (`all`) by the kernel's
/// naming (`parents`). Without it: not named like a partition (`sda1`, `nvme0n1p2`).
fn is_whole(name: &str, whole: Option<&BlockDevices>, all: &HashSet<&str>) -> bool {
    if let Some(block) = whole {
        return block.contains_key(name) || !parents(name).any(|p| all.contains(p));
    }
    let digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if digits.len() == name.len() {
        return true;
    }
    let stem_has_digit = digits.bytes().any(|b| b.is_ascii_digit());
    if stem_has_digit {
        // nvme0n1p1, mmcblk0p1, loop0p1: a partition ends in `p<digits>` after a digit.
        !(digits.ends_with('p')
            && digits[..digits.len() - 1].ends_with(|c: char| c.is_ascii_digit()))
    } else {
        // sda1, vdb2 are partitions; loop0, md0, dm-0, sr0, zram0, nbd0 are whole devices.
        [
            "loop", "md", "dm-", "sr", "zram", "nbd", "ram", "nvme", "mmcblk", "rbd",
        ]
        .contains(&digits)
    }
}

/// The disks `name` would be a partition of by the kernel's naming (`disk_name()`): the
/// disk's name, then `p` if that ends in a digit, then the number (`sda1` of `sda`,
/// `nvme0n1p2` of `nvme0n1`, `md1p1` of `md1`; `md10` is no partition of `md1`).
fn parents(name: &str) -> impl Iterator<Item = &str> {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let numbered = stem.len() < name.len();
    let ends_in_digit = |s: &str| s.ends_with(|c: char| c.is_ascii_digit());
    let plain = (numbered && !stem.is_empty() && !ends_in_digit(stem)).then_some(stem);
    let with_p = stem
        .strip_suffix('p')
        .filter(|d| numbered && ends_in_digit(d));
    plain.into_iter().chain(with_p)
}

/// The skipped diskstats lines as one note: the first line's error, and how many more.
#[must_use]
pub fn skipped_note(skipped: &[Skipped]) -> Option<String> {
    let first = skipped.first()?;
    Some(match skipped.len() {
        1 => first.error.clone(),
        n => format!("{} (and {} more lines skipped)", first.error, n - 1),
    })
}

/// What a device's previous counters were.
enum Before<'a> {
    /// Read last time, as the same device.
    Read(&'a DiskCounters),
    /// Not there last time, or another device under that name: created since, from 0.
    New,
    /// Unknown: last time its line (or a line without a name) was skipped.
    Unknown,
}

fn before<'a>(prev: &'a Snapshot, i: usize, c: &Arc<DiskCounters>) -> Before<'a> {
    // Same position as last tick is the common case; search only when devices moved.
    // The memoised parse shares an unchanged line's counters: the same, without comparing.
    let p = (prev.disks.get(i))
        .filter(|d| Arc::ptr_eq(d, c) || d.name == c.name)
        .or_else(|| prev.disks.iter().find(|d| d.name == c.name));
    let skipped_last_time = || {
        prev.disks_skipped
            .iter()
            .any(|s| s.name.as_ref().is_none_or(|n| *n == c.name))
    };
    match p {
        Some(p) if Arc::ptr_eq(p, c) || (p.major == c.major && p.minor == c.minor) => {
            Before::Read(p)
        }
        None if skipped_last_time() => Before::Unknown,
        // Not there last time, or another device under that name (a new number).
        _ => Before::New,
    }
}

/// The interval a device's counters span between `prev` and `cur`: the samples' `dt_s`,
/// lengthened by how long before `prev` its line there was read and shortened by how long
/// before `cur` its line here was (lines carried from an earlier read,
/// `names::DISKSTATS_CARRIED`). So a device read again after being carried gets its rates over
/// its own interval. A line carried in both from the same read has not changed, and keeps
/// `dt_s`.
fn device_dt(prev: &Snapshot, cur: &Snapshot, name: &str, dt_s: f64) -> f64 {
    let stale_s = |s: &Snapshot| {
        s.disks_carried
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0.0, |(_, at)| s.mono_ns.saturating_sub(*at) as f64 / 1e9)
    };
    let dt = dt_s + stale_s(prev) - stale_s(cur);
    if dt > 0.0 { dt } else { dt_s }
}

/// Derives every shown device. `dt_s` is `None` on the first tick.
#[must_use]
pub fn derive(
    prev: Option<&Snapshot>,
    cur: &Snapshot,
    dt_s: Option<f64>,
    partitions: bool,
) -> Vec<Disk> {
    let whole = cur.block.as_deref();
    // Every device's name, for the rare one the /sys/block listing does not know: built
    // only then (hashing 100 names a tick was 3 % of the default screen with 100 loops).
    let all: std::cell::OnceCell<HashSet<&str>> = std::cell::OnceCell::new();
    let names = || -> HashSet<&str> {
        if whole.is_some() {
            cur.disks.iter().map(|d| d.name.as_str()).collect()
        } else {
            HashSet::new()
        }
    };
    let mut out = Vec::with_capacity(cur.disks.len());
    for (i, c) in cur.disks.iter().enumerate() {
        // Devices with no I/O since boot (most loop and zram devices) first, before looking
        // the name up among the whole disks.
        if c.total_ios() == 0 {
            continue;
        }
        // One lookup: a listed device is whole, and has its settings.
        let queue = whole.and_then(|b| b.get(&c.name));
        let partition = queue.is_none() && !is_whole(&c.name, whole, all.get_or_init(names));
        if partition && !partitions {
            continue;
        }
        // An unchanged line has no I/O over any interval: only a moved device looks for its
        // lines' read times, and says so when they make its span longer than the tick's.
        let mut span_s = None;
        let cols = prev
            .zip(dt_s)
            .and_then(|(p, dt)| match before(p, i, c) {
                Before::Read(pc) if std::ptr::eq(pc, c.as_ref()) || pc == c.as_ref() => {
                    columns(pc, c, dt)
                }
                Before::Read(pc) => {
                    let own = device_dt(p, cur, &c.name, dt);
                    span_s = ((own - dt).abs() > 1e-3).then_some(own);
                    columns(pc, c, own)
                }
                Before::New => columns(&c.zeroed(), c, dt),
                Before::Unknown => None,
            })
            .unwrap_or_default();
        let queue = queue.cloned();
        out.push(Disk {
            name: c.name.clone(),
            dm_name: queue.as_ref().and_then(|q| q.dm_name.clone()),
            partition,
            in_flight: c.in_flight,
            queue,
            cols,
            span_s,
            saturation: Saturation::default(),
            latency: Timed::default(),
            lat_hist: None,
            ios_since_boot: c.total_ios(),
            drain: super::drain::Drain::default(),
        });
    }
    out
}

#[cfg(test)]
#[path = "disk_tests.rs"]
mod tests;
