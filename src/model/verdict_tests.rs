use super::*;
use crate::model::Disk;
use crate::model::disk::Columns;
use crate::model::domains::Domain;
use crate::model::throttled::Tracer;
use crate::parse::trace::TraceState;

/// The idle tree's second record, with a global domain (thresh 16384, bg 8192, freerun
/// 12288) and a memcg domain `/box` (inode 42: thresh 4000, bg 2000, freerun 3000), both
/// sampled below background, the tracepoint armed with no rows yet.
fn model() -> Model {
    let s = crate::source::test_samples("live-idle");
    let a = crate::parse::Snapshot::parse(&s[0]).unwrap();
    let b = crate::parse::Snapshot::parse(&s[1]).unwrap();
    let mut m = Model::derive(Some(&a), &b, crate::model::Options::default());
    let dom = |kind, path: &str, ino, thresh: u64, dirty| Domain {
        kind,
        path: path.into(),
        cgroup_ino: ino,
        avail_pages: None,
        thresh_pages: Some(thresh),
        bg_thresh_pages: Some(thresh / 2),
        freerun_pages: Some(u64::midpoint(thresh, thresh / 2)),
        dirty_pages: Some(dirty),
        writeback_pages: Some(0),
        headroom_pages: None,
        state: Some(State::BelowBackground),
        sampled_state: Some(State::BelowBackground),
        throttled_by_tracepoint_ms_per_s: None,
        throttled_writers: 0,
        wchan_writers: 0,
        kernel_thresh_pages: None,
    };
    m.domains = vec![
        dom(Kind::Global, "/", None, 16384, 1000),
        dom(Kind::Memcg, "/box", Some(42), 4000, 500),
    ];
    m.dirty.state = Some(State::BelowBackground);
    m.tracer = Some(Tracer {
        state: TraceState::Armed,
        why: None,
        events: 0,
        lost: 0,
        capped: false,
        error: None,
    });
    m.throttled.clear();
    m
}

/// A tracepoint row: the kernel's `limit` and `setpoint` give its domain's freerun as
/// 2·setpoint − limit (spec §7).
fn tp(pid: u32, ino: u64, limit: u64, freerun: u64, pause: f64) -> Throttled {
    Throttled {
        cgroup_ino: Some(ino),
        limit_pages: Some(limit),
        setpoint_pages: Some(u64::midpoint(limit, freerun)),
        pause_ms_per_s: Some(pause),
        ..Throttled::new(pid, "dd", ThrottleSource::Tracepoint)
    }
}

#[test]
fn paused_writers_raise_the_domain_that_paced_them() {
    let mut m = model();
    // /box's writer on a kernel that reports the global limit (16384) with /box's freerun
    // (3000): setpoint (16384 + 3000) / 2 = 9692, and 2·9692 − 16384 = 3000 → /box.
    // A root-group writer: setpoint (16384 + 12288) / 2 = 14336 → 12288 → global.
    m.throttled = vec![tp(7, 42, 16384, 3000, 848.0), tp(8, 1, 16384, 12288, 200.0)];
    fold_dirty(&mut m);
    let (g, b) = (&m.domains[0], &m.domains[1]);
    assert_eq!(g.state, Some(State::WritersThrottled));
    assert_eq!(g.sampled_state, Some(State::BelowBackground));
    assert_eq!(b.state, Some(State::WritersThrottled));
    assert_eq!(g.throttled_by_tracepoint_ms_per_s, Some(200.0));
    assert_eq!(b.throttled_by_tracepoint_ms_per_s, Some(848.0));
    assert_eq!((g.throttled_writers, b.throttled_writers), (1, 1));
    assert_eq!(m.dirty.state, Some(State::WritersThrottled));
    assert_eq!(m.dirty.sampled_state, Some(State::BelowBackground));
    // The /box row carries /box's limit, the kernel's own figure beside it.
    let r = &m.throttled[0];
    assert_eq!(r.domain.as_deref(), Some("/box"));
    assert_eq!(
        (r.limit_pages, r.kernel_limit_pages),
        (Some(4000), Some(16384))
    );
    let r = &m.throttled[1];
    assert_eq!(r.domain.as_deref(), Some("/"));
    assert_eq!((r.limit_pages, r.kernel_limit_pages), (Some(16384), None));
    let v = derive(&m);
    assert_eq!(v.dirty.state, Some(State::WritersThrottled));
    assert_eq!(v.dirty.sure, Sure::Exact);
    assert_eq!(v.dirty.pause_ms_per_s, Some(1048.0));
    assert!(v.headline.contains("writers throttled"), "{}", v.headline);
}

#[test]
fn a_writer_the_kernel_stopped_puts_its_domain_at_the_hard_limit() {
    let mut m = model();
    // The global writer was stopped 3 times (task_ratelimit 0), /box's only paced: the
    // global domain reached its hard limit in the interval, whatever the count read at the
    // sample (1000 pages, below background).
    let mut stopped = tp(8, 1, 16384, 12288, 200.0);
    stopped.stopped = Some(3);
    let mut paced = tp(7, 42, 16384, 3000, 100.0);
    paced.stopped = Some(0);
    m.throttled = vec![stopped, paced];
    fold_dirty(&mut m);
    assert_eq!(m.domains[0].state, Some(State::AtHardLimit));
    assert_eq!(m.domains[0].sampled_state, Some(State::BelowBackground));
    assert_eq!(m.domains[1].state, Some(State::WritersThrottled));
    assert_eq!(m.dirty.state, Some(State::AtHardLimit));
    let v = derive(&m);
    assert_eq!(v.dirty.state, Some(State::AtHardLimit));
    assert!(
        v.dirty
            .why
            .contains("(tracepoint), stopped at the hard limit 3 times;"),
        "{}",
        v.dirty.why
    );
    // pagewatch's own stops raise nothing.
    let mut m = model();
    let mut me = tp(9, 1, 16384, 12288, 50.0);
    (me.stopped, me.is_self) = (Some(5), true);
    m.throttled = vec![me];
    fold_dirty(&mut m);
    assert_eq!(m.dirty.state, Some(State::BelowBackground));
}

#[test]
fn a_container_writer_paced_by_the_global_domain_counts_there() {
    let mut m = model();
    // In /box (inode 42) but the kernel's freerun is the global one (after the fix, limit
    // and setpoint are the throttling domain's: still 2·setpoint − limit = freerun).
    m.throttled = vec![tp(7, 42, 16500, 12288, 100.0)];
    fold_dirty(&mut m);
    assert_eq!(m.domains[0].state, Some(State::WritersThrottled));
    assert_eq!(m.domains[1].state, Some(State::BelowBackground));
    assert_eq!(m.throttled[0].domain.as_deref(), Some("/"));
    assert_eq!(m.throttled[0].limit_pages, Some(16500));
}

#[test]
fn pagewatch_itself_and_unarmed_tracers_raise_nothing() {
    let mut m = model();
    let mut me = tp(9, 1, 16384, 12288, 50.0);
    me.is_self = true;
    m.throttled = vec![me];
    fold_dirty(&mut m);
    assert_eq!(m.dirty.state, Some(State::BelowBackground));
    assert_eq!(m.domains[0].throttled_by_tracepoint_ms_per_s, Some(50.0));
    assert_eq!(derive(&m).dirty.writers, 0);
    // Not armed: no tracepoint figure at all, and no raise without rows.
    let mut m = model();
    m.tracer = None;
    fold_dirty(&mut m);
    assert_eq!(m.domains[0].throttled_by_tracepoint_ms_per_s, None);
    assert_eq!(m.dirty.state, Some(State::BelowBackground));
    let v = derive(&m);
    assert_eq!(v.dirty.sure, Sure::Sampled);
    assert!(v.dirty.why.contains("sampled d+wb"), "{}", v.dirty.why);
}

#[test]
fn a_wchan_writer_is_throttled_too_in_its_container_only_when_that_domain_is_busy() {
    let mut m = model();
    let w = Throttled {
        cgroup: Some("/box".into()),
        ..Throttled::new(5, "dd", ThrottleSource::Wchan)
    };
    m.throttled = vec![w.clone()];
    fold_dirty(&mut m);
    assert_eq!(m.throttled[0].domain.as_deref(), Some("/"), "/box is calm");
    assert_eq!(m.dirty.state, Some(State::WritersThrottled));
    assert_eq!(derive(&m).dirty.sure, Sure::Approximate);
    let mut m = model();
    m.domains[1].state = Some(State::BackgroundFlushing);
    m.throttled = vec![w];
    fold_dirty(&mut m);
    assert_eq!(m.throttled[0].domain.as_deref(), Some("/box"));
    assert_eq!(m.domains[1].state, Some(State::WritersThrottled));
    assert_eq!(m.dirty.state, Some(State::BelowBackground));
    let v = derive(&m);
    assert_eq!(v.dirty.domain, "cgroup /box");
}

#[test]
fn a_pause_figure_sums_only_the_writers_beside_it() {
    // Seen live: two fio writers, one with 67.7 ms/s from the tracepoint, the other only in
    // the walk's wchan. The headline said "2 writers paused 68 ms/s" over a table whose second
    // row had no pause.
    let mut m = model();
    m.throttled = vec![
        tp(7, 1, 16384, 12288, 67.7),
        Throttled::new(8, "fio", ThrottleSource::Wchan),
    ];
    fold_dirty(&mut m);
    let g = &m.domains[0];
    assert_eq!((g.throttled_writers, g.wchan_writers), (2, 1));
    assert_eq!(
        g.raised_by().as_deref(),
        Some("1 writer paused 68 ms/s, 1 more in balance_dirty_pages")
    );
    let v = derive(&m);
    assert!(
        v.dirty.why.starts_with(
            "1 writer paused 68 ms/s in balance_dirty_pages (tracepoint), 1 more seen there (wchan); "
        ),
        "{}",
        v.dirty.why
    );
    // A tracepoint row without a pause is no paused writer.
    let mut m = model();
    m.throttled = vec![
        tp(7, 1, 16384, 12288, 0.0),
        Throttled::new(8, "fio", ThrottleSource::Wchan),
    ];
    fold_dirty(&mut m);
    assert_eq!(
        m.domains[0].raised_by().as_deref(),
        Some("1 writer in balance_dirty_pages")
    );
    let why = derive(&m).dirty.why;
    assert!(
        why.starts_with("1 writer not paused in balance_dirty_pages (tracepoint), 1 more"),
        "{why}"
    );
}

fn disk(name: &str, r: (f64, f64), w: (f64, f64)) -> Disk {
    Disk::from_cols(
        name,
        Columns {
            r_s: Some(r.0),
            r_await: Some(r.1),
            w_s: Some(w.0),
            w_await: Some(w.1),
            ..Columns::default()
        },
    )
}

#[test]
fn the_worst_latency_is_weighted_by_iops() {
    // 2 reads/s at 4 ms during 30k writes/s at 3 ms: the writes are the headline.
    let l = worst_latency(&[disk("vda", (2.0, 4.0), (30_000.0, 3.0))]).unwrap();
    assert_eq!(
        (l.device.as_str(), l.column, l.await_ms),
        ("vda", "w_await", 3.0)
    );
    // A second device with real reads at 5 ms wins.
    let l = worst_latency(&[
        disk("vda", (2.0, 40.0), (30_000.0, 3.0)),
        disk("sdb", (100.0, 5.0), (0.0, 0.0)),
    ])
    .unwrap();
    assert_eq!((l.device.as_str(), l.column), ("sdb", "r_await"));
    // 10 % of a device's IOs but under 5/s: left out; nothing left.
    assert!(worst_latency(&[disk("vdb", (3.0, 9.0), (1.0, 1.0))]).is_none());
}

#[test]
fn direct_reclaim_beats_a_calm_watermark_snapshot() {
    let mut m = model();
    m.reclaim.watermarks = Some(crate::model::zones::Watermarks {
        free_pages: 10_000,
        min_pages: 100,
        low_pages: 200,
        high_pages: 300,
        zone: None,
    });
    m.reclaim.pgscan_direct_s = Some(0.0);
    m.reclaim.pgscan_kswapd_s = Some(0.0);
    m.reclaim.allocstall_s = Some(12.0);
    let v = derive(&m);
    assert_eq!(v.reclaim.state, ReclaimState::Direct);
    assert!(
        v.reclaim.why.contains("12 allocstall/s"),
        "{}",
        v.reclaim.why
    );
    m.reclaim.allocstall_s = Some(0.0);
    assert_eq!(derive(&m).reclaim.state, ReclaimState::None);
    m.reclaim.pgscan_kswapd_s = Some(500.0);
    assert_eq!(derive(&m).reclaim.state, ReclaimState::Kswapd);
}

#[test]
fn direct_compaction_answers_direct_alone_or_beside_reclaim() {
    let mut m = model();
    m.reclaim.pgscan_direct_s = Some(0.0);
    m.reclaim.allocstall_s = Some(0.0);
    m.reclaim.pgscan_kswapd_s = Some(500.0);
    m.reclaim.compact_stall_s = Some(20.0);
    m.reclaim.compact_fail_s = Some(5.0);
    let v = derive(&m);
    assert_eq!(v.reclaim.state, ReclaimState::Direct);
    assert_eq!(v.reclaim.why, "direct compaction: 20 stalls/s, 5 failed/s");
    m.reclaim.allocstall_s = Some(12.0);
    m.reclaim.pgscan_direct_s = Some(3000.0);
    assert_eq!(
        derive(&m).reclaim.why,
        "direct reclaim: 12 allocstall/s, scanning 3000 pages/s; \
         direct compaction: 20 stalls/s, 5 failed/s"
    );
    // No stall in the interval: kswapd's scan answers, as before.
    m.reclaim.allocstall_s = Some(0.0);
    m.reclaim.pgscan_direct_s = Some(0.0);
    m.reclaim.compact_stall_s = Some(0.0);
    assert_eq!(derive(&m).reclaim.state, ReclaimState::Kswapd);
}

/// A memcg at its limit: `pgscan_memcg_s` 458k, no global reclaim, memory PSI `some` over the
/// interval at `stall` percent (the v1 memcg of 256 MB with a dd at 1.6 GB/s read 20 %).
fn limit_reclaim(stall: Option<f64>) -> Model {
    let mut m = model();
    m.reclaim.pgscan_direct_s = Some(0.0);
    m.reclaim.allocstall_s = Some(0.0);
    m.reclaim.pgscan_kswapd_s = Some(0.0);
    m.reclaim.pgscan_memcg_s = Some(458_500.0);
    m.reclaim.pgsteal_memcg_s = Some(431_600.0);
    let figures = |pct| crate::model::cpu::PsiFigures {
        avg10: 0.0,
        avg60: 0.0,
        total_pct: pct,
    };
    m.pressure.memory = Some(crate::model::Pressure {
        some: Some(figures(stall)),
        full: Some(figures(stall)),
    });
    m
}

#[test]
fn cgroup_limit_reclaim_is_named_and_a_headline_only_when_memory_stalls() {
    // Seen: "no reclaim scanning in the interval" while the memcg scanned 458k pages/s.
    let v = derive(&limit_reclaim(Some(19.8)));
    assert_eq!(v.reclaim.state, ReclaimState::Cgroup);
    assert_eq!(v.reclaim.stall_pct, Some(19.8));
    assert!(v.reclaim.stalls());
    assert_eq!(
        v.reclaim.why,
        "cgroup limit reclaim: scanning 458500 pages/s, memory stalled 20% of the interval (PSI some)"
    );
    assert!(v.headline.contains(&v.reclaim.why), "{}", v.headline);
    // Routine limit reclaim of clean cache: named, not headline news.
    for quiet in [Some(0.9), Some(0.0), None] {
        let v = derive(&limit_reclaim(quiet));
        assert_eq!(v.reclaim.state, ReclaimState::Cgroup, "{quiet:?}");
        assert!(!v.reclaim.stalls(), "{quiet:?}");
        assert!(v.headline.ends_with("no reclaim stall"), "{}", v.headline);
    }
    assert!(derive(&limit_reclaim(Some(1.0))).reclaim.stalls());
    // Global direct reclaim comes first; the memory stall is carried for every state.
    let mut m = limit_reclaim(Some(19.8));
    m.reclaim.allocstall_s = Some(3.0);
    let v = derive(&m);
    assert_eq!(v.reclaim.state, ReclaimState::Direct);
    assert_eq!(v.reclaim.stall_pct, Some(19.8));
    // Before 5.8 there is no memcg figure: kswapd's scan decides.
    let mut m = limit_reclaim(Some(19.8));
    m.reclaim.pgscan_memcg_s = None;
    m.reclaim.pgscan_kswapd_s = Some(10.0);
    assert_eq!(derive(&m).reclaim.state, ReclaimState::Kswapd);
}

#[test]
fn the_group_at_its_limit_is_named_the_deepest_on_a_tie() {
    use crate::model::cgroups::{CgroupRow, Cgroups};
    let mib = 1 << 20;
    let group = |path: &str, depth, current, max: Option<u64>, high, scan| CgroupRow {
        path: path.into(),
        depth,
        current_bytes: Some(current),
        max_bytes: max,
        high_bytes: high,
        pgscan_per_s: Some(scan),
        ..CgroupRow::default()
    };
    let mut m = limit_reclaim(Some(19.8));
    m.cgroups = Some(Cgroups {
        rows: vec![
            // 255 of 256 MiB (memory.max): at its limit.
            group("/ctr/box", 2, 255 * mib, Some(256 * mib), None, 458_500.0),
            // Near its own limit too, and its counts include /ctr/box's: a tie (listed
            // after, where `max_by` alone would take it).
            group("/ctr", 1, 300 * mib, Some(310 * mib), None, 458_500.0),
            // Scanning, but at 50 % of its memory.high: not at a limit.
            group("/other", 1, 50 * mib, None, Some(100 * mib), 900_000.0),
        ],
        status: crate::parse::cgroup::Status::Ok,
        note: None,
        full_walk: false,
    });
    let v = derive(&m);
    assert!(
        v.reclaim
            .why
            .starts_with("cgroup limit reclaim in /ctr/box: scanning 458500 pages/s"),
        "{}",
        v.reclaim.why
    );
    // 90 % of the lower of memory.max and memory.high counts as at the limit.
    for (current, named) in [(90, "/other"), (89, "/ctr/box")] {
        m.cgroups.as_mut().unwrap().rows[2].current_bytes = Some(current * mib);
        let why = derive(&m).reclaim.why;
        let want = format!("cgroup limit reclaim in {named}:");
        assert!(why.starts_with(&want), "{current} MiB: {why}");
    }
}

#[test]
fn without_a_group_read_a_process_seen_reclaiming_names_its_group() {
    use crate::model::procs::ProcRow;
    let mut m = limit_reclaim(Some(19.8));
    let row = |pid, comm: &str, cgroup: &str, wchan: &str| ProcRow {
        pid,
        comm: comm.into(),
        cgroup: Some(cgroup.into()),
        wchan: Some(wchan.into()),
        state: 'D',
        ..ProcRow::default()
    };
    m.processes = Some(vec![
        // The root group's flusher is no container's limit.
        row(9, "kworker/u8:0", "memory:/", "shrink_folio_list"),
        row(8, "sh", "memory:/pwtest", "do_wait"),
        row(7, "dd", "memory:/pwtest", "reclaim_throttle"),
    ]);
    assert_eq!(
        derive(&m).reclaim.why,
        "cgroup limit reclaim in memory:/pwtest (dd[7] seen in reclaim_throttle): scanning \
         458500 pages/s, memory stalled 20% of the interval (PSI some)"
    );
    m.processes.as_mut().unwrap().truncate(2);
    assert!(
        derive(&m)
            .reclaim
            .why
            .starts_with("cgroup limit reclaim: scanning")
    );
}

#[test]
fn a_deep_queue_no_baseline_judges_is_said_where_no_disk_saturated_was() {
    // fio 4k random reads 64 deep, started before any calm read: 125k/s at 0.44 ms, queue 52.
    let mut m = model();
    let mut vda = disk("vda", (125_000.0, 0.44), (0.0, 0.0));
    vda.cols.rkB_s = Some(500_000.0);
    vda.cols.aqu_sz = Some(52.0);
    m.disks = vec![vda];
    crate::model::saturation::Judge::default().judge(&mut m.disks);
    let v = derive(&m);
    assert!(v.saturated.is_empty());
    let u = "vda: cannot judge yet: no calm baseline; queue 52 deep (≥ 32), r_await 0.44 ms";
    assert_eq!(v.unjudged.as_deref(), Some(u));
    assert_eq!(
        v.headline,
        format!("{} below background; {u}; no reclaim stall", v.dirty.domain)
    );
    // Beside throttled writers it is one of the parts.
    let why = "d+wb over freerun".to_owned();
    let dirty = DirtyVerdict {
        state: Some(State::WritersThrottled),
        why,
        ..v.dirty.clone()
    };
    let line = answers_line(&dirty, None, Some(u), &v.reclaim, None);
    assert_eq!(line, format!("{} writers throttled; {u}", v.dirty.domain));
    // Once a device is saturated, that is said and the unjudged one is not.
    let mut sdb = disk("sdb", (0.0, 0.0), (300.0, 9.0));
    sdb.cols.util_pct = Some(97.0);
    sdb.queue = Some(std::sync::Arc::new(crate::parse::QueueSettings {
        rotational: Some(true),
        ..crate::parse::QueueSettings::default()
    }));
    m.disks.push(sdb);
    let mut j = crate::model::saturation::Judge::default();
    j.judge(&mut m.disks);
    let v = derive(&m);
    assert_eq!(
        (v.saturated.as_slice(), v.unjudged.as_deref()),
        (&["sdb".to_owned()][..], None)
    );
    assert!(
        v.headline.starts_with("saturated sdb: 97 %util"),
        "{}",
        v.headline
    );
}

#[test]
fn in_a_scope_the_verdict_is_its_domain_and_the_host_is_a_second_line() {
    let mut m = model();
    // Another container over its threshold: the machine view names it; in /box's scope the
    // verdict is /box's, throttled by the tracepoint, and the host's global domain (below
    // background) is the second line.
    let mut other = m.domains[1].clone();
    other.path = "/other".into();
    other.cgroup_ino = Some(43);
    other.dirty_pages = Some(4100);
    other.state = Some(State::OverThresh);
    m.domains.push(other);
    m.throttled = vec![tp(7, 42, 16384, 3000, 848.0)];
    let mut host = m.clone();
    fold_dirty(&mut host);
    let v = derive(&host);
    assert_eq!(
        (v.dirty.domain.as_str(), v.dirty.host.as_deref()),
        ("cgroup /other", None)
    );
    m.scope = Some(crate::model::scope::ScopeView {
        path: Some("/box".into()),
        how: "--cgroup".into(),
        ..Default::default()
    });
    fold_dirty(&mut m);
    let v = derive(&m);
    assert_eq!(v.dirty.domain, "cgroup /box");
    assert_eq!(v.dirty.state, Some(State::WritersThrottled));
    assert!(
        v.dirty
            .host
            .as_deref()
            .is_some_and(|h| h.starts_with("host global: below background")),
        "{:?}",
        v.dirty.host
    );
    // A scope without a domain (cgroup v1, its group not read) is judged as the machine.
    let mut v1 = host.clone();
    v1.scope = Some(crate::model::scope::ScopeView {
        path: Some("/gone".into()),
        how: "--cgroup".into(),
        ..Default::default()
    });
    let v = derive(&v1);
    assert_eq!(
        (v.dirty.domain.as_str(), v.dirty.host),
        ("cgroup /other", None)
    );
    // The scope carries its folded domain.
    let d = m.scope.as_ref().unwrap().domain.as_ref().unwrap();
    assert_eq!(
        (d.path.as_str(), d.state),
        ("/box", Some(State::WritersThrottled))
    );
}

#[test]
fn a_node_past_its_dirty_share_is_in_the_verdict_and_the_headline() {
    let mut m = model();
    assert_eq!(derive(&m).nodes, None, "single node: no note");
    let node = |n, dw, limit, miss, foreign| crate::model::nodes::Node {
        node: n,
        dirty_writeback_pages: dw,
        dirty_limit_pages: Some(limit),
        past_dirty_share: dw > limit,
        numa_miss_s: Some(miss),
        numa_foreign_s: Some(foreign),
        ..crate::model::nodes::Node::default()
    };
    m.nodes = vec![
        node(0, 17_800, 17_700, 0.0, 1_000.0),
        node(1, 10, 21_400, 1_000.0, 0.0),
    ];
    m.dirty.dirtied_per_s = Some(1_000.0);
    let v = derive(&m);
    let want = "node 0 past its dirty share: page-cache allocations go to node 1 (node 1 \
                numa_miss 1000/s)";
    assert_eq!(v.nodes.as_deref(), Some(want));
    assert!(v.headline.ends_with(want), "{}", v.headline);
    // The writer paused the whole interval: the verdict reads the model's nr_dirtied rate.
    m.dirty.dirtied_per_s = Some(0.0);
    assert_eq!(
        derive(&m).nodes.as_deref(),
        Some("node 0 past its dirty share: nothing dirtied this interval")
    );
}
