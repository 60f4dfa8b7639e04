//! `pagewatch export` over recordings built from the captured trees: CSV layout, JSON lines
//! identical to `--batch --format json`, and OpenMetrics accepted by promtool.

#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use pagewatch::cli::ExportFormat;
use pagewatch::model::Options;
use pagewatch::record::Recording;

fn export(rec: &Recording, f: ExportFormat) -> String {
    let mut out = Vec::new();
    pagewatch::export::write(rec, f, Options::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The tree's own samples, times untouched, so they equal what `--tree` batch mode reads.
fn raw_tree(name: &str) -> Recording {
    let mut rec = common::captured(name, Vec::new());
    rec.samples = common::tree_samples(name);
    rec
}

#[test]
fn jsonl_equals_batch_json() {
    for tree in [
        "live-fio-randwrite",
        "live-memeaten",
        "kernel-4.4-vmstat-prezone",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
            .arg("--tree")
            .arg(common::tree_dir(tree))
            .args(["--batch", "--format", "json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{tree}: {out:?}");
        let batch = String::from_utf8(out.stdout).unwrap();
        let jsonl = export(&raw_tree(tree), ExportFormat::Jsonl);
        assert_eq!(jsonl.lines().count(), common::tree_samples(tree).len() - 1);
        assert_eq!(jsonl, batch, "{tree}");
    }
}

/// A CSV row's fields, RFC 4180: a quoted field may hold commas (a disk's `saturation_why`,
/// `cannot judge yet: no calm baseline; queue 18, w_await 36.01 ms`), its quotes doubled.
fn cells(row: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn csv_header_and_rows() {
    let rec = common::captured("live-fio-randwrite", Vec::new());
    let csv = export(&rec, ExportFormat::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "header + 3 records");
    let head: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(head[0], "time_ms");
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    // Schema columns sorted by path, then the union of devices, iostat's order.
    assert!(col("cpu.iowait_pct") < col("dirty.nr_dirty"));
    assert!(col("dirty.nr_dirty") < col("memory.MemAvailable"));
    assert!(!head.contains(&"cpu"), "a null struct is not a column");
    let vda = col("disk.vda.r/s");
    assert_eq!(
        &head[vda..vda + 3],
        ["disk.vda.r/s", "disk.vda.rkB/s", "disk.vda.rrqm/s"]
    );
    // Only vda did I/O since boot; idle devices are not derived, as in batch mode.
    assert_eq!(*head.last().unwrap(), "disk.vda.%util");
    // Values agree with the JSON lines of the same records.
    let jsonl = export(&rec, ExportFormat::Jsonl);
    for (row, json) in lines[1..].iter().zip(jsonl.lines()) {
        let cells = cells(row);
        assert_eq!(cells.len(), head.len());
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(cells[0], v["time_ms"].to_string());
        assert_eq!(
            cells[col("memory.MemAvailable")],
            v["memory"]["MemAvailable"].to_string()
        );
        assert_eq!(
            cells[col("dirty.state")],
            v["dirty"]["state"].as_str().unwrap()
        );
        let disk = v["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == "vda")
            .unwrap();
        // serde_json parses floats to within an ulp (no float_roundtrip): compare numerically.
        for (c, k) in [
            ("disk.vda.w_await", "w_await"),
            ("disk.vda.%util", "util_pct"),
        ] {
            let cell: f64 = cells[col(c)].parse().unwrap();
            let want = disk[k].as_f64().unwrap();
            assert!(
                (cell - want).abs() <= want.abs() * 1e-15,
                "{c}: {cell} vs {want}"
            );
        }
    }
    // The first record of live-fio-randwrite: MemAvailable 24 348 172 kB (its README).
    assert_eq!(
        lines[1].split(',').nth(col("memory.MemAvailable")),
        Some("24348172")
    );
}

#[test]
fn csv_leaves_absent_figures_empty() {
    // kernel-4.14 has no PSI: the pressure columns exist only if some record has them.
    let rec = common::captured("kernel-4.14-diskstats14", Vec::new());
    let csv = export(&rec, ExportFormat::Csv);
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let f = head.iter().position(|h| *h == "disk.sda.f/s").unwrap();
    assert_eq!(row[f], "", "no flush counters before 5.5");
    let m = head
        .iter()
        .position(|h| *h == "memory.MemAvailable")
        .unwrap();
    assert!(!row[m].is_empty());
}

fn promtool() -> Option<std::path::PathBuf> {
    let out = Command::new("promtool").arg("--version").output().ok()?;
    out.status.success().then(|| "promtool".into())
}

#[test]
fn openmetrics_loads_into_promtool() {
    let rec = common::storm(common::storm_events());
    let text = export(&rec, ExportFormat::Openmetrics);
    assert!(text.ends_with("# EOF\n"));
    assert!(text.contains("# TYPE pagewatch_memory_available_bytes gauge\n# UNIT pagewatch_memory_available_bytes bytes\n# HELP pagewatch_memory_available_bytes "));
    // Families contiguous: every family's metadata appears once, before its samples.
    let types = text.lines().filter(|l| l.starts_with("# TYPE")).count();
    let mut seen = std::collections::BTreeSet::new();
    let mut current = "";
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let name = l.split('{').next().unwrap();
        if name != current {
            assert!(seen.insert(name.to_owned()), "{name} is not contiguous");
            current = name;
        }
    }
    assert_eq!(seen.len(), types);
    let Some(tool) = promtool() else {
        println!("skipped: promtool not installed (apt-get install prometheus)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("pw.om");
    std::fs::write(&file, &text).unwrap();
    let db = tmp.path().join("db");
    let out = Command::new(&tool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&file)
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "promtool rejected the export: {out:?}"
    );
    let out = Command::new(&tool)
        .args(["tsdb", "list"])
        .arg(&db)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{list}");
    // One block: 30 system series + 9 vda series; every line sample made it in.
    let samples = text.lines().filter(|l| !l.starts_with('#')).count();
    let row = list.lines().nth(1).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert!(
        cols.contains(&samples.to_string().as_str()),
        "{list}\nwant {samples} samples"
    );
    // 30 system series, 9 vda series and the dirty domains' (the global domain's threshold,
    // freerun and count): every distinct name and label set of the text.
    let series: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| &l[..=l.find('}').unwrap()])
        .collect();
    assert!(series.len() >= 42, "{series:?}");
    let want = series.len().to_string();
    assert!(cols.contains(&want.as_str()), "{list}\nwant {want} series");
    // promtool 2.42's dump opens the WAL, which create-blocks-from does not make.
    std::fs::create_dir_all(db.join("wal")).unwrap();
    let out = Command::new(&tool)
        .args([
            "tsdb",
            "dump",
            "--match",
            "{__name__=\"pagewatch_memory_available_bytes\"}",
        ])
        .arg(&db)
        .output()
        .unwrap();
    let dump = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    // `{labels} value timestamp_ms` per sample; 23 records.
    let points: Vec<(f64, i64)> = dump
        .lines()
        .map(|l| {
            assert!(l.contains("host=\"vm\""), "{l}");
            let mut f = l.rsplitn(3, ' ');
            let t = f.next().unwrap().parse().unwrap();
            (f.next().unwrap().parse().unwrap(), t)
        })
        .collect();
    assert_eq!(points.len(), 23, "{dump}");
    // Sample 14: MemAvailable 22 192 720 kB = 22 725 345 280 bytes, at +14 s.
    assert!(
        points.contains(&(22_725_345_280.0, common::START_MS + 14_000)),
        "{dump}"
    );
}

#[test]
fn export_errors_say_what_happened() {
    let tmp = tempfile::tempdir().unwrap();
    let rec =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recordings/idle-150s.pwrec");
    let run = |out: &std::path::Path| {
        let o = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
            .arg("export")
            .arg(&rec)
            .args(["--format", "csv", "-o"])
            .arg(out)
            .output()
            .unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let existing = tmp.path().join("there.csv");
    std::fs::write(&existing, "keep").unwrap();
    let e = run(&existing);
    assert!(e.contains("never overwrites"), "{e}");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
    // Not there to be overwritten: the reason is the directory, not an overwrite.
    let e = run(&tmp.path().join("no/such/dir.csv"));
    assert!(
        !e.contains("overwrite") && e.contains("No such file"),
        "{e}"
    );
}

/// Issue 51: a crafted recording's tracer texts (`tracer.why`, `latency_tracer.why`) reached
/// the CSV with their terminal escapes, so `cat out.csv` retitled the terminal and cleared
/// it. Every control character is escaped, as on the screen and in report.md.
#[test]
fn csv_escapes_the_control_characters_of_a_crafted_recording() {
    use pagewatch::sample::names;
    let mut rec = common::captured("live-fio-randwrite", Vec::new());
    for s in &mut rec.samples {
        s.files.insert(
            names::TRACE_STATUS.into(),
            "state error\nwhy a\x1b]0;owned\x07b\x1b[2J\u{202e}c\n".into(),
        );
        s.files.insert(
            names::BLK_STATUS.into(),
            "state error\nwhy d\x1b[31me\u{9b}f\n".into(),
        );
        // A device whose name clears the screen: it heads 22 columns.
        s.files = std::mem::take(&mut s.files)
            .into_iter()
            .map(|(k, v)| {
                let v = v.replace(" vda ", " v\x1b[2Jda ");
                (k.replace("/vda/", "/v\x1b[2Jda/"), v)
            })
            .collect();
    }
    let csv = export(&rec, ExportFormat::Csv);
    let bad: Vec<char> = csv
        .chars()
        .filter(|c| (c.is_control() && *c != '\n') || *c == '\u{202e}')
        .collect();
    assert!(bad.is_empty(), "control characters in the CSV: {bad:?}");
    assert!(
        csv.contains("a\\x1b]0;owned\\x07b\\x1b[2J\\u{202e}c"),
        "tracer.why escaped"
    );
    assert!(
        csv.contains("d\\x1b[31me\\u{9b}f"),
        "latency_tracer.why escaped"
    );
    assert!(
        csv.contains("disk.v\\x1b[2Jda.w/s"),
        "the device's name escaped"
    );
}
