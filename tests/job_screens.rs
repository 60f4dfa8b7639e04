//! Whole-screen snapshots at 80x24 and 160x48 of the job detail view (`Enter` on a row of the
//! jobs pane, issue #24 item 7): a fio job pagewatch started (its command line, files with
//! residency, fio's live figures), a fio it did not start (its /proc rates and files), and the
//! jobs pane with that fio ended (dimmed, its last figures, `x dismisses`); and the throttled
//! writers named after the fio they work for (`fio of #1`, `fio of 2900`), from the lineage
//! pseudo-file as a live sample carries it.
//!
//! The samples are the first 12 of `assets/recordings/who-throttled.pwrec` (two buffered fio
//! writers and a dd on this VM) through `App::update`; the job reports are made up here, as
//! the supervisor would send them. Snapshots live in `snapshots/`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[macro_use]
#[path = "common/screen.rs"]
mod screen;
use screen::screen;

use std::path::Path;

use pagewatch::app::{Action, App, Focus, ForeignFio, JobKind, JobMsg, JobReport, Look, Msg};
use pagewatch::jobs::fio::FioFigures;
use pagewatch::jobs::protocol::JobFile;
use pagewatch::source::HostInfo;

/// The sizes each screen is snapshot at.
const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

fn app() -> (App, Vec<pagewatch::sample::RawSample>) {
    app_after(12)
}

/// The app after the recording's first `n` samples, and all the samples.
fn app_after(n: usize) -> (App, Vec<pagewatch::sample::RawSample>) {
    let host = HostInfo {
        hostname: "testhost".into(),
        kernel: "6.18.44".into(),
        cpus: 2,
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings/who-throttled.pwrec");
    let rec = pagewatch::record::read(&path).unwrap();
    let mut app = App::new(host, Look::default(), 1.0);
    for s in rec.samples.iter().take(n) {
        app.update(Msg::Sample(s.clone()));
    }
    (app, rec.samples)
}

fn file(path: &str, mib: u64, cached_pct: u64) -> JobFile {
    let pages = mib * 256;
    JobFile {
        path: path.into(),
        size_bytes: mib << 20,
        cached_pages: pages * cached_pct / 100,
        total_pages: pages,
        method: "cachestat",
        age_s: 0,
    }
}

fn foreign() -> ForeignFio {
    ForeignFio {
        pid: 4200,
        cmdline: "fio --name=x --filename=/var/tmp/pw-jobs-test/f:/var/tmp/pw-jobs-test/g \
                  --size=64m --rw=write --numjobs=2 --output=/var/tmp/pw-jobs-test/out.txt"
            .into(),
        read_bytes_s: Some(0.0),
        write_bytes_s: Some(118e6),
        rchar_s: Some(0.0),
        wchar_s: Some(131e6),
        files: vec![
            // A dear file's figures serve until it is due again (`file_pace`): said how old.
            JobFile {
                age_s: 14,
                ..file("/var/tmp/pw-jobs-test/f", 64, 73)
            },
            file("/var/tmp/pw-jobs-test/g", 64, 41),
        ],
        workers: 2,
    }
}

fn open_detail(app: &mut App) {
    if app.ui.focus != Focus::Jobs {
        app.update(Msg::Action(Action::FocusNext));
    }
    assert_eq!(app.ui.focus, Focus::Jobs);
    app.update(Msg::Action(Action::Detail));
}

#[test]
fn detail_of_a_fio_job_of_ours() {
    let (mut app, _) = app();
    let t0 = app.now_ms - 17_000;
    let id = app
        .jobs
        .add(JobKind::Fio, "fio randwrite size=64M".into(), t0);
    let argv: Vec<String> = "/usr/bin/fio --name=randwrite --filename=/var/tmp/pagewatch-fio/randwrite.fio \
         --size=64M --rw=randwrite --bs=4k --ioengine=psync --output-format=json+ --status-interval=1"
        .split(' ')
        .map(str::to_owned)
        .collect();
    let report = |m| Msg::Job(JobReport::Job(m));
    app.update(report(JobMsg::Started {
        id,
        pid: 3100,
        argv,
    }));
    app.update(report(JobMsg::Fio {
        id,
        figures: FioFigures {
            w_iops: 2650.0,
            w_bw: 2650.0 * 4096.0,
            w_clat_us: 370.0,
            w_p99_us: 2100.0,
            ..FioFigures::default()
        },
    }));
    open_detail(&mut app);
    app.update(Msg::Job(JobReport::Files {
        id,
        files: vec![file("/var/tmp/pagewatch-fio/randwrite.fio", 64, 96)],
    }));
    let text = screen(&app, 160, 48);
    assert!(
        text.contains("Job #1") && text.contains("--status-interval=1"),
        "{text}"
    );
    assert!(
        text.contains("96%") && text.contains("randwrite.fio"),
        "{text}"
    );
    assert!(text.contains("W 2650 IOPS"), "{text}");
    assert_screens!("job_detail_ours", &app, &SIZES);
    // Esc: back to the main view, the pane's title says what x does.
    app.update(Msg::Action(Action::Back));
    assert!(screen(&app, 160, 48).contains("Jobs (x stops #1"));
}

#[test]
fn detail_of_a_foreign_fio_and_its_ended_row() {
    let (mut app, samples) = app();
    app.update(Msg::Job(JobReport::Foreign(vec![foreign()])));
    open_detail(&mut app);
    let text = screen(&app, 160, 48);
    assert!(text.contains("fio pid 4200 (not ours"), "{text}");
    assert!(text.contains("73%") && text.contains("41%"), "{text}");
    assert_screens!("job_detail_foreign", &app, &SIZES);
    // It ends: the pane keeps it dimmed with its last figures; x would dismiss it.
    app.update(Msg::Action(Action::Back));
    app.update(Msg::Job(JobReport::Foreign(Vec::new())));
    for s in samples.iter().skip(12).take(12) {
        app.update(Msg::Sample(s.clone()));
    }
    let text = screen(&app, 160, 48);
    // The recording's 12 samples span 2 s; the pane is narrow at 160 columns.
    let line = "fio 4200 ended 2s ago, last: /var/tmp/pw-jobs-test/f 64.0M 73% ca";
    assert!(text.contains(line), "{text}");
    assert!(text.contains("Jobs (x dismisses"), "{text}");
    assert_screens!("jobs_foreign_ended", &app, &SIZES);
}

/// The recording's throttled fio workers (2921, 2923 and 3092, 3093) and dd (2883), given a
/// lineage as the live source writes it: the first two under a fio found running (2900), the
/// other two under a fio of ours (its main 3090 under pagewatch's guard 3000, job #1).
#[test]
fn throttled_workers_are_named_after_their_fio() {
    let (mut app, samples) = app_after(11);
    let id = app
        .jobs
        .add(JobKind::Fio, "fio randwrite size=64M".into(), app.now_ms);
    let report = |m| Msg::Job(JobReport::Job(m));
    app.update(report(JobMsg::Started {
        id,
        pid: 3000,
        argv: vec!["fio".into()],
    }));
    app.update(Msg::Job(JobReport::Foreign(vec![ForeignFio {
        pid: 2900,
        ..foreign()
    }])));
    let lineage = "2921 2921 2900 1000 1\n2923 2923 2900 1000 1\n3092 3092 3090 3000 1\n\
                   3093 3093 3090 3000 1\n2883 2883 1000 1\n";
    // The 12th sample, the tracepoint's busiest interval, as the live source carries it.
    {
        let mut s = samples[11].clone();
        s.files.insert(
            pagewatch::sample::names::THROTTLED_LINEAGE.to_owned(),
            lineage.to_owned(),
        );
        app.update(Msg::Sample(s));
    }
    let text = screen(&app, 160, 48);
    for want in [
        "2923 fio of 2900",
        "2921 fio of 2900",
        "3093 fio of #1",
        "3092 fio of #1",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert!(text.contains("2883 dd  "), "dd works for no job: {text}");
    assert_screens!("throttled_linked", &app, &SIZES);
}

/// A fio job that fsyncs after every write: its write completions take microseconds, its
/// fsyncs milliseconds. The jobs pane shows both, live and in the result, so the job does not
/// read as fast while it waits in fsync (flood-vs-fsync's victim).
#[test]
fn a_syncing_jobs_line_shows_its_fsync_latency() {
    use pagewatch::event::{FioDir, FioSummary};
    let (mut app, _) = app();
    let id = app.jobs.add(
        JobKind::Fio,
        "fio randwrite 128M".into(),
        app.now_ms - 5_000,
    );
    let report = |m| Msg::Job(JobReport::Job(m));
    app.update(report(JobMsg::Started {
        id,
        pid: 3100,
        argv: vec!["fio".into()],
    }));
    app.update(report(JobMsg::Fio {
        id,
        figures: FioFigures {
            w_iops: 5076.0,
            w_bw: 5076.0 * 16384.0,
            w_clat_us: 19.0,
            w_p99_us: 9.0,
            s_iops: 5076.0,
            s_mean_us: 177.0,
            s_p99_us: 2900.0,
            ..FioFigures::default()
        },
    }));
    let text = screen(&app, 160, 48);
    assert!(
        text.contains("W 5076 IOPS 79.3M/s clat 19µs p99 9µs | fsync 177µs p99 2.9ms"),
        "{text}"
    );
    let write = FioDir {
        io_bytes: 128 << 20,
        ios: 8192,
        iops: 6760.0,
        bw_bytes_s: 6760.0 * 16384.0,
        clat_mean_us: 4.0,
        clat_p99_us: 9.0,
    };
    app.update(report(JobMsg::Ended {
        id,
        how: "finished".into(),
        failed: false,
        result: Some(FioSummary {
            name: "randwrite".into(),
            fio_version: "fio-3.33".into(),
            runtime_ms: 1212,
            read: FioDir::default(),
            write,
            sync: FioDir {
                io_bytes: 0,
                clat_mean_us: 143.0,
                clat_p99_us: 449.0,
                ..write
            },
            partial: false,
            error: None,
        }),
    }));
    let text = screen(&app, 160, 48);
    // Too long for the 160x48 pane's line: the fsync figures wrap whole onto the next.
    assert!(
        text.contains("│   result: W 6760 IOPS 106M/s clat 4µs p99 9µs      ")
            && text.contains("│   | fsync 143µs p99 449µs  finished      "),
        "{text}"
    );
    let small = screen(&app, 80, 24);
    assert!(small.contains("9µs | fsync 143µs p99 449µs"), "{small}");
    // A job that does not sync says nothing of fsync.
    let other = app
        .jobs
        .add(JobKind::Fio, "fio write 2G".into(), app.now_ms);
    app.update(report(JobMsg::Fio {
        id: other,
        figures: FioFigures {
            w_iops: 966.0,
            w_bw: 966.0 * 1_048_576.0,
            w_clat_us: 1028.0,
            w_p99_us: 10289.0,
            ..FioFigures::default()
        },
    }));
    let text = screen(&app, 160, 48);
    assert_eq!(text.matches("fsync").count(), 1, "{text}");
}
