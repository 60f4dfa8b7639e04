//! Tests of `History`: the await baseline against a recount over the window.

use super::*;

#[test]
fn median_ignores_idle_ticks_and_follows_points_leaving() {
    let pt = |iops, await_ms| DiskPoint {
        iops,
        await_ms,
        ..DiskPoint::default()
    };
    let mut h = DiskHistory::default();
    for (iops, a) in [
        (0.0, 0.0),
        (10.0, 1.0),
        (10.0, 3.0),
        (10.0, 2.0),
        (0.0, 0.0),
    ] {
        h.track(&pt(iops, a), true);
    }
    assert_eq!(h.median(), Some(2.0));
    h.track(&pt(10.0, 4.0), true);
    assert_eq!(h.median(), Some(3.0), "upper middle of 1 2 3 4");
    h.track(&pt(10.0, 3.0), false);
    h.track(&pt(0.0, 9.0), false);
    assert_eq!(h.median(), Some(2.0), "1 2 4");
    h.track(&pt(f64::NAN, 5.0), true);
    assert_eq!(h.busy_awaits, [1.0, 2.0, 4.0], "NaN iops is not I/O");
    for a in [1.0, 2.0, 4.0] {
        h.track(&pt(10.0, a), false);
    }
    assert_eq!(h.median(), None);
}

/// A model whose only disks are `(name, iops, await)`, all reads.
fn model(disks: &[(&str, f64, f64)]) -> Model {
    use crate::model::{Disk, Options, disk::Columns};
    let snap = crate::parse::Snapshot {
        page_size: 4096,
        ..crate::parse::Snapshot::default()
    };
    let mut m = Model::derive(None, &snap, Options::default());
    m.disks = disks
        .iter()
        .map(|&(name, iops, await_ms)| Disk {
            name: name.to_owned(),
            dm_name: None,
            partition: false,
            in_flight: 0,
            queue: None,
            cols: Columns {
                r_s: Some(iops),
                w_s: Some(0.0),
                r_await: Some(await_ms),
                ..Columns::default()
            },
            saturation: crate::model::saturation::Saturation::default(),
        })
        .collect();
    m
}

#[test]
fn baseline_is_the_median_of_the_busy_ticks_in_the_window() {
    // Idle stretches, busy stretches, a disk that comes and goes; window of 5 ticks.
    let mut h = History::new(5);
    let mut seen: Vec<Vec<(&str, f64, f64)>> = Vec::new();
    let awaits = [
        0.0, 4.0, 0.0, 0.0, 9.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 3.0, 3.0, 0.0,
    ];
    for (t, &a) in awaits.iter().enumerate() {
        let iops = if a > 0.0 { 10.0 } else { 0.0 };
        let mut disks = vec![("vda", iops, a)];
        if (3..9).contains(&t) {
            disks.push(("sdb", 5.0, t as f64));
        }
        h.push(&model(&disks));
        seen.push(disks);
        for name in ["vda", "sdb"] {
            let window = &seen[seen.len().saturating_sub(5)..];
            let mut busy: Vec<f64> = window
                .iter()
                .flatten()
                .filter(|d| d.0 == name && d.1 > 0.0)
                .map(|d| d.2)
                .collect();
            busy.sort_by(f64::total_cmp);
            let want = busy.get(busy.len() / 2).copied();
            let present = window.iter().flatten().any(|d| d.0 == name);
            let got = h.disks.get(name).map(|d| d.baseline_await_ms);
            assert_eq!(got, present.then_some(want), "tick {t} {name}");
        }
    }
    assert_eq!(h.disks["vda"].baseline_await_ms, Some(3.0));
    assert!(!h.disks.contains_key("sdb"));
}

#[test]
fn baseline_matches_a_full_recount_over_a_long_run() {
    let cap = 37;
    let mut h = History::new(cap);
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut awaits: Vec<Option<f64>> = Vec::new();
    for t in 0..2000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Idle a third of the time; otherwise one of a few awaits, so values repeat.
        let a = (seed % 3 != 0).then(|| (seed >> 8) as f64 % 7.0 * 0.5);
        h.push(&model(&[(
            "vda",
            if a.is_some() { 3.0 } else { 0.0 },
            a.unwrap_or(0.0),
        )]));
        awaits.push(a);
        let mut busy: Vec<f64> = awaits[awaits.len().saturating_sub(cap)..]
            .iter()
            .flatten()
            .copied()
            .collect();
        busy.sort_by(f64::total_cmp);
        let want = busy.get(busy.len() / 2).copied();
        assert_eq!(h.disks["vda"].baseline_await_ms, want, "tick {t}");
    }
}
