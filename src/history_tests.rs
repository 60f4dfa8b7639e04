//! Tests of `History`: the window keeps its bound.

use super::*;

fn model(disks: &[(&str, f64, f64)]) -> Model {
    use crate::model::{Disk, Options, disk::Columns};
    let snap = crate::parse::Snapshot {
        page_size: 4096,
        ..crate::parse::Snapshot::default()
    };
    let mut m = Model::derive(None, &snap, Options::default());
    m.disks = disks
        .iter()
        .map(|&(name, iops, await_ms)| {
            Disk::from_cols(
                name,
                Columns {
                    r_s: Some(iops),
                    w_s: Some(0.0),
                    r_await: Some(await_ms),
                    ..Columns::default()
                },
            )
        })
        .collect();
    m
}

#[test]
#[allow(clippy::float_cmp, reason = "whole numbers, copied not computed")]
fn disk_points_stay_within_the_window_and_gone_devices_are_forgotten() {
    let mut h = History::new(5);
    for t in 0..12u32 {
        let mut disks = vec![("vda", 10.0, f64::from(t))];
        if t < 3 {
            disks.push(("sdb", 1.0, 1.0));
        }
        h.push(&model(&disks));
        let vda = &h.disks["vda"];
        assert!(vda.len() <= 5, "tick {t}");
        assert_eq!(vda.back().unwrap().await_ms, f64::from(t));
    }
    assert_eq!(h.disks["vda"].front().unwrap().await_ms, 7.0);
    assert!(
        !h.disks.contains_key("sdb"),
        "out of the window for 5 ticks"
    );
    assert_eq!(h.ticks(), 12);
}

#[test]
#[allow(clippy::float_cmp, reason = "whole numbers, copied not computed")]
fn an_idle_disk_is_kept_as_one_run_and_reads_back_point_by_point() {
    let mut h = History::new(600);
    for t in 0..700u32 {
        // loop7 idle all along; vda busy for three ticks in the middle.
        let busy = (300..303).contains(&t);
        h.push(&model(&[
            ("loop7", 0.0, 0.0),
            ("vda", if busy { 50.0 } else { 0.0 }, f64::from(t)),
        ]));
    }
    let idle = &h.disks["loop7"];
    assert_eq!((idle.len(), idle.runs.len()), (600, 1));
    assert_eq!(
        (idle.front().unwrap().tick, idle.back().unwrap().tick),
        (101, 700)
    );
    // vda: calm, three busy ticks that differ (their await is the tick), calm again.
    let vda = &h.disks["vda"];
    assert_eq!((vda.len(), vda.runs.len()), (600, 5));
    let last = vda.last(400);
    assert_eq!(last.len(), 400);
    assert_eq!((last[0].tick, last[0].await_ms), (301, 300.0));
    assert_eq!(
        (last[1].iops, last[2].iops, last[3].iops),
        (50.0, 50.0, 0.0)
    );
    // The last I/O: vda's third busy tick (ticks count from 1); loop7 never did any.
    assert_eq!((vda.last_busy(), idle.last_busy()), (Some(303), None));
    let ticks: Vec<u64> = idle.last(3).iter().map(|p| p.tick).collect();
    assert_eq!(ticks, [698, 699, 700]);
    assert_eq!(idle.last(1000).len(), 600);
}

#[test]
fn a_busy_tick_that_left_the_window_is_no_longer_the_last_busy() {
    let mut h = History::new(5);
    h.push(&model(&[("vda", 50.0, 1.0)]));
    for _ in 0..4 {
        h.push(&model(&[("vda", 0.0, 0.0)]));
    }
    assert_eq!(h.disks["vda"].last_busy(), Some(1));
    h.push(&model(&[("vda", 0.0, 0.0)]));
    assert_eq!(
        h.disks["vda"].last_busy(),
        None,
        "tick 1 is out of a 5-tick window"
    );
}

/// A timed disk's heat-map columns take one allocation of the window's size, made once (they
/// grew by doubling: 1,024 slots for 600 ticks, in steps), and are given back once the disk
/// has not been timed for a window.
#[test]
fn a_timed_disks_heat_map_is_sized_once_for_the_window() {
    use crate::model::latency::DiskLatency;
    let mut h = History::new(600);
    let timed = |t: u32| {
        let mut m = model(&[("vda", 10.0, 1.0)]);
        m.disks[0].lat_hist = (t < 700).then(|| {
            std::sync::Arc::new(DiskLatency {
                lat: crate::parse::blk_lat::DevLat::default(),
                ring_lost: 0,
            })
        });
        m
    };
    for t in 0..700 {
        h.push(&timed(t));
        let lat = &h.disks["vda"].latency;
        assert_eq!(lat.capacity(), 601, "tick {t}: {} slots", lat.capacity());
    }
    assert_eq!(h.disks["vda"].latency.len(), 600);
    for t in 700..1300 {
        h.push(&timed(t));
    }
    assert_eq!(h.disks["vda"].latency.capacity(), 0, "untimed for a window");
}
