//! Whether a disk is saturated, judged the way the disk table colours it (moved here from
//! `ui/panes/disks.rs` so reports can use the same rule).
//!
//! Rotational disks: %util ≥ 70 warns, ≥ 90 is critical. Devices that serve requests in
//! parallel reach 100 %util early, so they are judged by await against their own baseline
//! (the median await of recent ticks with I/O, kept by `History`) with a queue: await ≥ 2×
//! baseline and aqu-sz ≥ 1 warns, ≥ 3× is critical. Parallel (`parallel`): non-rotational
//! (NVMe, SSD), more than one hardware queue, or a virtual or stacked device by its name
//! (virtio-blk `vd*`, Xen `xvd*`, `nvme*`, `dm-*`, `md*`, `rbd*`, `nbd*`, `loop*`, `zram*`)
//! whatever its rotational flag says: virtio-blk and many cloud volumes report 1. Anything
//! else whose flag is unknown is treated as rotational.
//! Owns: that predicate. Must not touch: I/O, history keeping, drawing.

use super::disk::{Columns, Disk};

/// Saturation severity of a device: 0 fine, 1 warn, 2 crit.
#[must_use]
pub fn saturation(d: &Disk, baseline_await_ms: Option<f64>) -> u8 {
    let c: &Columns = &d.cols;
    if !parallel(d) {
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

/// Whether `d` serves requests in parallel (see the module doc).
#[must_use]
pub fn parallel(d: &Disk) -> bool {
    const VIRTUAL: [&str; 9] = [
        "vd", "xvd", "nvme", "dm-", "md", "rbd", "nbd", "loop", "zram",
    ];
    let q = d.queue.as_ref();
    q.and_then(|q| q.rotational) == Some(false)
        || q.and_then(|q| q.hw_queues).is_some_and(|n| n > 1)
        || VIRTUAL.iter().any(|p| d.name.starts_with(p))
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
    fn virtual_and_multi_queue_disks_are_parallel_whatever_rotational_says() {
        // virtio-blk reporting rotational=1 at 100 %util with baseline latency: fine.
        let mut vda = disk(true, 100.0, 0.8, 0.1);
        vda.name = "vda".into();
        assert_eq!(saturation(&vda, Some(0.1)), 0);
        vda.cols.aqu_sz = Some(8.0);
        vda.cols.r_await = Some(0.4);
        assert_eq!(saturation(&vda, Some(0.1)), 2);
        // A SCSI cloud volume with 4 hardware queues.
        let mut sdb = disk(true, 100.0, 0.8, 0.1);
        sdb.name = "sdb".into();
        sdb.queue.as_mut().unwrap().hw_queues = Some(4);
        assert!(parallel(&sdb));
        assert_eq!(saturation(&sdb, Some(0.1)), 0);
        // A real spinning sda with one queue: by %util.
        let mut sda = disk(true, 95.0, 0.5, 1.0);
        sda.name = "sda".into();
        sda.queue.as_mut().unwrap().hw_queues = Some(1);
        assert!(!parallel(&sda));
        assert_eq!(saturation(&sda, None), 2);
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
