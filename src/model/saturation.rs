//! Whether a disk is saturated, judged the way the disk table colours it (moved here from
//! `ui/panes/disks.rs` so reports can use the same rule).
//!
//! Rotational disks: %util ≥ 70 warns, ≥ 90 is critical. Devices that serve requests in
//! parallel (non-rotational: NVMe, SSD, RAID, cloud volumes) reach 100 %util early, so they
//! are judged by await against their own baseline (the median await of recent ticks with
//! I/O, kept by `History`) with a queue: await ≥ 2× baseline and aqu-sz ≥ 1 warns, ≥ 3× is
//! critical. A device whose rotational flag is unknown is treated as rotational.
//! Owns: that predicate. Must not touch: I/O, history keeping, drawing.

use super::disk::{Columns, Disk};

/// Saturation severity of a device: 0 fine, 1 warn, 2 crit.
#[must_use]
pub fn saturation(d: &Disk, baseline_await_ms: Option<f64>) -> u8 {
    let c: &Columns = &d.cols;
    let rotational = d.queue.as_ref().and_then(|q| q.rotational).unwrap_or(true);
    if rotational {
        let u = c.util_pct.unwrap_or(0.0);
        return if u >= 90.0 { 2 } else { u8::from(u >= 70.0) };
    }
    let (r, w) = (c.r_s.unwrap_or(0.0), c.w_s.unwrap_or(0.0));
    if r + w <= 0.0 || c.aqu_sz.unwrap_or(0.0) < 1.0 {
        return 0;
    }
    let await_ms = (r * c.r_await.unwrap_or(0.0) + w * c.w_await.unwrap_or(0.0)) / (r + w);
    match baseline_await_ms {
        Some(b) if b > 0.0 && await_ms >= 3.0 * b => 2,
        Some(b) if b > 0.0 && await_ms >= 2.0 * b => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::QueueSettings;

    fn disk(rotational: bool, util: f64, aqu: f64, await_ms: f64) -> Disk {
        Disk {
            name: "x".into(),
            dm_name: None,
            partition: false,
            in_flight: 0,
            queue: Some(QueueSettings {
                rotational: Some(rotational),
                ..QueueSettings::default()
            }),
            cols: Columns {
                r_s: Some(100.0),
                w_s: Some(0.0),
                r_await: Some(await_ms),
                w_await: Some(0.0),
                aqu_sz: Some(aqu),
                util_pct: Some(util),
                ..Columns::default()
            },
        }
    }

    #[test]
    fn rotational_by_util_parallel_by_await_baseline() {
        assert_eq!(saturation(&disk(true, 95.0, 0.5, 1.0), None), 2);
        assert_eq!(saturation(&disk(true, 75.0, 0.5, 1.0), None), 1);
        // An NVMe at 100 % util with a short queue and baseline latency is not saturated.
        assert_eq!(saturation(&disk(false, 100.0, 0.8, 0.1), Some(0.1)), 0);
        assert_eq!(saturation(&disk(false, 100.0, 4.0, 0.25), Some(0.1)), 1);
        assert_eq!(saturation(&disk(false, 100.0, 8.0, 0.4), Some(0.1)), 2);
        assert_eq!(saturation(&disk(false, 100.0, 8.0, 0.4), None), 0);
    }
}
