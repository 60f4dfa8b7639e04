//! Whole-screen snapshots of the "who" panes at 80x24 and 160x48, from a recording made on
//! this VM (`assets/recordings/who-throttled.pwrec`: vm.dirty_bytes 64M, two buffered fio
//! writers and a dd, `pagewatch record`, which armed the tracepoint and walked the processes)
//! from the kernel lab's memcg tree (a writer in a 300M cgroup on 6.12), from the kernel
//! lab's thrashing recording (`assets/recordings/lab-thrash-6.12.pwrec`, made by
//! `assets/lab/thrash.sh` on 6.12: /thrash re-reads 160M inside a 64M memory.max, /busy
//! rewrites 64M), and the memory sort from `assets/recordings/who-memory.pwrec` (`pagewatch
//! record` while `pagewatch eat 4G` held 4 GiB for 10 s on this VM).
//!
//! The samples go through `App::update` as live samples do; host facts are fixed. Snapshots
//! live in `snapshots/`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[macro_use]
#[path = "common/screen.rs"]
mod screen;
use screen::screen;

use std::path::Path;

use pagewatch::app::{Action, App, Effect, JobCmd, JobReport, Look, Msg, ProcSort, WhoView};
use pagewatch::source::HostInfo;

/// The sizes each screen is snapshot at.
const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

fn host() -> HostInfo {
    HostInfo {
        hostname: "testhost".into(),
        kernel: "6.18.44".into(),
        cpus: 2,
    }
}

/// The app after the recording's first `n` samples.
fn recorded(n: usize) -> App {
    recording("who-throttled", n).0
}

/// The app after the first `n` samples of `assets/recordings/NAME.pwrec`, and the samples.
fn recording(name: &str, n: usize) -> (App, Vec<pagewatch::sample::RawSample>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/recordings")
        .join(format!("{name}.pwrec"));
    let rec = pagewatch::record::read(&path).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    let mut app = App::new(host(), Look::default(), 1.0);
    for s in rec.samples.iter().take(n) {
        app.update(Msg::Sample(s.clone()));
    }
    (app, rec.samples)
}

#[test]
fn memory_sort_puts_the_eater_first() {
    let (mut app, _) = recording("who-memory", 10);
    app.update(Msg::Action(Action::Processes));
    app.update(Msg::Action(Action::Sort));
    assert_eq!(app.ui.proc_sort, ProcSort::Memory);
    let rows = app.sorted_memory();
    assert_eq!(rows[0].comm, "pagewatch-eat", "{rows:?}");
    assert!(rows[0].rss_bytes.unwrap() >= 4 << 30);
    assert!(
        rows.windows(2).all(|w| w[0].rss_bytes >= w[1].rss_bytes),
        "by resident bytes"
    );
    assert_eq!(
        app.shown_pids()[0],
        rows[0].pid,
        "the rows shown are the memory rows"
    );
    assert_screens!("who_memory", &app, &SIZES);
}

#[test]
fn the_selection_follows_the_process_when_rows_re_sort() {
    let (mut app, samples) = recording("who-throttled", 4);
    app.update(Msg::Action(Action::Processes));
    let mut chosen = None;
    let mut moved = false;
    for s in samples.iter().skip(4).take(20) {
        app.update(Msg::Sample(s.clone()));
        let first = app.shown_pids().first().copied();
        let chosen = *chosen.get_or_insert(app.selected_pid());
        assert_eq!(
            app.selected_pid(),
            chosen,
            "the selection stays on its process"
        );
        moved |= first.is_some() && first != chosen;
    }
    assert!(
        moved,
        "the rows re-sorted under the selection at least once"
    );
}

#[test]
fn the_kernel_stack_is_re_read_while_open_and_command_lines_on_demand() {
    let (mut app, samples) = recording("who-throttled", THROTTLED_AT);
    app.update(Msg::Action(Action::Processes));
    let pid = app.selected_pid().unwrap();
    let fx = app.update(Msg::Action(Action::Stack));
    assert!(fx.contains(&Effect::Job(JobCmd::ReadStack(pid))), "{fx:?}");
    app.update(Msg::Job(JobReport::Stack {
        pid,
        text: "first".into(),
    }));
    let fx = app.update(Msg::Sample(samples[THROTTLED_AT].clone()));
    assert!(
        fx.contains(&Effect::Job(JobCmd::ReadStack(pid))),
        "re-read each sample: {fx:?}"
    );
    app.update(Msg::Job(JobReport::Stack {
        pid,
        text: "second".into(),
    }));
    assert_eq!(app.ui.stack.as_ref().unwrap().1, "second");
    app.update(Msg::Action(Action::Back));
    app.update(Msg::Job(JobReport::Stack {
        pid,
        text: "late".into(),
    }));
    assert!(app.ui.stack.is_none(), "a late read does not reopen it");
    let fx = app.update(Msg::Sample(samples[THROTTLED_AT + 1].clone()));
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::Job(JobCmd::ReadStack(_))))
    );
    // A row whose command line the walk carried (`ProcRow::cmdline`) shows it and is not
    // read again; this older recording's walks carry none, so one is set here.
    let walked = app.shown_pids()[1];
    let m = app.model.as_mut().unwrap();
    let row = m.processes.iter_mut().flatten().find(|r| r.pid == walked);
    row.unwrap().cmdline = Some("dd of=/tmp/walked bs=1M".into());
    // `a`: command lines of the rows shown, in place of comm.
    let fx = app.update(Msg::Action(Action::Cmdline));
    let Some(Effect::Job(JobCmd::ReadCmdlines(pids))) = fx.first() else {
        panic!("{fx:?}");
    };
    let mut others = app.shown_pids();
    others.retain(|&p| p != walked);
    assert_eq!(
        *pids, others,
        "every shown row but the one the walk carried"
    );
    let first = pids[0];
    app.update(Msg::Job(JobReport::Cmdlines(vec![(
        first,
        "fio --name=w1 --rw=write".into(),
    )])));
    let text = screen(&app, 160, 48);
    assert!(text.contains("fio --name=w1 --rw=write"), "{text}");
    assert!(text.contains("dd of=/tmp/walked bs=1M"), "{text}");
    app.update(Msg::Action(Action::Cmdline));
    assert!(!screen(&app, 160, 48).contains("of=/tmp/walked"));
    assert!(!screen(&app, 160, 48).contains("--name=w1"));
}

/// The sample with the tracepoint's busiest interval (four writers pausing ~0.5 s/s).
const THROTTLED_AT: usize = 12;

#[test]
fn throttled_writers_from_the_tracepoint() {
    let app = recorded(THROTTLED_AT);
    let m = app.model.as_ref().unwrap();
    assert!(m.throttled.len() >= 3, "{:?}", m.throttled);
    assert_screens!("who_throttled", &app, &SIZES);
    // Rates in the screen's units; a writer at the hard limit (task_ratelimit 0) says so.
    let text = screen(&app, 160, 48);
    assert!(text.contains("250M") && text.contains("at limit"), "{text}");
}

#[test]
fn processes_view_sorted_by_storage_io() {
    let mut app = recorded(THROTTLED_AT);
    app.update(Msg::Action(Action::Processes));
    assert_eq!(app.ui.who, Some(WhoView::Processes));
    let top = app.sorted_processes();
    let storage = |p: &&pagewatch::model::procs::ProcRow| {
        p.dirtied_bytes_per_s.unwrap_or(0.0) + p.read_bytes_per_s.unwrap_or(0.0)
    };
    assert!(
        top.windows(2).all(|w| storage(&w[0]) >= storage(&w[1])),
        "sorted by dirtied + read bytes/s"
    );
    assert_screens!("who_processes", &app, &SIZES);
    // 80x24 keeps the who essentials: three processes, three throttled writers, refaults.
    let text = screen(&app, 80, 24);
    let rows = |from: &str| {
        text.lines()
            .skip_while(|l| !l.contains(from))
            .skip(2)
            .take_while(|l| !l.contains('└'))
            .count()
    };
    assert!(rows("Processes by IO") >= 3, "{text}");
    assert!(rows("Throttled writers") >= 3, "{text}");
    assert!(text.contains("refault 1328 "), "{text}");
    // `s` moves the sort to memory; Esc closes the view.
    app.update(Msg::Action(Action::Sort));
    assert_eq!(app.ui.proc_sort, pagewatch::app::ProcSort::Memory);
    app.update(Msg::Action(Action::Back));
    assert_eq!(app.ui.who, None);
}

#[test]
fn processes_view_rolled_up_by_command() {
    let mut app = recorded(THROTTLED_AT);
    app.update(Msg::Action(Action::Processes));
    app.update(Msg::Action(Action::RollUp));
    let m = app.model.as_ref().unwrap();
    let commands = m.commands.as_ref().unwrap();
    let fio = commands.iter().find(|c| c.comm == "fio").unwrap();
    let fio_pids = m
        .processes
        .as_ref()
        .unwrap()
        .iter()
        .filter(|p| p.comm == "fio")
        .count();
    assert!(fio.pids >= 2 && fio.pids >= fio_pids, "{commands:?}");
    let text = screen(&app, 160, 48);
    assert!(text.contains("by command (r by pid"), "{text}");
    assert!(text.contains("PIDS"), "{text}");
    assert!(text.contains(&format!("{}x fio", fio.pids)), "{text}");
    assert_screens!("who_commands", &app, &SIZES);
    // `r` again: back to one row a pid.
    app.update(Msg::Action(Action::RollUp));
    assert!(!screen(&app, 160, 48).contains("PIDS"));
}

#[test]
fn cgroups_view_on_a_cgroup_v1_memory_host_says_why() {
    let mut app = recorded(THROTTLED_AT);
    app.update(Msg::Action(Action::Cgroups));
    let text = screen(&app, 80, 24);
    assert!(
        text.contains("container dirty limits need cgroup v2"),
        "{text}"
    );
}

/// The app after every root of a captured tree.
fn captured(tree: &str) -> App {
    use pagewatch::source::{Source, TreeSource};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/trees")
        .join(tree);
    let mut src = TreeSource::open(&dir).unwrap();
    let mut app = App::new(host(), Look::default(), 1.0);
    while let Some(s) = src.next_sample().unwrap() {
        app.update(Msg::Sample(s));
    }
    app
}

#[test]
fn container_domain_named_in_the_dirty_pane_and_the_cgroups_view() {
    let mut app = captured("kernel-6.12-lab-memcg");
    // Root 003: /box's writers are throttled by its own domain, the global one is below
    // background, and the dirty pane says which domain binds.
    let text = screen(&app, 160, 48);
    assert!(
        text.contains("cgroup /box throttled d+wb 48.2M > f 43.4M"),
        "{text}"
    );
    assert_screens!("who_memcg", &app, &SIZES);
    app.update(Msg::Action(Action::Cgroups));
    assert_screens!("who_cgroups", &app, &SIZES);
    // Enter scopes the processes view to the selected group.
    app.update(Msg::Action(Action::Detail));
    assert_eq!(app.ui.who, Some(WhoView::Processes));
    assert_eq!(app.ui.scope.as_deref(), Some("/box"));
}

#[test]
fn capped_devices_are_listed_under_the_cgroups() {
    use pagewatch::model::dirty::State;
    use pagewatch::model::domains::{Domain, Kind};
    let mut app = captured("kernel-6.12-lab-memcg");
    app.update(Msg::Action(Action::Cgroups));
    let m = app.model.as_mut().unwrap();
    // A FUSE device: max_ratio 1 of the global thresholds, strictlimit, over its freerun.
    let (t, bg) = (
        m.dirty.thresh_pages.unwrap(),
        m.dirty.bg_thresh_pages.unwrap(),
    );
    m.domains.push(Domain {
        kind: Kind::Bdi,
        path: "0:52".into(),
        cgroup_ino: None,
        avail_pages: None,
        thresh_pages: Some(t / 100),
        bg_thresh_pages: Some(bg / 100),
        freerun_pages: Some(u64::midpoint(t / 100, bg / 100)),
        dirty_pages: Some(300),
        writeback_pages: Some(20),
        headroom_pages: None,
        state: Some(State::WritersThrottled),
        sampled_state: Some(State::WritersThrottled),
        throttled_by_tracepoint_ms_per_s: None,
        throttled_writers: 0,
        wchan_writers: 0,
        kernel_thresh_pages: None,
    });
    let text = screen(&app, 160, 48);
    assert!(text.contains("devices with a capped dirty share"), "{text}");
    assert!(
        text.contains("bdi 0:52     cap T 1.6M f 1.2M  d+wb 1.2M  writers throttled"),
        "{text}"
    );
}

#[test]
fn cgroups_view_sorted_by_refaults_leads_with_the_thrashing_group() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings/lab-thrash-6.12.pwrec");
    let rec = pagewatch::record::read(&path).unwrap();
    let mut app = App::new(host(), Look::default(), 0.5);
    for s in rec.samples {
        app.update(Msg::Sample(s));
    }
    app.update(Msg::Action(Action::Cgroups));
    let order = |app: &App| -> Vec<String> {
        app.sorted_cgroups()
            .iter()
            .map(|r| r.path.clone())
            .collect()
    };
    // By activity /busy's dirty pages lead; `s` sorts by refaults, and /thrash leads.
    assert_eq!(order(&app), ["/busy", "/thrash"]);
    assert_screens!("who_cgroups_activity", &app, &SIZES);
    app.update(Msg::Action(Action::Sort));
    assert_eq!(app.ui.cgroup_sort, pagewatch::app::CgroupSort::Refault);
    assert_eq!(order(&app), ["/thrash", "/busy"]);
    let text = screen(&app, 160, 48);
    assert!(text.contains("[sort refault/s]"), "{text}");
    assert_screens!("who_cgroups_thrash", &app, &SIZES);
}

/// `assets/recordings/who-exits.pwrec`: `pagewatch record` (walks every 5 s) on this VM, as
/// root, during tests/exits.rs's scene: a shell loop of 1–2 s `dd if=/dev/zero bs=128`
/// writers beside a 20 MB/s fio. The dd that exited between walks are rows of their own
/// (state X) from their taskstats exit records, replayed from the recording.
#[test]
fn exited_writers_from_taskstats() {
    let (mut app, samples) = recording("who-exits", 0);
    let mut at = 0;
    for s in &samples {
        app.update(Msg::Sample(s.clone()));
        at += 1;
        let m = app.model.as_ref().unwrap();
        let exited_dd = m
            .processes
            .iter()
            .flatten()
            .filter(|p| p.exited && p.comm == "dd")
            .count();
        if exited_dd >= 1 && at > 6 {
            break;
        }
    }
    let m = app.model.as_ref().unwrap();
    let st = m.exits.as_ref().unwrap();
    assert_eq!((st.source.as_str(), st.lost), ("taskstats", 0));
    let dd = m
        .processes
        .iter()
        .flatten()
        .find(|p| p.exited && p.comm == "dd")
        .unwrap_or_else(|| panic!("no exited dd in {at} samples"));
    assert_eq!(dd.state, 'X');
    assert!(dd.dirtied_bytes_per_s.unwrap() > 20e6, "{dd:?}");
    app.update(Msg::Action(Action::Processes));
    let text = screen(&app, 160, 48);
    assert!(text.contains("X: exited since the last walk"), "{text}");
    assert_screens!("who_exits", &app, &SIZES);
}

/// The number after `prefix` in `text` (`(13 paused)` → 13).
fn number_after(text: &str, prefix: &str) -> Option<usize> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn the_throttled_rows_and_their_count_add_up_to_the_headline() {
    // 13 writers paused in this sample, 18 rows in all (4 at 0 ms, and pagewatch itself):
    // the table has room for 3 (80x24) or 6 (160x48) and counts the paused rest.
    let app = recorded(THROTTLED_AT);
    let m = app.model.as_ref().unwrap();
    let paused = m.domains[0].throttled_writers;
    assert_eq!(paused, 13);
    for (w, h) in [(80, 24), (160, 48)] {
        let text = screen(&app, w, h);
        // The kernel stopped some of them at the hard limit in this interval.
        let headline = number_after(&text, "at hard limit (").expect("a count");
        assert_eq!(headline, paused, "{w}x{h}\n{text}");
        // The table: the rows under its column names, down to its bottom border.
        let table: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.contains("pause ms/s"))
            .take_while(|l| !l.contains('└'))
            .collect();
        let (head, rows) = table.split_first().expect("the table");
        let shown = m
            .throttled
            .iter()
            .filter(|t| t.paused() && !t.is_self)
            .filter(|t| rows.iter().any(|r| r.contains(&format!("{:>7} ", t.pid))))
            .count();
        assert!(shown > 0, "{w}x{h}\n{text}");
        let rest = number_after(head, " +").expect("+N paused");
        assert!(head.contains(&format!("+{rest} paused")), "{head}");
        assert_eq!(shown + rest, headline, "{w}x{h}\n{text}");
    }
    // The batch text: three named, the paused rest counted, as the headline counts.
    let batch = pagewatch::batch::render_text(m, false);
    assert!(batch.contains("(13 writers paused"), "{batch}");
    let line = batch.lines().find(|l| l.contains("throttled: ")).unwrap();
    assert!(line.ends_with(", +10 paused"), "{line}");
}

/// `assets/recordings/who-sync-exits.pwrec`: the screen (`--view processes --record`) on this
/// VM, as root, while a shell loop ran `dd if=/dev/zero bs=1M count=50 conv=fsync` with 0.4 s
/// pauses: each dd fsyncs once (~20 ms) and exits between two walks. Its exited row counts
/// that call over its span (it used to read 0: the sample after its exit has none of its
/// calls), and a dd the tracer saw but no walk listed is named from its exit record, on the
/// screen and in batch text.
#[test]
fn exited_writers_keep_their_sync_calls() {
    let (mut app, samples) = recording("who-sync-exits", 0);
    app.update(Msg::Action(Action::Processes));
    let (mut exited, mut victims, mut lines, mut named, mut inits) = (0, 0, 0, 0, 0);
    for s in &samples {
        app.update(Msg::Sample(s.clone()));
        let m = app.model.as_ref().unwrap();
        for p in m.processes.iter().flatten() {
            if p.exited && p.comm == "dd" {
                let calls = p.fsync_per_s.unwrap() * p.walk_ms.unwrap() as f64 / 1000.0;
                assert!((calls - 1.0).abs() < 1e-9, "{p:?}");
                let mean = p.fsync_mean_ms.unwrap();
                assert!((1.0..100.0).contains(&mean), "{p:?}");
                assert_eq!(p.fsync_max_ms, Some(mean), "one call: its mean is its max");
                exited += 1;
            }
            if p.state == ' ' {
                assert_eq!(p.comm, "dd", "{p:?}");
                victims += 1;
            }
        }
        // The batch text's victims are named too (they read `?[24005]`).
        let batch = pagewatch::batch::render_text(m, false);
        if let Some(line) = batch.lines().find(|l| l.contains("sync (mean/max)")) {
            assert!(!line.contains('?'), "{line}");
            named += usize::from(line.contains("dd["));
        }
        if exited > 0
            && m.processes
                .iter()
                .flatten()
                .any(|p| p.exited && p.comm == "dd")
        {
            let text = screen(&app, 160, 48);
            // PID 1's io file is closed to pagewatch here (`no perm` in its five io-file
            // columns); its sync figures are the tracer's, which sees every task.
            if let Some(init) = text.lines().find(|l| l.contains(" process_api ")) {
                assert_eq!(init.matches("no perm").count(), 5, "{init}");
                inits += 1;
            }
            for line in text
                .lines()
                .filter(|l| l.contains(" dd ") && l.contains(" X "))
            {
                let cols: Vec<&str> = line.trim_matches(['"', '│']).split_whitespace().collect();
                assert_eq!(cols[5], "1", "SYNC/s of an exited dd\n{text}");
                lines += 1;
            }
        }
    }
    assert!(
        exited >= 20 && victims >= 10 && lines >= 20 && named >= 20 && inits >= 1,
        "{exited} exited, {victims} victims, {lines} lines, {named} batch lines"
    );
}

#[test]
fn without_root_the_dirty_pane_says_the_disks_figures_are_apportioned_and_why() {
    // The recording as a non-root run would carry it: the debugfs listing denied in every
    // sample (`names::BDI_STATS_STATUS`, `source::bdi_stats`).
    let (_, mut samples) = recording("who-throttled", 0);
    let status = "denied /sys/kernel/debug/bdi: Permission denied (os error 13)\n";
    for s in &mut samples {
        s.files.insert(
            pagewatch::sample::names::BDI_STATS_STATUS.to_owned(),
            status.to_owned(),
        );
    }
    let mut app = App::new(host(), Look::default(), 1.0);
    // The tenth: 29 MB wait for vda (shown from 16 MiB).
    for s in samples.iter().take(10) {
        app.update(Msg::Sample(s.clone()));
    }
    let m = app.model.as_ref().unwrap();
    let disk = m.disks.iter().find(|d| d.drain.shown()).unwrap();
    assert_eq!(disk.drain.dirty_from, Some("apportioned"));
    let json = serde_json::to_value(m).unwrap();
    let row = json["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == disk.name.as_str())
        .unwrap();
    let why = row["dirty_from_why"].as_str().unwrap();
    assert!(
        why.starts_with("needs root") && why.contains("debugfs"),
        "{row}"
    );
    let text = pagewatch::batch::render_text(m, false);
    assert!(text.contains(&format!("  apportioned: {why}\n")), "{text}");
    // In the Dirty pane's title, its lines as with root (the last check still shown).
    let wide = screen(&app, 160, 48);
    assert!(
        wide.contains("Dirty & writeback · needs root for kernel figures"),
        "{wide}"
    );
    assert!(wide.contains("= derived"), "{wide}");
    let narrow = screen(&app, 80, 24);
    assert!(
        narrow.contains("Dirty & writeback · needs root─"),
        "{narrow}"
    );
    assert_screens!("dirty_apportioned_without_root", &app, &SIZES);
}

/// The kernel's own word for "at the hard limit" (spec §1.10, §7): on this recording's
/// 6.18 events, a writer is stopped (`task_ratelimit` 0) exactly when the domain's dirty count
/// is at or over the event's `limit` (so too in 12,525 events of a 12 s flood captured here:
/// 654 stopped, 654 at the limit); and a sample's state is "at hard limit" exactly when its
/// interval had such an event (the sampled count does not decide it).
#[test]
fn a_stopped_writer_is_the_dirty_count_at_the_kernels_limit() {
    use pagewatch::model::dirty::State;
    let (mut app, samples) = recording("who-throttled", 0);
    let (mut events, mut stopped, mut at_limit) = (0, 0, 0);
    for s in &samples {
        let text = s
            .file(pagewatch::sample::names::TRACE_EVENTS)
            .unwrap_or_default();
        let evs = pagewatch::parse::trace::parse_events(text).unwrap().events;
        for e in &evs {
            assert_eq!(
                e.task_ratelimit == 0,
                e.dirty >= e.limit,
                "dirty {} limit {} task_ratelimit {}",
                e.dirty,
                e.limit,
                e.task_ratelimit
            );
        }
        let stops = evs.iter().filter(|e| e.task_ratelimit == 0).count();
        events += evs.len();
        stopped += stops;
        app.update(Msg::Sample(s.clone()));
        let state = app.model.as_ref().and_then(|m| m.dirty.state);
        if stops > 0 {
            at_limit += 1;
        }
        assert_eq!(
            state == Some(State::AtHardLimit),
            stops > 0,
            "{state:?} with {stops} stops"
        );
    }
    println!("{events} events, {stopped} stopped, {at_limit} samples at the hard limit");
    assert!(stopped > 0 && at_limit > 0, "the recording has stops");
}
