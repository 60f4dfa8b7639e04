//! A playbook picked in the screen runs to its end and its phase table opens; Esc closes it,
//! the arrows scroll it, `q` in the middle leaves no table.

use super::*;
use crate::app::{JobCmd, JobMsg, JobReport, Look, Msg, Prompt};
use crate::event::{FioDir, FioSummary};
use crate::source::HostInfo;
use crate::source::test_samples as samples;

const BOOK: &str = "name = \"two\"\ndescription = \"d\"\n\
    [[step]]\nphase = \"cold\"\n\
    [[step]]\nfio = \"randread\"\nset = { size = \"1M\" }\n\
    [[step]]\nphase = \"warm\"\n\
    [[step]]\nfio = \"randread\"\nset = { size = \"1M\" }\n";

/// An app on live-idle with BOOK offered first in the picker.
fn app() -> (App, Vec<crate::sample::RawSample>) {
    let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
    app.caps.experiments = true;
    let all = samples("live-idle");
    for s in &all {
        app.update(Msg::Sample(s.clone()));
    }
    app.playbooks
        .push(crate::play::Playbook::parse(BOOK).unwrap());
    (app, all)
}

/// Picks BOOK, confirms it; the id of its first fio job.
fn start(a: &mut App) -> u32 {
    a.update(Msg::Key(Key::Char('P')));
    let fx = a.update(Msg::Key(Key::Enter));
    let [Effect::CheckPlay(book)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    a.update(Msg::PlayChecked {
        book: book.clone(),
        device: Some("vda".into()),
        result: Ok(Vec::new()),
    });
    assert!(matches!(a.prompt, Some(Prompt::PlayConfirm { .. })));
    let fx = a.update(Msg::Key(Key::Char('y')));
    fio_started(a, &fx)
}

/// The fio job `fx` starts, reported started (its phase is the one it starts in).
fn fio_started(a: &mut App, fx: &[Effect]) -> u32 {
    let id = (fx.iter())
        .find_map(|e| match e {
            Effect::Job(JobCmd::StartFio { id, .. }) => Some(*id),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no fio started: {fx:?}"));
    a.update(Msg::Job(JobReport::Job(JobMsg::Started {
        id,
        pid: 4242,
        argv: vec!["fio".into()],
    })));
    id
}

/// A sample `ms` after the app's clock, so its model falls in the current phase.
fn later(a: &mut App, raw: &crate::sample::RawSample, ms: i64) {
    let mut s = raw.clone();
    s.wall_ms = a.now_ms + ms;
    a.update(Msg::Sample(s));
}

fn ended(a: &mut App, id: u32, iops: f64) -> Vec<Effect> {
    a.update(Msg::Job(JobReport::Job(JobMsg::Ended {
        id,
        how: "finished".into(),
        failed: false,
        result: Some(FioSummary {
            name: "randread".into(),
            read: FioDir {
                ios: 100,
                iops,
                ..FioDir::default()
            },
            ..FioSummary::default()
        }),
    })))
}

#[test]
fn a_finished_playbook_opens_its_phase_table_and_esc_closes_it() {
    let (mut a, raw) = app();
    let first = start(&mut a);
    later(&mut a, &raw[1], 1000);
    later(&mut a, &raw[2], 2000);
    assert!(a.phase_table.is_none(), "open before the end");
    let second = {
        let fx = ended(&mut a, first, 120.0);
        fio_started(&mut a, &fx)
    };
    later(&mut a, &raw[3], 1000);
    ended(&mut a, second, 9000.0);
    assert!(a.play.is_none());
    let t = a.phase_table.as_ref().expect("the table opens at the end");
    assert_eq!(t.title, "playbook two ends");
    let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["cold", "warm"]);
    // Each job's result in the phase it started in; the samples in theirs.
    assert!(
        (t.rows[0].fio[0].iops - 120.0).abs() < 1e-9,
        "{}",
        t.rows[0].fio[0].iops
    );
    assert!(
        (t.rows[1].fio[0].iops - 9000.0).abs() < 1e-9,
        "{}",
        t.rows[1].fio[0].iops
    );
    assert!(t.rows[0].mem_available_min_kb.is_some());
    assert_eq!(t.rows[0].device.as_ref().unwrap().name, "vda");
    assert!(t.lines[0].starts_with("phase") && t.lines[0].contains("vda await"));
    assert!(
        t.lines
            .iter()
            .any(|l| l.starts_with("warm") && l.contains("9000"))
    );
    // Keys go to the table: P opens no picker while it is shown.
    a.update(Msg::Key(Key::Char('P')));
    assert!(a.prompt.is_none());
    a.update(Msg::Key(Key::Esc));
    assert!(a.phase_table.is_none());
    // The next playbook's table covers only its own run.
    later(&mut a, &raw[1], 1000);
    let first = start(&mut a);
    later(&mut a, &raw[2], 1000);
    let second = {
        let fx = ended(&mut a, first, 1.0);
        fio_started(&mut a, &fx)
    };
    later(&mut a, &raw[3], 1000);
    ended(&mut a, second, 2.0);
    let t = a.phase_table.as_ref().unwrap();
    assert_eq!(t.rows.len(), 2);
    assert_eq!(t.rows[0].fio.len(), 1);
    assert!(
        (t.rows[0].fio[0].iops - 1.0).abs() < 1e-9,
        "{}",
        t.rows[0].fio[0].iops
    );
    a.update(Msg::Key(Key::Enter));
    assert!(a.phase_table.is_none());
}

#[test]
fn the_arrows_scroll_within_the_text() {
    let (mut a, _) = app();
    let first = start(&mut a);
    let second = {
        let fx = ended(&mut a, first, 1.0);
        fio_started(&mut a, &fx)
    };
    ended(&mut a, second, 2.0);
    let (n, w) = {
        let t = a.phase_table.as_ref().unwrap();
        (t.lines.len(), t.width())
    };
    for _ in 0..n + 5 {
        a.update(Msg::Key(Key::Down));
    }
    a.update(Msg::Key(Key::Right));
    let t = a.phase_table.as_ref().unwrap();
    assert_eq!((t.top, t.left), (n - 1, 8));
    for _ in 0..w {
        a.update(Msg::Key(Key::Right));
    }
    a.update(Msg::Key(Key::Up));
    let t = a.phase_table.as_ref().unwrap();
    assert_eq!((t.top, t.left), (n - 2, w - 1));
    a.update(Msg::Key(Key::Char('g')));
    let t = a.phase_table.as_ref().unwrap();
    assert_eq!((t.top, t.left), (0, 0));
}

#[test]
fn quitting_in_the_middle_opens_no_table() {
    let (mut a, raw) = app();
    start(&mut a);
    later(&mut a, &raw[1], 1000);
    let fx = a.update(Msg::Key(Key::Char('q')));
    assert_eq!(fx.last(), Some(&Effect::Quit));
    assert!(a.phase_table.is_none());
    assert!(a.play_models.is_empty());
}
