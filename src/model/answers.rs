//! The verdict's vocabulary: the answers one step gives (dirty state, saturated disks, worst
//! latency, reclaim, headline) and how sure each is. They sit below `Model`, which holds the
//! step's `Verdict`, and below `verdict`, which derives it from the `Model`; how each answer
//! is reached is `verdict`'s module doc.
//!
//! Owns: `Verdict`, `DirtyVerdict`, `ReclaimVerdict`, `ReclaimState`, `Latency`, `Sure`,
//! `LIMIT_STALL_PCT`, the early warning `Early`, and who and whom: `Story`, `Culprit`, `Victim`, `MemoryTaker` (told by
//! `story`). Must not touch: I/O, the clock, the `Model`.

use serde::Serialize;

use super::dirty::State;
use crate::fmt::Bytes;

/// Memory stalled for this share of the interval (PSI `some`, percent) makes cgroup limit
/// reclaim a headline: the same 1 % that starts the memory walk (`procs_memory`). Limit
/// reclaim of clean page cache is routine in a container at its limit and stalls far less.
pub const LIMIT_STALL_PCT: f64 = 1.0;

/// How an answer was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sure {
    /// From the kernel's own events over the whole interval (the tracepoint).
    Exact,
    /// From counters sampled at the read (or their rates over the interval).
    Sampled,
    /// From a task seen in a kernel function at one instant (wchan).
    Approximate,
}

/// The dirty-page answer: the most severe domain after folding in the interval's evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirtyVerdict {
    /// The state of `domain`; `None` when no domain had thresholds.
    pub state: Option<State>,
    /// The domain it is about, as on screen (`global`, `cgroup /box`, `bdi 0:52`).
    pub domain: String,
    /// How it was reached.
    pub sure: Sure,
    /// Throttled writers over the interval, all domains.
    pub writers: usize,
    /// Their pause, ms per second, summed (tracepoint rows only; `None` without any).
    pub pause_ms_per_s: Option<f64>,
    /// The evidence in one line.
    pub why: String,
    /// In a scope (issue 54): the host's global domain, as `host global: below background
    /// (…)`; `None` in the machine view.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// The worst latency of the interval, weighted by IOPS.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    /// Device name.
    pub device: String,
    /// `r_await`, `w_await` or `d_await`.
    pub column: &'static str,
    /// Milliseconds.
    pub await_ms: f64,
    /// That direction's IOs per second.
    pub ops_per_s: f64,
}

/// Who reclaims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReclaimState {
    /// Nobody: free memory above the watermarks and no scanning.
    None,
    /// kswapd scans in the background (or free is below the low watermark).
    Kswapd,
    /// Tasks reclaim at their cgroup's memory limit, in their own context.
    Cgroup,
    /// Allocating tasks reclaim themselves and stall.
    Direct,
}

/// The reclaim answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReclaimVerdict {
    /// Who reclaims.
    pub state: ReclaimState,
    /// How it was reached.
    pub sure: Sure,
    /// The evidence in one line.
    pub why: String,
    /// Memory PSI `some` over the interval, percent; `None` without PSI or a previous read.
    pub stall_pct: Option<f64>,
    /// Who stalled in reclaim in the interval, most time first (at most `RECLAIM_WHO`), while
    /// the reclaim tracer is armed (`model::reclaim_tasks`); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub who: Vec<super::reclaim_tasks::TaskRow>,
}

/// The reclaimers the verdict names.
pub const RECLAIM_WHO: usize = 3;

impl ReclaimVerdict {
    /// A `direct` answer that direct compaction alone gave (no direct reclaim in the
    /// interval): the verdict's why then opens with `direct compaction` (`verdict::direct_why`).
    #[must_use]
    pub fn compaction_only(&self) -> bool {
        self.state == ReclaimState::Direct && self.why.starts_with("direct compaction")
    }

    /// Whether this answer is headline news: direct reclaim always, cgroup limit reclaim when
    /// tasks stalled on memory for at least `LIMIT_STALL_PCT` of the interval. The screen's
    /// reclaim state, the batch text's `reclaim:` line and `/metrics` follow it.
    #[must_use]
    pub fn stalls(&self) -> bool {
        match self.state {
            ReclaimState::Direct => true,
            ReclaimState::Cgroup => self.stall_pct.is_some_and(|p| p >= LIMIT_STALL_PCT),
            ReclaimState::None | ReclaimState::Kswapd => false,
        }
    }

    /// cgroup limit reclaim that is headline news (`stalls`): what `/metrics` counts, the
    /// report's periods and the reclaim pane's red memcg figures.
    #[must_use]
    pub fn limit_stalls(&self) -> bool {
        self.state == ReclaimState::Cgroup && self.stalls()
    }
}

/// The headline answers of one step, with their evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Dirty pages and throttling.
    pub dirty: DirtyVerdict,
    /// Saturated devices, most queued first.
    pub saturated: Vec<String>,
    /// Why the first of them is saturated.
    pub saturation_why: Option<String>,
    /// When none is: the most queued device under load (aqu-sz ≥ 1) that nothing judges yet,
    /// and why (`vda: cannot judge yet: no calm baseline; queue 8, w_await 7.00 ms`); `None`
    /// (left out of JSON) otherwise. Said where "no disk saturated" would be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unjudged: Option<String>,
    /// The worst latency, weighted by IOPS; `None` without I/O.
    pub worst_latency: Option<Latency>,
    /// Reclaim.
    pub reclaim: ReclaimVerdict,
    /// fsync is slow because of an ext4 journal: the evidence (`below::Journal`); `None`
    /// otherwise.
    pub journal: Option<String>,
    /// A NUMA node past its dirty share, and where its page cache goes
    /// (`nodes::note`, spec §12); `None` (left out of JSON) otherwise and on a single node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Below freerun, trouble coming: a victim's fsync or a disk's await far above its calm
    /// while dirtying outruns writeback, and when freerun is reached at this rate (`early`);
    /// `None` otherwise.
    pub early: Option<Early>,
    /// Everything above in one line, worst first.
    pub headline: String,
    /// Who dirties, who suffers, who took the memory (`story`): `culprits`, `victims`,
    /// `memory_taker` and `thresholds_moved` beside the answers above in JSON.
    #[serde(flatten)]
    pub story: Story,
}

impl Verdict {
    /// The first saturated device and why, with how many more are: `vda: queue 137 deep
    /// (≥ 32), … (+1 more)`; `None` when none is. What the batch text's `saturated:` line and
    /// the disks pane's border say.
    #[must_use]
    pub fn saturation_line(&self) -> Option<String> {
        let why = self.saturation_why.as_deref()?;
        Some(match self.saturated.len().saturating_sub(1) {
            0 => why.to_owned(),
            more => format!("{why} (+{more} more)"),
        })
    }
}

/// The early warning (`early`): what rose, and how soon the writers will be throttled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Early {
    /// What rose, with its calm: `python3[4242] fsync 15.9 ms, 40x its calm 0.40 ms` or
    /// `vda await 7.00 ms, 14x its calm 0.50 ms`.
    pub what: String,
    /// Bytes a second dirtied beyond those written back.
    pub outrun_bytes_per_s: f64,
    /// Seconds until nr_dirty + nr_writeback reaches freerun at this rate; `None` when the
    /// freerun ceiling or the counts are not known.
    pub freerun_in_s: Option<f64>,
}

impl Early {
    /// The warning in one line, no semicolons (it sits inside the headline's parts):
    /// `early warning: python3[4242] fsync 15.9 ms, 40x its calm 0.40 ms, freerun in ≈ 4 s
    /// at +520M/s`.
    #[must_use]
    pub fn line(&self) -> String {
        format!("early warning: {}, {}", self.what, self.when())
    }

    /// How soon: `freerun in ≈ 4 s at +520M/s`, or without the counts `dirtying outruns
    /// writeback by +520M/s`.
    #[must_use]
    pub fn when(&self) -> String {
        let rate = format!("+{}/s", Bytes(self.outrun_bytes_per_s));
        match self.freerun_in_s {
            Some(s) if s < 10.0 => format!("freerun in ≈ {s:.1} s at {rate}"),
            Some(s) => format!("freerun in ≈ {s:.0} s at {rate}"),
            None => format!("dirtying outruns writeback by {rate}"),
        }
    }
}

/// A command that dirties pages, or, while a disk is saturated, reads from storage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Culprit {
    /// The command (`comm`).
    pub comm: String,
    /// Its processes over the walk, exited ones included.
    pub pids: usize,
    /// Bytes dirtied a second over the walk.
    pub dirtied_bytes_per_s: f64,
    /// Bytes read from storage a second over the walk, while a disk is saturated (its readers
    /// load it as its writers do); `None` otherwise, when reading is no part of the story.
    pub read_bytes_per_s: Option<f64>,
}

/// A process that suffers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Victim {
    /// Process id.
    pub pid: u32,
    /// Command.
    pub comm: String,
    /// Which figure rose: `fsync` (mean ms a call) or `iowait` (ms a second).
    pub figure: &'static str,
    /// The figure now.
    pub value: f64,
    /// The same process's calm figure; `None` when it was never seen calm.
    pub calm: Option<f64>,
    /// `value / calm`; `None` without a calm figure.
    pub ratio: Option<f64>,
    /// Blocked in a sync wait (sync, syncfs, fsync: `drain::sync_wait`) while a disk's
    /// waiting data takes long to drain: that disk's drain, the reason (spec §15.5):
    /// `vda: 2.0G to write, ~67 s at 30.5M/s (kernel)`. Left out of JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waits_for: Option<String>,
}

/// The process whose memory grew while memory ran short.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryTaker {
    /// Process id.
    pub pid: u32,
    /// Command.
    pub comm: String,
    /// Resident memory, bytes.
    pub rss_bytes: Option<u64>,
    /// Its growth, bytes a second.
    pub growth_bytes_per_s: f64,
}

/// Who and whom, for one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Story {
    /// Who dirties pages (and, while a disk is saturated, who reads from storage), the most
    /// bytes a second first.
    pub culprits: Vec<Culprit>,
    /// Who suffers, furthest above their calm first.
    pub victims: Vec<Victim>,
    /// Who took the memory, when memory ran short.
    pub memory_taker: Option<MemoryTaker>,
    /// Why the dirty thresholds moved, when they fell (see the module doc).
    pub thresholds_moved: Option<String>,
}

impl Story {
    /// The story in one line (`culprit fio ×2 dirtying 612M/s; victim python3[4242] fsync
    /// 15.9 ms, 40x its calm 0.40 ms; memory taker …`); `None` when it names nobody.
    #[must_use]
    pub fn line(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.culprits.is_empty() {
            let c: Vec<String> = self.culprits.iter().map(Culprit::text).collect();
            parts.push(format!("culprit {}", c.join(", ")));
        }
        if let Some(v) = self.victims.first() {
            parts.push(format!("victim {}", v.text()));
        }
        if let Some(t) = &self.memory_taker {
            parts.push(format!(
                "memory taker {}[{}] growing {}/s",
                t.comm,
                t.pid,
                Bytes(t.growth_bytes_per_s)
            ));
        }
        if let Some(t) = &self.thresholds_moved {
            parts.push(t.clone());
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

impl Culprit {
    fn text(&self) -> String {
        let n = if self.pids > 1 {
            format!(" ×{}", self.pids)
        } else {
            String::new()
        };
        let read = self.read_bytes_per_s.filter(|r| *r > 0.0);
        let mut what = Vec::new();
        if self.dirtied_bytes_per_s > 0.0 || read.is_none() {
            what.push(format!("dirtying {}/s", Bytes(self.dirtied_bytes_per_s)));
        }
        if let Some(r) = read {
            what.push(format!("reading {}/s", Bytes(r)));
        }
        format!("{}{n} {}", self.comm, what.join(", "))
    }
}

impl Victim {
    /// `python3[4242] fsync 15.9 ms, 40x its calm 0.40 ms`.
    #[must_use]
    pub fn text(&self) -> String {
        format!("{}[{}] {}", self.comm, self.pid, self.figures())
    }

    /// What rose, against its calm: `fsync 15.9 ms, 40x its calm 0.40 ms`, `IO wait
    /// 420.0 ms/s, never seen calm`. The story line's and the report's words.
    #[must_use]
    pub fn figures(&self) -> String {
        let (what, unit) = match self.figure {
            "fsync" => ("fsync", " ms"),
            _ => ("IO wait", " ms/s"),
        };
        let calm = match (self.calm, self.ratio) {
            (Some(c), Some(r)) => format!(", {r:.0}x its calm {c:.2}{unit}"),
            _ => ", never seen calm".to_owned(),
        };
        let waits = self
            .waits_for
            .as_ref()
            .map_or_else(String::new, |w| format!("; waits for {w}"));
        format!("{what} {:.1}{unit}{calm}{waits}", self.value)
    }
}
