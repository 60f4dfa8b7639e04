//! Key handling and message tests for `App::update`, driven by a captured tree.

use super::*;
use crate::config::{Setting, Units};
use crate::sample::names;
use crate::source::test_samples as samples;

fn app(tree: &str) -> App {
    let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
    for s in samples(tree) {
        app.update(Msg::Sample(s));
    }
    app
}

#[test]
fn quit_keys_and_signals_give_quit_effect() {
    let mut a = app("live-idle");
    assert_eq!(a.update(Msg::Action(Action::Quit)), vec![Effect::Quit]);
    assert_eq!(a.update(Msg::Quit), vec![Effect::Quit]);
}

#[test]
fn pause_ignores_samples_until_resumed() {
    let s = samples("live-idle");
    let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
    a.update(Msg::Sample(s[0].clone()));
    a.update(Msg::Sample(s[1].clone()));
    let shown = a.model.clone();
    a.update(Msg::Action(Action::Pause));
    a.update(Msg::Sample(s[2].clone()));
    assert_eq!(a.model, shown);
    a.update(Msg::Action(Action::Pause));
    a.update(Msg::Sample(s[3].clone()));
    // The pipeline stepped the sample the paused display did not show (one pipeline for
    // the screen and `--listen`, issue 50): the rates after a pause span one interval.
    let dt = a.model.as_ref().unwrap().interval_s.unwrap();
    assert!((dt - (s[3].mono_ns - s[2].mono_ns) as f64 / 1e9).abs() < 1e-9);
}

#[test]
fn a_paused_screen_keeps_stepping_for_the_endpoint_and_its_charts_still() {
    let s = samples("live-idle");
    let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
    a.publish_steps();
    a.sample(&s[0]);
    assert!(a.take_published().is_some_and(|(_, first)| first));
    a.sample(&s[1]);
    let (m1, first) = a.take_published().unwrap();
    assert!(!first && Some(&m1) == a.model.as_ref());
    assert_eq!(a.take_published(), None, "each step once");
    a.update(Msg::Action(Action::Pause));
    let charts = a.history().points.len();
    a.sample(&s[2]);
    let (m2, _) = a.take_published().expect("stepped while paused");
    assert_eq!(a.model.as_ref(), Some(&m1), "the display stays");
    assert_ne!(m2.time_ms, m1.time_ms, "the endpoint's step moves on");
    assert_eq!(a.history().points.len(), charts, "the charts stay still");
    a.update(Msg::Action(Action::Pause));
    assert!(
        a.history().points.len() > charts,
        "and show the pause once resumed"
    );
}

#[test]
fn interval_steps_and_effects() {
    let mut a = app("live-idle");
    // Each change is saved to the config file too.
    let save = |v| Effect::Save(vec![Setting::Interval(v)]);
    assert_eq!(
        a.update(Msg::Action(Action::Slower)),
        vec![Effect::SetInterval(2.0), save(2.0)]
    );
    assert_eq!(
        a.update(Msg::Action(Action::Faster)),
        vec![Effect::SetInterval(1.0), save(1.0)]
    );
    assert_eq!(
        a.update(Msg::Action(Action::Faster)),
        vec![Effect::SetInterval(0.5), save(0.5)]
    );
    a.interval_s = 60.0;
    assert_eq!(a.update(Msg::Action(Action::Slower)), vec![]);
}

#[test]
fn sort_cycles_and_selection_moves() {
    let mut a = app("kernel-4.14-diskstats14");
    assert_eq!(a.ui.sort, SortKey::Util);
    let names: Vec<_> = a.sorted_disks().iter().map(|d| d.name.clone()).collect();
    assert_eq!(names.first().map(String::as_str), Some("dm-0"));
    a.update(Msg::Action(Action::Sort));
    assert_eq!(a.ui.sort, SortKey::AquSz);
    a.update(Msg::Action(Action::Down));
    assert_eq!(
        a.selected_disk().map(|d| d.name.as_str()),
        Some(a.sorted_disks()[1].name.as_str())
    );
    a.update(Msg::Action(Action::Up));
    a.update(Msg::Action(Action::Up));
    assert_eq!(
        a.selected_disk().map(|d| d.name.clone()),
        Some(a.sorted_disks()[0].name.clone())
    );
}

#[test]
fn partitions_toggle_rederives_at_once() {
    let mut a = app("kernel-4.14-diskstats14");
    let whole = a.model.as_ref().unwrap().disks.len();
    a.update(Msg::Action(Action::Partitions));
    assert!(a.model.as_ref().unwrap().disks.len() > whole);
    assert!(a.model.as_ref().unwrap().disks.iter().any(|d| d.partition));
}

#[test]
fn arrows_over_the_help_move_the_help_not_the_disk_selection() {
    let mut a = app("live-idle");
    let before = a.ui.selected.clone();
    a.update(Msg::Action(Action::Help));
    a.update(Msg::Action(Action::Down));
    assert!(a.ui.help_end);
    assert_eq!(a.ui.selected, before);
    a.update(Msg::Action(Action::Up));
    assert!(!a.ui.help_end);
    a.update(Msg::Action(Action::Down));
    // Closed and opened again, the help starts at its top.
    a.update(Msg::Action(Action::Help));
    a.update(Msg::Action(Action::Help));
    assert!(a.ui.help && !a.ui.help_end);
    a.update(Msg::Action(Action::Help));
    a.update(Msg::Action(Action::Down));
    assert_ne!(
        a.ui.selected, before,
        "with the help closed, ↓ selects a disk"
    );
}

#[test]
fn help_detail_and_back() {
    let mut a = app("live-idle");
    a.update(Msg::Action(Action::Help));
    assert!(a.ui.help);
    a.update(Msg::Action(Action::Back));
    assert!(!a.ui.help);
    a.update(Msg::Action(Action::Detail));
    assert!(a.ui.detail);
    a.update(Msg::Action(Action::Back));
    assert!(!a.ui.detail);
}

#[test]
fn bad_sample_keeps_last_figures_and_shows_error() {
    let mut a = app("live-idle");
    let before = a.model.clone();
    let mut bad = samples("live-idle").pop().unwrap();
    bad.files
        .insert("proc/meminfo".into(), "MemTotal: x kB\n".into());
    a.update(Msg::Sample(bad));
    assert_eq!(a.model, before);
    assert!(a.error.as_deref().unwrap().starts_with("proc/meminfo:1:"));
}

#[test]
fn eat_past_the_margin_asks_first_then_forces() {
    let mut a = app("live-idle");
    a.caps.experiments = true;
    let type_in = |a: &mut App, s: &str| {
        for c in s.chars() {
            a.update(Msg::Key(Key::Char(c)));
        }
        a.update(Msg::Key(Key::Enter))
    };
    a.update(Msg::Key(Key::Char('m')));
    let fx = type_in(&mut a, "64M");
    assert!(
        matches!(&fx[..], [Effect::Job(JobCmd::StartEat { size, force: false, .. })] if size == "64M"),
        "{fx:?}"
    );
    a.update(Msg::Key(Key::Char('m')));
    assert!(type_in(&mut a, "99%").is_empty());
    assert!(
        matches!(a.prompt, Some(Prompt::EatConfirm { .. })),
        "{:?}",
        a.prompt
    );
    let fx = a.update(Msg::Key(Key::Char('y')));
    assert!(
        matches!(&fx[..], [Effect::Job(JobCmd::StartEat { size, force: true, .. })] if size == "99%"),
        "{fx:?}"
    );
}

/// Feeds a tree to an app that may scan for foreign fio; returns it and the ScanFio count.
fn scanning_app(tree: &str) -> (App, usize) {
    let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
    a.host.cpus = 2;
    a.caps.scan_fio = true;
    let scans = samples(tree)
        .into_iter()
        .flat_map(|s| a.update(Msg::Sample(s)))
        .filter(|e| matches!(e, Effect::Job(JobCmd::ScanFio(_))))
        .count();
    (a, scans)
}

#[test]
fn idle_machine_is_not_scanned_for_foreign_fio() {
    let (mut a, scans) = scanning_app("live-idle");
    // vda read 14.9 times in the tree's first second (busy: > 10/s), then nothing.
    assert_eq!(scans, 1);
    a.sample_ms += 600_000;
    assert!(a.scan_due().is_empty(), "not even after ten minutes");
    // A known foreign fio is followed every 2 s, and dropped once a scan finds none.
    a.jobs.foreign = vec![ForeignFio::default()];
    assert_eq!(a.scan_due(), vec![Effect::Job(JobCmd::ScanFio(None))]);
    a.sample_ms += 1_000;
    assert!(a.scan_due().is_empty());
    a.sample_ms += 1_000;
    assert_eq!(a.scan_due(), vec![Effect::Job(JobCmd::ScanFio(None))]);
    a.update(Msg::Job(JobReport::Foreign(Vec::new())));
    a.sample_ms += 2_000;
    assert!(a.scan_due().is_empty());
}

/// While the walk covers every process, the scan starts from its fio pids (issue #27); a
/// scoped walk does not cover every process, and without a walk every comm is read.
#[test]
fn the_scan_starts_from_the_walks_fio_pids() {
    let walk = |scope: &str| {
        format!("walk {{}}\nprev -\nclk_tck 100\ntask_delayacct 0\nscope {scope}\nfio 7 8\n")
    };
    for (scope, want) in [("-", Some(vec![7, 8])), ("/box", None)] {
        let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
        a.host.cpus = 2;
        a.caps.scan_fio = true;
        let mut scans = Vec::new();
        for mut s in samples("live-fio-randwrite") {
            let text = walk(scope).replace("{}", &s.mono_ns.to_string());
            s.files.insert(crate::sample::names::PROCS.to_owned(), text);
            scans.extend(a.update(Msg::Sample(s)));
        }
        let scans: Vec<_> = scans
            .into_iter()
            .filter(|e| matches!(e, Effect::Job(JobCmd::ScanFio(_))))
            .collect();
        assert_eq!(
            scans,
            vec![Effect::Job(JobCmd::ScanFio(want))],
            "scope {scope}"
        );
    }
}

#[test]
fn busy_disk_scans_for_foreign_fio_every_5_s() {
    let (mut a, scans) = scanning_app("live-fio-randwrite");
    // The first model with rates is busy: one scan, none in the next two seconds (the tree's
    // last root is 2 s after it) nor two more.
    assert_eq!(scans, 1);
    a.sample_ms += 2_000;
    assert!(a.scan_due().is_empty());
    a.sample_ms += 1_000;
    assert_eq!(a.scan_due(), vec![Effect::Job(JobCmd::ScanFio(None))]);
    a.caps.scan_fio = false;
    a.sample_ms += 5_000;
    assert!(a.scan_due().is_empty(), "trees and replays never scan");
}

/// The `RefreshSlow` effects of one sample.
fn refreshes(a: &mut App, s: crate::sample::RawSample) -> usize {
    a.update(Msg::Sample(s))
        .iter()
        .filter(|e| **e == Effect::RefreshSlow)
        .count()
}

#[test]
fn slow_files_are_refreshed_when_derived_figures_stop_matching_the_kernel() {
    let s = samples("live-idle");
    let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
    // Derived thresholds and MemAvailable match the kernel's on this tree: nothing to ask.
    for x in &s {
        assert_eq!(refreshes(&mut a, x.clone()), 0);
    }
    assert!(!a.model.as_ref().unwrap().derived_differs());
    // A dirty_ratio the kernel is not using (the sysctl text is stale, or was just written):
    // ask at once, then at most once every crate::model::refresh::ASK_EVERY samples while it lasts.
    let key = names::vm_sysctl("dirty_ratio");
    let mut stale = s[s.len() - 1].clone();
    let ratio: u64 = stale.file(&key).unwrap().trim().parse().unwrap();
    stale.files.insert(key.clone(), format!("{}\n", ratio / 2));
    let asked: Vec<usize> = (0..2 * crate::model::refresh::ASK_EVERY)
        .map(|_| refreshes(&mut a, stale.clone()))
        .collect();
    assert!(a.model.as_ref().unwrap().derived_differs());
    let mut want = vec![0; 2 * crate::model::refresh::ASK_EVERY as usize];
    want[0] = 1;
    want[crate::model::refresh::ASK_EVERY as usize] = 1;
    assert_eq!(asked, want);
}

#[test]
fn slow_files_are_refreshed_when_a_disk_comes_or_goes() {
    let s = samples("live-idle");
    let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
    for x in &s {
        refreshes(&mut a, x.clone());
    }
    let last = s[s.len() - 1].clone();
    // The same disks again: nothing; one line fewer in diskstats: ask.
    assert_eq!(refreshes(&mut a, last.clone()), 0);
    let mut gone = last.clone();
    let text = gone.file(names::DISKSTATS).unwrap();
    let fewer = text.split_inclusive('\n').skip(1).collect::<String>();
    gone.files.insert(names::DISKSTATS.into(), fewer);
    assert_eq!(refreshes(&mut a, gone), 1);
    // Back at once: owed, and asked for when crate::model::refresh::ASK_EVERY samples have passed.
    for _ in 0..crate::model::refresh::ASK_EVERY - 1 {
        assert_eq!(refreshes(&mut a, last.clone()), 0);
    }
    assert_eq!(refreshes(&mut a, last.clone()), 1);
    assert_eq!(refreshes(&mut a, last), 0, "paid");
}

#[test]
fn a_captured_tree_is_never_stalled_and_keeps_its_errors() {
    let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
    a.caps.captured = true;
    let s = samples("live-idle");
    let mut broken = s[1].clone();
    broken.files.insert(
        "proc/meminfo".into(),
        "MemTotal: 0 kB\nMemFree: 0 kB\n".into(),
    );
    a.update(Msg::Sample(s[0].clone()));
    a.update(Msg::Sample(broken));
    a.update(Msg::Sample(s[2].clone()));
    assert!(
        a.error
            .as_deref()
            .is_some_and(|e| e.contains("MemTotal is 0")),
        "{:?}",
        a.error
    );
    // The wall clock is decades past the tree's time since boot: not a stall.
    let before = a.now_ms;
    a.update(Msg::Tick {
        now_ms: 1_795_331_362_000,
    });
    assert_eq!(a.now_ms, before, "the clock stays the tree's");
    let area = ratatui::layout::Rect::new(0, 0, 80, 24);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    crate::ui::render(&a, area, &mut buf);
    let screen: String = buf
        .content
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(!screen.contains("stalled"), "{screen}");
    assert!(screen.contains("MemTotal is 0"), "{screen}");
}

#[test]
fn a_job_that_fails_before_starting_shows_no_elapsed_time_and_its_whole_reason() {
    let mut a = app("live-idle");
    // Asked for from the command line, before the first clock reading (started_ms 0).
    let id = a.jobs.add(JobKind::Fio, "fio randwrite".into(), 0);
    a.now_ms = 1_795_331_362_000;
    let reason = "fio directory: /srv/shared is writable by other users (mode 0777) and not \
                  sticky, so they could swap fio's files for links to files of yours; the end";
    a.update(Msg::Job(JobReport::Job(JobMsg::Ended {
        id,
        how: format!("failed: {reason}"),
        failed: true,
        result: None,
    })));
    for (w, h) in [(80, 24), (160, 48)] {
        let area = ratatui::layout::Rect::new(0, 0, w, h);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        crate::ui::render(&a, area, &mut buf);
        let screen = crate::ui::rows_of(&buf).join("\n");
        assert!(!screen.contains("498747"), "{screen}");
        assert!(screen.contains("failed    0:00"), "{w}x{h}: {screen}");
        assert!(
            screen.contains("fio directory: /srv/shared"),
            "{w}x{h}: {screen}"
        );
        if w >= 160 {
            // Wrapped onto the pane's next row, not cut at its width.
            assert!(
                screen.contains("   s (mode 0777) and not sticky"),
                "{screen}"
            );
        }
    }
}

#[test]
fn saved_settings_are_saved_when_changed_and_only_then() {
    let mut a = app("live-idle");
    let saves = |e: Vec<Effect>| -> Vec<Setting> {
        e.into_iter()
            .filter_map(|e| match e {
                Effect::Save(v) => Some(v),
                _ => None,
            })
            .flatten()
            .collect()
    };
    assert_eq!(
        saves(a.update(Msg::Key(Key::Char('s')))),
        vec![Setting::DiskSort(SortKey::AquSz)]
    );
    assert_eq!(
        saves(a.update(Msg::Key(Key::Char('u')))),
        vec![Setting::Units(Units::Pages)]
    );
    assert_eq!(
        saves(a.update(Msg::Key(Key::Char('p')))),
        vec![Setting::Partitions(true)]
    );
    assert_eq!(
        saves(a.update(Msg::Key(Key::Char('w')))),
        vec![Setting::View(Some(WhoView::Processes))]
    );
    // With the processes view open, `s` sorts the processes.
    assert_eq!(
        saves(a.update(Msg::Key(Key::Char('s')))),
        vec![Setting::ProcessSort(ProcSort::Memory)]
    );
    assert_eq!(
        saves(a.update(Msg::Key(Key::Esc))),
        vec![Setting::View(None)]
    );
    // Focus, help, pause and samples are not settings.
    for k in [
        Key::Tab,
        Key::Char('?'),
        Key::Esc,
        Key::Char(' '),
        Key::Char(' '),
    ] {
        assert_eq!(saves(a.update(Msg::Key(k))), vec![], "{k:?}");
    }
    for s in samples("live-idle") {
        assert_eq!(saves(a.update(Msg::Sample(s))), vec![]);
    }
    // The file's settings come back.
    let mut b = app("live-idle");
    b.use_settings(&crate::config::Settings {
        units: Some(Units::Pages),
        disk_sort: Some(SortKey::AquSz),
        process_sort: Some(ProcSort::Memory),
        view: Some(None),
        partitions: Some(true),
        ..Default::default()
    });
    a.ui.focus = b.ui.focus;
    assert_eq!(format!("{:?}", a.ui), format!("{:?}", b.ui));
}

#[test]
fn clicks_focus_and_select_and_the_wheel_moves() {
    let mut a = app("kernel-4.14-diskstats14");
    let names: Vec<String> = a.sorted_disks().iter().map(|d| d.name.clone()).collect();
    assert!(names.len() >= 3, "{names:?}");
    let at = |kind, target| Msg::Pointer(Pointer { kind, target });
    a.update(at(MouseKind::Click, Target::Pane(Focus::Dirty)));
    assert_eq!(a.ui.focus, Focus::Dirty);
    a.update(at(MouseKind::Click, Target::Disk(names[2].clone())));
    assert_eq!(
        (a.ui.focus, a.selected_disk().unwrap().name.clone()),
        (Focus::Disks, names[2].clone())
    );
    a.update(at(MouseKind::WheelUp, Target::Pane(Focus::Disks)));
    assert_eq!(a.selected_disk().unwrap().name, names[1]);
    a.update(at(MouseKind::WheelDown, Target::Disk(names[0].clone())));
    assert_eq!(a.selected_disk().unwrap().name, names[2]);
    // No jobs: the jobs pane does not take the focus.
    a.update(at(MouseKind::Click, Target::Pane(Focus::Jobs)));
    assert_eq!(a.ui.focus, Focus::Disks);
    let id = a.jobs.add(JobKind::Eat, "eat 1G".into(), 0);
    let id2 = a.jobs.add(JobKind::Eat, "eat 2G".into(), 0);
    a.update(at(MouseKind::Click, Target::Job(id)));
    assert_eq!((a.ui.focus, a.jobs.selected), (Focus::Jobs, Some(id)));
    a.update(at(MouseKind::WheelDown, Target::Job(id)));
    assert_eq!(a.jobs.selected, Some(id2));
    // Over the who view the wheel moves its selection; a click picks a row.
    a.update(Msg::Key(Key::Char('w')));
    a.update(at(MouseKind::Click, Target::Process(42)));
    assert_eq!(a.ui.proc_selected, Some(42));
    a.update(at(MouseKind::Click, Target::Cgroup("/box".into())));
    assert_eq!(a.ui.cgroup_selected.as_deref(), Some("/box"));
    // Help open: a click closes it and does nothing else.
    a.update(Msg::Key(Key::Char('?')));
    a.update(at(MouseKind::Click, Target::Pane(Focus::Memory)));
    assert!(!a.ui.help);
    assert_eq!(a.ui.focus, Focus::Jobs);
    // An unplaced mouse event does nothing.
    let before = format!("{:?}", a.ui);
    a.update(Msg::Mouse(Mouse {
        kind: MouseKind::Click,
        column: 1,
        row: 1,
    }));
    assert_eq!(format!("{:?}", a.ui), before);
}

#[test]
fn an_eaters_progress_waits_for_the_next_frame_and_its_holding_does_not() {
    let mut a = app("live-idle");
    let id = a.jobs.add(JobKind::Eat, "eat 20G".into(), 0);
    let eat = |touched: u64, holding: bool| {
        Msg::Job(JobReport::Job(JobMsg::Eat {
            id,
            touched,
            target: 20 << 30,
            holding,
        }))
    };
    let _ = a.take_dirty();
    a.update(eat(64 << 20, false));
    assert!(
        !a.take_dirty(),
        "a step of the ramp is drawn with the next sample"
    );
    assert_eq!(a.jobs.get(id).unwrap().eat, Some((64 << 20, 20 << 30)));
    a.update(eat(20 << 30, true));
    assert!(a.take_dirty(), "holding shows at once");
    a.update(Msg::Sample(samples("live-idle")[0].clone()));
    assert!(a.take_dirty());
}
