//! Whole-screen snapshots of the TUI from captured trees at 80x24, 120x40 and 160x48.
//!
//! The real pipeline runs synchronously: tree samples → `App::update` → `ui::render` into a
//! `TestBackend`. No threads, no sleeps, no clock: time comes from the samples, host facts are
//! fixed, so the screens are deterministic. Snapshots live in `snapshots/`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::path::Path;

use pagewatch::app::{Action, App, Look, Msg};
use pagewatch::source::{HostInfo, Source, TreeSource};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn app_after(tree: &str, look: Look, actions: &[Action]) -> App {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/trees")
        .join(tree);
    let mut src = TreeSource::open(&dir).unwrap();
    let host = HostInfo {
        hostname: "testhost".into(),
        kernel: "6.18.44".into(),
        cpus: 2,
    };
    let mut app = App::new(host, look, 1.0);
    while let Some(s) = src.next_sample().unwrap() {
        app.update(Msg::Sample(s));
    }
    for a in actions {
        app.update(Msg::Action(*a));
    }
    app
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| pagewatch::ui::draw(f, app)).unwrap();
    t.backend().to_string()
}

fn assert_screens(name: &str, app: &App, sizes: &[(u16, u16)]) {
    for &(w, h) in sizes {
        insta::with_settings!({
            snapshot_path => "../snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("{name}@{w}x{h}"), screen(app, w, h));
        });
    }
}

const ALL: [(u16, u16); 3] = [(80, 24), (120, 40), (160, 48)];

#[test]
fn idle() {
    assert_screens("idle", &app_after("live-idle", Look::default(), &[]), &ALL);
}

#[test]
fn fio_randwrite() {
    assert_screens(
        "fio_randwrite",
        &app_after("live-fio-randwrite", Look::default(), &[]),
        &ALL,
    );
}

#[test]
fn memory_eaten() {
    assert_screens(
        "memeaten",
        &app_after("live-memeaten", Look::default(), &[]),
        &[(160, 48)],
    );
}

#[test]
fn busy_disks_sorted_by_queue_with_partitions() {
    let app = app_after(
        "kernel-4.14-diskstats14",
        Look::default(),
        &[Action::Sort, Action::Partitions, Action::Down],
    );
    assert_screens("disks_by_aqu_sz", &app, &[(80, 24), (160, 48)]);
}

#[test]
fn device_detail_for_nvme() {
    let app = app_after("kernel-5.4-diskstats18", Look::default(), &[Action::Detail]);
    assert_screens("detail_nvme", &app, &[(120, 40)]);
}

#[test]
fn help_overlay() {
    assert_screens(
        "help",
        &app_after("live-idle", Look::default(), &[Action::Help]),
        &[(80, 24)],
    );
}

#[test]
fn ascii_and_no_color() {
    let look = Look {
        ascii: true,
        mono: true,
    };
    assert_screens(
        "ascii_mono",
        &app_after("live-fio-randwrite", look, &[Action::Units]),
        &[(80, 24)],
    );
}

#[test]
fn too_small_terminal() {
    assert_screens(
        "too_small",
        &app_after("live-idle", Look::default(), &[]),
        &[(79, 23)],
    );
}

#[test]
fn first_tick_shows_no_rates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/trees/live-idle");
    let mut src = TreeSource::open(&dir).unwrap();
    let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
    app.update(Msg::Sample(src.next_sample().unwrap().unwrap()));
    assert_screens("first_tick", &app, &[(80, 24)]);
}
