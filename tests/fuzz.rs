//! Mutation fuzzing of everything that parses (issues "Hardening" 5 and "Correct on every
//! kernel" 3): the kernel files of a sample (meminfo, vmstat, diskstats, stat, zoneinfo, PSI,
//! the vm sysctls, the /sys/block settings) through `Parser` and `Model::derive` against the
//! previous sample, the batch text and JSON; and whole recordings, damaged on disk and inside
//! their zstd stream, through the reader and the same derivation; and the playbook TOML
//! parser on mutated built-ins.
//!
//! Seeds are the real captured trees and recordings under assets/. Mutations: truncation,
//! garbage and non-UTF-8 bytes (as the source delivers them, lossily), huge, negative and
//! fractional numbers, duplicated, dropped and swapped lines, 10,000 devices, and counters that
//! go backwards or jump between the two samples. Each case must end without a panic, and every
//! error must name its file (`proc/meminfo:12: …`).
//!
//! Config files (`config::parse`, `config::set`) get the same mutations, and the metrics
//! endpoint's request heads their own (`fuzz_http`).
//! Deterministic: a fixed seed per case. `PW_FUZZ_CASES` sets the number of sample cases
//! (default 4,000; CI runs 30,000 through the overflow-checked `checked` profile, see
//! `.ci/run`). Cases that once failed live in `tests/fuzz_corpus/*.case` and run first;
//! playbook and config files of every shape (FIFOs, links, devices) are `tests/fuzz_files.rs`,
//! with its corpus in `tests/fuzz_corpus/playbooks/`.
#![allow(clippy::unwrap_used)]

mod fuzz_http;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use pagewatch::batch::TextTable;
use pagewatch::model::procs::{Tracker, throttled_by_wchan};
use pagewatch::model::{Model, Options};
use pagewatch::parse::Parser;
use pagewatch::sample::{RawSample, names};
use pagewatch::source::{Source, TreeSource};

/// xorshift64*: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn trees() -> Vec<Vec<RawSample>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/trees");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.path())
        .collect();
    names.sort();
    names
        .iter()
        .filter_map(|p| {
            let mut src = TreeSource::open(p).ok()?;
            let all: Vec<RawSample> = std::iter::from_fn(|| src.next_sample().ok().flatten())
                .map(with_buddyinfo)
                .map(with_trace)
                .map(with_exits)
                .map(with_below)
                .collect();
            (all.len() >= 2).then_some(all)
        })
        .collect()
}

/// The captured trees predate `/proc/buddyinfo` in samples: each seed gets this real one
/// (this VM's) so that its parser and the per-zone watermarks are fuzzed too, and a process
/// walk (`walk_text`) for the walk parser and the per-process rates.
fn with_buddyinfo(mut s: RawSample) -> RawSample {
    s.files.insert(
        "proc/buddyinfo".into(),
        "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n\
         Node 0, zone    DMA32      2      3      0      2      3      2      1      4      4      2    752 \n\
         Node 0, zone   Normal  12380   6253   4304   2193   1674   1119    718    387    241    102   4303 \n"
            .into(),
    );
    s.files
        .insert(pagewatch::sample::names::PROCS.into(), walk_text(s.mono_ns));
    s
}

/// The balance_dirty_pages tracepoint's files as this VM produced them (format, 20 events of
/// two throttled fio writers, an armed status), so that its parsers and the throttled-writer
/// derivation are fuzzed too.
fn with_trace(mut s: RawSample) -> RawSample {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    s.files.insert(
        names::TRACE_FORMAT.into(),
        read("balance_dirty_pages.format"),
    );
    // Recordings made before the binary read carry the kernel's text; live samples carry the
    // writers reduced from it (both are fuzzed: the text in odd seconds).
    let text = read("trace_pipe.txt");
    if s.mono_ns / 1_000_000_000 % 2 == 1 {
        s.files.insert(names::TRACE_EVENTS.into(), text);
    } else {
        let ev = pagewatch::parse::trace::parse_events(&text).unwrap();
        s.files.insert(
            names::TRACE_WRITERS.into(),
            pagewatch::parse::trace_writers::render(&pagewatch::parse::trace_writers::reduce(
                &ev.events, ev.lost,
            )),
        );
    }
    s.files.insert(
        names::TRACE_STATUS.into(),
        "state armed\npid 16900\ntasks 16900 16901\nbytes 5540\ncapped 0\n".into(),
    );
    // The sync tracer's pseudo-file: the walk's database syncing, one process the walk did
    // not list still waiting.
    s.files.insert(
        names::SYNC_CALLS.into(),
        "state armed\nsource syscalls\nclock mono\nbytes 8192\ncapped 0\nevents 64\nlost 0\n\
         unpaired 1\ncpu_ns 81000\ntgid=900 calls=31 total_ns=412000000 max_ns=65000000 \
         open_ns=0 comm=db\ntgid=5150 calls=0 total_ns=0 max_ns=0 open_ns=2500000000 comm=x\n"
            .into(),
    );
    s
}

/// Taskstats exits as the source writes them (`parse::taskstats`): the captured v16 messages
/// (a two-threaded python3's task and group records, a single task's) and a dd exiting into
/// the seed walk's process 4242's parent, so that the exit parser and the crediting are
/// fuzzed too.
fn with_exits(mut s: RawSample) -> RawSample {
    use pagewatch::parse::taskstats::{Exits, TaskExit, decode_datagram, render};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/taskstats");
    let mut records = Vec::new();
    for f in ["group-6.18-v16.bin", "task-6.18-v16.bin"] {
        decode_datagram(&std::fs::read(dir.join(f)).unwrap(), 0x1f, &mut records);
    }
    records.push(TaskExit {
        pid: 4300,
        tgid: Some(4300),
        ppid: Some(4242),
        flags: pagewatch::parse::taskstats::AGROUP,
        version: 16,
        etime_us: Some(700_000),
        tgetime_us: Some(700_000),
        io: Some([1 << 20, 64 << 20, 0, 64 << 20, 0]),
        comm: "dd".into(),
        ..TaskExit::default()
    });
    let e = Exits {
        state: "listening".into(),
        why: None,
        since_ns: Some(s.mono_ns.saturating_sub(1_000_000_000)),
        read_ns: s.mono_ns,
        lost: 0,
        records,
    };
    s.files.insert(names::EXITS.into(), render(&e));
    // The block tracer's pseudo-files (issue 25), for a device the trees have and one they
    // do not.
    s.files.insert(
        names::BLK_STATUS.into(),
        "state armed\ndevices sda vdb\nbuffer_kb 1024\nbytes 73728\nreads 10\n".into(),
    );
    s.files.insert(
        names::BLK_LATENCY.into(),
        "lost 3\ndev 8:0 sda\nevents 2400\nunpaired 2\nrd 4727 60000 5:40 6:700 13:2\n\
         wd 900 9000 9:20\nrq 40 400 3:10\nwq 12 120 2:1\ndev 254:16 vdb\nevents 0\n\
         unpaired 0\n"
            .into(),
    );
    s
}

/// The throttles below the page cache as this VM produced them: two ext4 journals' `info`
/// (captured from a loop device's journal, fresh and under fsyncs beside a flood), the wbt
/// column of `/sys/block`, and the `-below` tracer's status and pseudo-file (the reduction of
/// its captured wbt pages, with a reclaim sleep and written pages), so that the jbd2 and
/// `-below` parsers and their derivation are fuzzed too.
fn with_below(mut s: RawSample) -> RawSample {
    use pagewatch::parse::{below, jbd2};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    s.files
        .insert(jbd2::sample_name("vda-8"), read("jbd2/info-flood"));
    s.files
        .insert(jbd2::sample_name("loop100-8"), read("jbd2/info-fresh"));
    if let Some(b) = s.files.get_mut(names::BLOCK_DEVICES) {
        *b = b.lines().fold(String::new(), |mut out, l| {
            out.push_str(l);
            out.push_str("\t75000\n");
            out
        });
    }
    s.files.insert(
        below::STATUS.into(),
        "state armed\npid 16900\nbytes 8192\ncapped 0\n".into(),
    );
    s.files.insert(
        below::BELOW.into(),
        "lost 1\nwbt 254:0 steps 3 down 1 up 1 step 2 window_us 100000 bg 4 normal 8 max 16 \
         lat 2 lat_max_us 91000 stat 2 rmean_ns 95000000 rmax_ns 120000000 rsamples 4 \
         wmean_ns 5000000 wsamples 30\nwbt 7:100 steps 1 down 0 up 0 step -1 window_us 100000 \
         bg 8 normal 16 max 31 lat 0 lat_max_us 0 stat 0 rmean_ns 0 rmax_ns 0 rsamples 0 \
         wmean_ns 0 wsamples 0\nthrottled writeback count 4 delayed_us 400000 max_us 100000\n\
         written file 50 anon 2\n"
            .into(),
    );
    s
}

/// A process walk as the source writes it (`source::procs`): a written process with its
/// carried previous reading, a D task whose io is denied, a multi-threaded one, and the
/// memory record of the largest.
fn walk_text(mono_ns: u64) -> String {
    let stat = |pid: &str, comm: &str, state: &str, threads: u32, start: u32, blkio: u32| {
        format!(
            "{pid} ({comm}) {state} 1 {pid} {pid} 0 -1 4194560 151 0 0 0 2 13 0 0 20 0 {threads} 0 \
             {start} 5373952 384 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 {blkio} 0 \
             0 0 0 0 0 0 0 0 0"
        )
    };
    let io = |w: u64| {
        format!(
            "rchar: {}\nwchar: {w}\nsyscr: 12\nsyscw: 900\nread_bytes: 4096\nwrite_bytes: {w}\n\
             cancelled_write_bytes: 0\n",
            w / 3
        )
    };
    format!(
        "walk {mono_ns}\nprev {}\nclk_tck 100\ntask_delayacct 1\nscope -\n\
         P 4242 9000\nstat {}\n{}wchan balance_dirty_pages\ncgroup /user.slice/a.scope\n\
         p 4242 9000\nstat {}\n{}\
         P 77 120\nstat {}\nio denied\nwchan 0\n\
         P 900 3000\nstat {}\n{}wchan futex_wait_queue\ncgroup /system.slice/db.service\n\
         blkio_tasks 420\nstatm 1344 384 100 1 0 200 0\n\
         M 900 3000 S 384 7 380 5\nmem 1536 1024 512 0 4\noom_score_adj -500\n\
         wchan shrink_folio_list\ncomm db (main)\n",
        mono_ns.saturating_sub(2_000_000_000),
        stat("4242", "dd", "D", 1, 9000, 310),
        io(2_147_483_648),
        stat("4242", "dd", "R", 1, 9000, 120),
        io(1_073_741_824),
        stat("77", "sshd: a (b)", "S", 1, 120, 0),
        stat("900", "db", "S", 12, 3000, 55),
        io(10_000_000),
    )
}

const NUMBERS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "4294967295",
    "4294967296",
    "-1",
    "-9223372036854775808",
    "0",
    "1e30",
    "NaN",
    "inf",
    "3.5",
    "",
    "0x10",
];

/// Mutates `text` once; returns a description for the failure message.
fn mutate(rng: &mut Rng, text: &mut String) -> String {
    let pick = rng.below(10);
    let out: String;
    let what;
    match pick {
        0 => {
            let mut at = rng.below(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            out = text[..at].to_owned();
            what = format!("truncated at {at}");
        }
        1 => {
            let mut at = rng.below(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let garbage: String = (0..=rng.below(40))
                .map(|_| match rng.below(6) {
                    0 => '\u{fffd}',
                    1 => '\0',
                    2 => '\n',
                    3 => ' ',
                    4 => char::from(b'0' + (rng.below(10) as u8)),
                    _ => char::from(33 + (rng.below(90) as u8)),
                })
                .collect();
            out = format!("{}{garbage}{}", &text[..at], &text[at..]);
            what = format!("garbage {garbage:?} at {at}");
        }
        2..=4 => {
            // Replace the n-th number with an odd one.
            let spans: Vec<(usize, usize)> = number_spans(text);
            if spans.is_empty() {
                return mutate_lines(rng, text);
            }
            let (a, b) = spans[rng.below(spans.len())];
            let n = NUMBERS[rng.below(NUMBERS.len())];
            out = format!("{}{n}{}", &text[..a], &text[b..]);
            what = format!("number {:?} -> {n:?}", &text[a..b]);
        }
        _ => return mutate_lines(rng, text),
    }
    *text = out;
    what
}

fn mutate_lines(rng: &mut Rng, text: &mut String) -> String {
    let mut v: Vec<String> = text.lines().map(str::to_owned).collect();
    if v.is_empty() {
        text.push_str("garbage line\n");
        return "added a line to an empty file".into();
    }
    let i = rng.below(v.len());
    let what = match rng.below(4) {
        0 => {
            let l = v[i].clone();
            v.insert(rng.below(v.len() + 1), l.clone());
            format!("duplicated line {l:?}")
        }
        1 => {
            let l = v.remove(i);
            format!("dropped line {l:?}")
        }
        2 => {
            let j = rng.below(v.len());
            v.swap(i, j);
            format!("swapped lines {i} and {j}")
        }
        _ => {
            let l = v[i].clone();
            let keep = rng.below(l.len() + 1);
            let mut cut = keep;
            while !l.is_char_boundary(cut) {
                cut -= 1;
            }
            l[..cut].clone_into(&mut v[i]);
            format!("cut line {i} to {cut} bytes")
        }
    };
    *text = v.join("\n") + "\n";
    what
}

/// Byte spans of the runs of ASCII digits in `text`.
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// 10,000 devices in diskstats, with counters from the seed's first line.
fn many_devices(text: &str) -> String {
    use std::fmt::Write;
    let Some(first) = text.lines().find(|l| l.split_whitespace().count() >= 14) else {
        return text.to_owned();
    };
    let rest: Vec<&str> = first.split_whitespace().skip(3).collect();
    let mut out = String::with_capacity(10_000 * 120);
    for i in 0..10_000 {
        let _ = writeln!(out, " 8 {i} fz{i} {}", rest.join(" "));
    }
    out
}

/// Parses `prev` and `cur`, derives, renders the batch outputs. Returns the error text, if
/// any, after checking it names a file.
fn run_pair(prev: &RawSample, cur: &RawSample) -> Option<String> {
    let mut parser = Parser::new();
    let p = parser.parse(prev);
    let c = parser.parse(cur);
    let mut err = None;
    for r in [&p, &c] {
        if let Err(e) = r {
            err = Some(e.to_string());
        }
    }
    if let (Ok(p), Ok(c)) = (&p, &c) {
        // A bad cgroup, BDI or wb_stats file leaves those out and says why, naming the file
        // and line (`parse::cgroup`, `parse::bdi`); the sample stands.
        for (snap, raw) in [(p, prev), (c, cur)] {
            if let Some(e) = &snap.domains_error {
                assert!(
                    raw.files.keys().any(|f| e.starts_with(&format!("{f}:"))),
                    "a cgroup/bdi error names no file: {e}"
                );
            }
        }
        // A sync file that does not parse leaves the sample standing, its error named.
        if let Some(why) = (c.sync.as_ref())
            .filter(|s| s.state == pagewatch::parse::trace::TraceState::Error)
            .and_then(|s| s.why.as_ref())
        {
            assert!(
                why.starts_with(names::SYNC_CALLS),
                "a sync error names no file: {why}"
            );
        }
        // A trace file that does not parse leaves the sample standing, its error named.
        if let Some(e) = c.trace.as_ref().and_then(|t| t.error.as_ref()) {
            assert!(
                e.starts_with("sys/kernel/tracing/"),
                "a trace error names no file: {e}"
            );
        }
        // A journal or -below file that does not parse is left out, its error named.
        if let Some(e) = &c.journals_error {
            assert!(
                e.starts_with("proc/fs/jbd2/"),
                "a jbd2 error names no file: {e}"
            );
        }
        if let Some(e) = c.below.as_ref().and_then(|b| b.error.as_ref()) {
            assert!(
                e.starts_with("sys/kernel/tracing/instances/pagewatch-below/"),
                "a -below error names no file: {e}"
            );
        }
        let mut m = Model::derive(Some(p), c, Options { partitions: true });
        let mut procs = Tracker::default();
        procs.update(p);
        procs.update(c);
        procs.fill(&mut m);
        let _ = throttled_by_wchan(procs.rows().unwrap_or(&[]));
        for s in [p, c] {
            if let Some(e) = &s.procs_error {
                assert!(e.starts_with("proc/pids:"), "walk error names no file: {e}");
            }
            if let Some(e) = &s.exits_error {
                assert!(
                    e.starts_with("netlink/taskstats:"),
                    "exits error names no file: {e}"
                );
            }
        }
        serde_json::to_string(&m).unwrap();
        let _ = TextTable::default().render(&m);
        let _ = m.derived_differs();
    }
    err
}

fn check_error(e: &str, files: &BTreeMap<String, String>, case: &str) {
    let named = files.keys().any(|f| e.starts_with(&format!("{f}:")))
        || e.starts_with("page_size:")
        || e.starts_with("proc/")
        || e.starts_with("sys/")
        || e.starts_with("netlink/");
    assert!(named, "{case}: the error names no file: {e}");
    assert!(e.len() < 400, "{case}: error of {} bytes", e.len());
}

/// Runs case `seed`; true when it ended in an error (named, checked).
fn one_case(seeds: &[Vec<RawSample>], seed: u64) -> bool {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let tree = &seeds[rng.below(seeds.len())];
    let i = rng.below(tree.len() - 1);
    let (mut prev, mut cur) = (tree[i].clone(), tree[i + 1].clone());
    let mut notes = Vec::new();
    for _ in 0..=rng.below(3) {
        let target = if rng.below(4) == 0 {
            &mut prev
        } else {
            &mut cur
        };
        let names: Vec<String> = target.files.keys().cloned().collect();
        let name = names[rng.below(names.len())].clone();
        let text = target.files.get_mut(&name).unwrap();
        let what = if name.ends_with("diskstats") && rng.below(50) == 0 {
            *text = many_devices(text);
            "10,000 devices".to_owned()
        } else {
            mutate(&mut rng, text)
        };
        notes.push(format!("{name}: {what}"));
    }
    if rng.below(20) == 0 {
        // Lines carried from an earlier read (`proc/diskstats.carried`, many devices), read
        // at any time up to 2 s after the sample, sometimes garbled.
        let target = if rng.below(2) == 0 {
            &mut prev
        } else {
            &mut cur
        };
        let mut text = String::new();
        for line in target.file("proc/diskstats").unwrap_or_default().lines() {
            if let Some(name) = line.split_whitespace().nth(2) {
                let at = rng.next() % (target.mono_ns + 2_000_000_000);
                text.push_str(name);
                text.push('\t');
                text.push_str(&at.to_string());
                text.push('\n');
            }
        }
        let what = if rng.below(2) == 0 {
            mutate(&mut rng, &mut text)
        } else {
            "as written".to_owned()
        };
        target.files.insert("proc/diskstats.carried".into(), text);
        notes.push(format!("proc/diskstats.carried: {what}"));
    }
    if rng.below(10) == 0 {
        // The clock going backwards or standing still.
        cur.mono_ns = prev.mono_ns.saturating_sub(rng.next() % 2_000_000_000);
        notes.push("clock back".into());
    }
    let case = format!("case {seed}: {}", notes.join("; "));
    let files = cur.files.clone();
    let outcome = catch_unwind(AssertUnwindSafe(|| run_pair(&prev, &cur)));
    let err = outcome.unwrap_or_else(|_| panic!("panic in {case}"));
    if let Some(e) = &err {
        check_error(e, &files, &case);
    }
    err.is_some()
}

fn cases() -> u64 {
    std::env::var("PW_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4_000)
}

#[test]
fn corpus_cases_that_once_failed() {
    let seeds = trees();
    let base = &seeds[0];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus");
    let mut n = 0;
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    paths.sort();
    for path in paths {
        // First line: the sample file the rest replaces; then its text. Each must end without
        // a panic, and with an error that names a file if it ends in one.
        let text = std::fs::read_to_string(&path).unwrap();
        let (file, body) = text.split_once('\n').unwrap();
        let mut cur = base[1].clone();
        cur.files.insert(file.trim().to_owned(), body.to_owned());
        let case = path.display().to_string();
        let err = catch_unwind(AssertUnwindSafe(|| run_pair(&base[0], &cur)))
            .unwrap_or_else(|_| panic!("panic in {case}"));
        if let Some(e) = err {
            check_error(&e, &cur.files, &case);
        }
        n += 1;
    }
    assert!(n >= 5, "corpus has {n} cases");
}

#[test]
fn mutated_samples_never_panic_and_errors_name_the_file() {
    let seeds = trees();
    assert!(seeds.len() >= 5, "seed trees: {}", seeds.len());
    let n = cases();
    let errors = (0..n).filter(|seed| one_case(&seeds, *seed)).count() as u64;
    eprintln!("{n} mutated sample pairs: {errors} rejected with an error, the rest derived");
    // Both outcomes must be common, or the mutations test nothing.
    assert!(errors > n / 10 && errors < n - n / 10, "{errors} of {n}");
}

#[test]
fn damaged_recordings_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings");
    let tmp = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed);
    let n = cases() / 40;
    for name in ["idle-150s.pwrec", "demo-randwrite-stress.pwrec"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let nl = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
        let (magic, body) = bytes.split_at(nl);
        let plain = zstd::decode_all(body).unwrap();
        for k in 0..n {
            let damaged = if k % 2 == 0 {
                // On disk: flipped, dropped or inserted bytes anywhere.
                let mut b = bytes.clone();
                for _ in 0..=rng.below(4) {
                    let at = rng.below(b.len());
                    match rng.below(3) {
                        0 => b[at] ^= 1 << rng.below(8),
                        1 => {
                            b.remove(at);
                        }
                        _ => b.insert(at, rng.next() as u8),
                    }
                }
                b
            } else {
                // Inside the stream: the records themselves damaged, then compressed again.
                let mut p = plain.clone();
                for _ in 0..=rng.below(4) {
                    let at = rng.below(p.len());
                    match rng.below(4) {
                        0 => p[at] ^= 1 << rng.below(8),
                        1 => p.truncate(at),
                        2 => p[at] = 0xff,
                        _ => p.splice(at..at, [0u8, 0, 0, 0x7f]).for_each(drop),
                    }
                }
                let mut out = magic.to_vec();
                out.extend(zstd::encode_all(&p[..], 1).unwrap());
                out
            };
            let path = tmp.path().join(format!("{k}.pwrec"));
            std::fs::write(&path, &damaged).unwrap();
            let case = format!("{name} damage {k}");
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                if let Ok(rec) = pagewatch::record::read(&path) {
                    let mut parser = Parser::new();
                    let mut prev = None;
                    for s in &rec.samples {
                        if let Ok(snap) = parser.parse(s) {
                            let m = Model::derive(prev.as_ref(), &snap, Options::default());
                            serde_json::to_string(&m).unwrap();
                            prev = Some(snap);
                        }
                    }
                }
            }));
            assert!(outcome.is_ok(), "panic in {case}");
            std::fs::remove_file(&path).unwrap();
        }
    }
    eprintln!("{} damaged recordings", 2 * n);
}

#[test]
fn the_seed_walk_parses_and_gives_rates() {
    let w = pagewatch::parse::procs::parse(&walk_text(10_000_000_000)).unwrap();
    let rows = pagewatch::model::procs::derive(None, &w);
    assert_eq!(rows.len(), 3);
    // 1 GiB more dirtied over the 2 s to the carried reading.
    assert_eq!(rows[0].pid, 4242);
    assert_eq!(rows[0].dirtied_bytes_per_s, Some(536_870_912.0));
}

/// A config file with every key, some comments and an unknown table.
const CONFIG: &str = "# mine\ninterval = 2.5 # s\nunits = \"pages\"\ndisk_sort = \"aqu-sz\"\n\
process_sort = \"iowait\"\nview = \"cgroups\"\npartitions = true\nfio_dir = \"/var/tmp\"\n\
color = \"never\"\nmouse = false\n";

#[test]
fn mutated_config_files_never_panic_and_problems_name_a_line() {
    use pagewatch::config::{self, Setting};
    let (all, problems) = config::parse(CONFIG);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(all.interval, Some(2.5));
    let n = cases() / 4;
    let mut bad = 0;
    for seed in 0..n {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut text = CONFIG.to_owned();
        let mut what = Vec::new();
        for _ in 0..=rng.below(3) {
            what.push(mutate(&mut rng, &mut text));
        }
        let case = format!("config case {seed}: {what:?}\n{text}");
        let (_, problems) = catch_unwind(AssertUnwindSafe(|| config::parse(&text)))
            .unwrap_or_else(|_| panic!("panic in {case}"));
        let lines = text.lines().count().max(1) + 1;
        for p in &problems {
            assert!(p.line >= 1 && p.line <= lines, "{p} in {case}");
        }
        bad += usize::from(!problems.is_empty());
        // Editing never panics either, and its result, when there is one, parses back.
        let edited = catch_unwind(AssertUnwindSafe(|| {
            config::set(&text, &[Setting::Interval(3.0), Setting::Partitions(false)])
        }))
        .unwrap_or_else(|_| panic!("panic editing {case}"));
        if let Ok(t) = edited {
            let (s, _) = config::parse(&t);
            assert_eq!(
                (s.interval, s.partitions),
                (Some(3.0), Some(false)),
                "{case}"
            );
        }
    }
    eprintln!("{n} mutated config files: {bad} with problems");
    assert!(bad > 0 && bad < n as usize, "{bad} of {n}");
}

/// Playbooks: the built-ins mutated as the kernel files are (truncation, garbage, huge and
/// negative numbers, lines dropped, duplicated and swapped) must parse or fail with an error
/// that names a line of the file (or says the whole file lacks a name or steps), never panic;
/// what parses must also scale and evaluate its sizes without a panic.
#[test]
fn mutated_playbooks_never_panic_and_errors_name_the_line() {
    use pagewatch::play::{Action, EatSize, Playbook, builtin::BUILTINS};
    let n = (cases() / 4).max(500);
    let files: BTreeMap<String, u64> = [("read".to_owned(), u64::MAX)].into();
    for seed in 0..n {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (name, text) = BUILTINS[rng.below(BUILTINS.len())];
        let mut text = text.to_owned();
        let mut notes = Vec::new();
        for _ in 0..=rng.below(3) {
            notes.push(if rng.below(2) == 0 {
                mutate(&mut rng, &mut text)
            } else {
                mutate_lines(&mut rng, &mut text)
            });
        }
        let case = format!("playbook case {seed} ({name}): {}", notes.join("; "));
        let lines = text.lines().count() + 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let book = Playbook::parse(&text)?;
            for f in [0.01, 1.0, 10.0] {
                for s in book.scaled(f).steps {
                    if let Action::Eat(EatSize::Size(e) | EatSize::Leave(e)) = &s.action {
                        let _ = e.eval(u64::MAX, &files);
                    }
                }
            }
            Ok(())
        }));
        match outcome.unwrap_or_else(|_| panic!("panic in {case}\n{text}")) {
            Ok(()) => {}
            Err(pagewatch::play::BookError { line: Some(l), .. }) => {
                assert!((1..=lines).contains(&l), "line {l} of {lines} in {case}");
            }
            Err(e) => assert!(
                e.msg.contains("needs a name") || e.msg.contains("no [[step]]"),
                "an error without a line in {case}: {e}\n{text}"
            ),
        }
    }
}

/// Ring-buffer pages as `trace_pipe_raw` hands them over (`tests/fixtures/trace/raw-6.18-*`),
/// with bytes flipped, words set to extreme values, and pages cut short: decoding must end
/// without a panic, and whatever it decodes must reduce and round-trip through the writers
/// pseudo-file.
#[test]
fn mutated_below_pages_never_panic() {
    use pagewatch::parse::below::{parse_events, render};
    use pagewatch::parse::below_reduce::{Layouts, Reducer};
    use pagewatch::parse::trace_raw::{parse_header_page, walk_page};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace/below");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let layout = parse_header_page(&read("header_page")).unwrap();
    let formats: Vec<(String, String)> = [
        "wbt/wbt_step",
        "wbt/wbt_stat",
        "wbt/wbt_lat",
        "vmscan/mm_vmscan_throttled",
        "vmscan/mm_vmscan_write_folio",
    ]
    .iter()
    .map(|d| {
        let f = d.rsplit('/').next().unwrap();
        ((*d).to_owned(), read(&format!("{f}.format")))
    })
    .collect();
    let pairs: Vec<(&str, &str)> = formats
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let layouts = Layouts::new(&pairs).unwrap();
    let pages: Vec<Vec<u8>> = ["wbt-cpu0.page", "wbt-cpu1.page"]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    for seed in 0..cases() {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut page = pages[rng.below(pages.len())].clone();
        for _ in 0..=rng.below(6) {
            let at = rng.below(page.len().saturating_sub(4));
            match rng.below(4) {
                0 => page[at] ^= 1 << rng.below(8),
                1 => page[at..at + 4].copy_from_slice(&u32::MAX.to_ne_bytes()),
                2 => page[at..at + 4].copy_from_slice(&(rng.next() as u32).to_ne_bytes()),
                _ => page.truncate(at),
            }
            if page.len() < 8 {
                break;
            }
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let mut r = Reducer::new(layouts.clone());
            let mut lost = 0;
            let _ = walk_page(&page, &layout, 0, &mut lost, |_, rec| {
                r.record(rec);
                Ok(())
            });
            r.lost(lost);
            let e = r.take();
            assert_eq!(parse_events(&render(&e)).unwrap(), e);
        }));
        assert!(outcome.is_ok(), "panic in -below page case {seed}");
    }
}

#[test]
fn mutated_ring_buffer_pages_never_panic() {
    use pagewatch::parse::trace::parse_format;
    use pagewatch::parse::trace_raw::{RawEvents, RecordLayout, decode_page, parse_header_page};
    use pagewatch::parse::trace_writers::{parse, reduce, render};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let layout = parse_header_page(&read("raw-6.18-3s/header_page")).unwrap();
    let record = RecordLayout::new(&parse_format(&read("raw-6.18-3s/format")).unwrap()).unwrap();
    let mut pages: Vec<Vec<u8>> = Vec::new();
    for f in [
        "raw-6.18-3s/cpu0.raw",
        "raw-6.18-3s/cpu1.raw",
        "raw-6.18-lost/cpu0.raw",
    ] {
        let bytes = std::fs::read(dir.join(f)).unwrap();
        pages.extend(bytes.chunks(layout.page_size).map(<[u8]>::to_vec));
    }
    for seed in 0..cases() {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut page = pages[rng.below(pages.len())].clone();
        for _ in 0..=rng.below(6) {
            let at = rng.below(page.len().saturating_sub(4));
            match rng.below(4) {
                0 => page[at] ^= 1 << rng.below(8),
                1 => page[at..at + 4].copy_from_slice(&u32::MAX.to_ne_bytes()),
                2 => page[at..at + 4].copy_from_slice(&(rng.next() as u32).to_ne_bytes()),
                _ => page.truncate(at),
            }
            if page.len() < 8 {
                break;
            }
        }
        let mut out = RawEvents::default();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let _ = decode_page(&page, &layout, &record, 0, &mut out);
            let w = reduce(&out.events, out.lost);
            assert_eq!(parse(&render(&w)).rows.len(), w.rows.len());
        }));
        assert!(outcome.is_ok(), "panic in ring-buffer case {seed}");
    }
}

/// Taskstats exit datagrams as the kernel sends them (`tests/fixtures/taskstats`, v16), with
/// bytes flipped, words set to extreme values (lengths, versions, pids) and datagrams cut
/// short, decoded also as a v15 struct would be: decoding must end without a panic, and
/// whatever it decodes must round-trip through the exits pseudo-file.
#[test]
fn mutated_taskstats_datagrams_never_panic() {
    use pagewatch::parse::taskstats::{Exits, decode_datagram, parse, render};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/taskstats");
    let seeds: Vec<Vec<u8>> = ["group-6.18-v16.bin", "task-6.18-v16.bin"]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    for seed in 0..cases() {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut d = seeds[rng.below(seeds.len())].clone();
        if rng.below(2) == 0 {
            // Two messages in one datagram.
            let again = d.clone();
            d.extend(again);
        }
        for _ in 0..=rng.below(6) {
            let at = rng.below(d.len().saturating_sub(4));
            match rng.below(6) {
                0 => d[at] ^= 1 << rng.below(8),
                1 => d[at..at + 4].copy_from_slice(&u32::MAX.to_ne_bytes()),
                2 => d[at..at + 4].copy_from_slice(&(rng.next() as u32).to_ne_bytes()),
                // A version of 15 (the moved layout) or 0 where the struct's is.
                3 => d[at..at + 2].copy_from_slice(&[15, 0]),
                4 => d[at..at + 2].copy_from_slice(&[0, 0]),
                _ => d.truncate(at),
            }
            if d.len() < 8 {
                break;
            }
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let mut records = Vec::new();
            decode_datagram(&d, 0x1f, &mut records);
            let e = Exits {
                state: "listening".into(),
                records,
                ..Exits::default()
            };
            let back = parse(&render(&e)).unwrap();
            assert_eq!(back.records.len(), e.records.len());
        }));
        assert!(outcome.is_ok(), "panic in taskstats case {seed}");
    }
}

/// Ring-buffer pages of the sync syscalls' records in this kernel's formats
/// (`tests/fixtures/trace/sync-6.18`): entries and exits of a few tasks with time extends,
/// then bytes flipped, words set to extreme values and pages cut short. Decoding, pairing
/// across pages and reducing must end without a panic, and the rows must round-trip through
/// the sync pseudo-file.
#[test]
fn mutated_sync_pages_never_panic() {
    use pagewatch::parse::sync_calls::{SyncCalls, SyncSource, parse, render};
    use pagewatch::parse::trace::{TraceState, parse_format};
    use pagewatch::parse::trace_raw::{PageLayout, walk_page};
    use pagewatch::parse::trace_sync::{EVENTS, Pairer, SyncLayout, reduce};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace/sync-6.18");
    let formats: Vec<_> = EVENTS
        .iter()
        .map(|e| {
            let f = std::fs::read_to_string(dir.join(e.strip_prefix("syscalls/").unwrap()));
            parse_format(&f.unwrap()).unwrap()
        })
        .collect();
    let layout = SyncLayout::new(&formats).unwrap();
    let ids: Vec<u16> = formats.iter().map(|f| f.id.unwrap() as u16).collect();
    let page_layout = PageLayout::default();
    for seed in 0..cases() {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut pairer = Pairer::default();
        let mut done = Vec::new();
        for _ in 0..=rng.below(3) {
            let mut data = Vec::new();
            while data.len() < 3800 {
                if rng.below(20) == 0 {
                    // A time extend (type_len 30).
                    let word = 0b1_1110_u32 | ((rng.next() as u32) << 5);
                    data.extend_from_slice(&word.to_ne_bytes());
                    data.extend_from_slice(&(rng.next() as u32).to_ne_bytes());
                    continue;
                }
                let mut rec = vec![0u8; 40];
                let ev = rng.below(8);
                rec[..2].copy_from_slice(&ids[ev].to_ne_bytes());
                let tid = 100 + i32::try_from(rng.below(6)).unwrap();
                rec[4..8].copy_from_slice(&tid.to_ne_bytes());
                rec[32..40].copy_from_slice(&(rng.next() % 8).to_ne_bytes());
                // A record of 10 words (type_len 10), up to 2^20 ns after the last.
                let word = 0b1010_u32 | ((rng.below(1 << 20) as u32) << 5);
                data.extend_from_slice(&word.to_ne_bytes());
                data.extend_from_slice(&rec);
            }
            let mut page = (rng.next() >> 8).to_ne_bytes().to_vec();
            page.extend_from_slice(&(data.len() as u64).to_ne_bytes());
            page.extend_from_slice(&data);
            page.resize(4096, 0);
            for _ in 0..rng.below(6) {
                let at = rng.below(page.len().saturating_sub(4));
                match rng.below(4) {
                    0 => page[at] ^= 1 << rng.below(8),
                    1 => page[at..at + 4].copy_from_slice(&u32::MAX.to_ne_bytes()),
                    2 => page[at..at + 4].copy_from_slice(&(rng.next() as u32).to_ne_bytes()),
                    _ => page.truncate(at.max(16)),
                }
            }
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let mut calls = Vec::new();
                let mut lost = 0;
                let _ = walk_page(&page, &page_layout, 0, &mut lost, |ts, rec| {
                    calls.extend(layout.decode(rec, ts));
                    Ok(())
                });
                let now = (rng.below(2) == 0).then(|| rng.next() >> 8);
                pairer.pair(calls, now, &mut done);
                let rows = reduce(&done, &pairer.open(), |tid| {
                    (tid % 2 == 0).then(|| (tid / 2, "p".to_owned()))
                });
                let c = SyncCalls {
                    rows,
                    lost,
                    unpaired: pairer.take_unpaired(),
                    ..SyncCalls::state(TraceState::Armed, SyncSource::Syscalls, None)
                };
                assert_eq!(parse(&render(&c)).unwrap(), c);
            }));
            assert!(outcome.is_ok(), "panic in sync page case {seed}");
        }
    }
}

/// Ring-buffer pages of the block events (`tests/fixtures/blk`, issue 25), mutated as above:
/// walking and decoding them, pairing the events across reads and the latency pseudo-file's
/// round trip must end without a panic.
#[test]
fn mutated_block_pages_never_panic() {
    use pagewatch::parse::blk_lat::{Latency, parse, render};
    use pagewatch::parse::blk_pair::{BlkLayout, Pairer};
    use pagewatch::parse::trace_raw::{parse_header_page, walk_page};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blk");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let layout = parse_header_page(&read("header_page")).unwrap();
    let blk = BlkLayout::new(
        &read("block_rq_insert.format"),
        &read("block_rq_issue.format"),
        &read("block_rq_complete.format"),
    )
    .unwrap();
    let mut pages: Vec<Vec<u8>> = Vec::new();
    for f in ["cpu0.raw", "cpu1.raw"] {
        let bytes = std::fs::read(dir.join(f)).unwrap();
        pages.extend(bytes.chunks(layout.page_size).map(<[u8]>::to_vec));
    }
    let mut pairer = Pairer::default();
    for seed in 0..cases() {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut page = pages[rng.below(pages.len())].clone();
        for _ in 0..=rng.below(6) {
            let at = rng.below(page.len().saturating_sub(8));
            match rng.below(5) {
                0 => page[at] ^= 1 << rng.below(8),
                1 => page[at..at + 4].copy_from_slice(&u32::MAX.to_ne_bytes()),
                2 => page[at..at + 4].copy_from_slice(&(rng.next() as u32).to_ne_bytes()),
                3 => page[at..at + 8].copy_from_slice(&rng.next().to_ne_bytes()),
                _ => page.truncate(at),
            }
            if page.len() < 8 {
                break;
            }
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let mut events = Vec::new();
            let mut lost = 0;
            let _ = walk_page(&page, &layout, 0, &mut lost, |ts, rec| {
                events.extend(blk.decode(rec, ts));
                Ok(())
            });
            pairer.feed(&mut events);
            if seed % 16 == 15 {
                let l = Latency {
                    lost,
                    devices: pairer.take(),
                };
                assert_eq!(parse(&render(&l)).unwrap(), l);
            }
        }));
        assert!(outcome.is_ok(), "panic in block page case {seed}");
    }
}
