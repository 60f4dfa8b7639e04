//! Tests against a real fio 3.33 json+ status stream (`tests/fixtures/fio/randread-8k-3.33.jsonplus`:
//! randread 8k sync, 16M file, invalidate=0, runtime=3, status-interval=1). Expected values were
//! computed by hand (python over the same file) and are written out here.

use super::super::status::{FioStatus, percentile};
use super::super::stream::{Frame, Framer};
use super::*;

const FIXTURE: &str = include_str!("../../../tests/fixtures/fio/randread-8k-3.33.jsonplus");

fn statuses(text: &str) -> (Vec<FioStatus>, Vec<String>) {
    let mut framer = Framer::new();
    let (mut docs, mut msgs) = (Vec::new(), Vec::new());
    let mut pieces: Vec<Frame> = text.lines().filter_map(|l| framer.push(l)).collect();
    pieces.extend(framer.finish());
    for frame in pieces {
        match frame {
            Frame::Doc(d) => match FioStatus::parse(&d) {
                Ok(s) => docs.push(s),
                Err(e) => msgs.push(e),
            },
            Frame::Message(m) => msgs.push(m),
        }
    }
    (docs, msgs)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

#[test]
fn fixture_parses_into_four_statuses() {
    let (docs, msgs) = statuses(FIXTURE);
    assert!(msgs.is_empty(), "{msgs:?}");
    assert_eq!(docs.len(), 4);
    let d = &docs[0];
    assert_eq!(d.fio_version, "fio-3.33");
    assert_eq!(d.timestamp_ms, 1_795_333_642_554);
    assert_eq!(d.jobs.len(), 1);
    let j = &d.jobs[0];
    assert_eq!((j.name.as_str(), j.error, j.elapsed_s), ("randread", 0, 2));
    assert_eq!(
        (j.read.io_bytes, j.read.total_ios, j.read.runtime_ms),
        (1_062_199_296, 129_730, 889)
    );
    assert_eq!(j.read.clat_n, 129_730);
    assert!(close(j.read.clat_mean_ns, 5_866.280_845));
    assert_eq!(j.read.p99_ns, Some(93_696));
    assert_eq!(j.read.bins.len(), 542);
    assert_eq!(
        (
            j.write.io_bytes,
            j.write.total_ios,
            j.write.clat_n,
            j.write.p99_ns
        ),
        (0, 0, 0, None)
    );
}

#[test]
fn percentile_from_bins_matches_fios_own_p99() {
    let (docs, _) = statuses(FIXTURE);
    for d in &docs {
        let r = &d.jobs[0].read;
        assert_eq!(percentile(&r.bins, 99.0), r.p99_ns, "at {}", d.timestamp_ms);
    }
}

#[test]
fn first_status_is_since_start() {
    let (docs, _) = statuses(FIXTURE);
    let l = live(None, &docs[0]);
    assert_eq!(l.interval_ms, 889);
    let j = &l.jobs[0];
    assert!(j.since_start);
    assert!(close(j.read.iops, 129_730.0 / 0.889));
    assert!(close(j.read.bw_bytes_s, 1_062_199_296.0 / 0.889));
    assert!(close(j.read.clat_mean_us.unwrap(), 5.866_280_845));
    assert_eq!(j.read.clat_p99_us, Some(93.696));
    assert_eq!(j.write.clat_mean_us, None);
    assert!(close(j.write.iops, 0.0));
}

#[test]
fn interval_figures_are_differences() {
    let (docs, _) = statuses(FIXTURE);
    // (Δt ms, IOPS, B/s, mean µs, interval p99 µs), hand-computed from the fixture.
    let want = [
        (
            1000,
            263_532.0,
            2_159_222_784.0,
            2.694_256_333_352_489,
            3.120,
        ),
        (
            1001,
            285_349.650_349_650_36,
            2_337_756_195.804_196,
            2.575_221_865_902_714_4,
            3.248,
        ),
        (
            149,
            52_530.201_342_281_88,
            430_382_389.261_745,
            12.852_620_090_923_685,
            3.376,
        ),
    ];
    for (pair, w) in docs.windows(2).zip(want) {
        let l = live(Some(&pair[0]), &pair[1]);
        assert_eq!(l.interval_ms, w.0);
        let r = &l.jobs[0].read;
        assert!(!l.jobs[0].since_start);
        assert!(close(r.iops, w.1), "{} vs {}", r.iops, w.1);
        assert!(close(r.bw_bytes_s, w.2), "{} vs {}", r.bw_bytes_s, w.2);
        assert!(
            close(r.clat_mean_us.unwrap(), w.3),
            "{:?} vs {}",
            r.clat_mean_us,
            w.3
        );
        assert_eq!(r.clat_p99_us, Some(w.4));
        assert!(!r.p99_cumulative);
    }
}

#[test]
fn without_bins_p99_is_fios_cumulative_and_says_so() {
    let (mut docs, _) = statuses(FIXTURE);
    for d in &mut docs {
        d.jobs[0].read.bins.clear();
    }
    let l = live(Some(&docs[0]), &docs[1]);
    assert_eq!(l.jobs[0].read.clat_p99_us, Some(4.080));
    assert!(l.jobs[0].read.p99_cumulative);
}

#[test]
fn a_counter_going_back_falls_back_to_since_start() {
    let (docs, _) = statuses(FIXTURE);
    let l = live(Some(&docs[2]), &docs[1]);
    assert!(l.jobs[0].since_start);
    assert_eq!(l.interval_ms, 1889);
}

#[test]
fn summary_of_the_final_status() {
    let (docs, _) = statuses(FIXTURE);
    let s = summary("randread", &docs[3], false);
    assert_eq!(s.fio_version, "fio-3.33");
    assert_eq!(s.runtime_ms, 3001);
    assert_eq!((s.read.io_bytes, s.read.ios), (5_625_643_008, 686_724));
    assert!(close(s.read.iops, 686_724.0 / 3.001));
    assert!(close(s.read.bw_bytes_s, 5_625_643_008.0 / 3.001));
    assert!(close(s.read.clat_mean_us, 3.359_757_82));
    assert!(close(s.read.clat_p99_us, 3.536));
    assert_eq!(s.write, crate::event::FioDir::default());
    assert!(!s.partial && s.error.is_none());
}

#[test]
fn summary_sums_jobs_and_reports_errors() {
    let (docs, _) = statuses(FIXTURE);
    let mut two = docs[3].clone();
    let mut second = two.jobs[0].clone();
    second.error = 5;
    two.jobs.push(second);
    let s = summary("x", &two, true);
    assert_eq!(s.read.ios, 2 * 686_724);
    assert!(close(s.read.iops, 2.0 * 686_724.0 / 3.001));
    assert!(close(s.read.clat_mean_us, 3.359_757_82));
    assert!(
        close(s.read.clat_p99_us, 3.536),
        "same histogram twice, same p99"
    );
    assert!(s.partial);
    let e = s.error.unwrap();
    assert!(
        e.contains("error 5") && e.contains("Input/output error"),
        "{e}"
    );
}

#[test]
fn garbage_lines_and_a_cut_stream() {
    let mut text = String::from("fio: native_fallocate call failed\n\u{1b}[0m junk {\n");
    let cut = FIXTURE.rfind("\n{\n").unwrap();
    text.push_str(&FIXTURE[..=cut]);
    text.push_str("fio: terminating on signal 2\n");
    text.push_str(&FIXTURE[cut + 1..cut + 5000]);
    let (docs, msgs) = statuses(&text);
    let (all, _) = statuses(FIXTURE);
    assert_eq!(docs, all[..3]);
    assert_eq!(msgs.len(), 4, "{msgs:?}");
    assert!(msgs[3].contains("ended inside"));
}

#[test]
fn duplicate_keys_and_missing_fields_are_tolerated() {
    let doc = "{\n\"jobs\" : [ { \"jobname\" : \"a\", \"job options\" : { \"bs\" : \"4k\", \"bs\" : \"8k\" },\
               \"read\" : { \"io_bytes\" : 10 } } ]\n}";
    let s = FioStatus::parse(doc).unwrap();
    assert_eq!(s.jobs[0].read.io_bytes, 10);
    assert_eq!(s.jobs[0].read.p99_ns, None);
    assert!(
        FioStatus::parse("{\n\"timestamp\" : 1\n}")
            .unwrap_err()
            .contains("jobs")
    );
    assert!(FioStatus::parse("{\n\"jobs\" : [\n}").is_err());
}

#[test]
fn bins_delta_refuses_counts_that_went_down() {
    assert_eq!(
        bins_delta_ok(&[(1, 2), (5, 1)], &[(1, 3), (3, 1), (5, 1)]),
        Some(vec![(1, 1), (3, 1)])
    );
    assert_eq!(bins_delta_ok(&[(1, 2)], &[(1, 1)]), None);
    assert_eq!(bins_delta_ok(&[(2, 1)], &[(1, 5)]), None);
}

fn bins_delta_ok(p: &[(u64, u64)], c: &[(u64, u64)]) -> Option<Vec<(u64, u64)>> {
    super::super::status::bins_delta(p, c)
}

/// fio 3.33 json+, randwrite 16k with `fsync=1` for 1 s (`tests/fixtures/fio/fsync-16k-3.33.jsonplus`).
/// By hand: `sync.total_ios` 9,932 over a write runtime of 1,001 ms; `sync.lat_ns` mean
/// 91,382.344744 ns, p99 214,016 ns (fio's own percentile, and the first bin where the running
/// count reaches 99% of 9,932).
#[test]
fn fsync_latency_is_the_sync_calls_not_the_writes() {
    let text = include_str!("../../../tests/fixtures/fio/fsync-16k-3.33.jsonplus");
    let doc = FioStatus::parse(text).unwrap();
    let sync = &doc.jobs[0].sync;
    assert_eq!((sync.total_ios, sync.clat_n), (9932, 9932));
    assert_eq!(sync.p99_ns, Some(214_016));
    assert_eq!(percentile(&sync.bins, 99.0), Some(214_016));
    let s = summary("fsync", &doc, false);
    assert_eq!(s.sync.ios, 9932);
    assert!(close(s.sync.clat_mean_us, 91.382_344_744));
    assert!(close(s.sync.clat_p99_us, 214.016));
    assert!(close(s.sync.iops, 9932.0 / 1.001));
    assert!(
        s.write.clat_p99_us < s.sync.clat_p99_us,
        "a buffered write completes long before its fsync"
    );
    // A job that never syncs has an all-zero sync.
    let (docs, _) = statuses(FIXTURE);
    assert_eq!(
        summary("r", &docs[3], false).sync,
        crate::event::FioDir::default()
    );
}

/// The live figures of the same `fsync=1` run (fixture and hand figures above): since the
/// start, the sync calls are rated over the writes' runtime (fio gives them none); over an
/// interval, from the differences, as reads and writes are. A job that never syncs has zero.
#[test]
fn live_sync_calls_since_the_start_and_over_an_interval() {
    let text = include_str!("../../../tests/fixtures/fio/fsync-16k-3.33.jsonplus");
    let doc = FioStatus::parse(text).unwrap();
    let first = &live(None, &doc).jobs[0].sync;
    assert!(close(first.iops, 9932.0 / 1.001), "{}", first.iops);
    assert!(close(first.clat_mean_us.unwrap(), 91.382_344_744));
    assert!(close(first.clat_p99_us.unwrap(), 214.016));
    // The status a second earlier, before any sync call: the interval holds all 9,932.
    let mut before = doc.clone();
    before.timestamp_ms -= 1000;
    before.jobs[0].sync = super::super::status::DirCounters::default();
    let j = &live(Some(&before), &doc).jobs[0];
    assert!(!j.since_start);
    assert!(close(j.sync.iops, 9932.0));
    assert!(close(j.sync.clat_mean_us.unwrap(), 91.382_344_744));
    assert!(close(j.sync.clat_p99_us.unwrap(), 214.016));
    assert!(!j.sync.p99_cumulative, "from the bins' difference");
    let (docs, _) = statuses(FIXTURE);
    let r = &live(Some(&docs[0]), &docs[1]).jobs[0].sync;
    assert_eq!((r.iops, r.clat_mean_us), (0.0, None));
}

#[test]
fn a_status_right_after_the_last_rated_is_not_rated_on_its_own() {
    let (docs, _) = statuses(FIXTURE);
    assert!(worth_rating(None, &docs[0]), "the first");
    assert!(worth_rating(Some(&docs[0]), &docs[1]), "1,000 ms after");
    assert!(worth_rating(Some(&docs[1]), &docs[2]), "1,001 ms after");
    assert!(
        !worth_rating(Some(&docs[2]), &docs[3]),
        "the final report, 149 ms after the last periodic status"
    );
    let mut at = docs[3].clone();
    at.timestamp_ms = docs[2].timestamp_ms + MIN_INTERVAL_MS;
    assert!(worth_rating(Some(&docs[2]), &at), "at the minimum");
    at.timestamp_ms = docs[2].timestamp_ms - 60_000;
    assert!(worth_rating(Some(&docs[2]), &at), "the clock went back");
}
