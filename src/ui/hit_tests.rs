//! Every cell of rendered screens, hit-tested: a row found under the pointer must show that
//! disk, job, process or cgroup, and every row shown must be found.

use std::collections::BTreeSet;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::app::{JobKind, Look, Msg};
use crate::source::HostInfo;

fn app_of(samples: impl IntoIterator<Item = crate::sample::RawSample>) -> App {
    let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
    for s in samples {
        app.update(Msg::Sample(s));
    }
    app
}

fn recorded(n: usize) -> App {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/recordings/who-throttled.pwrec");
    let rec = crate::record::read(&path).unwrap();
    app_of(rec.samples.into_iter().take(n))
}

/// The screen's rows as text.
fn rows(app: &App, area: Rect) -> Vec<String> {
    let mut buf = Buffer::empty(area);
    crate::ui::render(app, area, &mut buf);
    crate::ui::rows_of(&buf)
}

/// Hit-tests every cell; checks each row target against the row's text; returns the targets.
fn every_cell(app: &App, w: u16, h: u16) -> BTreeSet<String> {
    let area = Rect::new(0, 0, w, h);
    let text = rows(app, area);
    let mut found = BTreeSet::new();
    let mut job_rows = std::collections::BTreeMap::new();
    let mut fio_rows = std::collections::BTreeMap::new();
    for y in 0..h {
        for x in 0..w {
            let Some(t) = target(app, area, x, y) else {
                continue;
            };
            let row = &text[usize::from(y)];
            let shows = match &t {
                Target::Disk(name) => row.contains(name.as_str()),
                Target::Process(pid) => row.contains(&format!(" {pid} ")),
                Target::Cgroup(path) => row.contains(path.rsplit('/').next().unwrap()),
                Target::Job(id) => {
                    job_rows.entry(*id).or_insert_with(BTreeSet::new).insert(y);
                    true
                }
                Target::JobRow(r) => {
                    let pid = match r {
                        JobRef::Own(_) => unreachable!("ours are Target::Job"),
                        JobRef::Foreign(p) | JobRef::Gone(p) => p,
                    };
                    fio_rows.entry(*pid).or_insert_with(BTreeSet::new).insert(y);
                    true
                }
                Target::Pane(_) | Target::Who => true,
            };
            assert!(shows, "{w}x{h} ({x},{y}) {t:?} on row {row:?}");
            found.insert(format!("{t:?}"));
        }
    }
    // A job's rows: its first shows its number, the others follow it.
    for (id, ys) in job_rows {
        let first = *ys.first().unwrap();
        let row = &text[usize::from(first)];
        assert!(
            row.contains(&format!("#{id} ")),
            "{w}x{h} job {id}: {row:?}"
        );
        assert_eq!(
            ys.len(),
            usize::from(*ys.last().unwrap() - first) + 1,
            "{ys:?}"
        );
        if w >= 120 {
            assert_eq!(ys.len(), 2, "two lines a job in the large layout");
        }
    }
    // A foreign fio's rows: its first names it, its rates follow in the large layout.
    for (pid, ys) in fio_rows {
        let first = *ys.first().unwrap();
        let row = &text[usize::from(first)];
        assert!(row.contains(&format!("fio {pid} ")), "{w}x{h}: {row:?}");
        let lines = if w >= 120 { 2 } else { 1 };
        assert_eq!(
            ys.iter().copied().collect::<Vec<_>>(),
            (first..first + lines).collect::<Vec<_>>()
        );
        if lines == 2 {
            let next = &text[usize::from(first + 1)];
            assert!(next.contains("disk rd "), "{w}x{h}: {next:?}");
        }
    }
    found
}

#[test]
fn disks_rows_and_panes() {
    let app = app_of(crate::source::test_samples("kernel-4.14-diskstats14"));
    for (w, h) in [(80, 24), (120, 36), (160, 48)] {
        let found = every_cell(&app, w, h);
        for d in app.sorted_disks().iter().take(5) {
            assert!(
                found.contains(&format!("Disk({:?})", d.name)),
                "{w}x{h}: {found:?}"
            );
        }
        for f in ["Memory", "Dirty", "Reclaim", "Disks"] {
            assert!(found.contains(&format!("Pane({f})")), "{w}x{h}: {found:?}");
        }
        assert!(!found.iter().any(|t| t.starts_with("Job")), "no jobs pane");
        // The header and the footer are nothing to click.
        assert_eq!(target(&app, Rect::new(0, 0, w, h), 3, 0), None);
        assert_eq!(target(&app, Rect::new(0, 0, w, h), 3, h - 1), None);
    }
    // Too small a terminal shows a message, nothing to click.
    assert_eq!(target(&app, Rect::new(0, 0, 79, 24), 3, 5), None);
}

#[test]
fn processes_rows() {
    let mut app = recorded(12);
    app.ui.who = Some(WhoView::Processes);
    for (w, h) in [(80, 24), (160, 48)] {
        let found = every_cell(&app, w, h);
        let procs: Vec<u32> = app.sorted_processes().iter().map(|p| p.pid).collect();
        assert!(procs.len() >= 3);
        for pid in &procs[..3] {
            assert!(
                found.contains(&format!("Process({pid})")),
                "{w}x{h}: {found:?}"
            );
        }
        assert!(found.contains("Who"), "the header row");
    }
}

#[test]
fn cgroups_rows() {
    use crate::source::{Source, TreeSource};
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/trees/kernel-6.12-lab-memcg");
    let mut src = TreeSource::open(&dir).unwrap();
    let mut app = app_of(std::iter::from_fn(|| src.next_sample().unwrap()));
    app.ui.who = Some(WhoView::Cgroups);
    let paths: Vec<String> = app
        .model
        .as_ref()
        .unwrap()
        .cgroups
        .as_ref()
        .unwrap()
        .rows
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(paths.contains(&"/box".to_owned()), "{paths:?}");
    for (w, h) in [(80, 24), (160, 48)] {
        let found = every_cell(&app, w, h);
        assert!(found.contains("Cgroup(\"/box\")"), "{w}x{h}: {found:?}");
    }
}

#[test]
fn job_rows_in_both_layouts() {
    let mut app = app_of(crate::source::test_samples("kernel-4.14-diskstats14"));
    let a = app.jobs.add(JobKind::Eat, "eat 1G".into(), 0);
    let b = app.jobs.add(JobKind::Fio, "fio randread".into(), 0);
    for (w, h) in [(80, 24), (160, 48)] {
        let found = every_cell(&app, w, h);
        for id in [a, b] {
            assert!(found.contains(&format!("Job({id})")), "{w}x{h}: {found:?}");
        }
    }
    // A fio found running, and one that ended: rows of their own, selectable by a click.
    let mut app = app_of(crate::source::test_samples("kernel-4.14-diskstats14"));
    let fio = |pid| crate::app::ForeignFio {
        pid,
        cmdline: format!("fio --name=j{pid}"),
        ..Default::default()
    };
    app.update(Msg::Job(crate::app::JobReport::Foreign(vec![
        fio(900),
        fio(901),
    ])));
    app.update(Msg::Job(crate::app::JobReport::Foreign(vec![fio(900)])));
    for (w, h) in [(80, 24), (160, 48)] {
        let found = every_cell(&app, w, h);
        for r in ["JobRow(Foreign(900))", "JobRow(Gone(901))"] {
            let text = rows(&app, Rect::new(0, 0, w, h)).join("\n");
            assert!(found.contains(r), "{w}x{h}: {found:?}\n{text}");
        }
    }
    app.update(Msg::Pointer(crate::app::Pointer {
        kind: crate::app::MouseKind::Click,
        target: Target::JobRow(JobRef::Gone(901)),
    }));
    assert_eq!(app.jobs.current(), Some(JobRef::Gone(901)));
}
