//! Saturation judged on two recordings made on this VM (virtio-blk `vda`), replayed through
//! the pipeline every output shares: fio 4k random reads 64 deep (`--direct=1
//! --ioengine=libaio`, about 125k reads/s at 0.4–0.5 ms, queue 50), which one deep take
//! 0.05–0.06 ms.
//!
//! - `randread-deep-fresh.pwrec`: `pagewatch record` started 4 s before the flood, with no
//!   calm read in its sight (a few journal writes only) and no stored baseline (it predates
//!   them): the deep queue is not judged, and every output says "cannot judge yet" where it
//!   said "no disk saturated".
//! - `randread-deep-calm-deep.pwrec`: a flood, 5 s of the same reads one deep (calm), a second
//!   flood: the second is judged against the reads' own calm baseline.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::path::Path;

use pagewatch::app::{App, Look, Msg};
use pagewatch::model::Model;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn models(name: &str) -> Vec<Model> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/recordings/{name}"));
    let rec = pagewatch::record::read(&path).unwrap();
    let series =
        pagewatch::pipeline::derive_all(&rec.samples, pagewatch::model::Options::default());
    assert!(series.failures.is_empty(), "{:?}", series.failures);
    series.models
}

/// The records whose vda read over 50k a second, with vda's figures.
fn floods(models: &[Model]) -> Vec<(&Model, &pagewatch::model::Disk)> {
    models
        .iter()
        .filter_map(|m| Some((m, m.disks.iter().find(|d| d.name == "vda")?)))
        .filter(|(_, d)| d.cols.r_s.unwrap_or(0.0) > 50_000.0)
        .collect()
}

#[test]
fn a_fresh_deep_queue_is_not_judged_in_every_output() {
    let all = models("randread-deep-fresh.pwrec");
    let floods = floods(&all);
    assert!(floods.len() >= 6, "{} flood records", floods.len());
    for (m, d) in &floods {
        let s = &d.saturation;
        assert!(d.cols.aqu_sz.unwrap() >= 32.0, "{:?}", d.cols);
        assert_eq!(
            (s.saturated, s.saturation_level, s.unjudged),
            (false, 1, true),
            "{s:?}"
        );
        let why = s.saturation_why.as_deref().unwrap();
        assert!(
            why.starts_with("cannot judge yet: no calm baseline for reads; queue "),
            "{why}"
        );
        let v = m.verdict.as_ref().unwrap();
        assert!(v.saturated.is_empty());
        assert_eq!(v.unjudged.as_deref(), Some(format!("vda: {why}").as_str()));
        assert!(
            v.headline.contains(&format!("vda: {why}")),
            "{}",
            v.headline
        );
        assert!(!v.headline.contains("no disk saturated"), "{}", v.headline);
    }
    // The batch text's line, and the disks pane's border at 80x24 (cut where it does not fit).
    let (m, _) = floods[floods.len() / 2];
    let text = pagewatch::batch::render_text(m, false);
    assert!(
        text.contains("\n  not judged: vda: cannot judge yet: no calm baseline for reads; "),
        "{text}"
    );
    let mut app = App::new(
        pagewatch::source::HostInfo {
            hostname: "testhost".into(),
            kernel: "6.18.44".into(),
            cpus: 2,
        },
        Look::default(),
        1.0,
    );
    let rec = pagewatch::record::read(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings/randread-deep-fresh.pwrec"),
    )
    .unwrap();
    let at = rec.samples.len() / 2;
    for s in rec.samples.iter().take(at) {
        app.update(Msg::Sample(s.clone()));
    }
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| pagewatch::ui::draw(f, &app)).unwrap();
    let screen = t.backend().to_string();
    assert!(
        screen.contains("Disks · vda: cannot judge yet: no calm baseline for reads"),
        "{screen}"
    );
    // The report's verdict line, over the whole recording.
    let a = pagewatch::report::analyse(
        &rec,
        pagewatch::report::Range::default(),
        pagewatch::model::Options::default(),
    )
    .unwrap();
    let line = &a.summary.verdict;
    assert!(line.contains("; vda not judged "), "{line}");
    assert!(!line.contains("no disk saturated"), "{line}");
    // The report files it under its own heading, not under the saturated ones.
    let md = pagewatch::report::markdown_of(&rec, &a);
    let saturated = md.split("### Saturated disks\n").nth(1).unwrap();
    let (saturated, unjudged) = saturated.split_once("### Disks not judged\n").unwrap();
    assert!(saturated.trim_start().starts_with("None."), "{saturated}");
    assert!(
        unjudged.trim_start().starts_with("#### vda\n"),
        "{unjudged}"
    );
    assert!(
        md.contains("- No disk was judged saturated.\n- Disks not judged under load"),
        "{md}"
    );
}

#[test]
fn after_calm_reads_the_same_flood_is_judged_against_them() {
    let all = models("randread-deep-calm-deep.pwrec");
    // The records one deep between the floods: calm, under a queue of 1.
    let calm = all
        .iter()
        .filter_map(|m| m.disks.iter().find(|d| d.name == "vda"))
        .filter(|d| (5_000.0..50_000.0).contains(&d.cols.r_s.unwrap_or(0.0)))
        .filter(|d| d.cols.aqu_sz.unwrap_or(9.0) < 1.0)
        .count();
    assert!(calm >= 3, "{calm} calm records");
    let floods = floods(&all);
    let (first, second): (Vec<_>, Vec<_>) = floods
        .iter()
        .partition(|(m, _)| m.time_ms < floods[0].0.time_ms + 10_000);
    assert!(
        first.len() >= 5 && second.len() >= 5,
        "{} {}",
        first.len(),
        second.len()
    );
    // The first flood had only the journal writes' baseline to borrow, and says so.
    for (_, d) in &first {
        let why = d.saturation.saturation_why.as_deref().unwrap_or("");
        assert!(
            why.contains("the writes' baseline") || why.contains("from writes'"),
            "{why}"
        );
    }
    // The second: saturated against the reads' own, 6x and more.
    for (m, d) in &second {
        let s = &d.saturation;
        assert!(s.saturated, "{s:?}");
        let why = s.saturation_why.as_deref().unwrap();
        // (the last record also carried 3 journal writes, judged against their own)
        assert!(why.contains("calm baseline (≤4K reads"), "{why}");
        assert!(
            !why.contains("borrowed") && !why.contains("writes' "),
            "{why}"
        );
        let b = s.baseline_await_ms.unwrap();
        assert!((0.05..0.07).contains(&b), "{b}");
        let ratio = d.cols.r_await.unwrap() / b;
        assert!(ratio >= 3.0, "{ratio}");
        let v = m.verdict.as_ref().unwrap();
        assert_eq!(v.saturated, ["vda"]);
        assert!(
            v.headline.starts_with("saturated vda: queue"),
            "{}",
            v.headline
        );
    }
}
