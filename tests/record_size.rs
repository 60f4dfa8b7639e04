//! The size of a recording as this build writes it (issue 27, ≤ 0.8 MB an hour idle): reads
//! a recording (`PW_REC`, any format version this build reads) and writes its samples and
//! events again, in order, with this build's `Recorder`, then prints the bytes a sample and
//! the MB an hour at the recording's interval, beside the original file's. The same samples
//! in both, so two builds (or two formats) compare on exactly the same input.
//!
//! Run: `PW_REC=idle.pwrec cargo test --release --test record_size -- --ignored --nocapture`.
//! Without `PW_REC`, a check that runs everywhere: a recording of captured samples written
//! again reads back equal, sample by sample.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use pagewatch::record::{Header, Recorder, read};

/// Writes `samples` and `events` (by wall time) to a new file; its size in bytes.
fn rewrite(rec: &pagewatch::record::Recording, path: &std::path::Path) -> u64 {
    let mut w = Recorder::create(path, &rec.header).unwrap();
    let mut events = rec.events.iter().peekable();
    for s in &rec.samples {
        while let Some(e) = events.next_if(|e| e.wall_ms <= s.wall_ms) {
            w.write_event(e).unwrap();
        }
        w.write_sample(s).unwrap();
    }
    for e in events {
        w.write_event(e).unwrap();
    }
    w.finish().unwrap().bytes
}

#[test]
#[ignore = "a measurement: needs PW_REC, a recording to write again"]
fn bytes_a_sample_written_by_this_build() {
    let path = std::path::PathBuf::from(std::env::var("PW_REC").expect("PW_REC: a recording"));
    let rec = read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("again.pwrec");
    let bytes = rewrite(&rec, &out);
    let orig = std::fs::metadata(&path).unwrap().len();
    let n = rec.samples.len() as f64;
    let per_hour = |b: u64| b as f64 / n * 3600.0 / rec.header.interval_s / 1e6;
    println!(
        "{} samples, {} events, {} s apart: original {orig} B ({:.0} B a sample, {:.2} MB/h); \
         this build {bytes} B ({:.0} B a sample, {:.2} MB/h)",
        rec.samples.len(),
        rec.events.len(),
        rec.header.interval_s,
        orig as f64 / n,
        per_hour(orig),
        bytes as f64 / n,
        per_hour(bytes),
    );
    assert_eq!(read(&out).unwrap().samples, rec.samples, "read back equal");
}

#[test]
fn a_recording_written_again_reads_back_equal() {
    let samples = common::tree_samples("live-idle");
    let host = pagewatch::source::HostInfo {
        hostname: "vm".into(),
        kernel: "6.18".into(),
        cpus: 2,
    };
    let header = Header::from_sample(&samples[0], host, 1.0, "record_size".into(), 0);
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.pwrec");
    let mut w = Recorder::create(&first, &header).unwrap();
    for s in &samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    let rec = read(&first).unwrap();
    assert_eq!(rec.samples, samples);
    rewrite(&rec, &dir.path().join("again.pwrec"));
    assert_eq!(
        read(&dir.path().join("again.pwrec")).unwrap().samples,
        samples
    );
}
