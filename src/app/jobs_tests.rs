//! Tests for `jobs.rs`: rows and selection over our jobs and foreign fios, what `x` does to
//! each, ended rows kept (capped, replaced, dismissed), and the detail view's keys.

use super::*;
use crate::app::{Action, App, Effect, Focus, JobCmd, JobReport, Look, Msg};
use crate::source::HostInfo;

fn fio(pid: u32, cmd: &str) -> ForeignFio {
    ForeignFio {
        pid,
        cmdline: cmd.to_owned(),
        write_bytes_s: Some(1e6),
        ..ForeignFio::default()
    }
}

fn ended(j: &mut Jobs, id: u32, at: i64) {
    j.apply(
        &JobMsg::Ended {
            id,
            how: "ended (exit 1)".into(),
            failed: false,
            result: None,
        },
        at,
    );
}

#[test]
fn x_says_and_does_what_fits_the_selected_row() {
    let mut j = Jobs::default();
    assert_eq!(j.x_action(), XAction::Nothing);
    let eat = j.add(JobKind::Eat, "eat 1G".into(), 0);
    assert_eq!(j.x_action(), XAction::Release(eat));
    let f = j.add(JobKind::Fio, "fio".into(), 0);
    assert_eq!(j.x_action(), XAction::Stop(f));
    assert_eq!(j.x_action().title(), format!("x stops #{f}"));
    j.set_foreign(vec![fio(900, "fio --name=a")], 1_000);
    assert_eq!(
        j.rows(),
        vec![JobRef::Own(eat), JobRef::Own(f), JobRef::Foreign(900)]
    );
    j.move_selection(true);
    assert_eq!(j.current(), Some(JobRef::Foreign(900)));
    // Never "x stops" for a fio that is not ours.
    assert_eq!(j.x_action(), XAction::NotOurs(900));
    assert!(!j.x_action().title().contains("stops"));
    j.move_selection(false);
    assert_eq!(j.current(), Some(JobRef::Own(f)));
    ended(&mut j, f, 2_000);
    // Ended, with the eater still active: x releases the eater (as it always did).
    assert_eq!(j.x_action(), XAction::Release(eat));
    j.stopping(eat);
    ended(&mut j, eat, 2_500);
    assert_eq!(j.x_action(), XAction::Dismiss(JobRef::Own(f)));
    j.dismiss(JobRef::Own(f));
    assert!(j.get(f).is_none());
    // A running job cannot be dismissed.
    let running = j.add(JobKind::Eat, "eat 1G".into(), 0);
    j.dismiss(JobRef::Own(running));
    assert!(j.get(running).is_some());
}

#[test]
fn a_finishing_foreign_fio_ends_with_the_figures_of_its_last_scan_with_workers() {
    let file = JobFile {
        path: "/data/t.0.0".into(),
        size_bytes: 1 << 30,
        cached_pages: 1,
        total_pages: 2,
        method: "cachestat",
        age_s: 0,
    };
    let working = ForeignFio {
        workers: 2,
        files: vec![file],
        ..fio(900, "fio t")
    };
    // The main process alone, its workers reaped: no data file open, no rate that scan, then
    // its own rate of nothing.
    let reaping = ForeignFio {
        write_bytes_s: None,
        ..fio(900, "fio t")
    };
    let idle = ForeignFio {
        write_bytes_s: Some(0.0),
        ..fio(900, "fio t")
    };
    let mut j = Jobs::default();
    j.set_foreign(vec![working.clone()], 1_000);
    j.set_foreign(vec![reaping.clone()], 2_000);
    // The running row says what this scan saw.
    let (f, _) = j.foreign_of(JobRef::Foreign(900)).unwrap();
    assert_eq!((f.files.len(), f.write_bytes_s), (0, None));
    j.set_foreign(vec![idle.clone()], 3_000);
    j.set_foreign(Vec::new(), 4_000);
    let (f, at) = j.foreign_of(JobRef::Gone(900)).unwrap();
    let path = f.files.first().map(|f| f.path.as_str());
    assert_eq!(
        (path, f.write_bytes_s, f.workers, at),
        (Some("/data/t.0.0"), Some(1e6), 2, Some(4_000))
    );
    assert!(j.last_work.is_empty());
    // A main process alone from the start (laying out its files) ends with its own figures.
    let mut j = Jobs::default();
    j.set_foreign(vec![idle.clone()], 1_000);
    j.set_foreign(Vec::new(), 2_000);
    let (f, _) = j.foreign_of(JobRef::Gone(900)).unwrap();
    assert_eq!((f.files.len(), f.write_bytes_s), (0, Some(0.0)));
    // Workers again (a second job of the run starting): the kept view is dropped.
    let mut j = Jobs::default();
    j.set_foreign(vec![working.clone()], 1_000);
    j.set_foreign(vec![idle.clone()], 2_000);
    let again = ForeignFio {
        write_bytes_s: Some(7.0),
        ..working
    };
    j.set_foreign(vec![again], 3_000);
    assert!(j.last_work.is_empty());
    j.set_foreign(Vec::new(), 4_000);
    let (f, _) = j.foreign_of(JobRef::Gone(900)).unwrap();
    assert_eq!(f.write_bytes_s, Some(7.0));
}

#[test]
fn an_ended_foreign_fio_stays_with_its_last_figures() {
    let mut j = Jobs::default();
    j.set_foreign(vec![fio(900, "fio a"), fio(901, "fio b")], 1_000);
    j.set_foreign(vec![fio(901, "fio b")], 3_000);
    assert_eq!(j.ended_foreign.len(), 1);
    let (f, at) = j.foreign_of(JobRef::Gone(900)).unwrap();
    assert_eq!((f.write_bytes_s, at), (Some(1e6), Some(3_000)));
    assert!(j.has_rows());
    // Two runs of one command line: when one ends, the other (already running) keeps it.
    j.set_foreign(
        vec![fio(901, "fio b"), fio(902, "fio c"), fio(903, "fio c")],
        3_500,
    );
    j.set_foreign(vec![fio(901, "fio b"), fio(903, "fio c")], 4_000);
    let gone = |j: &Jobs| {
        j.ended_foreign
            .iter()
            .map(|e| e.fio.pid)
            .collect::<Vec<_>>()
    };
    assert_eq!(gone(&j), vec![900, 902]);
    // A new run of the same command line replaces it.
    j.set_foreign(
        vec![fio(901, "fio b"), fio(903, "fio c"), fio(950, "fio a")],
        5_000,
    );
    assert_eq!(gone(&j), vec![902]);
    j.set_foreign(
        vec![fio(901, "fio b"), fio(903, "fio c"), fio(950, "fio a")],
        5_500,
    );
    j.dismiss(JobRef::Gone(902));
    assert!(j.ended_foreign.is_empty());
    // Capped: the oldest go first.
    for pid in 0..(MAX_ENDED as u32 + 3) {
        j.set_foreign(vec![fio(1000 + pid, &format!("fio {pid}"))], 6_000);
    }
    j.set_foreign(Vec::new(), 7_000);
    assert_eq!(j.ended_foreign.len(), MAX_ENDED);
    assert_eq!(
        j.ended_foreign.last().unwrap().fio.pid,
        1000 + MAX_ENDED as u32 + 2
    );
    // Dismissed with x.
    j.select(JobRef::Gone(1000 + MAX_ENDED as u32 + 2));
    assert_eq!(j.x_action().title(), "x dismisses");
    j.dismiss(JobRef::Gone(1000 + MAX_ENDED as u32 + 2));
    assert_eq!(j.ended_foreign.len(), MAX_ENDED - 1);
}

#[test]
fn our_ended_jobs_are_capped() {
    let mut j = Jobs::default();
    let ids: Vec<u32> = (0..MAX_ENDED + 2)
        .map(|i| j.add(JobKind::Fio, format!("fio {i}"), 0))
        .collect();
    let running = j.add(JobKind::Eat, "eat".into(), 0);
    for id in &ids {
        ended(&mut j, *id, 10);
    }
    assert_eq!(j.list.len(), MAX_ENDED + 1);
    assert!(j.get(ids[0]).is_none() && j.get(ids[MAX_ENDED + 1]).is_some());
    assert!(j.get(running).is_some());
}

#[test]
fn enter_opens_the_detail_and_esc_or_q_close_it() {
    let mut a = App::new(HostInfo::default(), Look::default(), 1.0);
    a.caps.experiments = true;
    a.update(Msg::Job(JobReport::Foreign(vec![fio(900, "fio --name=a")])));
    a.update(Msg::Action(Action::FocusNext));
    assert_eq!(
        a.ui.focus,
        Focus::Jobs,
        "a foreign fio alone puts the pane on screen"
    );
    a.update(Msg::Action(Action::Detail));
    assert_eq!(a.jobs.detail, Some(JobRef::Foreign(900)));
    a.update(Msg::Action(Action::Back));
    assert_eq!(a.jobs.detail, None);
    a.update(Msg::Action(Action::Detail));
    assert_eq!(
        a.update(Msg::Action(Action::Quit)),
        Vec::new(),
        "q closes, not quits"
    );
    assert_eq!(a.jobs.detail, None);
    // x on a foreign fio: a notice, no effect.
    assert_eq!(a.update(Msg::Action(Action::StopJob)), Vec::new());
    assert!(
        a.notice.as_deref().unwrap().contains("not ours"),
        "{:?}",
        a.notice
    );
    // A job of ours: its files (from its command line) are measured while the view is open.
    let id = a.jobs.add(JobKind::Fio, "fio".into(), 0);
    let argv = vec!["fio".into(), "--name=x".into(), "--filename=/t/f".into()];
    a.jobs.apply(&JobMsg::Started { id, pid: 7, argv }, 0);
    let fx = a.update(Msg::Action(Action::Detail));
    assert_eq!(
        fx,
        vec![Effect::Job(JobCmd::MeasureFiles {
            id,
            paths: vec!["/t/f".into()]
        })]
    );
    let file = JobFile {
        path: "/t/f".into(),
        size_bytes: 8192,
        cached_pages: 1,
        total_pages: 2,
        method: "cachestat",
        age_s: 0,
    };
    a.update(Msg::Job(JobReport::Files {
        id,
        files: vec![file.clone()],
    }));
    assert_eq!(a.jobs.get(id).unwrap().files, vec![file]);
}
