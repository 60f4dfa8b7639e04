//! Cost of recording one sample: line patch against the previous sample, JSON, framing,
//! zstd (level `ZSTD_LEVEL`), the flush's write syscall and the poke of the sync thread.
//! Samples are 50 reads of the live /proc and /sys taken 0.1 s apart, written in a loop.
//!
//! Run: `cargo bench --bench record`.

#![allow(missing_docs)] // criterion's macros generate undocumented items
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pagewatch::record::{Header, Recorder, SampleDelta};
use pagewatch::source::{FsSource, HostInfo};

fn write_sample(c: &mut Criterion) {
    let mut src = FsSource::live();
    let samples: Vec<_> = (0..50)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(100));
            src.read().unwrap()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let header = Header::from_sample(&samples[0], HostInfo::live(), 1.0, "bench".into(), 0);
    let mut files = 0;
    let mut new_recorder = || {
        files += 1;
        let path = dir.path().join(format!("{files}.pwrec"));
        Recorder::create(&path, &header).unwrap()
    };
    let (mut bytes, mut written) = (0, 0);
    // Each recorder gets the 50 samples once, in order: repeating them would let zstd match
    // whole earlier samples and measure an unrealistically cheap stream.
    c.bench_function("record/write_sample", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut rec = new_recorder();
            for i in 0..iters as usize {
                let s = &samples[i % samples.len()];
                if i > 0 && i % samples.len() == 0 {
                    rec = new_recorder();
                }
                let before = rec.bytes_written();
                let t = Instant::now();
                rec.write_sample(s).unwrap();
                total += t.elapsed();
                if i % samples.len() > 0 {
                    bytes += rec.bytes_written() - before;
                    written += 1;
                }
            }
            total
        });
    });
    if let Some(per) = bytes.checked_div(written) {
        eprintln!("{written} samples after the first of each file: {per} bytes each");
    }
    c.bench_function("record/sample_delta_json", |b| {
        let mut i = 1;
        b.iter(|| {
            let d = SampleDelta::encode(Some(&samples[i - 1]), &samples[i]);
            i = i % (samples.len() - 1) + 1;
            serde_json::to_vec(&d).unwrap()
        });
    });
}

criterion_group!(benches, write_sample);
criterion_main!(benches);
