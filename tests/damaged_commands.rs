//! Issue 51: the commands over a damaged recording agree. `report`, `export` and `replay
//! --batch` show what precedes the damage (a report, rows, records), name the file once in
//! the warning, and exit 1, as README's exit-status table says of a damaged recording; a
//! recording cut short by a killed recorder is not damaged and exits 0.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use pagewatch::record::{Recorder, Recording};

const BIN: &str = env!("CARGO_BIN_EXE_pagewatch");

/// Writes `rec`'s samples; returns the file size after the header and after each sample.
fn write(path: &Path, rec: &Recording, finish: bool) -> Vec<u64> {
    let mut w = Recorder::create(path, &rec.header).unwrap();
    let mut ends = vec![w.bytes_written()];
    for s in &rec.samples {
        w.write_sample(s).unwrap();
        ends.push(w.bytes_written());
    }
    if finish {
        w.finish().unwrap();
    }
    ends
}

/// `report`, `export --format csv` and `replay --batch` over `file`, each with its output.
fn commands(file: &Path, out: &Path) -> Vec<(&'static str, Output)> {
    let run = |args: &[&std::ffi::OsStr]| Command::new(BIN).args(args).output().unwrap();
    let f = file.as_os_str();
    vec![
        (
            "report",
            run(&["report".as_ref(), f, "-o".as_ref(), out.as_os_str()]),
        ),
        (
            "export",
            run(&["export".as_ref(), f, "--format".as_ref(), "csv".as_ref()]),
        ),
        ("replay", run(&["replay".as_ref(), f, "--batch".as_ref()])),
    ]
}

#[test]
fn a_damaged_recording_exits_1_after_what_could_be_read_and_is_named_once() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = common::captured("live-fio-randwrite", Vec::new());
    assert_eq!(rec.samples.len(), 4);
    let full = tmp.path().join("full.pwrec");
    let ends = write(&full, &rec, true);
    let bytes = std::fs::read(&full).unwrap();
    // Damaged at sample 1 (nothing to show) and at sample 4 (three samples kept).
    for k in [0usize, 3] {
        let mut b = bytes.clone();
        b[usize::try_from(u64::midpoint(ends[k], ends[k + 1])).unwrap()] ^= 0x5a;
        let bad = tmp.path().join(format!("bad{k}.pwrec"));
        std::fs::write(&bad, &b).unwrap();
        let name = bad.display().to_string();
        for (cmd, out) in commands(&bad, &tmp.path().join(format!("r{k}"))) {
            let err = String::from_utf8_lossy(&out.stderr);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let case = format!("{cmd} damaged at sample {}: {err}", k + 1);
            assert_eq!(out.status.code(), Some(1), "{case}");
            let warning = err
                .lines()
                .find(|l| l.contains("is damaged at sample"))
                .unwrap_or_else(|| panic!("no warning: {case}"));
            assert_eq!(warning.matches(&name).count(), 1, "{case}");
            assert!(err.contains("hint: "), "{case}");
            if k == 3 {
                // What precedes the damage is shown: three samples, two records.
                let shown = match cmd {
                    "report" => tmp.path().join("r3/report.md").exists(),
                    "export" => stdout.lines().count() == 3,
                    _ => stdout.contains("below background"),
                };
                assert!(shown, "{case}\n{stdout}");
                assert!(
                    err.contains(&format!(
                        "{name} is damaged: only the 3 sample(s) before the damage were used"
                    )),
                    "{case}"
                );
            }
        }
    }
    // Cut short, as a killed recorder leaves it: not damaged.
    let cut = tmp.path().join("cut.pwrec");
    write(&cut, &rec, false);
    for (cmd, out) in commands(&cut, &tmp.path().join("rcut")) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{cmd} on an unclosed file: {err}"
        );
        assert!(err.contains("was not closed"), "{cmd}: {err}");
    }
}
