//! Cost per block event in userspace (issue 52: the block tracer cost ~0.35 µs of CPU per
//! request under fio at 20k IOPS, more than htop): one ring-buffer page walked
//! (`trace_raw::walk_page`), each record decoded (`BlkLayout::decode`), and the events paired
//! (`Pairer::feed`) into the interval's histograms, as the reader thread does for each page it
//! reads. The pages are made here as the kernel lays them out (6.18's `block_rq_issue` and
//! `block_rq_complete` formats, 4 KiB pages): random 4 KiB reads on one device, each issued
//! and completed, interleaved as on two CPUs. The figure is per event; a request is two
//! events (three with a scheduler), and sampling (`source::blk`) cuts the events read.
//!
//! Run: `cargo bench --bench blk_event`.

#![allow(missing_docs)] // criterion's macros generate undocumented items
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pagewatch::parse::blk_pair::{BlkEvent, BlkLayout, Pairer};
use pagewatch::parse::trace_raw::{PageLayout, walk_page};

const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
";

fn format(name: &str, id: u16) -> String {
    format!(
        "name: {name}\nID: {id}\nformat:\n{COMMON}
\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;

print fmt: \"\"
"
    )
}

const INSERT: u16 = 2105;
const ISSUE: u16 = 2104;
const COMPLETE: u16 = 2107;
const DEV: u32 = (7 << 20) + 100;

/// One 64-byte record.
fn record(id: u16, sector: u64) -> [u8; 64] {
    let mut r = [0u8; 64];
    r[0..2].copy_from_slice(&id.to_ne_bytes());
    r[8..12].copy_from_slice(&DEV.to_ne_bytes());
    r[16..24].copy_from_slice(&sector.to_ne_bytes());
    r[24..28].copy_from_slice(&8u32.to_ne_bytes());
    r[34] = b'R';
    r
}

/// Pages of `n` requests: each page of one CPU holds issues and completions of random
/// sectors, 10 µs apart; returned per page.
fn pages(n: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut page = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut events = 0;
    let flush = |page: &mut Vec<u8>, events: &mut u32, out: &mut Vec<Vec<u8>>| {
        let mut p = vec![0u8; 4096];
        p[0..8].copy_from_slice(&1_000_000u64.to_ne_bytes());
        p[8..16].copy_from_slice(&(page.len() as u64).to_ne_bytes());
        p[16..16 + page.len()].copy_from_slice(page);
        out.push(p);
        page.clear();
        *events = 0;
    };
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let sector = (x % (1 << 21)) * 8;
        for id in [ISSUE, COMPLETE] {
            if page.len() + 68 > 4080 {
                flush(&mut page, &mut events, &mut out);
            }
            // type_len 16 (64 bytes of data), delta 10 µs.
            let word: u32 = 16 | (10_000 << 5);
            page.extend_from_slice(&word.to_ne_bytes());
            page.extend_from_slice(&record(id, sector));
            events += 1;
        }
    }
    if !page.is_empty() {
        flush(&mut page, &mut events, &mut out);
    }
    out
}

/// Walks `pages` and decodes their records into `events`, as the reader does.
fn walk(pages: &[Vec<u8>], layout: &BlkLayout, events: &mut Vec<BlkEvent>) {
    let (page_layout, mut lost) = (PageLayout::default(), 0);
    for p in pages {
        walk_page(p, &page_layout, 0, &mut lost, |ts, rec| {
            if let Some(e) = layout.decode(rec, ts) {
                events.push(e);
            }
            Ok(())
        })
        .unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let layout = BlkLayout::new(
        &format("block_rq_insert", INSERT),
        &format("block_rq_issue", ISSUE),
        &format("block_rq_complete", COMPLETE),
    )
    .unwrap();
    let requests = 10_000;
    let pages = pages(requests);
    let mut events: Vec<BlkEvent> = Vec::with_capacity(2 * requests);
    let mut g = c.benchmark_group("blk_event");
    g.throughput(Throughput::Elements(2 * requests as u64));
    g.bench_function("walk_decode_pair", |b| {
        let mut pairer = Pairer::default();
        b.iter(|| {
            walk(&pages, &layout, &mut events);
            assert_eq!(events.len(), 2 * requests);
            pairer.feed(&mut events);
            black_box(pairer.take());
        });
    });
    g.bench_function("walk_decode", |b| {
        b.iter(|| {
            walk(&pages, &layout, &mut events);
            black_box(events.len());
            events.clear();
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
