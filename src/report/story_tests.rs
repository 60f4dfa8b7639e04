use super::*;
use crate::model::answers::{Culprit, MemoryTaker, Story};
use crate::model::commands::CommandRow;

/// Four records of the idle tree, judged by the pipeline, one second apart (the third half a
/// second), with `stories` put in their verdicts, each record a walk of its own over its
/// interval whose roll-up has the story's culprits (`model::story` names them from it).
fn models(stories: [Story; 4]) -> Vec<Model> {
    let s = crate::source::test_samples("live-idle");
    let all = crate::pipeline::derive_all(&s, crate::model::Options::default());
    let base = all.models[0].clone();
    stories
        .into_iter()
        .enumerate()
        .map(|(i, story)| {
            let mut m = base.clone();
            m.interval_s = Some(if i == 2 { 0.5 } else { 1.0 });
            m.time_ms = 10_000 + 1000 * i64::try_from(i).unwrap();
            let walk_ms = if i == 2 { 500 } else { 1000 };
            m.commands = Some(rolled_up(
                &story.culprits,
                10_000 + 1000 * i as u64,
                walk_ms,
            ));
            m.verdict.as_mut().unwrap().story = story;
            m
        })
        .collect()
}

/// A walk's roll-up with `culprits`' rows: the walk at `walk` (ms), its rates over `walk_ms`.
fn rolled_up(culprits: &[Culprit], walk: u64, walk_ms: u64) -> Vec<CommandRow> {
    (culprits.iter())
        .map(|c| CommandRow {
            comm: c.comm.clone(),
            pids: c.pids,
            dirtied_bytes_per_s: Some(c.dirtied_bytes_per_s),
            read_bytes_per_s: c.read_bytes_per_s,
            rchar_per_s: None,
            wchar_per_s: None,
            reaped_children: 0,
            exited: 0,
            walk_ms: Some(walk_ms),
            rates_from_walk_ms: walk,
        })
        .collect()
}

fn culprit(comm: &str, pids: usize, mb_s: f64) -> Culprit {
    Culprit {
        comm: comm.into(),
        pids,
        dirtied_bytes_per_s: mb_s * 1024.0 * 1024.0,
        read_bytes_per_s: None,
    }
}

fn victim(pid: u32, figure: &'static str, value: f64, calm: Option<f64>) -> Victim {
    Victim {
        pid,
        comm: "python3".into(),
        figure,
        value,
        calm,
        ratio: calm.map(|c| value / c),
        waits_for: None,
    }
}

fn taker(pid: u32, comm: &str, mb_s: f64, rss_mb: u64) -> MemoryTaker {
    MemoryTaker {
        pid,
        comm: comm.into(),
        rss_bytes: Some(rss_mb * 1024 * 1024),
        growth_bytes_per_s: mb_s * 1024.0 * 1024.0,
    }
}

#[test]
fn nobody_named_says_nothing() {
    let s = period_story(&models(Default::default()));
    assert_eq!(s, PeriodStory::default());
    assert_eq!(s.paragraph(0), None);
}

#[test]
#[allow(clippy::float_cmp, reason = "sums of exact binary fractions")]
fn the_period_story_sums_what_the_records_named() {
    let mib = 1024.0 * 1024.0;
    let stories = [
        // fio 600 MiB/s (2 pids) beside dd 500 MiB/s; a victim never seen calm.
        Story {
            culprits: vec![culprit("fio", 2, 600.0), culprit("dd", 1, 500.0)],
            victims: vec![victim(7, "fsync", 30.0, None)],
            ..Story::default()
        },
        // dd alone 500 MiB/s with 3 pids; python3[4242] 16 ms against 0.4 ms calm (40x).
        Story {
            culprits: vec![culprit("dd", 3, 500.0)],
            victims: vec![victim(4242, "fsync", 16.0, Some(0.4))],
            memory_taker: Some(taker(99, "eat", 800.0, 3000)),
            thresholds_moved: Some("T 4.5G → 1.0G as MemAvailable fell".into()),
        },
        // Half a second: fio 600 MiB/s with 4 pids; the same victim at 10x.
        Story {
            culprits: vec![culprit("fio", 4, 600.0)],
            victims: vec![victim(4242, "fsync", 4.0, Some(0.4))],
            memory_taker: Some(taker(99, "eat", 800.0, 3400)),
            thresholds_moved: None,
        },
        // A faster grower once, for less than the eater's total.
        Story {
            memory_taker: Some(taker(5, "cc1", 1000.0, 100)),
            ..Story::default()
        },
    ];
    let mut m = models(stories);
    // The threshold fell furthest in the last record that said why.
    let lowest = "T 4.5G → 596M as MemAvailable fell 21.8G → 3.3G";
    m[3].verdict.as_mut().unwrap().story.thresholds_moved = Some(lowest.into());
    m[3].dirty.thresh_pages = Some(1000);
    m[1].dirty.thresh_pages = Some(2000);
    let s = period_story(&m);
    // dd: 500 + 500 = 1000 MiB; fio: 600 + 600 × 0.5 = 900 MiB.
    let c = s.culprit.as_ref().unwrap();
    assert_eq!((c.comm.as_str(), c.pids), ("dd", 3));
    assert_eq!(c.dirtied, 1000.0 * mib);
    // The 40x with a calm outranks the 30 ms never seen calm (score 3) and the 10x.
    let v = s.victim.as_ref().unwrap();
    assert_eq!(
        (v.victim.pid, v.victim.value, v.time_ms),
        (4242, 16.0, 11_000)
    );
    // eat: 800 + 800 × 0.5 = 1200 MiB over cc1's 1000 MiB.
    let t = s.memory_taker.as_ref().unwrap();
    assert_eq!(
        (t.pid, t.grew, t.rss_bytes),
        (99, 1200.0 * mib, Some(3400 * 1024 * 1024))
    );
    assert_eq!(s.thresholds_moved.as_deref(), Some(lowest));
    assert_eq!(
        s.paragraph(10_000).unwrap(),
        "Culprit: **dd** ×3, 1000M dirtied while named the culprit. Victim: **python3[4242]** \
         fsync 16.0 ms, 40x its calm 0.40 ms, at +0:01.0 (00:00:11 UTC). Memory taker: \
         **eat[99]** grew 1.2G while memory ran short (resident 3.3G at most). T 4.5G → 596M \
         as MemAvailable fell 21.8G → 3.3G."
    );
    // The terminal's words are the same, without the Markdown.
    assert_eq!(
        s.text(10_000).unwrap(),
        s.paragraph(10_000).unwrap().replace("**", "")
    );
}

#[test]
fn a_victim_never_seen_calm_is_named_when_none_has_a_calm() {
    let stories = [
        Story {
            victims: vec![victim(7, "iowait", 300.0, None)],
            ..Story::default()
        },
        Story {
            victims: vec![victim(8, "fsync", 20.0, None)],
            ..Story::default()
        },
        Story::default(),
        Story::default(),
    ];
    let s = period_story(&models(stories));
    // fsync 20 ms is twice its 10 ms bar; IO wait 300 ms/s 1.5 times its 200 ms/s.
    let v = s.victim.unwrap();
    assert_eq!(v.victim.pid, 8);
    assert!(s.culprit.is_none() && s.memory_taker.is_none() && s.thresholds_moved.is_none());
}

#[test]
fn a_crafted_command_name_cannot_break_the_paragraph() {
    let stories = [
        Story {
            culprits: vec![culprit("a|b\n\u{1b}[2J", 1, 100.0)],
            ..Story::default()
        },
        Story::default(),
        Story::default(),
        Story::default(),
    ];
    let st = period_story(&models(stories));
    let p = st.paragraph(0).unwrap();
    assert_eq!(
        p,
        "Culprit: **a\\|b \\x1b[2J**, 100M dirtied while named the culprit."
    );
    // On a terminal: no escape sequence reaches it.
    let t = st.text(0).unwrap();
    assert_eq!(
        t,
        "Culprit: a|b\\n\\x1b[2J, 100M dirtied while named the culprit."
    );
}

/// A culprit named at a 1 s walk (the one after a first walk) whose roll-up the five records
/// to the next walk repeat counts the walk's 1 s of bytes, not five (the live recording of 20
/// dd of 40 MiB read "Culprit: dd-burst ×20, 3.1G"); then a 2 s walk repeated by two records,
/// only the first of which named it: the 1 s it was named.
#[test]
#[allow(clippy::float_cmp, reason = "whole MiB")]
fn a_culprit_repeated_until_the_next_walk_counts_its_walk_once() {
    let named = |mib_s: f64| Story {
        culprits: vec![culprit("dd", 20, mib_s)],
        ..Story::default()
    };
    let mut m = models([named(800.0), named(800.0), named(800.0), named(800.0)]);
    m.extend([m[3].clone(), m[3].clone(), m[3].clone()]);
    for (i, x) in m.iter_mut().enumerate() {
        x.interval_s = Some(1.0);
        x.time_ms = 10_000 + 1000 * i64::try_from(i).unwrap();
        let (walk, walk_ms, mib_s) = if i < 5 {
            (10_000, 1000, 800.0)
        } else {
            (15_000, 2000, 100.0)
        };
        x.commands = Some(rolled_up(&named(mib_s).culprits, walk, walk_ms));
        x.verdict.as_mut().unwrap().story = if i == 6 {
            Story::default()
        } else {
            named(mib_s)
        };
    }
    let c = period_story(&m).culprit.unwrap();
    assert_eq!((c.comm.as_str(), c.pids), ("dd", 20));
    assert_eq!(c.dirtied, 900.0 * 1024.0 * 1024.0);
}

/// A memory taker named at a 1 s walk whose row the five records to the next walk repeat
/// grew the walk's 1 s, not five; then a 5 s walk (another resident size) named in two of its
/// records: 2 s of its rate.
#[test]
#[allow(clippy::float_cmp, reason = "whole MiB")]
fn a_memory_taker_repeated_until_the_next_walk_counts_its_walk_once() {
    let named = |mib_s: f64, rss_mb: u64| Story {
        memory_taker: Some(taker(99, "eat", mib_s, rss_mb)),
        ..Story::default()
    };
    let mut m = models(std::array::from_fn(|_| named(800.0, 2000)));
    m.extend([m[3].clone(), m[3].clone(), m[3].clone()]);
    for (i, x) in m.iter_mut().enumerate() {
        x.interval_s = Some(1.0);
        x.time_ms = 10_000 + 1000 * i64::try_from(i).unwrap();
        let (walk_ms, story) = if i < 5 {
            (1000, named(800.0, 2000))
        } else {
            (5000, named(400.0, 4000))
        };
        x.walk_interval_ms = Some(walk_ms);
        x.verdict.as_mut().unwrap().story = story;
    }
    let t = period_story(&m).memory_taker.unwrap();
    assert_eq!((t.pid, t.rss_bytes), (99, Some(4000 * 1024 * 1024)));
    assert_eq!(t.grew, (800.0 + 2.0 * 400.0) * 1024.0 * 1024.0);
}

/// A saturated disk's reader named culprit: the bytes it read while named count, and the
/// dirtying of a record with no disk saturated beside them (the reader's rate is not the
/// story there: `read_bytes_per_s` `None`).
#[test]
#[allow(clippy::float_cmp, reason = "sums of exact binary fractions")]
fn a_reader_named_beside_a_saturated_disk_is_the_culprit_by_what_it_read() {
    let mib = 1024.0 * 1024.0;
    let reader = |mb_s: f64| Culprit {
        read_bytes_per_s: Some(mb_s * mib),
        ..culprit("fio", 1, 0.0)
    };
    let stories = [
        Story {
            culprits: vec![reader(300.0)],
            ..Story::default()
        },
        Story {
            culprits: vec![reader(300.0)],
            ..Story::default()
        },
        Story::default(),
        Story {
            culprits: vec![culprit("dd", 1, 100.0)],
            ..Story::default()
        },
    ];
    let s = period_story(&models(stories));
    // fio: 300 + 300 MiB read; dd 100 MiB dirtied.
    let c = s.culprit.as_ref().unwrap();
    assert_eq!(
        (c.comm.as_str(), c.dirtied, c.read),
        ("fio", 0.0, 600.0 * mib)
    );
    assert_eq!(
        s.paragraph(10_000).unwrap(),
        "Culprit: **fio**, 600M read while named the culprit."
    );
}
