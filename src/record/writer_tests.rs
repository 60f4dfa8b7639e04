use std::fmt::Write as _;
use std::io::{Read, Write};

use super::*;
use crate::source::HostInfo;

/// A sample's text as the recorder frames it: `n` lines of figures that change a little from
/// one sample to the next, as /proc's files do.
fn record_like(i: usize, n: usize) -> Vec<u8> {
    let mut text = String::new();
    for line in 0..n {
        let figure = (line * 7919 + i * (line % 5)) % 100_003;
        let _ = writeln!(text, "field_{line} {figure} kB");
    }
    let mut framed = Vec::new();
    put_record(Kind::Sample, text.as_bytes(), &mut framed);
    framed
}

/// Issue 52: at level 8's default block (128 KiB at this window) the context was 1.24 MB, and
/// a burst's large sample left the block-sized buffers resident for good (692-708 KB of it at
/// ten minutes of `record --interval 0.1`). With the table and block sized in `writer.rs`, it
/// is about 405 KiB whatever a sample holds.
#[test]
fn the_compressor_context_stays_small_after_a_large_sample() {
    let mut cctx = zstd::zstd_safe::CCtx::create();
    for p in compressor_params() {
        cctx.set_parameter(p).unwrap();
    }
    let mut sent = Vec::new();
    let mut enc = zstd::stream::write::Encoder::with_context(Vec::new(), &mut cctx);
    for i in 0..60 {
        // The 30th is a burst's walk of 1,000+ processes: 300 KB.
        let rec = record_like(i, if i == 30 { 12_000 } else { 150 });
        enc.write_all(&rec).unwrap();
        enc.flush().unwrap();
        sent.extend_from_slice(&rec);
    }
    let out = enc.finish().unwrap();
    let size = cctx.sizeof();
    assert!(size <= 448 << 10, "the compression context is {size} bytes");
    let mut back = Vec::new();
    zstd::stream::read::Decoder::new(&out[..])
        .unwrap()
        .read_to_end(&mut back)
        .unwrap();
    assert!(
        back == sent,
        "the stream does not decode to what was written"
    );
    // Far below the text: the window holds the previous samples.
    assert!(
        out.len() * 4 < sent.len(),
        "{} of {}",
        out.len(),
        sent.len()
    );
}

/// A recording whose samples span several blocks (a whole first sample, then one with a large
/// file) reads back sample for sample.
#[test]
fn a_recording_with_samples_larger_than_a_block_reads_back() {
    let mut samples = crate::source::test_samples("kernel-6.12-lab-memcg");
    let mut big = String::new();
    for i in 0..4000 {
        let _ = writeln!(big, "{i} S 1 {} 0", i * 31);
    }
    assert!(big.len() > 2 * ZSTD_MAX_BLOCK as usize);
    samples[1].files.insert("big".into(), big);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("blocks.pwrec");
    let header = Header::from_sample(&samples[0], HostInfo::default(), 1.0, "test".into(), 0);
    let mut rec = Recorder::create(&path, &header).unwrap();
    for s in &samples {
        rec.write_sample(s).unwrap();
    }
    rec.finish().unwrap();
    let back = super::super::read(&path).unwrap();
    assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    assert_eq!(back.samples, samples);
}
