//! Tests of `Parser` and its memos: equal to `Snapshot::parse` on every captured tree, and
//! through changed, bad and vanished files.

use super::*;
use crate::sample::names;
use crate::source::{FsSource, Source, TreeSource};

/// Every sample of every captured tree, trees one after another.
fn tree_samples() -> Vec<RawSample> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/trees");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 7, "{dirs:?}");
    let mut out = Vec::new();
    for d in dirs {
        let mut src = TreeSource::open(&d).unwrap();
        while let Some(s) = src.next_sample().unwrap() {
            out.push(s);
        }
    }
    out
}

fn same_as_reference(samples: &[RawSample]) {
    let mut p = Parser::new();
    for (i, raw) in samples.iter().enumerate() {
        let reference = Snapshot::parse(raw).map_err(|e| e.to_string());
        assert_eq!(p.parse(raw).map_err(|e| e.to_string()), reference, "{i}");
    }
}

#[test]
fn memo_parses_only_new_text_and_keeps_no_errors() {
    let mut m = Memo::default();
    let mut calls = 0;
    let mut get = |m: &mut Memo<usize>, t: &str| {
        m.get(t, |t| {
            calls += 1;
            if t == "bad" { Err(()) } else { Ok(t.len()) }
        })
    };
    assert_eq!(get(&mut m, "abc"), Ok(3));
    assert_eq!(get(&mut m, "abc"), Ok(3));
    assert_eq!(get(&mut m, "abcd"), Ok(4));
    assert_eq!(get(&mut m, "bad"), Err(()));
    assert_eq!(get(&mut m, "bad"), Err(()));
    assert_eq!(get(&mut m, "abcd"), Ok(4));
    assert_eq!(calls, 4, "abc, abcd, bad, bad");
}

#[test]
fn equals_the_reference_over_every_tree() {
    let samples = tree_samples();
    same_as_reference(&samples);
    // Each sample twice in a row: every memo hits on the repeat.
    let doubled: Vec<RawSample> = samples
        .iter()
        .flat_map(|s| [s.clone(), s.clone()])
        .collect();
    same_as_reference(&doubled);
}

#[test]
fn equals_the_reference_over_live_samples() {
    // Back-to-back live reads: zoneinfo and the sysctls are carried between slow
    // refreshes, diskstats mostly repeats.
    let mut src = FsSource::live();
    let samples: Vec<RawSample> = (0..12).map(|_| src.read().unwrap()).collect();
    same_as_reference(&samples);
}

#[test]
fn changed_bad_and_vanished_files_are_parsed_afresh() {
    let mut samples = tree_samples();
    samples.truncate(3);
    let mut seq = vec![samples[0].clone()];
    // zoneinfo changes (first zone: pages free 1), then turns to garbage, then comes back, then vanishes.
    let mut s = samples[0].clone();
    let z = s.files[names::ZONEINFO].replacen("pages free", "pages free 1", 1);
    s.files.insert(names::ZONEINFO.into(), z);
    seq.push(s.clone());
    s.files.insert(names::ZONEINFO.into(), "garbage\n".into());
    seq.push(s.clone());
    seq.push(samples[0].clone());
    s.files.remove(names::ZONEINFO);
    s.files
        .insert(names::DISKSTATS.into(), "8 0 sda 1 2\n".into());
    seq.push(s.clone());
    seq.push(samples[1].clone());
    seq.push(samples[2].clone());
    same_as_reference(&seq);
    let mut p = Parser::new();
    let errs: Vec<bool> = seq.iter().map(|r| p.parse(r).is_err()).collect();
    // The garbage zoneinfo is carried as `zones_error`, and the short diskstats line as
    // `disks_skipped`, not as an error of the sample.
    assert_eq!(errs, [false; 7]);
    let skipped = Parser::new().parse(&seq[4]).unwrap().disks_skipped;
    assert!(
        skipped[0].error.starts_with("proc/diskstats:1:"),
        "{skipped:?}"
    );
    let zones_error = Parser::new().parse(&seq[2]).unwrap().zones_error.unwrap();
    assert!(zones_error.starts_with("proc/zoneinfo:1:"), "{zones_error}");
    let zones = |r: &RawSample| Parser::new().parse(r).unwrap().zones.unwrap();
    assert_eq!(zones(&seq[1])[0].free, 1);
    assert_ne!(zones(&seq[0])[0].free, 1);
}

#[test]
fn sysctl_changes_garbage_and_absence_are_seen() {
    let base = tree_samples().swap_remove(0);
    let ratio = names::vm_sysctl("dirty_ratio");
    let swappiness = names::vm_sysctl("swappiness");
    assert!(base.file(&ratio).is_some() && base.file(&swappiness).is_some());
    let with = |edits: &[(&str, Option<&str>)]| {
        let mut s = base.clone();
        for (name, text) in edits {
            match text {
                Some(t) => s.files.insert((*name).to_owned(), (*t).to_owned()),
                None => s.files.remove(*name),
            };
        }
        s
    };
    let seq = [
        base.clone(),
        base.clone(),
        with(&[(&ratio, Some("33\n"))]),
        with(&[(&ratio, Some("33\n"))]),
        with(&[(&ratio, Some("thirty\n"))]),
        with(&[(&ratio, Some("thirty\n"))]),
        with(&[(&ratio, None)]),
        with(&[(&swappiness, Some("7\n")), (&ratio, None)]),
        base.clone(),
    ];
    same_as_reference(&seq);
    let mut p = Parser::new();
    let got: Vec<_> = seq
        .iter()
        .map(|r| {
            p.parse(r)
                .map(|s| (s.sysctl.dirty_ratio, s.sysctl.swappiness))
                .map_err(|e| e.to_string())
        })
        .collect();
    let first = got[0].clone().unwrap();
    assert_eq!(got[2], Ok((Some(33), first.1)));
    assert!(
        got[4].as_ref().unwrap_err().contains("dirty_ratio"),
        "{got:?}"
    );
    assert!(got[5].is_err());
    assert_eq!(got[6], Ok((None, first.1)));
    assert_eq!(got[7], Ok((None, Some(7))));
    assert_eq!(got[8], Ok(first));
}

#[test]
fn disk_lines_equal_the_reference_through_changes() {
    let a = " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n 8 1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n";
    let b = " 8 0 sda 2 2 3 4 5 6 7 8 9 10 11\n 8 1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n";
    let grown = format!("{b} 8 16 sdb 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n");
    let shifted = " 8 1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n";
    let bad = " 8 0 sda 2 2 3 4 5 6 7 8 9 10 11\n 8 1 sda1 1 x 3 4 5 6 7 8 9 10 11\n";
    let old_style = "\n 8 1 sda1 1 2 3 4\n 8 0 sda 2 2 3 4 5 6 7 8 9 10 11\r\n";
    let seq = [
        a, a, b, &grown, shifted, b, bad, bad, b, "", old_style, old_style, a,
    ];
    let mut m = LineMemo::default();
    let mut skipped = 0;
    // The memo's lines, as `diskstats::parse` gives them.
    let split = |l: &[std::result::Result<Option<DiskCounters>, diskstats::Skipped>]| {
        diskstats::Diskstats {
            disks: l.iter().filter_map(|l| l.clone().ok().flatten()).collect(),
            skipped: l.iter().filter_map(|l| l.clone().err()).collect(),
        }
    };
    for (i, text) in seq.iter().enumerate() {
        let want = diskstats::parse(text);
        skipped += want.skipped.len();
        let got = m.get(text, |l, n| Ok::<_, ()>(diskstats::parse_line(l, n)));
        assert_eq!(split(got.unwrap()), want, "{i}: {text:?}");
    }
    assert_eq!(skipped, 2, "sda1 of both `bad` samples is skipped");
    let got = split(
        m.get(&grown, |l, n| Ok::<_, ()>(diskstats::parse_line(l, n)))
            .unwrap(),
    )
    .disks;
    let names: Vec<_> = got.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["sda", "sda1", "sdb"]);
    assert_eq!(got[0].reads, 2);
    assert_eq!(got[2].flush_ms, Some(17));
}

#[test]
fn psi_lines_equal_the_reference_through_changes() {
    let file = names::PSI_IO;
    let a = "some avg10=0.00 avg60=0.10 avg300=0.20 total=100\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=50\n";
    let b = "some avg10=0.00 avg60=0.10 avg300=0.20 total=101\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=50\n";
    let c = "some avg10=0.00 avg60=0.10 avg300=0.20 total=101\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=51\n";
    let some_only = "some avg10=0.00 avg60=0.10 avg300=0.20 total=101\n";
    let swapped = "full avg10=0.00 avg60=0.00 avg300=0.00 total=51\nsome avg10=0.00 avg60=0.10 avg300=0.20 total=101\n";
    let bad = "some avg10=0.00 avg60=0.10 avg300=0.20 total=101\nfull avg10=zero avg60=0.00 avg300=0.00 total=51\n";
    let seq = [a, a, b, c, some_only, c, swapped, bad, bad, c, "", "\n", a];
    let mut m = LineMemo::default();
    let mut errors = 0;
    for (i, text) in seq.iter().enumerate() {
        let want = pressure::parse(file, text).map_err(|e| e.to_string());
        errors += usize::from(want.is_err());
        let got = m
            .get(text, |line, n| pressure::parse_line(file, line, n))
            .map(|l| l.iter().fold(Psi::default(), |p, l| p.then(*l)));
        assert_eq!(got.map_err(|e| e.to_string()), want, "{i}: {text:?}");
    }
    assert_eq!(errors, 2, "both `bad` samples fail");
}

#[test]
fn sysctl_memo_tells_apart_texts_that_join_alike() {
    let mut m = SysctlMemo::default();
    let mut t: [Option<&str>; 9] = [Some("1\n"); 9];
    t[0] = Some("12\n");
    t[1] = Some("3\n");
    assert_eq!(m.get(t).unwrap().dirty_ratio, Some(12));
    assert!(m.same(t));
    // The same bytes end to end, split elsewhere.
    let mut u = t;
    u[0] = Some("12");
    u[1] = Some("\n3\n");
    assert!(!m.same(u));
    assert_eq!(m.get(u).unwrap().dirty_background_ratio, Some(3));
    // Absent is not empty.
    let mut v = u;
    v[8] = None;
    assert!(!m.same(v));
    assert_eq!(m.get(v).unwrap().swappiness, None);
    let mut w = v;
    w[8] = Some("");
    assert!(!m.same(w));
    assert!(m.get(w).is_err(), "an empty knob is not a number");
    assert!(m.parsed.is_none(), "a failed parse is not kept");
    assert_eq!(m.get(v).unwrap().swappiness, None);
    assert!(m.same(v));
}
