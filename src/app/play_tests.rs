//! The playbook picker, its confirmation and a run driven by job reports, through
//! `App::update` only (the runtime's side is played by hand).

use super::*;
use crate::app::{JobCmd, JobMsg, JobReport, Key, Look, TuneView};
use crate::jobs::tune::Change;
use crate::source::HostInfo;
use crate::source::test_samples as samples;

fn app() -> App {
    let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
    app.caps.experiments = true;
    for s in samples("live-idle") {
        app.update(Msg::Sample(s));
    }
    app
}

fn key(a: &mut App, k: Key) -> Vec<Effect> {
    a.update(Msg::Key(k))
}

#[test]
fn picker_checks_confirms_and_runs_flood_vs_fsync() {
    let mut a = app();
    key(&mut a, Key::Char('P'));
    let Some(Prompt::Play { books, .. }) = &a.prompt else {
        panic!("no picker: {:?}", a.prompt);
    };
    let n = books
        .iter()
        .position(|(b, _)| b == "flood-vs-fsync")
        .unwrap();
    for _ in 0..n {
        key(&mut a, Key::Down);
    }
    let fx = key(&mut a, Key::Enter);
    let [Effect::CheckPlay(book)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    // A second pick while this one is checked is refused.
    key(&mut a, Key::Char('P'));
    assert!(a.prompt.is_none());
    let view = TuneView {
        setting: "vm.dirty_bytes".into(),
        old: "0".into(),
        new: "15728640".into(),
        lasting: None,
    };
    a.update(Msg::PlayChecked {
        book: book.clone(),
        device: Some("vda".into()),
        result: Ok(vec![view.clone()]),
    });
    assert!(
        matches!(&a.prompt, Some(Prompt::PlayConfirm { changes, .. }) if *changes == vec![view])
    );
    let fx = key(&mut a, Key::Char('y'));
    // The start: a marker, the first phase (logged), the background flood and the fsync writer.
    let starts: Vec<u32> = (fx.iter())
        .filter_map(|e| match e {
            Effect::Job(JobCmd::StartFio { id, .. }) => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(starts.len(), 2, "{fx:?}");
    assert!(a.events.iter().any(
        |e| matches!(&e.kind, crate::event::EventKind::Phase { name, .. } if name == "default")
    ));
    assert!(
        crate::ui::panes::jobs::play_line(&a)
            .unwrap()
            .contains("phase default")
    );
    // Refused while it runs.
    key(&mut a, Key::Char('P'));
    assert!(a.prompt.is_none());
    assert!(a.notice.as_deref().unwrap().contains("one at a time"));
    // Both end: the next phase tunes dirty_bytes.
    let mut fx = Vec::new();
    for id in starts {
        fx = a.update(Msg::Job(JobReport::Job(JobMsg::Ended {
            id,
            how: "finished".into(),
            failed: false,
            result: None,
        })));
    }
    assert!(
        fx.iter().any(
            |e| matches!(e, Effect::Job(JobCmd::Tune { value: Some(v), .. }) if v == "15728640")
        ),
        "{fx:?}"
    );
    // q in the middle: a marker, and the runtime restores on Quit.
    let fx = key(&mut a, Key::Char('q'));
    assert_eq!(fx.last(), Some(&Effect::Quit));
    assert!(a.play.is_none());
}

#[test]
fn tune_key_checks_then_confirms_with_the_old_value() {
    let mut a = app();
    a.caps.tune = None;
    key(&mut a, Key::Char('T'));
    for c in "vm.swappiness".chars() {
        key(&mut a, Key::Char(c));
    }
    key(&mut a, Key::Enter);
    for c in "10".chars() {
        key(&mut a, Key::Char(c));
    }
    let fx = key(&mut a, Key::Enter);
    let [Effect::CheckTune { setting, value }] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(value, "10");
    a.update(Msg::TuneChecked {
        setting: setting.clone(),
        value: value.clone(),
        result: Ok(("vm.swappiness".into(), "60".into(), None)),
    });
    assert!(matches!(&a.prompt, Some(Prompt::TuneConfirm { old, .. }) if old == "60"));
    let fx = key(&mut a, Key::Char('y'));
    assert!(
        matches!(fx.as_slice(), [Effect::Job(JobCmd::Tune { value: Some(v), .. })] if v == "10")
    );
    let fx = a.update(Msg::Job(JobReport::Tuned(Ok(Change {
        setting: "vm.swappiness".into(),
        old: "60".into(),
        new: "10".into(),
        restore: false,
        note: None,
    }))));
    // Logged, and the sysctls read again with the next sample.
    assert!(matches!(
        fx.as_slice(),
        [Effect::Log(_), Effect::RefreshSlow]
    ));
    // Not root: refused with the reason.
    a.caps.tune = Some("tuning kernel settings needs root".into());
    key(&mut a, Key::Char('T'));
    assert!(a.prompt.is_none());
    // A setting off the allowlist stays in the form with the error.
    a.caps.tune = None;
    key(&mut a, Key::Char('T'));
    for c in "kernel.panic".chars() {
        key(&mut a, Key::Char(c));
    }
    key(&mut a, Key::Enter);
    key(&mut a, Key::Char('1'));
    assert!(key(&mut a, Key::Enter).is_empty());
    assert!(
        matches!(&a.prompt, Some(Prompt::Tune { error: Some(e), .. }) if e.contains("may not be tuned"))
    );
}
