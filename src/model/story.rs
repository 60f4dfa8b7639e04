//! Who did it, who suffers, and who took the memory: the parts of the verdict that name
//! processes (issue 50: the verdict said "what state" but not "who and whom", and the culprit,
//! the victim and the memory taker lived in tables each output chose whether to show).
//!
//! - **Culprits**: while something is wrong (see Victims), the commands that dirty pages
//!   fastest over the walk (`Model::commands`, which counts the processes that exited in the
//!   interval in full), and while a disk is saturated those that read from storage too, by
//!   the bytes a second they dirty and read; at least `CULPRIT_BYTES_PER_S` and
//!   `CULPRIT_SHARE` of the first, at most `MAX_NAMED`.
//! - **Victims**: the processes whose sync latency (fsync mean) or IO wait rose furthest
//!   above their own calm. `Calm` keeps each process's figures from steps where nothing was
//!   wrong (no domain past background, no throttled writer, no saturated disk) and writeback
//!   kept up with dirtying, on walks every view and mode makes (`learn`), never a figure that
//!   would itself make it a victim, and for `CALM_KEEP_MS` after the rows last listed it, so
//!   that every instance names the same victims. What it learns (kept to the file's 4
//!   decimals) it hands back (`take_due`) to the baselines file every instance shares
//!   (`parse::baselines`, `Step::learned`); a figure it never learnt itself it takes from
//!   that file (`seed`), for the same pid and comm listed there within `CALM_KEEP_MS` of the
//!   step, and the stored figure is the one compared with, its own only where none is
//!   stored: an instance started mid-incident names the victims, with the ratios and the
//!   early warning, of one that saw them calm, and a replay names those the live run named. A
//!   process seen calm by no instance is ranked by its figure alone and says so. pagewatch
//!   (this instance or another, `is_pagewatch`) is none. A culprit is no victim. On a step
//!   where only dirtying outran writeback (the first seconds of a flood, which the early
//!   warning reads), a victim must be `early::VICTIM_RATIO` times a calm it was seen in, and
//!   culprits are named only beside one.
//! - **The memory taker**: the process whose resident memory grew fastest while
//!   MemAvailable fell at `TAKER_BYTES_PER_S` or more (from its highest of the last
//!   `FALL_WINDOW_MS`, since the growth is the walk's), or tasks stalled in reclaim.
//! - **Why the thresholds moved**: the dirty threshold against the one at the last calm
//!   step, when it fell by `T_FALL` or more while MemAvailable fell at least half as far in
//!   proportion (a T that fell alone moved for another reason, a sysctl): "T 4.5G → 596M as
//!   MemAvailable fell 21.8G → 3.3G; pagewatch-eat[4242] took 19.6G". The last calm step is
//!   handed back too (`reference_due`, once it moved by `REFERENCE_MOVE`), and every instance
//!   tells the fall from the one stored in this boot (`seed_reference`), its own only where
//!   none is.
//!
//! Owns: `Calm` (learning the calm, handing it back, taking the stored one) and telling the
//! story (`Story` and its parts are the verdict's vocabulary, in `answers`). Must not touch:
//! I/O, the clock; the verdict's other answers (`verdict`), the rows themselves (`procs`,
//! `procs_memory`, `commands`).

use std::collections::BTreeMap;

use super::Model;
use super::answers::{Culprit, MemoryTaker, Story, Victim};
use super::dirty::State;
use crate::fmt::Bytes;
use crate::parse::baselines::{Process, Processes, Reference};

/// A command is a culprit from this many bytes dirtied a second.
const CULPRIT_BYTES_PER_S: f64 = 1024.0 * 1024.0;
/// A command is named beside the first culprit from this share of its rate.
const CULPRIT_SHARE: f64 = 0.1;
/// Culprits and victims named, each.
const MAX_NAMED: usize = 3;
/// A victim's figure must be at least this many times its calm...
const VICTIM_RATIO: f64 = 3.0;
/// ...or, never seen calm, at least this fsync mean, ms (ten times a 4 KiB fsync's 0.5 ms
/// on an idle virtio disk; the sync calls are timed only while something is wrong, so a
/// process's calm fsync is rarely known: in a throttled flood here a loop's fsyncs read
/// 2.7–26 ms a second: 10 ms named it in 16 of the 27 timed seconds, 5 ms in 26)...
const VICTIM_FSYNC_MS: f64 = 5.0;
/// ...or this IO wait, ms per second.
const VICTIM_IOWAIT_MS_PER_S: f64 = 200.0;
/// A process's calm is kept this long after the rows last listed it, ms (five learning
/// periods of the sync calls, `who::SYNC_LEARN_PERIOD_S`), another instance's as long after
/// it last listed it (`parse::baselines::PROCESS_KEEP_S`, 300 s)...
const CALM_KEEP_MS: i64 = crate::parse::baselines::PROCESS_KEEP_S * 1000;
/// ...for this many processes at most, the longest unlisted forgotten first.
const CALM_MAX: usize = 1_000;
/// The figures that make a process never seen calm a victim (fsync ms, IO wait ms/s): no
/// calm step teaches one as calm.
const ALONE: [f64; 2] = [VICTIM_FSYNC_MS, VICTIM_IOWAIT_MS_PER_S];
/// The calm figures below which a ratio means nothing: fsync ms and IO wait ms/s.
const CALM_FLOOR: [f64; 2] = [0.05, 1.0];
/// How far a calm figure moves towards a new calm reading.
const CALM_WEIGHT: f64 = 0.3;
/// The calm figures are handed back at most every this many steps (`take_due`), when one was
/// learnt for the first time or moved since last said: an instance started mid-incident
/// finds figures a few seconds old...
const SAY_EVERY: u32 = 5;
/// ...and every this many steps while any is known, so that the time they were last listed
/// stays recent in the file through an incident, when nothing is learnt.
const SAY_SEEN_EVERY: u32 = 60;
/// The last calm step's threshold or MemAvailable is handed back when either moved by this
/// share since last said (at idle they move by less, and the file is not written).
const REFERENCE_MOVE: f64 = 0.01;
/// Resident memory grows from this many bytes a second for a memory taker.
const TAKER_BYTES_PER_S: f64 = 16.0 * 1024.0 * 1024.0;
/// How far back a fall of MemAvailable counts for the memory taker, ms: the slowest process
/// walk's interval and then some (`source::procs`: 10 s while quiet).
const FALL_WINDOW_MS: i64 = 12_000;
/// The thresholds "moved" when they fell to this share of the calm step's or lower.
const T_FALL: f64 = 0.75;

/// Whether row `r` is pagewatch: this instance, or another one (its command name is this
/// one's, or `pagewatch`). A `record` running beside the screen fsyncs its file, and each
/// instance left out only itself: the screen named the recorder a victim (`pw-base[12814]
/// fsync 1.8 ms, 4x its calm 0.45 ms`) where the recorder named nobody.
fn is_pagewatch(m: &Model, r: &super::proc_row::ProcRow) -> bool {
    Some(r.pid) == m.own_pid || r.comm == "pagewatch" || m.own_comm.as_ref() == Some(&r.comm)
}

/// A process's calm figures (fsync mean ms, IO wait ms/s) as learnt and as last handed back,
/// and the time of the last step whose rows listed it, ms.
#[derive(Debug, Clone, Copy, Default)]
struct Known {
    calm: [Option<f64>; 2],
    said: [Option<f64>; 2],
    seen_ms: i64,
}

impl Known {
    /// A figure was learnt for the first time or moved since it was said.
    fn moved(&self) -> bool {
        self.said != self.calm
    }
}

/// A calm figure as the baselines file writes it (`parse::baselines::render`, 4 decimals), so
/// that an instance that reads it compares with the very figure this one does.
fn as_stored(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// What the story remembers between steps: each process's calm figures, and the dirty
/// threshold and MemAvailable at the last calm step.
#[derive(Debug, Clone, Default)]
pub struct Calm {
    /// Per process (pid, comm): calm fsync mean ms and IO wait ms/s, and when a walk last
    /// listed it.
    procs: BTreeMap<(u32, String), Known>,
    /// The calm figures stored by every instance (`seed`), for the figures not learnt here.
    stored: std::sync::Arc<Processes>,
    /// Steps since the calm figures were last handed back (`take_due`).
    unsaid_steps: u32,
    /// The dirty threshold (bytes) and MemAvailable (bytes) at the last calm step, its wall
    /// time (s), and the figures last handed back (`reference_due`).
    reference: Option<(f64, f64)>,
    reference_s: i64,
    said_reference: Option<(f64, f64)>,
    /// Steps since the last calm step was last handed back (`reference_due`).
    reference_unsaid: u32,
    /// The last calm step every instance stored (`seed`), for an instance that saw none.
    stored_reference: Option<Reference>,
    /// MemAvailable (bytes) of the steps of the last `FALL_WINDOW_MS`, with their times.
    recent_available: std::collections::VecDeque<(i64, f64)>,
}

impl Calm {
    /// Seeds the calm figures every instance stored (`parse::baselines`): a figure this run
    /// has not learnt for a process is the stored one of the same pid and comm, while that was
    /// listed within `CALM_KEEP_MS` of the step.
    pub fn seed(&mut self, stored: Processes) {
        self.stored = std::sync::Arc::new(stored);
    }

    /// Seeds the last calm step every instance stored (`parse::baselines::Reference`): the
    /// threshold the thresholds moved from, while this run has seen no calm step itself.
    pub fn seed_reference(&mut self, stored: Option<Reference>) {
        self.stored_reference = stored;
    }

    /// The last calm step this run saw, to store.
    #[must_use]
    pub fn learned_reference(&self) -> Option<Reference> {
        self.reference.map(|(t, a)| Reference {
            seen_s: self.reference_s,
            thresh_bytes: t.round(),
            available_bytes: a.round(),
        })
    }

    /// Called once a step: the last calm step (`learned_reference`) when its threshold or
    /// MemAvailable moved by `REFERENCE_MOVE` since last handed back, at most every
    /// `SAY_EVERY` steps (a step that moved it is handed back within them, incident or not).
    pub fn reference_due(&mut self) -> Option<Reference> {
        self.reference_unsaid = self.reference_unsaid.saturating_add(1);
        let (t, a) = self.reference?;
        if self.reference_unsaid < SAY_EVERY {
            return None;
        }
        let moved = self.said_reference.is_none_or(|(t0, a0)| {
            (t - t0).abs() > REFERENCE_MOVE * t0 || (a - a0).abs() > REFERENCE_MOVE * a0
        });
        if !moved {
            return None;
        }
        self.reference_unsaid = 0;
        self.said_reference = self.reference;
        self.learned_reference()
    }

    /// The calm figures this run learnt itself, stamped with when a walk last listed each
    /// process (s), to store.
    #[must_use]
    pub fn learned(&self) -> Processes {
        self.procs
            .iter()
            .filter(|(_, k)| k.calm != [None, None])
            .map(|(key, k)| {
                let p = Process {
                    calm: k.calm,
                    seen_s: k.seen_ms.div_euclid(1000),
                };
                (key.clone(), p)
            })
            .collect()
    }

    /// Called once a step: what it learnt (`learned`) when it is time to hand it back: at
    /// most every `SAY_EVERY` steps, when a figure was learnt or moved (`Known::moved`), or
    /// after `SAY_SEEN_EVERY` steps whatever moved.
    pub fn take_due(&mut self) -> Option<Processes> {
        self.unsaid_steps = self.unsaid_steps.saturating_add(1);
        if self.unsaid_steps < SAY_EVERY || self.procs.is_empty() {
            return None;
        }
        if self.unsaid_steps < SAY_SEEN_EVERY && !self.procs.values().any(Known::moved) {
            return None;
        }
        self.unsaid_steps = 0;
        for k in self.procs.values_mut() {
            k.said = k.calm;
        }
        Some(self.learned())
    }

    /// The story of `m`, and what it teaches about calm.
    /// `learn`: a calm step teaches the processes' calm figures (the walk is one every view
    /// and mode makes, `who::Gate::walks_for_what_happens`).
    pub fn tell(&mut self, m: &Model, learn: bool) -> Story {
        let calm = is_calm(m);
        // Only dirtying outruns writeback (below background, nothing throttled or saturated):
        // a process is a victim only far above a calm it was seen in (`early::VICTIM_RATIO`),
        // and the writers are named only beside one.
        let outrun_only = !calm && !troubled(m);
        // Writers are named when something is wrong: a build dirtying 20 MB/s on a calm
        // machine is no culprit of anything.
        let mut culprits = if calm { Vec::new() } else { culprits(m) };
        let victims = self.victims(m, &culprits, calm.then_some(learn), outrun_only);
        if outrun_only && victims.is_empty() {
            culprits.clear();
        }
        let available = m.memory.MemAvailable.map(|kb| kb as f64 * 1024.0);
        // Memory runs short: MemAvailable falls as fast as a taker must grow, or tasks stall
        // in reclaim (a page cache filling behind a writer wakes kswapd, and takes nothing).
        let fell = self.fell(m.time_ms, available);
        let reclaim = m.verdict.as_ref().is_some_and(|v| v.reclaim.stalls());
        let memory_taker = (fell || reclaim).then(|| memory_taker(m)).flatten();
        let thresh = thresh_bytes(m);
        let thresholds_moved =
            self.thresholds_moved(m.booted_ms, thresh, available, memory_taker.as_ref());
        if calm && let (Some(t), Some(a)) = (thresh, available) {
            self.reference = Some((t, a));
            self.reference_s = m.time_ms.div_euclid(1000);
        }
        Story {
            culprits,
            victims,
            memory_taker,
            thresholds_moved,
        }
    }

    /// Whether MemAvailable (`available`, now) fell at `TAKER_BYTES_PER_S` or faster from
    /// its highest of the last `FALL_WINDOW_MS`. A window, not the last interval: the memory
    /// rows' growth is over the process walk's interval (5 s), and an eater that took 4.4 GB
    /// in the seconds before a walk is seen growing at the walk, when MemAvailable already
    /// stands still (`who-memory.pwrec`).
    fn fell(&mut self, now_ms: i64, available: Option<f64>) -> bool {
        let recent = &mut self.recent_available;
        while recent
            .front()
            .is_some_and(|(t, _)| now_ms - t > FALL_WINDOW_MS)
        {
            recent.pop_front();
        }
        let Some(a) = available else {
            return false;
        };
        let fell = recent.iter().any(|&(t, before)| {
            let s = (now_ms - t) as f64 / 1000.0;
            s > 0.0 && (before - a) / s >= TAKER_BYTES_PER_S
        });
        recent.push_back((now_ms, a));
        fell
    }

    /// The victims of `m`; none on a calm step (`calm` is `Some`), which teaches the calm
    /// figures when it holds `true`. `strict`: only a figure `early::VICTIM_RATIO` times its
    /// calm makes a victim.
    fn victims(
        &mut self,
        m: &Model,
        culprits: &[Culprit],
        calm: Option<bool>,
        strict: bool,
    ) -> Vec<Victim> {
        let Some(rows) = &m.processes else {
            return Vec::new();
        };
        let mut out = Vec::new();
        // pagewatch is no victim: a recording's fsyncs wait behind a flood too.
        for r in rows.iter().filter(|r| !r.exited && !is_pagewatch(m, r)) {
            let now = [r.fsync_mean_ms, r.iowait_ms_per_s];
            let key = (r.pid, r.comm.clone());
            let entry = self.procs.entry(key).or_default();
            entry.seen_ms = m.time_ms;
            let known = &mut entry.calm;
            if let Some(learn) = calm {
                // A reading that would make a process never seen calm a victim is no calm
                // one: a flood's first second can read calm by the dirty counters while the
                // fsyncs already wait (a loop's 10.9 ms, learnt as its calm, kept it unnamed
                // through the whole flood).
                let calm_now = now
                    .into_iter()
                    .zip(ALONE)
                    .map(|(v, a)| v.filter(|v| *v < a));
                for (k, v) in known.iter_mut().zip(calm_now).filter(|_| learn) {
                    if let Some(v) = v {
                        *k = Some(as_stored(k.map_or(v, |c| c + (v - c) * CALM_WEIGHT)));
                    }
                }
                continue;
            }
            if culprits.iter().any(|c| c.comm == r.comm) {
                continue;
            }
            // The calm every instance stored (`seed`), else its own: instances learn in
            // windows of their own, and each against its own calm, a screen said `27x its calm
            // 0.40 ms` where one started later said `28x its calm 0.39 ms` in the same second.
            let theirs = stored_calm(&self.stored, r.pid, &r.comm, m.time_ms);
            let against = [theirs[0].or(known[0]), theirs[1].or(known[1])];
            if let Some(mut v) = victim(r.pid, &r.comm, now, against)
                .filter(|v| !strict || v.ratio.is_some_and(|x| x >= super::early::VICTIM_RATIO))
            {
                // Blocked in a sync wait behind a long drain: the drain is the reason.
                if r.wchan.as_deref().is_some_and(super::drain::sync_wait) {
                    v.waits_for = super::disk::longest_drain(&m.disks);
                }
                out.push(v);
            }
        }
        // A process is forgotten `CALM_KEEP_MS` after the rows last listed it, not at the
        // first rows without it: a walk that starts again lists no one (no rates yet), and a
        // quiet process drops out of the most active for a while. Either made batch forget
        // the calm fsync of a loop it had learnt, and name it "never seen calm" through a
        // flood where the processes view, walking throughout, had it.
        let now = m.time_ms;
        self.procs
            .retain(|_, k| k.calm != [None, None] && now - k.seen_ms <= CALM_KEEP_MS);
        while self.procs.len() > CALM_MAX {
            let oldest = self.procs.iter().min_by_key(|(_, k)| k.seen_ms);
            let Some(key) = oldest.map(|(key, _)| key.clone()) else {
                break;
            };
            self.procs.remove(&key);
        }
        out.sort_by(|a, b| score(b).total_cmp(&score(a)));
        out.truncate(MAX_NAMED);
        out
    }

    /// "T … → … as MemAvailable fell …" against the last calm step every instance stored,
    /// when it is of this boot (`booted_ms`), else this run's own: an instance started
    /// mid-incident tells what one that saw the calm tells, in the same figures.
    fn thresholds_moved(
        &self,
        booted_ms: i64,
        thresh: Option<f64>,
        available: Option<f64>,
        taker: Option<&MemoryTaker>,
    ) -> Option<String> {
        let stored = self
            .stored_reference
            .filter(|r| r.seen_s.saturating_mul(1000) >= booted_ms.saturating_sub(60_000))
            .map(|r| (r.thresh_bytes, r.available_bytes));
        let ((t0, a0), t, a) = (stored.or(self.reference)?, thresh?, available?);
        // MemAvailable must have fallen, in proportion, at least half as far as T: the
        // thresholds are a share of the dirtyable memory, which falls with it. A T that fell
        // alone moved for another reason (`vm.dirty_bytes` set to 64 MiB read "T 4.6G → 64.0M
        // as MemAvailable fell 23.0G → 23.0G").
        if t > t0 * T_FALL || a >= a0 || (a0 - a) / a0 < 0.5 * (t0 - t) / t0 {
            return None;
        }
        let taker = taker.map_or_else(String::new, |k| {
            format!(
                "; {}[{}] holds {}",
                k.comm,
                k.pid,
                Bytes(k.rss_bytes.unwrap_or(0) as f64)
            )
        });
        Some(format!(
            "T {} → {} as MemAvailable fell {} → {}{taker}",
            Bytes(t0),
            Bytes(t),
            Bytes(a0),
            Bytes(a)
        ))
    }
}

/// The calm figures stored for `pid` and `comm` (`Calm::seed`), when it was last listed
/// within `CALM_KEEP_MS` of `now_ms`.
fn stored_calm(stored: &Processes, pid: u32, comm: &str, now_ms: i64) -> [Option<f64>; 2] {
    if stored.is_empty() {
        return [None, None];
    }
    stored
        .get(&(pid, comm.to_owned()))
        .filter(|p| now_ms.abs_diff(p.seen_s.saturating_mul(1000)) <= CALM_KEEP_MS.unsigned_abs())
        .map_or([None, None], |p| p.calm)
}

/// Nothing is wrong (`troubled` is not) and writeback keeps up with dirtying
/// (`early::outrun_pages_per_s`): the first seconds of a flood, below background, are no
/// calm to learn from, and their victims are told (the early warning reads them). A first
/// step (no interval: no rates, no disk judged) is no calm step either: a screen started in
/// a flood took its first step for the calm one and told the thresholds' fall from it
/// (`T 1.6G → 1.1G as MemAvailable fell 7.8G`) where the others said `T 2.8G … 14.1G`.
fn is_calm(m: &Model) -> bool {
    m.interval_s.is_some() && !troubled(m) && super::early::outrun_pages_per_s(&m.dirty).is_none()
}

/// Something is wrong: a dirty domain past background, a throttled writer, or a saturated
/// disk.
fn troubled(m: &Model) -> bool {
    let below = |s: Option<State>| s.is_none_or(|s| s == State::BelowBackground);
    !(below(m.dirty.state)
        && m.domains.iter().all(|d| below(d.state))
        && m.throttled.is_empty()
        && !m.disks.iter().any(|d| d.saturation.saturated))
}

/// The commands dirtying at least `CULPRIT_BYTES_PER_S`, fastest first. While a disk is
/// saturated, the bytes they read from storage count beside those they dirty: its readers
/// load it as its writers do (a `fio --rw=randread` saturating vda at 345 MB/s, 46 deep, was
/// named by nobody).
fn culprits(m: &Model) -> Vec<Culprit> {
    let reads = m.disks.iter().any(|d| d.saturation.saturated);
    let moved = |c: &Culprit| c.dirtied_bytes_per_s + c.read_bytes_per_s.unwrap_or(0.0);
    let mut out: Vec<Culprit> = m
        .commands
        .iter()
        .flatten()
        .filter_map(|c| {
            let dirtied = c.dirtied_bytes_per_s.unwrap_or(0.0);
            let read = reads.then(|| c.read_bytes_per_s.unwrap_or(0.0));
            (dirtied + read.unwrap_or(0.0) >= CULPRIT_BYTES_PER_S).then(|| Culprit {
                comm: c.comm.clone(),
                pids: c.pids,
                dirtied_bytes_per_s: dirtied,
                read_bytes_per_s: read,
            })
        })
        .collect();
    out.sort_by(|a, b| moved(b).total_cmp(&moved(a)));
    let top = out.first().map_or(0.0, moved);
    out.retain(|c| moved(c) >= top * CULPRIT_SHARE);
    out.truncate(MAX_NAMED);
    out
}

/// The process's worse figure against its calm, when it is a victim.
fn victim(pid: u32, comm: &str, now: [Option<f64>; 2], calm: [Option<f64>; 2]) -> Option<Victim> {
    let names = ["fsync", "iowait"];
    let mut best: Option<Victim> = None;
    for i in 0..2 {
        let Some(v) = now[i] else { continue };
        let c = calm[i].map(|c| c.max(CALM_FLOOR[i]));
        let ratio = c.map(|c| v / c);
        let suffers = match ratio {
            Some(r) => r >= VICTIM_RATIO && v >= CALM_FLOOR[i] * VICTIM_RATIO,
            None => v >= ALONE[i],
        };
        let cand = Victim {
            pid,
            comm: comm.to_owned(),
            figure: names[i],
            value: v,
            calm: c,
            ratio,
            waits_for: None,
        };
        if suffers && best.as_ref().is_none_or(|b| score(&cand) > score(b)) {
            best = Some(cand);
        }
    }
    best
}

/// How far a victim is above its calm: its ratio, or, never seen calm, its figure over the
/// threshold that made it one (ranked after any with a ratio of the same size). The report
/// ranks its period's victims by it (`report::story`).
#[must_use]
pub fn score(v: &Victim) -> f64 {
    v.ratio.unwrap_or_else(|| {
        let alone = if v.figure == "fsync" {
            VICTIM_FSYNC_MS
        } else {
            VICTIM_IOWAIT_MS_PER_S
        };
        v.value / alone
    })
}

/// The process whose resident memory grows fastest, from `TAKER_BYTES_PER_S`.
fn memory_taker(m: &Model) -> Option<MemoryTaker> {
    m.processes_by_memory
        .iter()
        .flatten()
        .filter_map(|r| {
            let g = r.rss_growth_bytes_per_s?;
            (g >= TAKER_BYTES_PER_S).then(|| MemoryTaker {
                pid: r.pid,
                comm: r.comm.clone(),
                rss_bytes: r.rss_bytes,
                growth_bytes_per_s: g,
            })
        })
        .max_by(|a, b| a.growth_bytes_per_s.total_cmp(&b.growth_bytes_per_s))
}

/// The global dirty threshold in bytes: the kernel's where it reports it, else derived.
fn thresh_bytes(m: &Model) -> Option<f64> {
    let d = &m.dirty;
    d.thresh_pages
        .or(d.derived_thresh_pages)
        .map(|p| p as f64 * m.page_size as f64)
}

#[cfg(test)]
#[path = "story_tests.rs"]
mod tests;
