//! The block events' records (`block:block_rq_insert`, `block_rq_issue`, `block_rq_complete`)
//! and their pairing into latencies, as blkparse pairs them: the completion carries no issue
//! time, so issue and completion are matched by (dev, sector) in user space.
//!
//! Owns: `BlkLayout` (where the fields are, from the three `format` files), decoding one
//! record (`BlkLayout::decode`), and `Pairer`, which merges the CPUs' events by timestamp,
//! times insert → issue (queue time) and issue → complete (device time) per device, reads and
//! writes apart, and ages out what cannot be paired. Pure: the source hands it the records.
//! Must not touch: tracefs, the pseudo-file's text (`parse::blk_lat`).
//!
//! Timestamps are the instance's `mono` trace clock (ns), comparable across CPUs (the default
//! `local` clock is per CPU). The CPUs are read one after the other, so a completion on one
//! CPU can be read before the issue on another CPU that preceded it (the issue was written
//! after that CPU was read): a completion without its issue waits for one more read before it
//! counts as unpaired; in the first read, a completion without its issue is of a request
//! issued before the events were enabled, and is not counted. An issue whose completion has
//! not come in `AGE_NS` is dropped and counted unpaired too (its completion was lost). A request issued again before its completion was requeued by a busy
//! driver: its device time runs from the last issue (6 s of vda here: 866 issues, 13 of them
//! again after a requeue). Flushes without data (no sector) are not paired; discards are
//! paired but fall in neither reads nor writes.

use std::collections::{BTreeMap, HashMap};

use super::blk_lat::DevLat;
use super::trace::TraceFormat;
use super::trace_raw::{Field, event_id};
use crate::sample::names;
use crate::{Error, Result};

/// An issue without its completion after this long (mono ns) is counted unpaired.
pub const AGE_NS: u64 = 30_000_000_000;

/// At most this many requests waiting for their issue or completion; past it the oldest go.
const MAX_PENDING: usize = 1 << 16;

/// What happened to the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Put in the scheduler's queue.
    Insert,
    /// Sent to the device driver.
    Issue,
    /// Completed by the device.
    Complete,
}

/// The request's direction, from its `rwbs` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// `R`.
    Read,
    /// `W`.
    Write,
    /// Discards, flushes and the rest.
    Other,
}

/// One decoded block event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlkEvent {
    /// Trace clock, ns.
    pub ts: u64,
    /// Which event.
    pub kind: Kind,
    /// `dev_t` as the events carry it (`major << 20 | minor`).
    pub dev: u32,
    /// First sector.
    pub sector: u64,
    /// Sectors (0 for a flush without data).
    pub nr_sector: u32,
    /// Direction.
    pub dir: Dir,
}

/// Where one event's fields are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EventLayout {
    id: u16,
    dev: Field,
    sector: Field,
    nr_sector: Field,
    /// `rwbs`: offset and size of the char array.
    rwbs: (usize, usize),
}

impl EventLayout {
    fn new(fmt: &TraceFormat) -> Result<Self> {
        let file = names::BLK_STATUS;
        let need = |n: &str| {
            Field::find(fmt, n)
                .ok_or_else(|| Error::parse(file, 0, format!("{}: no integer {n}", fmt.name)))
        };
        let id = fmt
            .id
            .and_then(|i| u16::try_from(i).ok())
            .ok_or_else(|| Error::parse(file, 0, format!("{}: no ID", fmt.name)))?;
        let rwbs = fmt
            .fields
            .iter()
            .find(|f| f.name == "rwbs" && f.size > 0)
            .ok_or_else(|| Error::parse(file, 0, format!("{}: no rwbs", fmt.name)))?;
        Ok(Self {
            id,
            dev: need("dev")?,
            sector: need("sector")?,
            nr_sector: need("nr_sector")?,
            rwbs: (rwbs.offset as usize, rwbs.size as usize),
        })
    }
}

/// One event's layout from its `format` text.
fn event_layout(text: &str) -> Result<EventLayout> {
    super::trace::parse_format(text).and_then(|f| EventLayout::new(&f))
}

/// The three events' layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlkLayout {
    /// `None`: queue time not asked for, the insert event not armed (issue 52).
    insert: Option<EventLayout>,
    issue: EventLayout,
    complete: EventLayout,
}

impl BlkLayout {
    /// From the `format` texts of `block_rq_insert`, `block_rq_issue`, `block_rq_complete`.
    pub fn new(insert: &str, issue: &str, complete: &str) -> Result<Self> {
        Ok(Self {
            insert: Some(event_layout(insert)?),
            ..Self::device_only(issue, complete)?
        })
    }

    /// Device time alone, from the `format` texts of `block_rq_issue` and
    /// `block_rq_complete`: no queue time, one event fewer a request.
    pub fn device_only(issue: &str, complete: &str) -> Result<Self> {
        Ok(Self {
            insert: None,
            issue: event_layout(issue)?,
            complete: event_layout(complete)?,
        })
    }

    /// Whether queue time is decoded (the insert event's layout is known).
    #[must_use]
    pub fn queue_time(&self) -> bool {
        self.insert.is_some()
    }

    /// One record (after the entry header) as an event; `None` for another event's record or
    /// a record shorter than its layout.
    #[must_use]
    pub fn decode(&self, rec: &[u8], ts: u64) -> Option<BlkEvent> {
        let id = event_id(rec)?;
        let (kind, l) = if id == self.issue.id {
            (Kind::Issue, &self.issue)
        } else if id == self.complete.id {
            (Kind::Complete, &self.complete)
        } else if let Some(l) = self.insert.as_ref().filter(|l| l.id == id) {
            (Kind::Insert, l)
        } else {
            return None;
        };
        let rwbs = rec.get(l.rwbs.0..l.rwbs.0 + l.rwbs.1)?;
        let rwbs = &rwbs[..rwbs.iter().position(|&b| b == 0).unwrap_or(rwbs.len())];
        Some(BlkEvent {
            ts,
            kind,
            dev: u32::try_from(l.dev.get_u64(rec)?).unwrap_or(u32::MAX),
            sector: l.sector.get_u64(rec)?,
            nr_sector: u32::try_from(l.nr_sector.get_u64(rec)?).unwrap_or(u32::MAX),
            dir: direction(rwbs),
        })
    }
}

/// A request's direction from `rwbs` (`R`, `RA`, `W`, `WS`, `FWFS`, `D`, `FF`, `N`).
#[must_use]
pub fn direction(rwbs: &[u8]) -> Dir {
    if rwbs.contains(&b'D') {
        Dir::Other
    } else if rwbs.contains(&b'W') {
        Dir::Write
    } else if rwbs.contains(&b'R') {
        Dir::Read
    } else {
        Dir::Other
    }
}

/// Pairs events across reads and sums each device's latencies until `take`.
#[derive(Debug, Default)]
pub struct Pairer {
    /// (dev, sector) → insert time.
    inserted: HashMap<(u32, u64), u64>,
    /// (dev, sector) → issue time and direction.
    issued: HashMap<(u32, u64), (u64, Dir)>,
    /// Completions of the last read without an issue: one more read to find it.
    waiting: Vec<BlkEvent>,
    /// The latest timestamp seen.
    now: u64,
    /// The merged events of a read (kept for its allocation).
    scratch: Vec<(BlkEvent, bool)>,
    /// Reads fed so far (the first one's lone completions are of requests issued before
    /// the events were enabled: not lost, not counted).
    reads: u64,
    acc: BTreeMap<u32, DevLat>,
}

impl Pairer {
    /// Feeds one read's events (every CPU's, in any order: they are sorted by timestamp
    /// here), and empties `events`.
    pub fn feed(&mut self, events: &mut Vec<BlkEvent>) {
        let mut all = std::mem::take(&mut self.scratch);
        all.clear();
        all.extend(events.drain(..).map(|e| (e, false)));
        all.extend(self.waiting.drain(..).map(|e| (e, true)));
        // Stable: a CPU's events keep their order at equal timestamps.
        all.sort_by_key(|(e, _)| e.ts);
        for &(e, retry) in &all {
            self.now = self.now.max(e.ts);
            let d = self.acc.entry(e.dev).or_insert_with(|| DevLat {
                dev: e.dev,
                ..DevLat::default()
            });
            if !retry {
                d.events += 1;
            }
            if e.nr_sector == 0 {
                continue;
            }
            let key = (e.dev, e.sector);
            match e.kind {
                Kind::Insert => {
                    self.inserted.insert(key, e.ts);
                }
                Kind::Issue => {
                    if let Some(t) = self.inserted.remove(&key)
                        && t <= e.ts
                    {
                        let us = (e.ts - t) / 1000;
                        match e.dir {
                            Dir::Read => d.read_queue.add(us),
                            Dir::Write => d.write_queue.add(us),
                            Dir::Other => {}
                        }
                    }
                    // Issued again before its completion: requeued (`block_rq_requeue`, the
                    // driver was busy). Its device time runs from the last issue.
                    self.issued.insert(key, (e.ts, e.dir));
                }
                Kind::Complete => match self.issued.remove(&key) {
                    Some((t, dir)) if t <= e.ts => {
                        let us = (e.ts - t) / 1000;
                        match dir {
                            Dir::Read => d.read_dev.add(us),
                            Dir::Write => d.write_dev.add(us),
                            Dir::Other => {}
                        }
                    }
                    _ if retry => d.unpaired += 1,
                    _ if self.reads == 0 => {}
                    _ => self.waiting.push(e),
                },
            }
        }
        self.scratch = all;
        self.reads += 1;
        self.age_out();
    }

    /// Drops issues older than `AGE_NS` (counted unpaired), inserts as old (not counted:
    /// their issue is what was lost, and the device time does not depend on them), and the
    /// oldest when either map holds more than `MAX_PENDING`.
    fn age_out(&mut self) {
        let oldest = self.now.saturating_sub(AGE_NS);
        let mut cut = oldest;
        if self.issued.len() > MAX_PENDING {
            let mut ts: Vec<u64> = self.issued.values().map(|v| v.0).collect();
            let k = ts.len() - MAX_PENDING / 2;
            cut = cut.max(*ts.select_nth_unstable(k).1);
        }
        let acc = &mut self.acc;
        self.issued.retain(|(dev, _), (t, _)| {
            let keep = *t >= cut;
            if !keep && let Some(d) = acc.get_mut(dev) {
                d.unpaired += 1;
            }
            keep
        });
        let mut cut = oldest;
        if self.inserted.len() > MAX_PENDING {
            let mut ts: Vec<u64> = self.inserted.values().copied().collect();
            let k = ts.len() - MAX_PENDING / 2;
            cut = cut.max(*ts.select_nth_unstable(k).1);
        }
        self.inserted.retain(|_, t| *t >= cut);
    }

    /// Forgets the requests waiting for their issue or completion, without counting them, and
    /// takes the next read's lone completions as of requests from before (as the first
    /// read's): for a change of the kernel's filter, under which some of them will never be
    /// seen complete, or were issued unseen.
    pub fn restart(&mut self) {
        self.inserted.clear();
        self.issued.clear();
        self.waiting.clear();
        self.reads = 0;
    }

    /// The latencies summed since the last `take`, one entry per device that had events
    /// (names left empty), and a fresh start of the sums (pending requests are kept).
    pub fn take(&mut self) -> Vec<DevLat> {
        std::mem::take(&mut self.acc).into_values().collect()
    }

    /// Gives back the buffers a flood grew past `keep` events (the merge buffer, the maps of
    /// pending requests), rather than keep them for every later read: a half-full buffer's
    /// wake before the sampling adapts holds tens of thousands of events (issue 52: RSS).
    /// Below that, the merge buffer follows `fit` (the caller's rule for a buffer kept from
    /// read to read; `malloc::fit`): the first reads after arming find thousands of events
    /// (40 bytes each), and at 0.1 s a read holds hundreds; the room of those first reads
    /// stayed resident (issue 52: 276 KB of a 492 KB block in the screen at ten minutes).
    pub fn trim(&mut self, keep: usize, fit: impl FnOnce(&mut Vec<(BlkEvent, bool)>)) {
        if self.scratch.capacity() > keep {
            self.scratch = Vec::new();
        }
        fit(&mut self.scratch);
        if self.inserted.capacity() > keep.max(2 * self.inserted.len()) {
            self.inserted.shrink_to(self.inserted.len());
        }
        if self.issued.capacity() > keep.max(2 * self.issued.len()) {
            self.issued.shrink_to(self.issued.len());
        }
    }

    /// Requests waiting for an issue or a completion (for tests and the status).
    #[must_use]
    pub fn pending(&self) -> usize {
        self.inserted.len() + self.issued.len() + self.waiting.len()
    }
}

#[cfg(test)]
#[path = "blk_pair_tests.rs"]
mod tests;
