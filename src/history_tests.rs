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
            latency: crate::model::latency::LatCols::default(),
            lat_hist: None,
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
        assert!(vda.points.len() <= 5, "tick {t}");
        assert_eq!(vda.points.back().unwrap().await_ms, f64::from(t));
    }
    assert_eq!(h.disks["vda"].points.front().unwrap().await_ms, 7.0);
    assert!(
        !h.disks.contains_key("sdb"),
        "out of the window for 5 ticks"
    );
    assert_eq!(h.ticks(), 12);
}
