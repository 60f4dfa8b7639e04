//! One recording, five outputs, one answer: the screen, batch text, batch JSON, the report and
//! `/metrics` say the same thing about every record of the same recording (issue "One
//! pipeline, one verdict").
//!
//! `five_outputs_agree_on_the_storm` runs everywhere, on the synthetic storm recording
//! (tests/common). `a_live_flood_is_called_throttled_everywhere` needs root, tracefs and fio:
//! under `vm.dirty_bytes` 64M and `dirty_background_bytes` 32M it records a buffered fio and
//! a shell loop of short `dd` writers, then checks that in every record whose `throttled[]`
//! holds a tracepoint row with a pause, the domain that paced it is in a throttling state, in
//! the JSON and in batch text's same record, and that the five outputs agree.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/sysctl.rs"]
mod sysctl;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use pagewatch::app::{App, Look, Msg};
use pagewatch::cli::Format;
use pagewatch::metrics::live::Live;
use pagewatch::metrics::negotiate;
use pagewatch::model::dirty::State;
use pagewatch::model::{Model, Options};
use pagewatch::record::{Recording, RecordingSource};
use pagewatch::report::Range;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Seconds of records whose `pred` holds, as every output credits them (each record's
/// interval).
fn seconds(models: &[Model], pred: impl Fn(&Model) -> bool) -> f64 {
    models
        .iter()
        .filter(|m| pred(m))
        .filter_map(|m| m.interval_s)
        .sum()
}

fn throttling(s: Option<State>) -> bool {
    s.is_some_and(|s| s >= State::WritersThrottled)
}

/// The value of the series `name{...labels containing every part of `has`}` in `text`.
fn metric(text: &str, name: &str, has: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(name) && !l.starts_with('#'))
        .find(|l| has.iter().all(|h| l.contains(h)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Checks the five outputs of `rec` against the pipeline's records; returns them.
fn five_outputs(rec: &Recording) -> Vec<Model> {
    let models = pagewatch::pipeline::derive_all(&rec.samples, Options::default()).models;
    assert!(models.len() >= 2);
    batch_json(rec, &models);
    batch_text(rec, &models);
    screen(rec, &models);
    report(rec, &models);
    metrics(rec, &models);
    models
}

fn batch_json(rec: &Recording, models: &[Model]) {
    // JSON: the records `--batch --format json` and `export --format jsonl` print.
    let mut json = Vec::new();
    let mut src = RecordingSource::new(rec.samples.clone());
    let s = pagewatch::batch::run(
        &mut src,
        None,
        Format::Json,
        Options::default(),
        &mut json,
        &mut std::io::sink(),
        &mut || {},
    )
    .unwrap();
    assert_eq!(s.printed as usize, models.len());
    // Byte for byte the records derived here (each JSON line is one model).
    let json = String::from_utf8(json).unwrap();
    for (line, m) in json.lines().zip(models) {
        assert_eq!(line, serde_json::to_string(m).unwrap());
    }
}

fn batch_text(rec: &Recording, models: &[Model]) {
    // Batch text: each record's state line names the global state; a container past
    // background or pacing writers has its own line; a saturated disk has one.
    let mut text = Vec::new();
    let mut src = RecordingSource::new(rec.samples.clone());
    pagewatch::batch::run(
        &mut src,
        None,
        Format::Text,
        Options::default(),
        &mut text,
        &mut std::io::sink(),
        &mut || {},
    )
    .unwrap();
    let text = String::from_utf8(text).unwrap();
    let blocks = text_records(&text);
    assert_eq!(blocks.len(), models.len());
    for (b, m) in blocks.iter().zip(models) {
        let first = b.lines().next().unwrap();
        let label = m.dirty.state.map_or("-", State::label);
        assert!(first.contains(label), "state {label} in {first:?}");
        for d in m.domains.iter().skip(1) {
            if throttling(d.state) {
                assert!(
                    b.contains(&format!("{}: {}", d.label(), d.state.unwrap().label())),
                    "{} in {b}",
                    d.label()
                );
            }
        }
        let v = m.verdict.as_ref().unwrap();
        match &v.saturation_why {
            Some(why) => assert!(b.contains(&format!("saturated: {why}")), "{b}"),
            None => assert!(!b.contains("saturated:"), "{b}"),
        }
        let writers: Vec<_> = m.throttled.iter().filter(|r| !r.is_self).collect();
        if !writers.is_empty() {
            assert!(b.contains("  throttled: "), "{b}");
            // Three named, the paused rest counted: together the headline's count.
            let hidden = writers.iter().skip(3).filter(|r| r.paused()).count();
            let line = b.lines().find(|l| l.contains("throttled: ")).unwrap();
            assert_eq!(
                line.contains(&format!("+{hidden} paused")),
                hidden > 0,
                "{line}"
            );
            assert!(!line.contains(" more"), "{line}");
        }
    }
}

fn screen(rec: &Recording, models: &[Model]) {
    // The screen: a replay shows each record's state, and the model it draws is the same.
    let mut app = App::new(rec.header.host.clone(), Look::default(), 1.0);
    let mut term = Terminal::new(TestBackend::new(160, 48)).unwrap();
    let mut k = 0;
    for (i, raw) in rec.samples.iter().enumerate() {
        let _ = app.update(Msg::Sample(raw.clone()));
        if i == 0 {
            continue;
        }
        let (Some(shown), Some(m)) = (app.model.as_ref(), models.get(k)) else {
            break;
        };
        k += 1;
        assert_eq!(shown.verdict, m.verdict, "record {k}");
        assert_eq!(shown.dirty.state, m.dirty.state);
        term.draw(|f| pagewatch::ui::draw(f, &app)).unwrap();
        let screen = term.backend().to_string();
        let label = m.dirty.state.map_or("-", State::label);
        assert!(screen.contains(label), "record {k}: {label} on\n{screen}");
        // A saturated disk is named in words on the disks pane's border, not only coloured.
        let named = screen.contains("Disks · saturated ");
        let dev = m.verdict.as_ref().and_then(|v| v.saturated.first());
        match dev {
            Some(d) => assert!(
                named && screen.contains(&format!("saturated {d}: ")),
                "record {k}: {d} saturated, not named on\n{screen}"
            ),
            None => assert!(!named, "record {k}: nothing saturated, yet\n{screen}"),
        }
    }
    assert_eq!(k, models.len());
}

fn report(rec: &Recording, models: &[Model]) {
    // The report: throttled and saturated seconds are the records' own.
    let a = pagewatch::report::analyse(rec, Range::ALL, Options::default()).unwrap();
    let any_domain =
        |m: &Model| throttling(m.dirty.state) || m.domains.iter().any(|d| throttling(d.state));
    let want = seconds(models, any_domain);
    assert!(
        (a.summary.throttled_s - want).abs() < 1e-6,
        "report {} vs {want}",
        a.summary.throttled_s
    );
    let mut disks: Vec<&str> = models
        .iter()
        .flat_map(|m| m.disks.iter().map(|d| d.name.as_str()))
        .collect();
    disks.sort_unstable();
    disks.dedup();
    for name in &disks {
        let sat = |m: &Model| {
            m.disks
                .iter()
                .any(|d| d.name == *name && d.saturation.saturated)
        };
        let want = seconds(models, sat);
        let got = a
            .summary
            .saturated_s
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0.0, |(_, s)| *s);
        assert!((got - want).abs() < 1e-6, "{name}: report {got} vs {want}");
    }
}

fn metrics(rec: &Recording, models: &[Model]) {
    let mut disks: Vec<&str> = models
        .iter()
        .flat_map(|m| m.disks.iter().map(|d| d.name.as_str()))
        .collect();
    disks.sort_unstable();
    disks.dedup();
    // /metrics: the counters after the last sample.
    let mut live = Live::new("h", Options::default());
    let mut page = live.current();
    for raw in &rec.samples {
        page = live.sample(raw, 0.0);
    }
    assert_eq!(page.model.as_deref(), models.last());
    let scrape = pagewatch::metrics::render::render(&page, negotiate::Format::Classic, None);
    let want = seconds(models, |m| m.dirty.state == Some(State::WritersThrottled));
    let got = metric(
        &scrape,
        "pagewatch_dirty_state_seconds_total",
        &["kind=\"global\"", "state=\"writers_throttled\""],
    )
    .unwrap();
    assert!((got - want).abs() < 1e-6, "metrics {got} vs {want}");
    for name in &disks {
        let want = seconds(models, |m| {
            m.disks
                .iter()
                .any(|d| d.name == *name && d.saturation.saturated)
        });
        let got = metric(
            &scrape,
            "pagewatch_disk_saturated_seconds_total",
            &[&format!("device=\"{name}\"")],
        )
        .unwrap_or(0.0);
        assert!((got - want).abs() < 1e-6, "{name}: metrics {got} vs {want}");
    }
}

/// Batch text split into records: each starts with its `HH:MM:SS` line.
fn text_records(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let b = line.as_bytes();
        let starts =
            b.len() > 8 && b[2] == b':' && b[5] == b':' && b[..2].iter().all(u8::is_ascii_digit);
        if starts {
            out.push(String::new());
        }
        if let Some(last) = out.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    out
}

#[test]
fn five_outputs_agree_on_the_storm() {
    let rec = common::storm(common::storm_events());
    let models = five_outputs(&rec);
    // The storm is throttled and saturated somewhere, so the checks above had teeth.
    assert!(models.iter().any(|m| throttling(m.dirty.state)));
    assert!(
        models
            .iter()
            .any(|m| m.disks.iter().any(|d| d.saturation.saturated))
    );
}

#[test]
fn a_live_flood_is_called_throttled_everywhere() {
    if !rustix::process::geteuid().is_root()
        || !Path::new("/sys/kernel/tracing/events/writeback/balance_dirty_pages").exists()
        || Command::new("fio").arg("--version").output().is_err()
    {
        println!("skipped: needs root, tracefs and fio");
        return;
    }
    let _knobs = sysctl::DirtyKnobs::take();
    sysctl::set_vm("dirty_bytes", "67108864");
    sysctl::set_vm("dirty_background_bytes", "33554432");
    let dir = tempfile::Builder::new()
        .prefix("pagewatch-verdict-test")
        .tempdir_in("/var/tmp")
        .unwrap();
    let mut fio = Command::new("fio")
        .args([
            "--name=w",
            "--rw=write",
            "--bs=1M",
            "--size=1G",
            "--ioengine=psync",
            "--time_based",
            "--runtime=40",
        ])
        .arg(format!("--directory={}", dir.path().display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let script = format!(
        "end=$(($(date +%s)+40)); while [ $(date +%s) -lt $end ]; do \
         dd if=/dev/zero of={}/dd bs=1M count=300 status=none; done",
        dir.path().display()
    );
    let mut dd = Command::new("sh").args(["-c", &script]).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let out = dir.path().join("flood.pwrec");
    let rc = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args(["record", "--duration", "25s"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let _ = fio.kill();
    let _ = dd.kill();
    let _ = fio.wait();
    let _ = dd.wait();
    let _ = Command::new("pkill")
        .args(["-f", "pagewatch-verdict-test"])
        .status();
    assert!(rc.success());
    let rec = pagewatch::record::read(&out).unwrap();
    let models = five_outputs(&rec);
    let mut paused = 0;
    for m in &models {
        for r in &m.throttled {
            let from_tp = r.source == pagewatch::model::throttled::ThrottleSource::Tracepoint;
            if !from_tp || r.is_self || !r.pause_ms_per_s.is_some_and(|p| p > 0.0) {
                continue;
            }
            paused += 1;
            let dom = r.domain.as_deref().expect("a paused row has its domain");
            let d = m.domains.iter().find(|d| d.path == dom).unwrap();
            assert!(
                throttling(d.state),
                "{} paused {:?} ms/s in {dom}, which reads {:?}",
                r.comm,
                r.pause_ms_per_s,
                d.state
            );
        }
    }
    println!(
        "{} records, {paused} paused tracepoint rows, {} records raised above their sampled state",
        models.len(),
        models
            .iter()
            .filter(|m| m.dirty.state != m.dirty.sampled_state)
            .count()
    );
    assert!(paused > 0, "the flood paced some writer");
}
