//! Real pages from this VM (kernel 6.18, two fio writers under vm.dirty_bytes = 64M, filter
//! `pause > 0`), captured by stopping the instance's tracing, saving its `trace` text (which
//! does not consume) and then reading every page of `per_cpu/cpuN/trace_pipe_raw`. The binary
//! decode must give exactly the events the kernel printed.

use super::*;
use crate::parse::trace::{parse_events, parse_format};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trace");

fn fixture(name: &str) -> (PageLayout, RecordLayout, Vec<Vec<u8>>, String) {
    let d = format!("{DIR}/{name}");
    let read = |f: &str| std::fs::read_to_string(format!("{d}/{f}")).unwrap();
    let page = parse_header_page(&read("header_page")).unwrap();
    let record = RecordLayout::new(&parse_format(&read("format")).unwrap()).unwrap();
    let cpus = ["cpu0.raw", "cpu1.raw"]
        .iter()
        .map(|f| std::fs::read(format!("{d}/{f}")).unwrap())
        .collect();
    (page, record, cpus, read("trace.txt"))
}

fn decode_all(page: &PageLayout, record: &RecordLayout, cpus: &[Vec<u8>]) -> RawEvents {
    let mut out = RawEvents::default();
    for (cpu, bytes) in cpus.iter().enumerate() {
        for p in bytes.chunks(page.page_size) {
            decode_page(p, page, record, cpu as u32, &mut out).unwrap();
        }
    }
    out
}

/// The text's events and the decoded ones, both ordered by (timestamp, cpu), compared field
/// by field; the timestamp to the microsecond the text prints.
fn same_as_text(raw: &RawEvents, text: &str) {
    let mut want = parse_events(text).unwrap().events;
    let mut got = raw.events.clone();
    let key = |e: &BdpEvent| ((e.ts_s * 1e6).round() as u64, e.cpu);
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(key(g), key(w), "{g:?} vs {w:?}");
        let strip = |e: &BdpEvent| BdpEvent {
            comm: String::new(),
            ts_s: 0.0,
            ..e.clone()
        };
        assert_eq!(strip(g), strip(w));
    }
}

#[test]
fn page_layout_of_a_64_bit_kernel() {
    let (page, ..) = fixture("raw-6.18-3s");
    assert_eq!(page, PageLayout::default());
}

#[test]
fn three_seconds_of_pages_decode_to_the_printed_events() {
    let (page, record, cpus, text) = fixture("raw-6.18-3s");
    let raw = decode_all(&page, &record, &cpus);
    // 7 pages a CPU; the text says `entries-in-buffer/entries-written: 333/333`.
    assert_eq!(raw.events.len(), 333);
    assert_eq!((raw.lost, raw.other), (0, 0));
    same_as_text(&raw, &text);
    let e = &raw.events[0];
    assert_eq!((e.bdi.as_str(), e.cgroup_ino), ("254:0", Some(1)));
    assert!(raw.events.iter().all(|e| e.pause > 0), "the filter held");
}

#[test]
fn a_wrapped_buffer_counts_its_lost_events() {
    // An 8 KiB buffer for 3 s: `entries-in-buffer/entries-written: 118/326`; each CPU's first
    // page flags the loss and stores its count (104).
    let (page, record, cpus, text) = fixture("raw-6.18-lost");
    let raw = decode_all(&page, &record, &cpus);
    assert_eq!(raw.events.len(), 118);
    assert_eq!(raw.lost, 208);
    assert_eq!(raw.events.len() as u64 + raw.lost, 326);
    same_as_text(&raw, &text);
}

#[test]
fn another_events_record_is_counted_not_decoded() {
    let (page, record, cpus, _) = fixture("raw-6.18-3s");
    let mut other = record.clone();
    other.id = Some(1);
    let raw = decode_all(&page, &other, &cpus);
    assert_eq!((raw.events.len(), raw.other), (0, 333));
}

#[test]
fn broken_pages_are_errors_not_panics() {
    let (page, record, cpus, _) = fixture("raw-6.18-3s");
    let good = &cpus[0][..page.page_size];
    let mut out = RawEvents::default();
    // A commit past the page's end.
    let mut p = good.to_vec();
    p[8..16].copy_from_slice(&5000u64.to_ne_bytes());
    assert!(
        decode_page(&p, &page, &record, 0, &mut out)
            .unwrap_err()
            .contains("commit")
    );
    // A record length running past the committed data.
    let mut p = good.to_vec();
    p[20..24].copy_from_slice(&4000u32.to_ne_bytes());
    let e = decode_page(&p, &page, &record, 0, &mut out).unwrap_err();
    assert!(e.contains("offset 16"), "{e}");
    // A short record of this event (type_len 1: 4 bytes, its id first) is shorter than the
    // format.
    let mut p = good.to_vec();
    p[16..20].copy_from_slice(&1u32.to_ne_bytes());
    p[20..22].copy_from_slice(&985u16.to_ne_bytes());
    let e = decode_page(&p, &page, &record, 0, &mut out).unwrap_err();
    assert!(e.contains("shorter"), "{e}");
    // Cut pages and empty input.
    for n in [0, 3, 12, 17, 100] {
        let _ = decode_page(&good[..n], &page, &record, 0, &mut out);
    }
}

#[test]
fn time_extends_and_stamps_move_the_clock() {
    // Hand-built page: ts 1000; extend by (1 << 27) + 5; a 4-byte padding record; one record
    // with delta 7; an absolute stamp of (2 << 27) | 3; the null padding ends the page.
    let fmt = "name: t\nID: 7\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
               \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
               \tfield:char bdi[4];\toffset:8;\tsize:4;\tsigned:0;\n\
               \tfield:unsigned int limit;\toffset:12;\tsize:4;\tsigned:0;\n\
               \tfield:unsigned int setpoint;\toffset:16;\tsize:4;\tsigned:0;\n\
               \tfield:unsigned int dirty;\toffset:20;\tsize:4;\tsigned:0;\n\
               \tfield:unsigned int task_ratelimit;\toffset:24;\tsize:4;\tsigned:0;\n\
               \tfield:int pause;\toffset:28;\tsize:4;\tsigned:1;\n";
    let record = RecordLayout::new(&parse_format(fmt).unwrap()).unwrap();
    let layout = PageLayout::default();
    let word = |ty: u32, delta: u32| (ty | (delta << 5)).to_ne_bytes();
    let mut data = Vec::new();
    data.extend(word(30, 5));
    data.extend(1u32.to_ne_bytes());
    data.extend(word(29, 2)); // array[0] counts itself and the 4 discarded bytes
    data.extend(8u32.to_ne_bytes());
    data.extend(0u32.to_ne_bytes());
    data.extend(word(8, 7)); // 32 bytes of record
    let mut rec = vec![0u8; 32];
    rec[..2].copy_from_slice(&7u16.to_ne_bytes());
    rec[4..8].copy_from_slice(&42i32.to_ne_bytes());
    rec[8..11].copy_from_slice(b"8:0");
    rec[12..16].copy_from_slice(&100u32.to_ne_bytes());
    rec[28..32].copy_from_slice(&(-3i32).to_ne_bytes());
    data.extend(&rec);
    data.extend(word(31, 3));
    data.extend(2u32.to_ne_bytes());
    data.extend(word(8, 0));
    data.extend(&rec);
    data.extend(word(29, 0));
    let mut page = 1000u64.to_ne_bytes().to_vec();
    page.extend((data.len() as u64).to_ne_bytes());
    page.extend(&data);
    page.resize(4096, 0);
    let mut out = RawEvents::default();
    decode_page(&page, &layout, &record, 1, &mut out).unwrap();
    assert_eq!(out.events.len(), 2);
    let first = &out.events[0];
    assert_eq!(
        (first.pid, first.bdi.as_str(), first.limit, first.pause),
        (42, "8:0", 100, -3)
    );
    let ns = |e: &BdpEvent| (e.ts_s * 1e9).round() as u64;
    assert_eq!(ns(first), 1000 + (1 << 27) + 5 + 2 + 7);
    assert_eq!(ns(&out.events[1]), (2 << 27) | 3);
}

/// `Field` reads the same values `RecordLayout` does, and `walk_page` hands over every record
/// (all of them this event's) with the timestamps `decode_page` gives.
#[test]
fn fields_by_name_agree_with_the_record_layout() {
    let (page, record, cpus, _) = fixture("raw-6.18-3s");
    let d = format!("{DIR}/raw-6.18-3s/format");
    let fmt = parse_format(&std::fs::read_to_string(d).unwrap()).unwrap();
    let (pause, pid) = (
        Field::find(&fmt, "pause").unwrap(),
        Field::find(&fmt, "common_pid").unwrap(),
    );
    assert!(
        Field::find(&fmt, "bdi").is_none(),
        "a string is not an integer"
    );
    let want = decode_all(&page, &record, &cpus);
    let mut got = Vec::new();
    let mut lost = 0;
    for (cpu, bytes) in cpus.iter().enumerate() {
        for p in bytes.chunks(page.page_size) {
            walk_page(p, &page, cpu as u32, &mut lost, |ts, rec| {
                assert_eq!(event_id(rec).map(u32::from), fmt.id);
                let pause = pause.get(rec).ok_or("short")?;
                got.push((ts, pid.get_u64(rec).ok_or("short")?, pause));
                Ok(())
            })
            .unwrap();
        }
    }
    assert_eq!(lost, want.lost);
    assert_eq!(got.len(), want.events.len());
    for ((ts, pid, pause), e) in got.iter().zip(&want.events) {
        assert_eq!((*pid as u32, *pause as i64), (e.pid, e.pause));
        assert!((*ts as f64 / 1e9 - e.ts_s).abs() < 1e-9);
    }
    assert!(got.iter().any(|g| g.2 > 0));
}
