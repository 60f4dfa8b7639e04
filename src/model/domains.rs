//! Dirty domains: the global one (spec §1.2–§1.4), one per memory cgroup with dirty or
//! writeback pages of its own (spec §1.8), and per-device caps (spec §1.9). A writer runs
//! free only while it is under the freerun ceiling of every domain it is in, so the global
//! state line can say "below background" while a container's writers are throttled.
//!
//! Owns: `Domain` (the batch JSON `domains[]` schema), the memcg formulas (`memcg_avail`,
//! `memcg_limits`, `headroom`) and `most_constrained`. Must not touch: I/O; the global
//! thresholds themselves (`dirty`), the cgroups pane rows (`cgroups`).

use serde::Serialize;

use super::dirty::{self, Dirty, Limits, State};
use crate::parse::Snapshot;
use crate::parse::VmSysctl;
use crate::parse::bdi::{BdiLimits, WbStat};
use crate::parse::cgroup::{Group, Limit};

/// Which kind of domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The whole machine (`/proc/vmstat` thresholds).
    Global,
    /// A memory cgroup's own domain (cgroup v2 writeback).
    Memcg,
    /// A device whose cap is below 100 % or that is strictlimit (FUSE).
    Bdi,
}

/// One dirty domain. Pages; `None` where not known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Domain {
    /// `global`, `memcg` or `bdi`.
    pub kind: Kind,
    /// `/` for the global domain, the cgroup path for a memcg, `maj:min` for a BDI.
    pub path: String,
    /// The cgroup's inode (`WbCgIno`, the tracepoint's `cgroup_ino`); memcg only.
    pub cgroup_ino: Option<u64>,
    /// Dirtyable memory of the domain (global: §1.1; memcg: `mdtc_calc_avail()`; BDI: the
    /// global figure its cap is a share of).
    pub avail_pages: Option<u64>,
    /// The threshold (a BDI's: its cap, `max_ratio` of the global threshold).
    pub thresh_pages: Option<u64>,
    /// The background threshold.
    pub bg_thresh_pages: Option<u64>,
    /// (thresh + bg_thresh) / 2: writers are paced above this many dirty + writeback pages.
    pub freerun_pages: Option<u64>,
    /// Dirty pages (memcg: `file_dirty`; BDI: the wbs' reclaimable pages from wb_stats).
    pub dirty_pages: Option<u64>,
    /// Pages under writeback.
    pub writeback_pages: Option<u64>,
    /// memcg: how much the group may still grow, the least over it and its ancestors below
    /// the root of min(max, high) − current; `None` when no level has a limit.
    pub headroom_pages: Option<u64>,
    /// Where this domain stands over the interval: the sampled count's state, raised to
    /// "writers throttled" when writers were paced in it (`verdict::fold_dirty`).
    pub state: Option<State>,
    /// Where the sampled count stood against the thresholds at the read.
    pub sampled_state: Option<State>,
    /// The tracepoint's pauses of the writers this domain paced, ms per second summed;
    /// `None` while the tracepoint is not armed.
    pub throttled_by_tracepoint_ms_per_s: Option<f64>,
    /// Writers this domain paced over the interval (tracepoint or wchan, pagewatch aside).
    pub throttled_writers: usize,
    /// Of those, the ones only the walk's wchan saw in `balance_dirty_pages()`: no pause
    /// figure of theirs is in `throttled_by_tracepoint_ms_per_s`.
    pub wchan_writers: usize,
    /// The kernel's own threshold: global `nr_dirty_threshold`; memcg `WbDirtyThresh` of the
    /// cgroup's wb from debugfs `wb_stats` (kB → pages; the largest over devices); else null.
    pub kernel_thresh_pages: Option<u64>,
}

/// Writers paced in `balance_dirty_pages()`, worded so that a pause figure is only ever
/// beside the writers it sums: `paused` writers with a tracepoint pause (summed in
/// `pause_ms_per_s`) and `in_bdp` more that only the walk's wchan saw there.
/// `2 writers paused 908 ms/s`, `1 writer paused 68 ms/s, 1 more in balance_dirty_pages`,
/// `1 writer in balance_dirty_pages`; `None` when there are none.
#[must_use]
pub fn paced_phrase(paused: usize, pause_ms_per_s: Option<f64>, in_bdp: usize) -> Option<String> {
    let s = |n: usize| if n == 1 { "" } else { "s" };
    let pause = pause_ms_per_s.filter(|p| *p > 0.0);
    match (paused, pause, in_bdp) {
        (0, _, 0) => None,
        (0, _, w) => Some(format!("{w} writer{} in balance_dirty_pages", s(w))),
        (n, Some(p), 0) => Some(format!("{n} writer{} paused {p:.0} ms/s", s(n))),
        (n, Some(p), w) => Some(format!(
            "{n} writer{} paused {p:.0} ms/s, {w} more in balance_dirty_pages",
            s(n)
        )),
        (n, None, w) => Some(format!(
            "{} writer{} in balance_dirty_pages",
            n + w,
            s(n + w)
        )),
    }
}

impl Domain {
    /// Dirty + writeback pages.
    #[must_use]
    pub fn dirty_writeback(&self) -> Option<u64> {
        Some(self.dirty_pages?.saturating_add(self.writeback_pages?))
    }

    /// How the domain is named on screen: `global`, `cgroup /box`, `bdi 0:52`.
    #[must_use]
    pub fn label(&self) -> String {
        match self.kind {
            Kind::Global => "global".to_owned(),
            Kind::Memcg => format!("cgroup {}", self.path),
            Kind::Bdi => format!("bdi {}", self.path),
        }
    }

    /// What raised this domain's state above the sampled count's, when something did
    /// (`paced_phrase`): `2 writers paused 908 ms/s` (tracepoint; the pauses summed over the
    /// writers), `1 writer in balance_dirty_pages` (wchan), or both.
    #[must_use]
    pub fn raised_by(&self) -> Option<String> {
        if self.state == self.sampled_state {
            return None;
        }
        self.paced()
    }

    /// Why `below background` sits beside a d+wb count above the background threshold: the
    /// flusher is woken on `nr_dirty` alone, the throttle on dirty + writeback (spec §1.4).
    /// `nr_dirty 30.0M ≤ bg` then, else `None`.
    #[must_use]
    pub fn below_bg_note(&self, page_size: u64) -> Option<String> {
        let bg = self.bg_thresh_pages?;
        let dirty = self.dirty_pages?;
        (self.state == Some(State::BelowBackground) && self.dirty_writeback()? > bg && dirty <= bg)
            .then(|| format!("nr_dirty {} ≤ bg", crate::fmt::pages(dirty, page_size)))
    }

    /// The writers this domain paced, as `paced_phrase` words them; `None` when none.
    #[must_use]
    pub fn paced(&self) -> Option<String> {
        paced_phrase(
            self.throttled_writers.saturating_sub(self.wchan_writers),
            self.throttled_by_tracepoint_ms_per_s,
            self.wchan_writers,
        )
    }

    /// One line for the dirty pane: `cgroup /box: writers throttled (d+wb 61M > f 44M)`.
    #[must_use]
    pub fn summary(&self, page_size: u64) -> String {
        let state = self.state.map_or("unknown", State::label);
        match self.dirty_writeback().zip(self.freerun_pages) {
            Some((d, f)) => {
                let cmp = if d > f { '>' } else { '≤' };
                let (d, f) = (
                    crate::fmt::pages(d, page_size),
                    crate::fmt::pages(f, page_size),
                );
                format!("{}: {state} (d+wb {d} {cmp} f {f})", self.label())
            }
            None => format!("{}: {state}", self.label()),
        }
    }
}

/// The domain nearest its throttle point: the highest (dirty + writeback) / freerun.
#[must_use]
pub fn most_constrained(domains: &[Domain]) -> Option<&Domain> {
    domains
        .iter()
        .filter_map(|d| Some((nearness(d)?, d)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, d)| d)
}

/// (dirty + writeback) / freerun: how near the domain is its throttle point; `None` without
/// both figures or with a zero freerun.
fn nearness(d: &Domain) -> Option<f64> {
    let f = d.freerun_pages.filter(|f| *f > 0)?;
    Some(d.dirty_writeback()? as f64 / f as f64)
}

/// The domain in the most severe state over the interval (`verdict::fold_dirty`), the one
/// nearest its throttle point among equals.
#[must_use]
pub fn most_severe<'a>(domains: impl IntoIterator<Item = &'a Domain>) -> Option<&'a Domain> {
    let near = |d: &Domain| nearness(d).unwrap_or(0.0);
    domains
        .into_iter()
        .filter(|d| d.state.is_some())
        .max_by(|a, b| a.state.cmp(&b.state).then(near(a).total_cmp(&near(b))))
}

/// `mem_cgroup_wb_stats()`'s headroom (spec §1.8): over the group and each ancestor below
/// the root, min(max, high) − min(min(max, high), current); levels without a limit (`max`
/// in both files) or without a reading are skipped; `None` when no level counts.
#[must_use]
pub fn headroom<'a>(levels: impl IntoIterator<Item = &'a Group>, page_size: u64) -> Option<u64> {
    levels
        .into_iter()
        .filter_map(|g| {
            let cap = |l: Option<Limit>| match l {
                Some(Limit::Bytes(b)) => Some(b),
                _ => None,
            };
            let ceiling = match (cap(g.max), cap(g.high)) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => return None,
            } / page_size;
            let used = g.current? / page_size;
            Some(ceiling - ceiling.min(used))
        })
        .min()
}

/// `mdtc_calc_avail()` (spec §1.8): the memcg's file pages plus what it may still take,
/// bounded by the clean pages outside it. `m_dirty` is file_dirty + file_writeback;
/// `g_avail` the global dirtyable memory, `g_dirty` nr_dirty + nr_writeback.
#[must_use]
pub fn memcg_avail(
    filepages: u64,
    m_dirty: u64,
    headroom: Option<u64>,
    g_avail: u64,
    g_dirty: u64,
) -> u64 {
    let clean = filepages - filepages.min(m_dirty);
    let global_clean = g_avail - g_avail.min(g_dirty);
    let other_clean = global_clean - global_clean.min(clean);
    filepages.saturating_add(headroom.unwrap_or(u64::MAX).min(other_clean))
}

/// `domain_dirty_limits()` on a memcg domain (spec §1.8): the same per-PAGE_SIZE ratios as
/// the global domain, applied to `m_avail`; a `*_bytes` setting is first turned into such a
/// ratio against the *global* `g_avail` (`min(⌈bytes / g_avail⌉, PAGE_SIZE)`). A background
/// threshold ≥ the threshold becomes threshold / 2.
#[must_use]
pub fn memcg_limits(
    m_avail: u64,
    g_avail: u64,
    sysctl: &VmSysctl,
    page_size: u64,
) -> Option<Limits> {
    let per_page = |bytes: Option<u64>, ratio: Option<u64>| -> Option<u128> {
        match bytes {
            Some(b) if b > 0 => Some(u128::from(b.div_ceil(g_avail.max(1)).min(page_size))),
            _ => Some(u128::from(ratio?) * u128::from(page_size) / 100),
        }
    };
    let apply = |r: u128| {
        u64::try_from(r.saturating_mul(u128::from(m_avail)) / u128::from(page_size.max(1)))
            .unwrap_or(u64::MAX)
    };
    let thresh = apply(per_page(sysctl.dirty_bytes, sysctl.dirty_ratio)?).min(u64::from(u32::MAX));
    let mut bg_thresh = apply(per_page(
        sysctl.dirty_background_bytes,
        sysctl.dirty_background_ratio,
    )?);
    if bg_thresh >= thresh {
        bg_thresh = thresh / 2;
    }
    Some(Limits { thresh, bg_thresh })
}

/// Every domain of a sample: the global one first, then memcgs by path, then BDIs by name.
#[must_use]
pub fn derive(s: &Snapshot, d: &Dirty) -> Vec<Domain> {
    let mut out = vec![global(d)];
    let page = s.page_size.max(1);
    let g_avail = d.dirtyable_pages;
    let g_dirty = d.dirty_writeback_pages;
    // The scope's group (issue 54) has its domain whether or not it holds dirty pages.
    let scope = s.scope.as_ref().and_then(|x| x.path.as_deref());
    if let (Some(cg), Some(g_avail), Some(g_dirty)) = (&s.cgroups, g_avail, g_dirty) {
        for g in &cg.groups {
            let always = scope == Some(g.path.as_str());
            if let Some(dom) = memcg(s, g, &cg.groups, g_avail, g_dirty, page, always) {
                out.push(dom);
            }
        }
    }
    if let Some(bdis) = &s.bdis {
        out.extend(bdis.iter().filter_map(|b| bdi(s, d, b)));
    }
    out
}

fn global(d: &Dirty) -> Domain {
    let pair = |t: Option<u64>, b: Option<u64>| {
        t.zip(b)
            .map(|(thresh, bg_thresh)| Limits { thresh, bg_thresh })
    };
    let kernel = pair(d.thresh_pages, d.bg_thresh_pages);
    let derived = pair(d.derived_thresh_pages, d.derived_bg_thresh_pages);
    let l = if d.rt_reader {
        derived.or(kernel)
    } else {
        kernel.or(derived)
    };
    Domain {
        kind: Kind::Global,
        path: "/".to_owned(),
        cgroup_ino: None,
        avail_pages: d.dirtyable_pages,
        thresh_pages: l.map(|l| l.thresh),
        bg_thresh_pages: l.map(|l| l.bg_thresh),
        freerun_pages: d.freerun_pages,
        dirty_pages: d.nr_dirty,
        writeback_pages: d.nr_writeback,
        headroom_pages: None,
        state: d.state,
        sampled_state: d.state,
        throttled_by_tracepoint_ms_per_s: None,
        throttled_writers: 0,
        wchan_writers: 0,
        kernel_thresh_pages: d.thresh_pages,
    }
}

/// The group's own dirty + writeback pages: its (hierarchical) count less its children's.
fn own_dirty(g: &Group, groups: &[Group]) -> u64 {
    let dw = |g: &Group| {
        g.stat.map_or(0, |s| {
            s.file_dirty
                .unwrap_or(0)
                .saturating_add(s.file_writeback.unwrap_or(0))
        })
    };
    let prefix = format!("{}/", g.path);
    let kids: u64 = groups
        .iter()
        .filter(|c| {
            c.path
                .strip_prefix(&prefix)
                .is_some_and(|rest| !rest.contains('/'))
        })
        .map(dw)
        .fold(0, u64::saturating_add);
    dw(g).saturating_sub(kids)
}

fn memcg(
    s: &Snapshot,
    g: &Group,
    groups: &[Group],
    g_avail: u64,
    g_dirty: u64,
    page: u64,
    always: bool,
) -> Option<Domain> {
    let st = g.stat?;
    if !always && (g.path == "/" || own_dirty(g, groups) == 0) {
        return None;
    }
    let dirty = st.file_dirty? / page;
    let writeback = st.file_writeback? / page;
    let filepages = st.active_file?.saturating_add(st.inactive_file?) / page;
    let m_dirty = dirty.saturating_add(writeback);
    let levels = groups.iter().filter(|a| {
        a.path == g.path || (a.path != "/" && g.path.starts_with(&format!("{}/", a.path)))
    });
    let headroom = headroom(levels, page);
    let avail = memcg_avail(filepages, m_dirty, headroom, g_avail, g_dirty);
    let l = memcg_limits(avail, g_avail, &s.sysctl, page);
    Some(Domain {
        kind: Kind::Memcg,
        path: g.path.clone(),
        cgroup_ino: Some(g.ino),
        avail_pages: Some(avail),
        thresh_pages: l.map(|l| l.thresh),
        bg_thresh_pages: l.map(|l| l.bg_thresh),
        freerun_pages: l.map(dirty::freerun),
        dirty_pages: Some(dirty),
        writeback_pages: Some(writeback),
        headroom_pages: headroom,
        state: l.map(|l| dirty::state(dirty, m_dirty, l, None)),
        sampled_state: None,
        throttled_by_tracepoint_ms_per_s: None,
        throttled_writers: 0,
        wchan_writers: 0,
        kernel_thresh_pages: kernel_thresh(&s.wb_stats, g.ino, page),
    })
}

/// The largest `WbDirtyThresh` of the cgroup's wbs, in pages.
fn kernel_thresh(wb: &[(String, Vec<WbStat>)], ino: u64, page: u64) -> Option<u64> {
    wb.iter()
        .flat_map(|(_, blocks)| blocks)
        .filter(|b| b.cg_ino == ino)
        .filter_map(|b| b.dirty_thresh_kb)
        .max()
        .map(|kb| kb.saturating_mul(1024) / page)
}

/// A BDI with a cap below 100 % (`max_ratio_fine`, else `max_ratio`) or strictlimit: its cap
/// on the global thresholds (spec §1.9; the wb's exact share needs the kernel's writeout
/// fraction, which only debugfs shows). Dirty and writeback pages from wb_stats when read.
fn bdi(s: &Snapshot, d: &Dirty, b: &BdiLimits) -> Option<Domain> {
    let fine = b
        .max_ratio_fine
        .or(b.max_ratio.map(|r| r.saturating_mul(10_000)))?;
    if fine >= 1_000_000 && b.strict_limit != Some(true) {
        return None;
    }
    let page = s.page_size.max(1);
    let g = global(d);
    let cap = |t: u64| (u128::from(t) * u128::from(fine) / 1_000_000) as u64;
    let l = g.thresh_pages.zip(g.bg_thresh_pages).map(|(t, bg)| Limits {
        thresh: cap(t),
        bg_thresh: cap(bg),
    });
    let blocks = s
        .wb_stats
        .iter()
        .find(|(n, _)| *n == b.name)
        .map(|(_, w)| w);
    let sum = |f: fn(&WbStat) -> Option<u64>| {
        blocks.map(|w| {
            w.iter()
                .filter_map(f)
                .fold(0, u64::saturating_add)
                .saturating_mul(1024)
                / page
        })
    };
    let (dirty, writeback) = (sum(|w| w.reclaimable_kb), sum(|w| w.writeback_kb));
    Some(Domain {
        kind: Kind::Bdi,
        path: b.name.clone(),
        cgroup_ino: None,
        avail_pages: g.avail_pages,
        thresh_pages: l.map(|l| l.thresh),
        bg_thresh_pages: l.map(|l| l.bg_thresh),
        freerun_pages: l.map(dirty::freerun),
        dirty_pages: dirty,
        writeback_pages: writeback,
        headroom_pages: None,
        state: l
            .zip(dirty.zip(writeback))
            .map(|(l, (d, w))| dirty::state(d, d.saturating_add(w), l, None)),
        sampled_state: None,
        throttled_by_tracepoint_ms_per_s: None,
        throttled_writers: 0,
        wchan_writers: 0,
        kernel_thresh_pages: None,
    })
}

#[cfg(test)]
#[path = "domains_tests.rs"]
mod tests;
