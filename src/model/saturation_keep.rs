//! What `Judge` knows beyond this run's calm samples: the baselines stored by earlier runs,
//! bound to a device by its identity (`bind`, `Judge::seed`), what this run learned handed back
//! to be stored (`Judge::take_due`, `Judge::learned`), and the evidence a device never seen
//! calm still gives (`deeper_than_seen`).
//!
//! - **Stored baselines.** A device's track takes the stored baselines of its identity
//!   (`QueueSettings::identity`, from sysfs) for every class it has none of its own, the first
//!   time a sample says what the device is. A name that another device takes (a loop device
//!   bound to another file, a disk swapped) starts a new track: a baseline is never carried
//!   across a device change. A device whose identity is unknown (older recordings, trees)
//!   uses only what this run sees.
//! - **Handing back.** Only the classes this run moved itself, of devices with an identity,
//!   and only when something moved: at once when a class is learned for the first time (so an
//!   instance started during a flood finds what one started before it saw), else every
//!   `SAY_EVERY` steps at most.
//! - **No calm sample.** Little's law: a queue is IOPS × await, so while a device keeps up a
//!   deeper queue brings more IOPS at the same await; when it cannot, the extra queue only
//!   waits. Against the shallowest queue (aqu-sz ≥ 1) this run saw the same direction and size
//!   class at, a queue `DEEPER` times as deep whose await rose ≥ 3× is saturated, ≥ 2× warns.
//!   That shallower await is no calm one (it already queued), so the ratio is at most the
//!   true one: it can miss saturation, never invent it.
//!
//! Owns: those rules. Must not touch: I/O (the state file is `source::baselines`).

use std::sync::Arc;

use super::{BASELINE_FLOOR_MS, DIRS, Judge, Load, SizeClass, Track};
use crate::parse::QueueSettings;
use crate::parse::baselines::{Device, Stored};

/// Handed back at most every this many steps, unless a class is learned for the first time.
const SAY_EVERY: u32 = 30;
/// A queue this many times as deep as the shallowest seen is compared with it.
const DEEPER: f64 = 4.0;

/// One sample of a direction at a queue: aqu-sz, that direction's await and IO/s.
#[derive(Debug, Clone, Copy)]
pub(super) struct Point {
    aqu: f64,
    await_ms: f64,
    ops: f64,
}

/// What the judge learned since it last handed its baselines back.
#[derive(Debug, Clone, Default)]
pub(super) struct Unsaid {
    changed: bool,
    new_class: bool,
    since: u32,
}

impl Unsaid {
    /// Notes a bound device's baselines before and after a step.
    pub(super) fn note(
        &mut self,
        before: &[[Option<f64>; SizeClass::COUNT]; 2],
        after: &[[Option<f64>; SizeClass::COUNT]; 2],
        bound: bool,
    ) {
        if !bound {
            return;
        }
        for (b, a) in before.iter().flatten().zip(after.iter().flatten()) {
            if b != a {
                self.changed = true;
                self.new_class |= b.is_none();
            }
        }
    }
}

/// Binds `t` to the device identity in `queue`, its settings (when the sample gives one): a
/// new identity under the name starts a new track; the stored baselines of the identity fill
/// the classes `t` has none of. The same shared settings as last time are the same identity.
pub(super) fn bind(t: &mut Track, queue: Option<&Arc<QueueSettings>>, stored: &Stored) {
    let Some(queue) = queue else { return };
    if t.bound.as_ref().is_some_and(|b| Arc::ptr_eq(b, queue)) {
        return;
    }
    let Some(id) = queue.identity.as_deref() else {
        return;
    };
    if t.identity.as_deref() == Some(id) {
        t.bound = Some(Arc::clone(queue));
        return;
    }
    if t.identity.is_some() {
        *t = Track::default();
    }
    t.identity = Some(id.to_owned());
    t.bound = Some(Arc::clone(queue));
    if let Some(d) = stored.devices.get(id) {
        fill(t, d);
    }
}

fn fill(t: &mut Track, d: &Device) {
    let theirs = d.baseline_ms.iter().flatten();
    for (mine, theirs) in t.baseline_ms.iter_mut().flatten().zip(theirs) {
        if mine.is_none() {
            *mine = *theirs;
        }
    }
    for (p, q) in t.peak_kb_s.iter_mut().zip(d.peak_kb_s) {
        *p = p.max(q);
    }
}

/// Notes the shallowest queue the main direction of `load` went through in its size class.
pub(super) fn saw(t: &mut Track, aqu: f64, load: &Load) {
    let Some(main) = load.main_dir() else { return };
    let Some(f) = load.flows[main].as_ref().filter(|_| aqu >= 1.0) else {
        return;
    };
    let slot = &mut t.shallow[main][f.class.0];
    if slot.is_none_or(|p| aqu < p.aqu) {
        *slot = Some(Point {
            aqu,
            await_ms: f.await_ms,
            ops: f.ops,
        });
    }
}

/// The level and evidence of a queue `DEEPER` times the shallowest this run saw the main
/// direction (`main`) at in its size class: ≥ 3× its await is saturated, ≥ 2× warns (see the
/// module doc). `None` without such a queue or such a rise.
pub(super) fn deeper_than_seen(
    t: &Track,
    main: usize,
    aqu: f64,
    load: &Load,
) -> Option<(u8, String)> {
    let f = load.flows[main].as_ref()?;
    let p = t.shallow[main][f.class.0]?;
    if aqu < DEEPER * p.aqu {
        return None;
    }
    let r = f.await_ms / p.await_ms.max(BASELINE_FLOOR_MS);
    let level = if r >= 3.0 { 2 } else { u8::from(r >= 2.0) };
    let column = ["r_await", "w_await"][main];
    let iops = if p.ops > 0.0 { f.ops / p.ops } else { 0.0 };
    (level > 0).then(|| {
        (
            level,
            format!(
                "queue {aqu:.1} deep, {column} {:.2} ms, {r:.1}x the {:.2} ms of {} {} at \
                 queue {:.1} this run, IOPS {iops:.1}x (Little's law: the deeper queue waited)",
                f.await_ms,
                p.await_ms,
                f.class.label(),
                DIRS[main],
                p.aqu,
            ),
        )
    })
}

/// How long another instance's "saturated" stands after it was written: three of the
/// writer's intervals, at least `VOUCH_MIN_S` (it writes every step while saturated).
const VOUCH_MIN_S: f64 = 3.0;

/// Whether another instance judges `t`'s device saturated at `now_s` (its mark in the state
/// file has not run out).
pub(super) fn vouched(t: &Track, stored: &Stored, now_s: Option<i64>) -> bool {
    let until = t
        .identity
        .as_deref()
        .and_then(|id| stored.devices.get(id))
        .and_then(|d| d.saturated_until_s);
    matches!((until, now_s), (Some(u), Some(n)) if n <= u)
}

impl Judge {
    /// The wall time (ms) of the step about to be judged, and its interval.
    pub fn at(&mut self, now_ms: i64, interval_s: Option<f64>) {
        self.now_s = Some(now_ms.div_euclid(1000));
        self.interval_s = interval_s;
    }

    /// Seeds the judge with stored baselines (`parse::baselines`), by device identity: each
    /// device takes those of its identity for the classes it has none of (`bind`). The
    /// processes' are `story::Calm`'s.
    pub fn seed(&mut self, stored: Stored) {
        for t in self.tracks.values_mut() {
            if let Some(d) = t.identity.as_deref().and_then(|id| stored.devices.get(id)) {
                fill(t, d);
            }
        }
        self.stored = std::sync::Arc::new(stored);
    }

    /// The baselines this run learned, by device identity: the classes it moved itself, of
    /// devices whose identity is known (`seen_s` 0: the caller stamps the time); and for
    /// each device it judges saturated, until when that stands (`vouched`).
    #[must_use]
    pub fn learned(&self) -> Stored {
        let mut out = Stored::default();
        let stands_s = (3.0 * self.interval_s.unwrap_or(1.0))
            .max(VOUCH_MIN_S)
            .ceil() as i64;
        // By name, so that two devices of one identity (two loop devices over one file)
        // always leave the same one's figures.
        let mut tracks: Vec<_> = self.tracks.iter().collect();
        tracks.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (_, t) in tracks {
            let Some(id) = &t.identity else { continue };
            let mut d = Device {
                peak_kb_s: t.peak_kb_s,
                saturated_until_s: self.now_s.filter(|_| t.saturated).map(|n| n + stands_s),
                ..Device::default()
            };
            for (dir, own) in t.own.iter().enumerate() {
                for (c, mine) in own.iter().enumerate() {
                    d.baseline_ms[dir][c] = t.baseline_ms[dir][c].filter(|_| *mine);
                }
            }
            if d.any() || d.saturated_until_s.is_some() {
                out.devices.insert(id.clone(), d);
            }
        }
        out
    }

    /// Called once a step: what it learned (`learned`) when it is time to hand it back (a
    /// class learned for the first time, or something moved and `SAY_EVERY` steps passed),
    /// and every step while it judges a device saturated (the other instances hold it too).
    pub fn take_due(&mut self) -> Option<Stored> {
        let saturated = self.now_s.is_some()
            && self
                .tracks
                .values()
                .any(|t| t.saturated && t.identity.is_some());
        let u = &mut self.unsaid;
        u.since = u.since.saturating_add(1);
        if !saturated && !(u.changed && (u.new_class || u.since >= SAY_EVERY)) {
            return None;
        }
        *u = Unsaid::default();
        Some(self.learned())
    }
}
