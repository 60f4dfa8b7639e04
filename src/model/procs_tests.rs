use super::*;
use crate::parse::procs::parse;
use crate::parse::procs::tests::stat_line;

const MIB: u64 = 1 << 20;

/// `(rchar, wchar, read_bytes, write_bytes)`.
type Io = (u64, u64, u64, u64);

fn io_text((r, w, rb, wb): Io) -> String {
    format!(
        "rchar: {r}\nwchar: {w}\nsyscr: 1\nsyscw: 1\nread_bytes: {rb}\nwrite_bytes: {wb}\n\
         cancelled_write_bytes: 0\n"
    )
}

/// A record: tag (P or p), pid, start time, state, io, field 42.
fn rec(tag: char, pid: u32, start: u64, state: char, io: Io, blkio: u64) -> String {
    format!(
        "{tag} {pid} {start}\nstat {}\n{}{}",
        stat_line(pid, "dd", state, 1, start, blkio),
        io_text(io),
        if tag == 'P' {
            "wchan balance_dirty_pages\ncgroup /box\n"
        } else {
            ""
        }
    )
}

fn walk(mono_s: u64, prev_s: Option<u64>, delayacct: &str, records: &[String]) -> Walk {
    let prev = prev_s.map_or("-".to_owned(), |p| (p * 1_000_000_000).to_string());
    let text = format!(
        "walk {}\nprev {prev}\nclk_tck 100\ntask_delayacct {delayacct}\nscope -\n{}",
        mono_s * 1_000_000_000,
        records.concat()
    );
    parse(&text).unwrap()
}

/// A snapshot at `mono_s` with walk `w`, and nothing else.
fn snap(mono_s: u64, w: Option<Walk>) -> crate::parse::Snapshot {
    crate::parse::Snapshot {
        mono_ns: mono_s * 1_000_000_000,
        procs: w.map(std::sync::Arc::new),
        page_size: 4096,
        ..crate::parse::Snapshot::default()
    }
}

const A: Io = (1000, 0, 0, 0);
/// A + 4 MiB read syscalls, 2 MiB written, 1 MiB from storage, 8 MiB dirtied.
const B: Io = (1000 + 4 * MIB, 2 * MIB, MIB, 8 * MIB);

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn rates_over_two_walks_hand_computed() {
    let prev = walk(2, None, "1", &[rec('P', 42, 500, 'R', A, 10)]);
    let cur = walk(4, Some(2), "1", &[rec('P', 42, 500, 'D', B, 60)]);
    let rows = derive(Some(&prev), &cur);
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    // dt = 2 s.
    assert!(close(r.dirtied_bytes_per_s, 4.0 * MIB as f64));
    assert!(close(r.read_bytes_per_s, 0.5 * MIB as f64));
    assert!(close(r.rchar_per_s, 2.0 * MIB as f64));
    assert!(close(r.wchar_per_s, MIB as f64));
    // 1 − 1 MiB / 4 MiB.
    assert!(close(r.cache_hit_est_pct, 75.0));
    // 50 ticks × 10 ms over 2 s.
    assert!(close(r.iowait_ms_per_s, 250.0));
    assert_eq!(
        (r.state, r.comm.as_str(), r.cgroup.as_deref()),
        ('D', "dd", Some("/box"))
    );
    assert_eq!(r.wchan.as_deref(), Some("balance_dirty_pages"));
    assert!(!r.no_permission);
}

#[test]
fn a_carried_reading_is_as_good_as_the_previous_walk() {
    let prev = walk(2, None, "1", &[]);
    let cur = walk(
        4,
        Some(2),
        "1",
        &[rec('p', 42, 500, 'S', A, 10), rec('P', 42, 500, 'D', B, 60)],
    );
    let from_carried = derive(Some(&prev), &cur);
    let full_prev = walk(2, None, "1", &[rec('P', 42, 500, 'S', A, 10)]);
    let full_cur = walk(4, Some(2), "1", &[rec('P', 42, 500, 'D', B, 60)]);
    assert_eq!(from_carried, derive(Some(&full_prev), &full_cur));
    assert_eq!(from_carried.len(), 1, "the carried reading is no row");
    // The carried reading works without the previous walk at all (a recording's first walk).
    assert_eq!(derive(None, &cur), from_carried);
}

#[test]
fn no_rate_for_a_new_process_a_reused_pid_or_counters_going_back() {
    let cur = walk(4, Some(2), "1", &[rec('P', 42, 500, 'D', B, 60)]);
    // Not in the previous walk: first sight.
    let none = derive(Some(&walk(2, None, "1", &[])), &cur);
    assert_eq!(none[0].dirtied_bytes_per_s, None);
    assert_eq!(none[0].iowait_ms_per_s, None);
    // Same pid, another start time: another process.
    let reused = derive(
        Some(&walk(2, None, "1", &[rec('P', 42, 499, 'S', A, 10)])),
        &cur,
    );
    assert_eq!(reused[0].rchar_per_s, None);
    // write_bytes went back: that rate only is missing.
    let back = (A.0, A.1, A.2, 9 * MIB);
    let r = &derive(
        Some(&walk(2, None, "1", &[rec('P', 42, 500, 'S', back, 10)])),
        &cur,
    )[0];
    assert_eq!(r.dirtied_bytes_per_s, None);
    assert!(close(r.rchar_per_s, 2.0 * MIB as f64));
    // A previous walk that is not the one `cur` follows gives nothing.
    let other = walk(1, None, "1", &[rec('P', 42, 500, 'S', A, 10)]);
    assert_eq!(derive(Some(&other), &cur)[0].rchar_per_s, None);
}

#[test]
fn delay_accounting_off_gives_no_iowait_and_little_rchar_no_hit_estimate() {
    let prev = walk(2, None, "0", &[rec('P', 42, 500, 'S', A, 0)]);
    let small = (A.0 + 1000, 0, 0, 0);
    let cur = walk(4, Some(2), "0", &[rec('P', 42, 500, 'S', small, 0)]);
    let r = &derive(Some(&prev), &cur)[0];
    assert_eq!(r.iowait_ms_per_s, None);
    assert!(close(r.rchar_per_s, 500.0));
    assert_eq!(
        r.cache_hit_est_pct, None,
        "1000 bytes is not enough to estimate"
    );
}

#[test]
fn denied_io_is_no_permission_not_zero() {
    let text = format!(
        "walk 4000000000\nprev -\nclk_tck 100\ntask_delayacct 1\nscope -\nP 7 1\nstat {}\n\
         io denied\nwchan 0\n",
        stat_line(7, "sshd", 'S', 1, 1, 0)
    );
    let rows = derive(None, &parse(&text).unwrap());
    assert!(rows[0].no_permission);
    assert_eq!(
        (rows[0].dirtied_bytes_per_s, rows[0].wchan.as_deref()),
        (None, None)
    );
}

#[test]
fn rows_sort_by_storage_bytes_and_wchan_gives_throttled_rows() {
    let prev = walk(
        2,
        None,
        "1",
        &[rec('P', 1, 1, 'S', A, 0), rec('P', 2, 1, 'S', A, 0)],
    );
    let little = (A.0, A.1, A.2, MIB);
    let cur = walk(
        4,
        Some(2),
        "1",
        &[rec('P', 1, 1, 'S', little, 0), rec('P', 2, 1, 'D', B, 20)],
    );
    let rows = derive(Some(&prev), &cur);
    assert_eq!(rows.iter().map(|r| r.pid).collect::<Vec<_>>(), [2, 1]);
    let t = throttled_by_wchan(&rows);
    assert_eq!(t.len(), 2, "both fixtures sleep in balance_dirty_pages");
    assert_eq!(t[0].source, ThrottleSource::Wchan);
    // 20 ticks × 10 ms over 2 s.
    assert!(close(t[0].pause_ms_per_s, 100.0));
    let mut rows = rows;
    rows[1].wchan = Some("do_sys_poll".into());
    assert_eq!(throttled_by_wchan(&rows).len(), 1);
}

#[test]
fn the_tracker_keeps_rows_between_walks_and_drops_them_when_walks_stop() {
    let mut t = Tracker::default();
    t.update(&snap(
        2,
        Some(walk(2, None, "1", &[rec('P', 42, 500, 'S', A, 10)])),
    ));
    assert_eq!(
        t.rows().unwrap()[0].rchar_per_s,
        None,
        "first walk: no rate"
    );
    t.update(&snap(3, None));
    t.update(&snap(
        4,
        Some(walk(4, Some(2), "1", &[rec('P', 42, 500, 'D', B, 60)])),
    ));
    t.update(&snap(5, None));
    assert!(
        close(t.rows().unwrap()[0].rchar_per_s, 2.0 * MIB as f64),
        "kept between walks"
    );
    let mut m = crate::model::Model::derive(None, &snap(5, None), crate::model::Options::default());
    t.fill(&mut m);
    assert_eq!(m.processes.as_ref().map(Vec::len), Some(1));
    assert_eq!(m.task_delayacct, Some(true));
    t.update(&snap(10, None));
    assert!(t.rows().is_none(), "6 s without a walk: walks are off");
    t.fill(&mut m);
    assert_eq!((m.processes, m.task_delayacct), (None, None));
}

#[test]
fn rows_of_a_walk_at_the_quiet_pace_last_until_its_next_walk_is_due() {
    let quiet = |mut w: Walk| {
        w.period_ns = Some(10_000_000_000);
        w
    };
    let mut t = Tracker::default();
    t.update(&snap(
        2,
        Some(walk(2, None, "1", &[rec('P', 42, 500, 'S', A, 10)])),
    ));
    t.update(&snap(
        12,
        Some(quiet(walk(
            12,
            Some(2),
            "1",
            &[rec('P', 42, 500, 'S', B, 10)],
        ))),
    ));
    t.update(&snap(21, None));
    assert!(
        close(t.rows().unwrap()[0].rchar_per_s, 0.4 * MIB as f64),
        "9 s after a walk whose next is due at 10 s: kept, the rate over its 10 s"
    );
    let mut m =
        crate::model::Model::derive(None, &snap(21, None), crate::model::Options::default());
    t.fill(&mut m);
    assert_eq!(m.walk_interval_ms, Some(10_000));
    t.update(&snap(23, None));
    assert!(
        t.rows().is_none(),
        "11 s without its next walk: walks are off"
    );
}

#[test]
fn an_exited_throttled_writer_keeps_its_name_from_the_last_walk() {
    use crate::model::throttled::{ThrottleSource, Throttled};
    let mut t = Tracker::default();
    t.update(&snap(
        2,
        Some(walk(2, None, "1", &[rec('P', 42, 500, 'D', A, 10)])),
    ));
    // The next walk no longer has it (it exited); its name stays one more walk.
    t.update(&snap(
        4,
        Some(walk(4, Some(2), "1", &[rec('P', 43, 501, 'D', A, 10)])),
    ));
    let mut m = crate::model::Model::derive(None, &snap(4, None), crate::model::Options::default());
    m.throttled = vec![
        Throttled::new(42, "", ThrottleSource::Tracepoint),
        Throttled::new(44, "", ThrottleSource::Tracepoint),
    ];
    m.tracer = Some(crate::model::throttled::Tracer {
        state: crate::parse::trace::TraceState::Armed,
        why: None,
        events: 2,
        lost: 0,
        capped: false,
        error: None,
    });
    t.fill(&mut m);
    let named: Vec<(u32, &str)> = m
        .throttled
        .iter()
        .map(|r| (r.pid, r.comm.as_str()))
        .collect();
    assert!(named.contains(&(42, "dd")), "{named:?}");
    assert!(
        named.contains(&(44, "")),
        "never seen: no name made up: {named:?}"
    );
}

/// A walk at `mono_s` after one at `prev_s`, with the boot clock `offset_s` ahead of the
/// monotonic one (time spent suspended).
fn walk_boot(mono_s: u64, prev_s: u64, offset_s: u64, delayacct: &str, records: &[String]) -> Walk {
    let text = format!(
        "walk {}\nprev {}\nclk_tck 100\ntask_delayacct {delayacct}\nscope -\nboot {}\n{}",
        mono_s * 1_000_000_000,
        prev_s * 1_000_000_000,
        (mono_s + offset_s) * 1_000_000_000,
        records.concat()
    );
    parse(&text).unwrap()
}

#[test]
fn a_process_born_since_the_previous_walk_is_rated_against_zero_over_its_age() {
    // Walks at 10 s and 15 s monotonic, the boot clock 100 s ahead: the previous walk was at
    // boot 110 s (tick 11000). A dd born at boot 114 s (tick 11400) lived 1 s and dirtied
    // 8 MiB: 8 MiB/s over 1 s, not 1.6 MiB/s over the 5 s interval.
    let cur = walk_boot(15, 10, 100, "1", &[rec('P', 42, 11_400, 'R', B, 30)]);
    let r = &derive(None, &cur)[0];
    assert!(close(r.dirtied_bytes_per_s, 8.0 * MIB as f64), "{r:?}");
    assert!(close(r.read_bytes_per_s, MIB as f64));
    assert!(close(r.iowait_ms_per_s, 300.0), "30 ticks over 1 s");
    assert_eq!((r.walk_ms, r.rates_from_walk_ms), (Some(1000), 15_000));
    // Born before the previous walk (another scope, or unreadable then): no rate, as before.
    let old = walk_boot(15, 10, 100, "1", &[rec('P', 42, 10_900, 'R', B, 30)]);
    assert_eq!(derive(None, &old)[0].dirtied_bytes_per_s, None);
    // Born 0.5 s or 0 s before the walk: rated over 1 s (pidstat -d 1's resolution), never a
    // burst over a few ms, never a division by 0.
    for start in [11_450, 11_500] {
        let young = walk_boot(15, 10, 100, "1", &[rec('P', 42, start, 'R', B, 0)]);
        let r = &derive(None, &young)[0];
        assert!(close(r.dirtied_bytes_per_s, 8.0 * MIB as f64), "{r:?}");
        assert_eq!(r.walk_ms, Some(1000));
    }
    // Born 3 s before the walk: over 3 s.
    let older = walk_boot(15, 10, 100, "1", &[rec('P', 42, 11_200, 'R', B, 0)]);
    assert_eq!(derive(None, &older)[0].walk_ms, Some(3000));
    // A previous reading, when there is one, comes first.
    let prev = walk_boot(10, 5, 100, "1", &[rec('P', 42, 11_400, 'R', A, 0)]);
    let r = &derive(Some(&prev), &cur)[0];
    assert!(close(r.dirtied_bytes_per_s, 8.0 * MIB as f64 / 5.0));
    assert_eq!(r.walk_ms, Some(5000));
    // Without a boot line (an older recording) a new process has no rate.
    let no_boot = walk(15, Some(10), "1", &[rec('P', 42, 11_400, 'R', B, 30)]);
    assert_eq!(derive(None, &no_boot)[0].dirtied_bytes_per_s, None);
}

/// A stat line of a shell: `marks` in cminflt (field 11).
fn shell(tag: char, started: u64, io: Io, marks: u64) -> String {
    let line = stat_line(7, "sh", 'S', 1, started, 0);
    let mut f: Vec<String> = line.split(' ').map(str::to_owned).collect();
    // f[0] pid, f[1] (comm), f[i] field i + 1.
    f[10] = marks.to_string();
    let stat = f.join(" ");
    format!(
        "{tag} 7 {started}\nstat {stat}\n{}{}",
        io_text(io),
        if tag == 'P' { "wchan do_wait\n" } else { "" }
    )
}

#[test]
fn a_parent_whose_children_were_reaped_shows_the_jump_as_reaped_not_as_its_rate() {
    let prev = walk(2, None, "1", &[shell('P', 100, A, 5000)]);
    // The io jumped and cminflt moved: a child was waited for. No rate, the jump named.
    let cur = walk(4, Some(2), "1", &[shell('P', 100, B, 5400)]);
    let r = &derive(Some(&prev), &cur)[0];
    assert!(r.reaped_children);
    assert_eq!(r.dirtied_bytes_per_s, None);
    assert_eq!(r.rchar_per_s, None);
    assert_eq!(r.reaped_dirtied_bytes, Some(8 * MIB));
    // The same jump with no reaping: its own IO, rated.
    let own = walk(4, Some(2), "1", &[shell('P', 100, B, 5000)]);
    let r = &derive(Some(&prev), &own)[0];
    assert!(!r.reaped_children);
    assert!(close(r.dirtied_bytes_per_s, 4.0 * MIB as f64));
    assert_eq!(r.reaped_dirtied_bytes, None);
}

#[test]
fn after_delay_accounting_is_switched_on_older_tasks_have_no_iowait() {
    use crate::parse::Snapshot;
    let mut t = Tracker::default();
    let mut feed = |w: Walk| {
        t.update(&Snapshot {
            mono_ns: w.mono_ns,
            procs: Some(std::sync::Arc::new(w)),
            ..Snapshot::default()
        });
        t.rows().unwrap().to_vec()
    };
    // Boot clock = monotonic. Off at 10 s; on at 15 s.
    feed(walk_boot(10, 5, 0, "0", &[rec('P', 42, 100, 'D', A, 0)]));
    let old = rec('P', 42, 100, 'D', B, 0);
    let young = rec('P', 43, 1_520, 'D', B, 0);
    let rows = feed(walk_boot(15, 10, 0, "1", &[rec('P', 42, 100, 'D', A, 0)]));
    assert_eq!(
        rows[0].iowait_ms_per_s, None,
        "started at 1 s, before the switch"
    );
    let rows = feed(walk_boot(20, 15, 0, "1", &[old, young]));
    let by = |pid: u32| rows.iter().find(|r| r.pid == pid).unwrap().iowait_ms_per_s;
    assert_eq!(by(42), None, "older than the switch: unknown, not 0");
    assert!(by(43).is_some(), "started after the walk that saw it on");
    // A tracker that never saw it off cannot tell: every task counts.
    let mut fresh = Tracker::default();
    fresh.update(&Snapshot {
        mono_ns: 20_000_000_000,
        procs: Some(std::sync::Arc::new(walk_boot(
            20,
            15,
            0,
            "1",
            &[rec('p', 42, 100, 'D', A, 0), rec('P', 42, 100, 'D', B, 0)],
        ))),
        ..Snapshot::default()
    });
    assert_eq!(fresh.rows().unwrap()[0].iowait_ms_per_s, Some(0.0));
}

#[test]
fn the_tracker_carries_a_command_line_the_source_left_out() {
    use crate::parse::Snapshot;
    let with = |tag: char, start: u64, io: Io, line: &str| {
        let mut r = rec(tag, 42, start, 'R', io, 0);
        if !line.is_empty() {
            r = format!("{r}cmdline {line}\n");
        }
        r
    };
    let mut t = Tracker::default();
    let mut feed = |mono: u64, prev: Option<u64>, recs: &[String]| {
        let w = walk(mono, prev, "0", recs);
        t.update(&Snapshot {
            mono_ns: w.mono_ns,
            procs: Some(std::sync::Arc::new(w)),
            ..Snapshot::default()
        });
        t.rows().unwrap()[0].cmdline.clone()
    };
    assert_eq!(
        feed(2, None, &[with('P', 500, A, "dd of=/x")]).as_deref(),
        Some("dd of=/x")
    );
    assert_eq!(
        feed(4, Some(2), &[with('P', 500, B, "")]).as_deref(),
        Some("dd of=/x")
    );
    // The same pid, another process: not its command line.
    assert_eq!(feed(6, Some(4), &[with('P', 600, B, "")]), None);
}

#[test]
fn a_wchan_row_beside_a_tracepoint_that_sees_every_pause_is_only_its_walks() {
    use crate::model::throttled::{ThrottleSource, Tracer};
    use crate::parse::trace::TraceState;
    let tracer = |state, lost| Tracer {
        state,
        why: None,
        events: 0,
        lost,
        capped: false,
        error: None,
    };
    // A dd the walk saw in balance_dirty_pages; the tracepoint saw no pause of it since.
    let wchan_rows = |t: &Tracker, tr: Tracer| {
        let mut m =
            crate::model::Model::derive(None, &snap(9, None), crate::model::Options::default());
        m.tracer = Some(tr);
        t.fill(&mut m);
        (m.throttled.iter())
            .filter(|r| r.source == ThrottleSource::Wchan)
            .count()
    };
    let mut t = Tracker::default();
    t.update(&snap(
        2,
        Some(walk(2, None, "1", &[rec('P', 42, 500, 'D', A, 10)])),
    ));
    assert_eq!(
        wchan_rows(&t, tracer(TraceState::Armed, 0)),
        1,
        "its own walk's interval"
    );
    t.update(&snap(3, None));
    // A second later: an armed tracepoint would have seen a pause; the row is stale.
    assert_eq!(wchan_rows(&t, tracer(TraceState::Armed, 0)), 0);
    // Unless the tracepoint lost events, or is not armed: then the walk is the evidence.
    assert_eq!(wchan_rows(&t, tracer(TraceState::Armed, 12)), 1);
    assert_eq!(wchan_rows(&t, tracer(TraceState::NotRoot, 0)), 1);
}

/// A walk that `hidepid=` hid others' processes from says so in the model and its JSON.
#[test]
fn a_walk_under_hidepid_says_others_are_hidden() {
    let mut text =
        "walk 2000000000\nprev -\nclk_tck 100\ntask_delayacct 1\nhidepid 2\nscope -\n".to_owned();
    text.push_str(&rec('P', 42, 500, 'D', B, 0));
    let mut t = Tracker::default();
    t.update(&snap(2, Some(parse(&text).unwrap())));
    let mut m = crate::model::Model::derive(None, &snap(2, None), crate::model::Options::default());
    t.fill(&mut m);
    assert_eq!(m.hidepid.as_deref(), Some("2"));
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["hidepid"], "2");
    // Without the line: nothing said, nothing in the JSON.
    t.update(&snap(
        4,
        Some(walk(4, Some(2), "1", &[rec('P', 42, 500, 'D', B, 0)])),
    ));
    t.fill(&mut m);
    assert_eq!(m.hidepid, None);
    assert!(serde_json::to_value(&m).unwrap().get("hidepid").is_none());
}

#[test]
fn pagewatchs_own_command_name_is_kept_from_the_walk_that_listed_it() {
    // The walk writes only active processes: its own row (pid 42, `dd` in `rec`) is in the
    // first walk and not the second, whose `self` line (`own_pid`) still names it.
    let own = |mono_s: u64, prev_s: Option<u64>, records: &[String]| Walk {
        own_pid: Some(42),
        ..walk(mono_s, prev_s, "1", records)
    };
    let mut t = Tracker::default();
    let mut m = crate::model::Model::derive(None, &snap(2, None), crate::model::Options::default());
    t.update(&snap(
        2,
        Some(own(2, None, &[rec('P', 42, 500, 'S', A, 10)])),
    ));
    t.update(&snap(
        4,
        Some(own(4, Some(2), &[rec('P', 43, 500, 'S', A, 10)])),
    ));
    t.update(&snap(6, Some(own(6, Some(4), &[]))));
    t.fill(&mut m);
    assert_eq!((m.own_pid, m.own_comm.as_deref()), (Some(42), Some("dd")));
}
