//! Hand-computed from spec §1.8: ratio mode, bytes mode against the global avail, headroom
//! over the ancestors, `max` as no limit, high below max.

use super::*;
use crate::parse::cgroup::{Cgroups, MemoryStat, Status};

const MIB: u64 = 1 << 20;

fn ratio(r: u64, bg: u64) -> VmSysctl {
    VmSysctl {
        dirty_ratio: Some(r),
        dirty_background_ratio: Some(bg),
        dirty_bytes: Some(0),
        dirty_background_bytes: Some(0),
        ..VmSysctl::default()
    }
}

fn group(path: &str, max: Limit, high: Limit, current: u64) -> Group {
    Group {
        path: path.into(),
        max: Some(max),
        high: Some(high),
        current: Some(current),
        ..Group::default()
    }
}

#[test]
fn ratio_mode_at_memory_max_as_in_the_spec_lab_example() {
    // memory.current = memory.max = 300M: headroom 0, so m_avail = file pages = 73,911.
    let g = group("/box", Limit::Bytes(300 * MIB), Limit::Max, 300 * MIB);
    assert_eq!(headroom([&g], 4096), Some(0));
    let avail = memcg_avail(73_911, 20_000, Some(0), 200_000, 30_000);
    assert_eq!(avail, 73_911);
    let l = memcg_limits(avail, 200_000, &ratio(20, 10), 4096).unwrap();
    // 819 · 73,911 / 4096 = 14,778.6; 409 · 73,911 / 4096 = 7,380.3.
    assert_eq!(
        (l.thresh, l.bg_thresh, dirty::freerun(l)),
        (14_778, 7_380, 11_079)
    );
}

#[test]
fn avail_takes_the_headroom_bounded_by_other_clean_pages() {
    // clean = 10,000 − 4,000; global clean = 100,000 − 10,000 = 90,000; other clean 84,000.
    assert_eq!(
        memcg_avail(10_000, 4_000, Some(50_000), 100_000, 10_000),
        60_000
    );
    // Global clean 5,000 ≤ the group's own clean 6,000: nothing outside to take.
    assert_eq!(
        memcg_avail(10_000, 4_000, Some(50_000), 30_000, 25_000),
        10_000
    );
    // No limit anywhere: all the other clean pages.
    assert_eq!(memcg_avail(10_000, 4_000, None, 100_000, 10_000), 94_000);
    // More dirty than file pages (stats lag): clean clamps at 0.
    assert_eq!(memcg_avail(100, 400, Some(7), 1_000, 0), 107);
}

#[test]
fn bytes_mode_is_a_ratio_of_the_global_avail() {
    let s = VmSysctl {
        dirty_bytes: Some(64 * MIB),
        dirty_background_bytes: Some(32 * MIB),
        ..ratio(0, 0)
    };
    // ⌈67,108,864 / 200,000⌉ = 336 per 4096; ⌈33,554,432 / 200,000⌉ = 168.
    // 336 · 60,000 / 4096 = 4,921.9; 168 · 60,000 / 4096 = 2,460.9.
    let l = memcg_limits(60_000, 200_000, &s, 4096).unwrap();
    assert_eq!((l.thresh, l.bg_thresh), (4_921, 2_460));
    // The global domain in the same mode: 64M is 16,384 pages whatever avail is.
    assert_eq!(dirty::limits(200_000, &s, 4096).unwrap().thresh, 16_384);
    // A per-page ratio above PAGE_SIZE is capped at PAGE_SIZE (100 %), and bg ≥ thresh
    // becomes thresh / 2.
    let huge = VmSysctl {
        dirty_bytes: Some(10 << 30),
        dirty_background_bytes: Some(20 << 30),
        ..ratio(0, 0)
    };
    let l = memcg_limits(60_000, 1_000, &huge, 4096).unwrap();
    assert_eq!((l.thresh, l.bg_thresh), (60_000, 30_000));
}

#[test]
fn headroom_is_the_least_over_the_ancestors_and_max_is_no_limit() {
    // /a: 1 GiB max, 900 MiB used → 262,144 − 230,400 = 31,744 pages.
    let a = group("/a", Limit::Bytes(1024 * MIB), Limit::Max, 900 * MIB);
    // /a/b: no max, high 500 MiB, 100 MiB used → 128,000 − 25,600 = 102,400.
    let b = group("/a/b", Limit::Max, Limit::Bytes(500 * MIB), 100 * MIB);
    assert_eq!(headroom([&a, &b], 4096), Some(31_744));
    assert_eq!(headroom([&b], 4096), Some(102_400));
    // max and high both "max": that level has no limit; no level at all: None.
    let free = group("/c", Limit::Max, Limit::Max, 5 * MIB);
    assert_eq!(headroom([&free], 4096), None);
    assert_eq!(headroom([&free, &b], 4096), Some(102_400));
    // high below max: high is the ceiling. 200M − 60M = 140M = 35,840 pages.
    let h = group(
        "/h",
        Limit::Bytes(400 * MIB),
        Limit::Bytes(200 * MIB),
        60 * MIB,
    );
    assert_eq!(headroom([&h], 4096), Some(35_840));
    // Over its ceiling (current can pass high): 0, not an underflow.
    let over = group(
        "/o",
        Limit::Bytes(400 * MIB),
        Limit::Bytes(200 * MIB),
        250 * MIB,
    );
    assert_eq!(headroom([&over], 4096), Some(0));
}

fn stat(file_mib: u64, dirty_mib: u64, wb_mib: u64) -> MemoryStat {
    MemoryStat {
        active_file: Some(file_mib / 2 * MIB),
        inactive_file: Some(file_mib / 2 * MIB),
        file_dirty: Some(dirty_mib * MIB),
        file_writeback: Some(wb_mib * MIB),
        ..MemoryStat::default()
    }
}

#[test]
fn domains_of_a_sample_global_first_then_the_writing_group() {
    let raw = &crate::source::test_samples("live-idle")[0];
    let mut s = Snapshot::parse(raw).unwrap();
    s.sysctl = ratio(20, 10);
    let mut d = Dirty::derive(None, &s, None);
    d.dirtyable_pages = Some(200_000);
    d.dirty_writeback_pages = Some(30_000);
    // /sys holds /sys/db, which writes: /sys's pages are all /sys/db's, so only /sys/db is
    // a domain. /sys/db: 200M file pages, 40M dirty, 8M writeback, 300M max, 250M used.
    let parent = Group {
        ino: 40,
        stat: Some(stat(200, 40, 8)),
        ..group("/sys", Limit::Max, Limit::Max, 260 * MIB)
    };
    let db = Group {
        ino: 41,
        stat: Some(stat(200, 40, 8)),
        ..group("/sys/db", Limit::Bytes(300 * MIB), Limit::Max, 250 * MIB)
    };
    let idle = Group {
        ino: 42,
        stat: Some(stat(10, 0, 0)),
        ..group("/idle", Limit::Max, Limit::Max, 10 * MIB)
    };
    s.cgroups = Some(Cgroups {
        status: Status::Ok,
        full_walk: true,
        groups: vec![Group::default(), parent, db, idle],
    });
    s.wb_stats = vec![(
        "254:0".into(),
        vec![
            WbStat {
                cg_ino: 1,
                dirty_thresh_kb: Some(99),
                ..WbStat::default()
            },
            WbStat {
                cg_ino: 41,
                dirty_thresh_kb: Some(40_000),
                ..WbStat::default()
            },
        ],
    )];
    let doms = derive(&s, &d);
    assert_eq!(doms.len(), 2, "{doms:#?}");
    assert_eq!(doms[0].kind, Kind::Global);
    let m = &doms[1];
    assert_eq!(
        (m.kind, m.path.as_str(), m.cgroup_ino),
        (Kind::Memcg, "/sys/db", Some(41))
    );
    // filepages 51,200; m_dirty 10,240 + 2,048 = 12,288; headroom 50M = 12,800 pages;
    // clean 38,912; global clean 170,000; other clean 131,088 → avail 51,200 + 12,800.
    assert_eq!(m.headroom_pages, Some(12_800));
    assert_eq!(m.avail_pages, Some(64_000));
    // 819 · 64,000 / 4096 = 12,796.9; 409 · 64,000 / 4096 = 6,390.6; freerun 9,593.
    assert_eq!(
        (m.thresh_pages, m.bg_thresh_pages, m.freerun_pages),
        (Some(12_796), Some(6_390), Some(9_593))
    );
    assert_eq!(
        (m.dirty_pages, m.writeback_pages),
        (Some(10_240), Some(2_048))
    );
    // 12,288 > 9,593: throttled, while the idle global domain is not.
    assert_eq!(m.state, Some(State::WritersThrottled));
    assert_eq!(m.kernel_thresh_pages, Some(10_000), "40,000 kB in pages");
    assert_eq!(most_constrained(&doms).unwrap().path, "/sys/db");
    assert_eq!(
        most_constrained(&doms).unwrap().summary(4096),
        "cgroup /sys/db: writers throttled (d+wb 48.0M > f 37.5M)"
    );
}

#[test]
fn bdi_caps_below_100_percent_and_strictlimit() {
    let raw = &crate::source::test_samples("live-idle")[0];
    let mut s = Snapshot::parse(raw).unwrap();
    let mut d = Dirty::derive(None, &s, None);
    d.thresh_pages = Some(100_000);
    d.bg_thresh_pages = Some(50_000);
    let lim = |name: &str, fine: Option<u64>, ratio: u64, strict: Option<bool>| BdiLimits {
        name: name.into(),
        min_ratio: Some(0),
        max_ratio: Some(ratio),
        max_ratio_fine: fine,
        max_bytes: None,
        strict_limit: strict,
    };
    s.bdis = Some(
        vec![
            lim("254:0", Some(1_000_000), 100, Some(false)),
            lim("0:52", Some(10_000), 1, Some(true)),
            lim("8:0", None, 40, None),
        ]
        .into(),
    );
    s.wb_stats = vec![(
        "0:52".into(),
        vec![WbStat {
            cg_ino: 1,
            reclaimable_kb: Some(4_000),
            writeback_kb: Some(0),
            ..WbStat::default()
        }],
    )];
    let doms = derive(&s, &d);
    let b: Vec<(&str, Option<u64>, Option<u64>)> = doms[1..]
        .iter()
        .map(|x| (x.path.as_str(), x.thresh_pages, x.dirty_pages))
        .collect();
    // 1 % of 100,000 = 1,000 (bg 500, freerun 750); 40 % = 40,000. 4,000 kB = 1,000 pages.
    assert_eq!(
        b,
        [
            ("0:52", Some(1_000), Some(1_000)),
            ("8:0", Some(40_000), None)
        ]
    );
    assert_eq!(doms[1].state, Some(State::OverThresh));
    assert_eq!(doms[2].state, None, "no dirty count without wb_stats");
}

#[test]
fn paced_writers_are_worded_with_the_figure_beside_the_writers_it_sums() {
    assert_eq!(paced_phrase(0, Some(0.0), 0), None);
    assert_eq!(paced_phrase(0, None, 0), None);
    assert_eq!(
        paced_phrase(2, Some(907.6), 0).as_deref(),
        Some("2 writers paused 908 ms/s")
    );
    assert_eq!(
        paced_phrase(1, Some(67.7), 1).as_deref(),
        Some("1 writer paused 68 ms/s, 1 more in balance_dirty_pages")
    );
    assert_eq!(
        paced_phrase(0, Some(0.0), 3).as_deref(),
        Some("3 writers in balance_dirty_pages")
    );
    // Not armed (no figure) or no positive pause: every writer is in balance_dirty_pages.
    assert_eq!(
        paced_phrase(1, None, 1).as_deref(),
        Some("2 writers in balance_dirty_pages")
    );
}

#[test]
fn below_background_under_a_larger_dirty_and_writeback_count_says_why() {
    // Seen live: d+wb 38.0M over bg 32.0M and "below background": nr_dirty alone wakes the
    // flusher (spec §1.4), and it was under bg.
    let mib = |m: u64| m * 256; // pages of 4 KiB
    let mut d = global(&Dirty {
        thresh_pages: Some(mib(64)),
        bg_thresh_pages: Some(mib(32)),
        freerun_pages: Some(mib(48)),
        nr_dirty: Some(mib(30)),
        nr_writeback: Some(mib(8)),
        state: Some(State::BelowBackground),
        ..Dirty::default()
    });
    assert_eq!(
        d.below_bg_note(4096).as_deref(),
        Some("nr_dirty 30.0M ≤ bg")
    );
    // d+wb within bg: the columns already agree, nothing to say.
    d.writeback_pages = Some(mib(2));
    assert_eq!(d.below_bg_note(4096), None);
    // Flushing: the state itself says it.
    d.writeback_pages = Some(mib(8));
    d.state = Some(State::BackgroundFlushing);
    assert_eq!(d.below_bg_note(4096), None);
}
