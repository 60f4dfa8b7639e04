use super::*;

/// The idle tree's model below background, with no domain and nobody throttled.
fn below_background() -> Model {
    let mut m = model("live-idle", 1);
    m.dirty.state = Some(State::BelowBackground);
    m.domains.clear();
    m.throttled.clear();
    m
}

fn model(tree: &str, root: usize) -> Model {
    let samples = crate::source::test_samples(tree);
    let p = crate::parse::Snapshot::parse(&samples[root - 1]).unwrap();
    let c = crate::parse::Snapshot::parse(&samples[root]).unwrap();
    Model::derive(Some(&p), &c, super::super::Options::default())
}

#[test]
fn an_idle_machine_wants_nothing_and_a_pane_wants_a_walk() {
    let mut m = model("live-idle", 1);
    m.procs_blocked = Some(0);
    m.dirty.state = Some(State::BelowBackground);
    for d in &mut m.disks {
        d.cols.util_pct = Some(1.0);
        d.cols.aqu_sz = Some(0.0);
    }
    m.dirty.dirtied_per_s = Some(1.0);
    let mut g = Gate::default();
    assert_eq!(
        g.update(&m, &View::default()),
        None,
        "nothing wanted, nothing changed"
    );
    let view = View {
        processes: true,
        scope: Some("/box".into()),
        ..View::default()
    };
    let w = g.update(&m, &view).unwrap();
    assert_eq!(w.procs.unwrap().cgroup.as_deref(), Some("/box"));
    assert!(!w.trace);
    // In a scope, the walk is the scope's unless the pane chose a group.
    m.scope = Some(crate::model::scope::ScopeView {
        path: Some("/ctr".into()),
        ..Default::default()
    });
    let mut g = Gate::default();
    let w = g
        .update(
            &m,
            &View {
                processes: true,
                ..View::default()
            },
        )
        .unwrap();
    assert_eq!(w.procs.unwrap().cgroup.as_deref(), Some("/ctr"));
    let w = g.update(&m, &view).unwrap();
    assert_eq!(w.procs.unwrap().cgroup.as_deref(), Some("/box"));
}

/// One answer: while a task waits on IO, the processes view and a default screen (or batch)
/// ask for the same walks, so both rate the same processes over the same seconds (the pane
/// once walked every 2 s where the rest walked every 5 s).
#[test]
fn the_pane_and_every_other_view_walk_at_one_pace_while_something_happens() {
    let mut m = model("live-idle", 1);
    m.interval_s = Some(1.0);
    m.procs_blocked = Some(1);
    let pace_of = |view: View| {
        let w = Gate::default().update(&m, &view).unwrap();
        w.procs.unwrap().pace
    };
    let processes_view = pace_of(View {
        processes: true,
        ..View::default()
    });
    assert_eq!(processes_view, pace_of(View::default()));
    assert_eq!(processes_view, Pace::Attribute);
}

#[test]
fn the_pane_is_walked_at_the_quiet_pace_only_while_the_machine_is_quiet() {
    let mut m = model("live-idle", 1);
    m.procs_blocked = Some(0);
    m.dirty.state = Some(State::BelowBackground);
    m.dirty.dirtied_per_s = Some(1.0);
    for d in &mut m.disks {
        d.cols.util_pct = Some(1.0);
        d.cols.aqu_sz = Some(0.0);
    }
    m.interval_s = Some(1.0);
    let view = View {
        processes: true,
        ..View::default()
    };
    let cpu = |m: &mut Model, busy: f64| {
        let c = m.cpu.get_or_insert_with(Default::default);
        c.user_pct = Some(busy);
        c.system_pct = Some(0.0);
    };
    let mut g = Gate::default();
    cpu(&mut m, 20.0);
    let w = g.update(&m, &view).unwrap();
    assert_eq!(
        w.procs.as_ref().unwrap().pace,
        Pace::Attribute,
        "busy CPUs: every 5 s, the pace of every other mode"
    );
    cpu(&mut m, 1.0);
    for _ in 0..9 {
        assert_eq!(g.update(&m, &view), None, "lingering");
    }
    let w = g.update(&m, &view).unwrap();
    assert_eq!(
        w.procs.as_ref().unwrap().pace,
        Pace::Quiet,
        "quiet for 10 s: the quiet period"
    );
    cpu(&mut m, 1.0);
    m.procs_blocked = Some(1);
    let w = g.update(&m, &view).unwrap();
    assert_eq!(
        w.procs.unwrap().pace,
        Pace::Attribute,
        "a task in IO wait: every 5 s again at once"
    );
}

#[test]
fn a_writer_seen_in_balance_dirty_pages_arms_the_tracepoint() {
    let mut m = model("live-idle", 1);
    m.dirty.state = Some(State::BelowBackground);
    m.domains.clear();
    let mut g = Gate::default();
    assert!(!g.update(&m, &View::default()).is_some_and(|w| w.trace));
    m.throttled = vec![super::super::throttled::Throttled::new(
        42,
        "dd",
        super::super::throttled::ThrottleSource::Wchan,
    )];
    let w = g.update(&m, &View::default()).unwrap();
    assert!(w.trace, "a task in balance_dirty_pages is reason enough");
}

/// Two instances started at different moments of one flood must arm alike: a sampled
/// count that lands in a trough below background (small thresholds, bursts) must not keep
/// the tracepoint off while pages are dirtied fast (issue 50: an 80x24 instance read
/// "below background" in the same second as a 160x48 one's "writers throttled").
/// Started in the middle of a flood, an instance's first read can land in a trough of the
/// dirty count: the tracepoint is armed from that first sample, whose rates are unknown, and
/// lapses `LINGER_S` later when nothing else asks for it.
#[test]
fn the_first_sample_arms_the_tracepoint_until_the_rates_are_known() {
    let samples = crate::source::test_samples("live-idle");
    let first = crate::parse::Snapshot::parse(&samples[0]).unwrap();
    let mut m = Model::derive(None, &first, super::super::Options::default());
    m.dirty.state = Some(State::BelowBackground);
    m.domains.clear();
    m.throttled.clear();
    let mut g = Gate::default();
    assert!(g.update(&m, &View::default()).is_some_and(|w| w.trace));
    let mut idle = below_background();
    idle.dirty.dirtied_per_s = Some(1.0);
    idle.interval_s = Some(1.0);
    for _ in 0..9 {
        assert_eq!(g.update(&idle, &View::default()), None, "lingers");
    }
    assert!(g.update(&idle, &View::default()).is_some_and(|w| !w.trace));
}

#[test]
fn pages_dirtied_fast_arm_the_tracepoint_below_background() {
    let mut m = below_background();
    m.dirty.dirtied_per_s = Some(1.0);
    let mut g = Gate::default();
    assert!(!g.update(&m, &View::default()).is_some_and(|w| w.trace));
    // 600 MB/s dirtied, as in the flood's first seconds.
    m.dirty.dirtied_per_s = Some(600e6 / m.page_size as f64);
    let w = g.update(&m, &View::default()).unwrap();
    assert!(
        w.trace,
        "pages dirtied fast: writers can cross freerun any moment"
    );
}

#[test]
fn the_sync_calls_are_timed_while_writers_are_throttled_in_every_mode() {
    let mut m = below_background();
    let mut g = Gate::default();
    assert!(
        !g.update(&m, &View::default()).is_some_and(|w| w.sync),
        "nothing armed at idle"
    );
    m.throttled = vec![super::super::throttled::Throttled::new(
        42,
        "dd",
        super::super::throttled::ThrottleSource::Wchan,
    )];
    // Batch, record, serve and the default screen hand the gate the same view: no pane,
    // no --view (issue 50: plain batch never timed the victim of a throttled flood).
    assert!(
        g.update(&m, &View::default()).unwrap().sync,
        "a throttled interval arms it"
    );
    m.throttled.clear();
    let procs = View {
        processes: true,
        ..View::default()
    };
    let w = Gate::default().update(&m, &procs).unwrap();
    assert!(
        !w.sync,
        "the processes view shows them, the gate decides: one answer in every view"
    );
}

#[test]
fn the_sync_calls_are_timed_once_dirtying_outruns_writeback() {
    let mut m = below_background();
    let page = m.page_size as f64;
    // A 4 KiB write and fsync every 100 ms: 40 kB/s dirtied and as much written.
    m.dirty.dirtied_per_s = Some(40e3 / page);
    m.dirty.written_per_s = Some(40e3 / page);
    let mut g = Gate::default();
    assert!(!g.update(&m, &View::default()).is_some_and(|w| w.sync));
    // A flood's first second: 600 MB/s dirtied, 100 MB/s written, nobody throttled yet.
    m.dirty.dirtied_per_s = Some(600e6 / page);
    m.dirty.written_per_s = Some(100e6 / page);
    assert!(
        g.update(&m, &View::default()).unwrap().sync,
        "the early warning times the victims before freerun"
    );
}

#[test]
fn the_sync_calls_are_timed_while_the_disks_flush_steadily() {
    let mut m = below_background();
    m.dirty.dirtied_per_s = Some(0.0);
    for d in &mut m.disks {
        d.cols.f_s = Some(0.2);
    }
    let mut g = Gate::default();
    assert!(
        !g.update(&m, &View::default()).is_some_and(|w| w.sync),
        "a journal's commit every 5 s"
    );
    m.disks[0].cols.f_s = Some(12.0);
    let mut armed = Vec::new();
    for _ in 0..120 {
        g.update(&m, &View::default());
        armed.push(g.wants().sync);
        // The window walks: the calls' figures ride on the walk's rows.
        assert!(!g.wants().sync || g.wants().procs.is_some() && g.walks_for_what_happens());
    }
    assert!(
        armed[0],
        "an fsync loop: its calm is learnt before the flood"
    );
    // Steps of about 1 s (this tree's interval): armed for the first 10 of every 60.
    let on: Vec<usize> = (0..100).filter(|i| armed[*i]).collect();
    let want: Vec<usize> = (0..10).chain(60..70).collect();
    assert_eq!(on, want, "a window of each period, not the whole time");
}

#[test]
fn the_below_tracer_is_armed_by_the_detail_view_a_saturated_disk_or_reclaim() {
    let mut m = model("live-idle", 1);
    m.reclaim.pgscan_kswapd_s = Some(0.0);
    m.reclaim.pgscan_direct_s = Some(0.0);
    for d in &mut m.disks {
        d.saturation.saturated = false;
    }
    assert!(!below_wanted(&m, &View::default()), "idle: nothing armed");
    let detail = View {
        detail: true,
        ..View::default()
    };
    assert!(below_wanted(&m, &detail));
    m.reclaim.pgscan_kswapd_s = Some(12.0);
    assert!(below_wanted(&m, &View::default()), "kswapd scans");
    m.reclaim.pgscan_kswapd_s = Some(0.0);
    m.disks[0].saturation.saturated = true;
    assert!(below_wanted(&m, &View::default()), "a saturated disk");
    let mut g = Gate::default();
    assert!(g.update(&m, &View::default()).unwrap().below);
}

#[test]
fn memory_taken_fast_wants_a_walk() {
    let mut m = model("live-idle", 1);
    m.interval_s = Some(1.0);
    m.procs_blocked = Some(0);
    m.dirty.dirtied_per_s = Some(0.0);
    m.reclaim.pgscan_direct_s = Some(0.0);
    m.pressure.memory = None;
    for d in &mut m.disks {
        d.cols.util_pct = Some(0.0);
        d.cols.aqu_sz = Some(0.0);
    }
    m.memory.AnonPages = Some(1 << 20);
    let mut g = Gate::default();
    assert!(
        g.update(&m, &View::default())
            .is_none_or(|w| w.procs.is_none())
    );
    m.memory.AnonPages = Some((1 << 20) + 32 * 1024);
    assert!(
        g.update(&m, &View::default()).is_none(),
        "32 MiB/s is not fast"
    );
    m.memory.AnonPages = Some((1 << 20) + 32 * 1024 + 512 * 1024);
    let w = g.update(&m, &View::default()).unwrap();
    assert!(w.procs.is_some(), "512 MiB/s of anon growth wants a walk");
    let mut g = Gate::default();
    m.reclaim.pgscan_direct_s = Some(10.0);
    assert!(
        g.update(&m, &View::default()).unwrap().procs.is_some(),
        "direct reclaim"
    );
}

#[test]
fn latency_is_timed_for_the_view_and_saturated_disks_only() {
    let mut m = model("live-idle", 1);
    m.interval_s = Some(1.0);
    for d in &mut m.disks {
        d.saturation.saturated = false;
    }
    let mut g = Gate::default();
    let _ = g.update(&m, &View::default());
    assert!(g.wants().latency.is_empty(), "nothing armed at idle");
    let first = m.disks[0].name.clone();
    let view = View {
        latency: vec!["zz".into(), first.clone()],
        ..View::default()
    };
    let w = g.update(&m, &view).unwrap();
    let mut want = vec!["zz".to_owned(), first.clone()];
    want.sort();
    assert_eq!(w.latency, want, "the view's, sorted");
    assert!(g.update(&m, &View::default()).unwrap().latency.is_empty());
    // A saturated disk is timed, and for LINGER_S after.
    m.disks[0].saturation.saturated = true;
    assert_eq!(g.update(&m, &View::default()).unwrap().latency, [first]);
    m.disks[0].saturation.saturated = false;
    for _ in 0..9 {
        assert_eq!(g.update(&m, &View::default()), None, "lingering");
    }
    assert!(g.update(&m, &View::default()).unwrap().latency.is_empty());
}

#[test]
fn reasons_linger_ten_seconds() {
    let mut m = model("live-idle", 1);
    m.interval_s = Some(1.0);
    m.procs_blocked = Some(2);
    m.dirty.state = Some(State::WritersThrottled);
    let mut g = Gate::default();
    let w = g.update(&m, &View::default()).unwrap();
    assert!(w.procs.is_some() && w.trace);
    m.procs_blocked = Some(0);
    m.dirty.state = Some(State::BelowBackground);
    m.dirty.dirtied_per_s = Some(0.0);
    for d in &mut m.disks {
        d.cols.util_pct = Some(0.0);
        d.cols.aqu_sz = Some(0.0);
    }
    for _ in 0..9 {
        assert_eq!(g.update(&m, &View::default()), None, "still lingering");
    }
    let w = g.update(&m, &View::default()).unwrap();
    assert_eq!(w, Wants::default(), "off after 10 quiet seconds");
}

#[test]
fn the_reclaim_tracer_is_armed_while_tasks_enter_reclaim_in_every_mode() {
    let mut m = model("live-idle", 1);
    m.reclaim.allocstall_s = Some(0.0);
    m.reclaim.pgscan_direct_s = Some(0.0);
    m.reclaim.pgscan_memcg_s = Some(0.0);
    let mut g = Gate::default();
    assert!(!g.update(&m, &View::default()).is_some_and(|w| w.reclaim));
    m.reclaim.allocstall_s = Some(3.0);
    assert!(
        g.update(&m, &View::default()).unwrap().reclaim,
        "allocstall"
    );
    let mut m2 = m.clone();
    m2.reclaim.allocstall_s = Some(0.0);
    m2.reclaim.pgscan_memcg_s = Some(500.0);
    let mut g = Gate::default();
    assert!(
        g.update(&m2, &View::default()).unwrap().reclaim,
        "memcg limit"
    );
}

#[test]
fn the_dirty_files_scan_takes_the_fastest_dirtiers_first() {
    // qemu (pid 100, many open images) dirties 2 MiB/s, dd (pid 900) 128 MiB/s, a
    // throttled tar 0 (it sleeps in balance_dirty_pages), sh nothing: dd first, so the
    // 20-file budget reaches its file (a live run listed only qemu's when pids were
    // taken in pid order).
    let mut m = model("live-idle", 1);
    let row = |pid: u32, comm: &str, mib: f64| crate::model::proc_row::ProcRow {
        pid,
        comm: comm.into(),
        dirtied_bytes_per_s: Some(mib * 1_048_576.0),
        ..Default::default()
    };
    let mut tar = row(300, "tar", 0.0);
    tar.wchan = Some("balance_dirty_pages".into());
    m.processes = Some(vec![
        row(100, "qemu", 2.0),
        row(900, "dd", 128.0),
        tar,
        row(5, "sh", 0.0),
    ]);
    assert_eq!(top_dirtiers(&m), [900, 100, 300]);
    m.processes = None;
    assert!(top_dirtiers(&m).is_empty());
}

#[test]
fn a_walk_for_the_processes_view_alone_is_not_one_every_view_makes() {
    let mut m = model("live-idle", 1);
    m.interval_s = Some(1.0);
    m.procs_blocked = Some(0);
    m.dirty.state = Some(State::BelowBackground);
    m.dirty.dirtied_per_s = Some(0.0);
    for d in &mut m.disks {
        d.cols.util_pct = Some(0.0);
        d.cols.aqu_sz = Some(0.0);
    }
    let procs = View {
        processes: true,
        ..View::default()
    };
    let mut g = Gate::default();
    assert!(
        g.update(&m, &procs).unwrap().procs.is_some(),
        "the pane walks"
    );
    assert!(!g.walks_for_what_happens(), "for the view alone");
    // A task in IO wait: every view walks, and goes on for LINGER_S after the last reason.
    m.procs_blocked = Some(1);
    let mut plain = Gate::default();
    for g in [&mut g, &mut plain] {
        g.update(&m, &procs);
    }
    assert!(g.walks_for_what_happens() && plain.walks_for_what_happens());
    m.procs_blocked = Some(0);
    let mut seen = Vec::new();
    for _ in 0..11 {
        g.update(&m, &procs);
        plain.update(&m, &View::default());
        assert_eq!(g.walks_for_what_happens(), plain.walks_for_what_happens());
        seen.push(g.walks_for_what_happens());
    }
    assert_eq!(seen.iter().filter(|w| **w).count(), 9, "{seen:?}");
    assert!(g.wants().procs.is_some() && plain.wants().procs.is_none());
}
