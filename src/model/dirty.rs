//! Dirty-page thresholds: the kernel's live values, our own derivation from dirtyable memory
//! (spec §1.1–§1.2), the throttle-start (freerun) point (§1.4) and where the dirty count
//! stands against them.
//!
//! Owns: dirty derivation. Must not touch: I/O.

use serde::Serialize;

use super::rate;
use super::zones;
use crate::parse::{Snapshot, VmSysctl};

/// How a threshold is configured: `vm.dirty_*ratio` or `vm.dirty_*bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A fraction of dirtyable memory.
    Ratio,
    /// A fixed byte count (`*_bytes` ≠ 0 overrides the ratio).
    Bytes,
}

/// Where dirty memory stands (spec §1.4). Ordered from calm to severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// nr_dirty ≤ background threshold: the flusher is idle.
    BelowBackground,
    /// nr_dirty > background threshold: background writeback runs; writers are not paced.
    BackgroundFlushing,
    /// nr_dirty + nr_writeback > freerun ceiling: writers are paced in balance_dirty_pages().
    WritersThrottled,
    /// nr_dirty + nr_writeback ≥ the threshold T. Not "at the hard limit": the kernel's hard
    /// limit is max(T, dirty_limit), and dirty_limit decays towards T only while writers are
    /// throttled, so after T falls (memory taken) writers are paced, not stopped, for tens of
    /// seconds above it (spec §1.10). Only the tracepoint exports `limit`.
    OverThresh,
    /// The domain's dirty count reached the kernel's hard limit, max(T, dirty_limit), in the
    /// interval: the `writeback:balance_dirty_pages` tracepoint reported a writer of it
    /// stopped (`task_ratelimit` 0, the longest pause; spec §1.10, §7). Only with that
    /// tracepoint armed. Judged on the interval's events, not the sampled count: the count
    /// swings across the limit many times a second in a flood, so two instances reading it
    /// a few ms apart disagreed (`verdict::fold_dirty`). A recording made before the stops
    /// were counted compares its sampled count with the last global event's `limit`.
    AtHardLimit,
}

impl State {
    /// The plain state line shown to the user.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            State::BelowBackground => "below background",
            State::BackgroundFlushing => "background flushing",
            State::WritersThrottled => "writers throttled",
            State::OverThresh => "over thresh",
            State::AtHardLimit => "at hard limit",
        }
    }
}

/// The thresholds pair, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// `dirty_thresh`.
    pub thresh: u64,
    /// `dirty_background_thresh`.
    pub bg_thresh: u64,
}

/// `global_dirtyable_memory()` (spec §1.1), 64-bit (no highmem): pages.
#[must_use]
pub fn dirtyable(free: u64, file_lru: u64, totalreserve: u64) -> u64 {
    free - free.min(totalreserve) + file_lru + 1
}

/// `domain_dirty_limits()` (spec §1.2) for a task that is not RT/DL.
/// Ratios are applied per PAGE_SIZE in integer arithmetic; bytes (rounded up to pages)
/// override the ratio; a background threshold ≥ the threshold becomes threshold / 2.
/// The ≥ 6.10 cap of `thresh` at `u32::MAX` pages is applied before that rule.
#[must_use]
pub fn limits(avail: u64, sysctl: &VmSysctl, page_size: u64) -> Option<Limits> {
    let one = |bytes: Option<u64>, ratio: Option<u64>| -> Option<u64> {
        match bytes {
            Some(b) if b > 0 => Some(b.div_ceil(page_size)),
            _ => {
                let per_page = u128::from(ratio?) * u128::from(page_size) / 100;
                Some((per_page * u128::from(avail) / u128::from(page_size)) as u64)
            }
        }
    };
    let thresh = one(sysctl.dirty_bytes, sysctl.dirty_ratio)?.min(u64::from(u32::MAX));
    let mut bg_thresh = one(sysctl.dirty_background_bytes, sysctl.dirty_background_ratio)?;
    if bg_thresh >= thresh {
        bg_thresh = thresh / 2;
    }
    Some(Limits { thresh, bg_thresh })
}

/// `dirty_freerun_ceiling()`: throttling starts above this many dirty + writeback pages.
#[must_use]
pub fn freerun(l: Limits) -> u64 {
    u64::midpoint(l.thresh, l.bg_thresh)
}

/// Classifies the dirty count against the limits (spec §1.4); `kernel_limit` is the hard
/// limit the tracepoint reported for the global domain, when it did (spec §1.10).
#[must_use]
pub fn state(
    nr_dirty: u64,
    dirty_and_writeback: u64,
    l: Limits,
    kernel_limit: Option<u64>,
) -> State {
    if kernel_limit.is_some_and(|k| dirty_and_writeback >= k.max(l.thresh)) {
        State::AtHardLimit
    } else if dirty_and_writeback >= l.thresh {
        State::OverThresh
    } else if dirty_and_writeback > freerun(l) {
        State::WritersThrottled
    } else if nr_dirty > l.bg_thresh {
        State::BackgroundFlushing
    } else {
        State::BelowBackground
    }
}

fn mode(bytes: Option<u64>) -> Mode {
    if bytes.unwrap_or(0) > 0 {
        Mode::Bytes
    } else {
        Mode::Ratio
    }
}

/// Dirty and writeback figures for one sample. Pages unless named otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Dirty {
    /// The kernel's `nr_dirty_threshold`.
    pub thresh_pages: Option<u64>,
    /// The kernel's `nr_dirty_background_threshold`.
    pub bg_thresh_pages: Option<u64>,
    /// Our derivation of the threshold.
    pub derived_thresh_pages: Option<u64>,
    /// Our derivation of the background threshold.
    pub derived_bg_thresh_pages: Option<u64>,
    /// Throttle start: (thresh + bg_thresh) / 2, from the kernel's values when present.
    pub freerun_pages: Option<u64>,
    /// Dirtyable memory: free − min(free, totalreserve) + file LRU + 1.
    pub dirtyable_pages: Option<u64>,
    /// Rebuilt `totalreserve_pages`.
    pub totalreserve_pages: Option<u64>,
    /// `nr_dirty` (plus `nr_unstable` before 5.8).
    pub nr_dirty: Option<u64>,
    /// `nr_writeback`.
    pub nr_writeback: Option<u64>,
    /// nr_dirty + nr_writeback, the count compared with freerun and thresh.
    pub dirty_writeback_pages: Option<u64>,
    /// Pages dirtied per second.
    pub dirtied_per_s: Option<f64>,
    /// Pages whose writeback completed per second.
    pub written_per_s: Option<f64>,
    /// `vm.dirty_ratio` vs `vm.dirty_bytes`.
    pub thresh_mode: Option<Mode>,
    /// `vm.dirty_background_ratio` vs `vm.dirty_background_bytes`.
    pub bg_thresh_mode: Option<Mode>,
    /// Where the global domain stands over the interval: the sampled count's state, raised
    /// to "writers throttled" when writers were paced in it (`verdict::fold_dirty`).
    pub state: Option<State>,
    /// Where the sampled count stood at the read, before the interval's evidence.
    pub sampled_state: Option<State>,
    /// The kernel's hard limit of the global domain, max(thresh, dirty_limit), from the
    /// tracepoint's last global event of the interval (spec §1.10, §7); `None` when not armed
    /// or no writer was throttled.
    pub kernel_limit_pages: Option<u64>,
    /// The kernel's setpoint, (limit + freerun) / 2, from the same event.
    pub kernel_setpoint_pages: Option<u64>,
    /// Page size, so projections can be made from this struct alone.
    pub page_size: u64,
    /// pagewatch read vmstat from a real-time thread (`chrt`): the kernel's thresholds are
    /// boosted for it (thresh/4 + dirty_limit/32 more, spec §1.2), so they are not the ones
    /// writers see; the state is judged on the derived ones and no mismatch is claimed.
    pub rt_reader: bool,
}

impl Dirty {
    /// Derives dirty figures; rates need the previous snapshot and elapsed seconds.
    #[must_use]
    pub fn derive(prev: Option<&Snapshot>, s: &Snapshot, dt_s: Option<f64>) -> Self {
        let v = &s.vmstat;
        let kernel = v
            .nr_dirty_threshold
            .zip(v.nr_dirty_background_threshold)
            .map(|(thresh, bg_thresh)| Limits { thresh, bg_thresh });
        let reserve = s.zones.as_deref().map(zones::totalreserve);
        // Free pages from MemFree, not nr_free_pages (spec §1.7).
        let free = zones::free_pages(s);
        let file_lru = v.nr_active_file.zip(v.nr_inactive_file).map(|(a, i)| a + i);
        let avail = reserve.zip(file_lru).map(|(r, f)| dirtyable(free, f, r));
        let derived = avail.and_then(|a| limits(a, &s.sysctl, s.page_size));
        let nr_dirty = v.nr_dirty.map(|d| d + v.nr_unstable.unwrap_or(0));
        let both = nr_dirty.zip(v.nr_writeback).map(|(d, w)| d + w);
        let rt_reader = s.reader_rt == Some(true);
        let effective = if rt_reader {
            derived.or(kernel)
        } else {
            kernel.or(derived)
        };
        let pv = prev.map(|p| &p.vmstat);
        let kernel_hard = s.trace.as_ref().and_then(super::throttled::kernel_limit);
        // The interval's stops judge "at hard limit" (`verdict::fold_dirty`); only a recording
        // made before they were counted judges the sampled count against the limit.
        let instant_limit = kernel_hard.filter(|_| {
            s.trace
                .as_ref()
                .is_some_and(|t| !super::throttled::stops_counted(t))
        });
        let sampled = nr_dirty
            .zip(both)
            .zip(effective)
            .map(|((d, b), l)| state(d, b, l, instant_limit.map(|k| k.0)));
        Dirty {
            thresh_pages: kernel.map(|l| l.thresh),
            bg_thresh_pages: kernel.map(|l| l.bg_thresh),
            derived_thresh_pages: derived.map(|l| l.thresh),
            derived_bg_thresh_pages: derived.map(|l| l.bg_thresh),
            freerun_pages: effective.map(freerun),
            dirtyable_pages: avail,
            totalreserve_pages: reserve,
            nr_dirty,
            nr_writeback: v.nr_writeback,
            dirty_writeback_pages: both,
            dirtied_per_s: rate::per_sec(pv.and_then(|p| p.nr_dirtied), v.nr_dirtied, dt_s),
            written_per_s: rate::per_sec(pv.and_then(|p| p.nr_written), v.nr_written, dt_s),
            thresh_mode: s
                .sysctl
                .dirty_ratio
                .or(s.sysctl.dirty_bytes)
                .map(|_| mode(s.sysctl.dirty_bytes)),
            bg_thresh_mode: s
                .sysctl
                .dirty_background_ratio
                .or(s.sysctl.dirty_background_bytes)
                .map(|_| mode(s.sysctl.dirty_background_bytes)),
            state: sampled,
            sampled_state: sampled,
            kernel_limit_pages: kernel_hard.map(|k| k.0),
            kernel_setpoint_pages: kernel_hard.map(|k| k.1),
            page_size: s.page_size,
            rt_reader,
        }
    }

    /// The thresholds if `taken_pages` more memory were taken by applications: dirtyable
    /// memory shrinks page for page (free pages go first, then reclaimed file cache), and
    /// ratio-mode thresholds shrink with it. Bytes-mode thresholds do not move.
    #[must_use]
    pub fn project(&self, sysctl: &VmSysctl, taken_pages: u64) -> Option<Limits> {
        let avail = self.dirtyable_pages?.saturating_sub(taken_pages).max(1);
        limits(avail, sysctl, self.page_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(r: u64, bg: u64) -> VmSysctl {
        VmSysctl {
            dirty_ratio: Some(r),
            dirty_background_ratio: Some(bg),
            dirty_bytes: Some(0),
            dirty_background_bytes: Some(0),
            ..VmSysctl::default()
        }
    }

    #[test]
    fn spec_1_5_worked_example() {
        let avail = dirtyable(2_000_000, 1_500_000, 40_000);
        assert_eq!(avail, 3_460_001);
        let l = limits(avail, &ratio(20, 10), 4096).unwrap();
        assert_eq!(
            l,
            Limits {
                thresh: 691_831,
                bg_thresh: 345_493
            }
        );
        assert_eq!(freerun(l), 518_662);
    }

    #[test]
    fn spec_1_6_dev_vm() {
        let avail = dirtyable(5_982_935, 119_102, 32_578);
        assert_eq!(avail, 6_069_460);
        let l = limits(avail, &ratio(20, 10), 4096).unwrap();
        assert_eq!(
            (l.thresh, l.bg_thresh, freerun(l)),
            (1_213_595, 606_056, 909_825)
        );
    }

    #[test]
    fn bytes_override_and_bg_rule() {
        // dirty_bytes = 1 GiB, dirty_background_bytes = 2 GiB → bg ≥ thresh → thresh/2.
        let s = VmSysctl {
            dirty_ratio: Some(0),
            dirty_background_ratio: Some(0),
            dirty_bytes: Some(1 << 30),
            dirty_background_bytes: Some(2 << 30),
            ..VmSysctl::default()
        };
        let l = limits(3_460_001, &s, 4096).unwrap();
        assert_eq!(
            (l.thresh, l.bg_thresh, freerun(l)),
            (262_144, 131_072, 196_608)
        );
        // Bytes round up to whole pages.
        let s = VmSysctl {
            dirty_bytes: Some(8193),
            ..ratio(20, 10)
        };
        assert_eq!(limits(3_460_001, &s, 4096).unwrap().thresh, 3);
    }

    #[test]
    fn mixed_modes_and_free_below_reserve() {
        let s = VmSysctl {
            dirty_background_bytes: Some(4096 * 1000),
            ..ratio(20, 10)
        };
        let l = limits(3_460_001, &s, 4096).unwrap();
        assert_eq!((l.thresh, l.bg_thresh), (691_831, 1000));
        assert_eq!(dirtyable(100, 50, 1_000), 51);
    }

    #[test]
    fn states() {
        let l = Limits {
            thresh: 1000,
            bg_thresh: 500,
        };
        assert_eq!(state(100, 100, l, None), State::BelowBackground);
        assert_eq!(state(501, 600, l, None), State::BackgroundFlushing);
        assert_eq!(state(501, 750, l, None), State::BackgroundFlushing);
        assert_eq!(state(400, 751, l, None), State::WritersThrottled);
        assert_eq!(state(400, 1000, l, None), State::OverThresh);
        // The tracepoint's limit: dirty_limit still above T after T fell (spec §1.10).
        assert_eq!(state(400, 1100, l, Some(1200)), State::OverThresh);
        assert_eq!(state(400, 1200, l, Some(1200)), State::AtHardLimit);
        // The hard limit is never below T.
        assert_eq!(state(400, 999, l, Some(900)), State::WritersThrottled);
        assert_eq!(state(400, 1000, l, Some(900)), State::AtHardLimit);
    }

    #[test]
    fn projection_shrinks_ratio_thresholds_only() {
        let d = Dirty {
            dirtyable_pages: Some(3_460_001),
            page_size: 4096,
            ..Dirty::derive_empty()
        };
        let l = d.project(&ratio(20, 10), 1_000_000).unwrap();
        // 819 · 2 460 001 / 4096 = 491 880.08; 409 · 2 460 001 / 4096 = 245 639.75.
        assert_eq!((l.thresh, l.bg_thresh), (491_880, 245_639));
    }

    impl Dirty {
        fn derive_empty() -> Self {
            Dirty {
                thresh_pages: None,
                bg_thresh_pages: None,
                derived_thresh_pages: None,
                derived_bg_thresh_pages: None,
                freerun_pages: None,
                dirtyable_pages: None,
                totalreserve_pages: None,
                nr_dirty: None,
                nr_writeback: None,
                dirty_writeback_pages: None,
                dirtied_per_s: None,
                written_per_s: None,
                thresh_mode: None,
                bg_thresh_mode: None,
                state: None,
                sampled_state: None,
                kernel_limit_pages: None,
                kernel_setpoint_pages: None,
                page_size: 4096,
                rt_reader: false,
            }
        }
    }

    #[test]
    fn the_sampled_count_judges_the_hard_limit_only_in_a_recording_without_stops() {
        use crate::parse::trace::{Trace, TraceState, TraceStatus};
        use crate::parse::trace_writers::{WriterRow, Writers};
        let samples = crate::source::test_samples("live-idle");
        let mut snap = Snapshot::parse(&samples[1]).unwrap();
        let thresh = Dirty::derive(None, &snap, None).thresh_pages.unwrap();
        // The sampled count is at the kernel's limit (the last global event's).
        snap.vmstat.nr_dirty = Some(thresh);
        snap.vmstat.nr_writeback = Some(10);
        let with = |stopped| {
            let mut s = snap.clone();
            s.trace = Some(Trace {
                status: TraceStatus {
                    state: TraceState::Armed,
                    why: None,
                    pid: None,
                    tasks: Vec::new(),
                    bytes: 0,
                    capped: false,
                },
                format: None,
                writers: Writers {
                    rows: vec![WriterRow {
                        pid: 7,
                        bdi: "8:0".into(),
                        limit: thresh,
                        setpoint: thresh - 100,
                        stopped,
                        ..WriterRow::default()
                    }],
                    ..Writers::default()
                },
                error: None,
            });
            Dirty::derive(None, &s, None)
        };
        // Stops counted: the instant is "over thresh"; the interval's stops decide the rest.
        let d = with(Some(0));
        assert_eq!(d.sampled_state, Some(State::OverThresh));
        assert_eq!(d.kernel_limit_pages, Some(thresh));
        // A recording made before: the instant against the limit, as it was judged then.
        assert_eq!(with(None).sampled_state, Some(State::AtHardLimit));
    }

    #[test]
    fn an_rt_reader_is_not_a_mismatch_and_is_judged_on_the_derived_limits() {
        let samples = crate::source::test_samples("live-idle");
        let mut raw = samples[0].clone();
        // pagewatch's own sampler thread, under `chrt -f 10`: policy 1 in field 41.
        let mut stat = String::from("4242 (sampler) S");
        for field in 4..=45 {
            stat.push_str(if field == 41 { " 1" } else { " 0" });
        }
        raw.files
            .insert(crate::sample::names::READER_STAT.into(), stat + "\n");
        // The kernel's thresholds as the boost makes them: thresh + thresh/4 + limit/32.
        let mut snap = Snapshot::parse(&raw).unwrap();
        assert_eq!(snap.reader_rt, Some(true));
        let plain = Dirty::derive(None, &snap, None);
        let (t, b) = (plain.thresh_pages.unwrap(), plain.bg_thresh_pages.unwrap());
        snap.vmstat.nr_dirty_threshold = Some(t + t / 4 + t / 32);
        snap.vmstat.nr_dirty_background_threshold = Some(b + b / 4 + t / 32);
        let m = crate::model::Model::derive(None, &snap, crate::model::Options::default());
        assert!(m.dirty.rt_reader);
        assert!(
            !m.derived_differs(),
            "boosted figures are not a stale derivation"
        );
        assert_eq!(
            m.dirty.freerun_pages,
            Some(u64::midpoint(t, b)),
            "freerun from the derived limits"
        );
        // The same read from a normal thread is a mismatch, as before.
        snap.reader_rt = Some(false);
        let m = crate::model::Model::derive(None, &snap, crate::model::Options::default());
        assert!(m.derived_differs());
    }
}
