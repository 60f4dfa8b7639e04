//! The victims on screen and in batch output: the processes view's `SYNC/s` and `SYNCms`
//! columns and `processes[]`'s fsync keys, from the recording of `who_screens.rs`
//! (`assets/recordings/who-throttled.pwrec`) with a sync tracer's pseudo-file added to each
//! sample, as a live source would carry it: one of the recorded writers syncing, and a
//! "database" the walk did not list (it did no IO of its own since the walk). Snapshots at
//! 80x24 and 160x48 live in `snapshots/`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[macro_use]
#[path = "common/screen.rs"]
mod screen;
use screen::screen;

use std::path::Path;

use pagewatch::app::{Action, App, Look, Msg, ProcSort};
use pagewatch::sample::{RawSample, names};
use pagewatch::source::HostInfo;

/// The sample with the tracepoint's busiest interval (as in `who_screens.rs`).
const AT: usize = 12;
/// The database the walk did not list.
const DB: u32 = 4_000_001;

fn samples() -> Vec<RawSample> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings/who-throttled.pwrec");
    pagewatch::record::read(&path).unwrap().samples
}

fn app(samples: &[RawSample]) -> App {
    let host = HostInfo {
        hostname: "testhost".into(),
        kernel: "6.18.44".into(),
        cpus: 2,
    };
    let mut app = App::new(host, Look::default(), 1.0);
    for s in samples.iter().take(AT) {
        app.update(Msg::Sample(s.clone()));
    }
    app
}

/// The samples with the sync pseudo-file: `pid` made 20 calls of 8 ms mean and 42 ms at
/// most over each interval; `DB` 10 of 30 ms and one still waiting for 2.5 s.
fn with_sync(samples: &[RawSample], pid: u32) -> Vec<RawSample> {
    let text = format!(
        "state armed\nsource syscalls\nclock mono\nbytes 4096\ncapped 0\nevents 62\nlost 0\n\
         unpaired 0\ncpu_ns 60000\ntgid={pid} calls=20 total_ns=160000000 max_ns=42000000 open_ns=0 \
         comm=ignored\ntgid={DB} calls=10 total_ns=300000000 max_ns=31000000 \
         open_ns=2500000000 comm=pgbench\n"
    );
    let mut out = samples.to_vec();
    for s in &mut out {
        s.files.insert(names::SYNC_CALLS.to_owned(), text.clone());
    }
    out
}

#[test]
fn the_victim_shows_in_the_processes_view_and_the_batch_output() {
    let plain = samples();
    let before = app(&plain);
    let procs = before.model.as_ref().unwrap().processes.clone().unwrap();
    assert!(
        procs.iter().all(|p| p.fsync_per_s.is_none()),
        "null when not armed"
    );
    let pid = procs[1].pid;
    let mut app = app(&with_sync(&plain, pid));
    let m = app.model.as_ref().unwrap();
    let rows = m.processes.as_ref().unwrap();
    let row = rows.iter().find(|p| p.pid == pid).unwrap();
    let dt = m.interval_s.unwrap();
    assert!((row.fsync_per_s.unwrap() - 20.0 / dt).abs() < 1e-9);
    assert_eq!(
        (row.fsync_mean_ms, row.fsync_max_ms),
        (Some(8.0), Some(42.0))
    );
    let db = rows.last().unwrap();
    assert_eq!((db.pid, db.comm.as_str()), (DB, "pgbench"), "{rows:?}");
    assert_eq!(
        (db.fsync_mean_ms, db.fsync_max_ms),
        (Some(30.0), Some(2500.0))
    );
    assert!(
        rows.iter()
            .filter(|p| p.pid != pid && p.pid != DB)
            .all(|p| p.fsync_per_s == Some(0.0) && p.fsync_mean_ms.is_none())
    );
    // The JSON keys, and the text line naming the victims.
    let json = serde_json::to_value(m).unwrap();
    let j = &json["processes"][0];
    assert!(
        j["fsync_per_s"].is_number() && j["fsync_mean_ms"].is_null(),
        "{j}"
    );
    let text = pagewatch::batch::render_text(m, false);
    assert!(
        text.contains(&format!("sync (mean/max): pgbench[{DB}] 10/s 30/2500 ms")),
        "{text}"
    );
    app.update(Msg::Action(Action::Processes));
    let wide = screen(&app, 160, 48);
    assert!(wide.contains("SYNC/s") && wide.contains("SYNCms"), "{wide}");
    assert!(wide.contains("8.0/42"), "{wide}");
    // The sync sort puts the victims first: the database waits 300 ms/s and 2.5 s at most.
    app.ui.proc_sort = ProcSort::Sync;
    let order: Vec<u32> = app.sorted_processes().iter().map(|p| p.pid).collect();
    assert_eq!(order[..2], [DB, pid]);
    let wide = screen(&app, 160, 48);
    assert!(
        wide.contains("30/2500") && wide.contains("SYNCms*"),
        "{wide}"
    );
    assert_screens!("who_processes_sync", &app, &[(80, 24), (160, 48)]);
}
