//! Compressed swap (spec §14): zswap's pool against what it stores and its writeback to the
//! swap device, and each zram device's original, compressed and used memory against its
//! limit.
//!
//! Owns: those figures. Must not touch: I/O.

use serde::Serialize;

use super::rate::per_sec;
use crate::parse::Snapshot;
use crate::parse::zram::Zram as ZramStat;

/// zswap (5.19+: meminfo `Zswap`/`Zswapped`, vmstat `zswpin`/`zswpout`; 6.8+: `zswpwb`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Zswap {
    /// The compressed pool's size (`Zswap`), bytes.
    pub pool_bytes: u64,
    /// The original size of the pages it stores (`Zswapped`), bytes.
    pub stored_bytes: u64,
    /// stored / pool; `None` while the pool is empty.
    pub ratio: Option<f64>,
    /// Pages written back from the pool to the swap device per second, in bytes: disk writes
    /// no application asked for (`zswpwb`; `None` before 6.8).
    pub writeback_bytes_per_s: Option<f64>,
    /// Pages stored into the pool per second, in bytes (`zswpout`).
    pub store_bytes_per_s: Option<f64>,
    /// Pages loaded from the pool per second, in bytes (`zswpin`).
    pub load_bytes_per_s: Option<f64>,
}

/// One zram device.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ZramDevice {
    /// Kernel name (`zram0`).
    pub name: String,
    /// Uncompressed bytes it holds (`orig_data_size`).
    pub orig_bytes: u64,
    /// Those compressed (`compr_data_size`).
    pub compr_bytes: u64,
    /// Memory it uses (`mem_used_total`).
    pub mem_used_bytes: u64,
    /// `mem_limit`; `None`: no limit.
    pub limit_bytes: Option<u64>,
    /// orig / compr; `None` while empty.
    pub ratio: Option<f64>,
    /// At its limit: writes to it fail and swap moves on to the next device.
    pub at_limit: bool,
    /// Bytes written to its backing device per second (`bd_stat` writes × 4 KiB);
    /// `None` without `bd_stat`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backing_write_bytes_per_s: Option<f64>,
}

/// zswap and the zram devices.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Compressed {
    /// `None` when the kernel prints no `Zswap` line (before 5.19, or no `CONFIG_ZSWAP`).
    pub zswap: Option<Zswap>,
    /// The zram devices, by name; empty when there is none.
    pub zram: Vec<ZramDevice>,
}

impl Zswap {
    /// Whether zswap holds or moves anything: the memory pane shows it only then.
    #[must_use]
    pub fn in_use(&self) -> bool {
        self.pool_bytes > 0
            || self.stored_bytes > 0
            || self.writeback_bytes_per_s.is_some_and(|w| w > 0.0)
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

fn zram_device(prev: Option<&Snapshot>, z: &ZramStat, dt_s: Option<f64>) -> ZramDevice {
    const UNIT: f64 = 4096.0;
    let before = prev
        .and_then(|p| p.zram.iter().find(|o| o.name == z.name))
        .and_then(|o| o.backing);
    let writes = z
        .backing
        .and_then(|b| per_sec(before.map(|o| o.writes), Some(b.writes), dt_s).map(|w| w * UNIT));
    ZramDevice {
        name: z.name.clone(),
        orig_bytes: z.orig_bytes,
        compr_bytes: z.compr_bytes,
        mem_used_bytes: z.mem_used_bytes,
        limit_bytes: z.limit_bytes,
        ratio: ratio(z.orig_bytes, z.compr_bytes),
        at_limit: z.limit_bytes.is_some_and(|l| z.mem_used_bytes >= l),
        backing_write_bytes_per_s: writes,
    }
}

impl Compressed {
    /// Derives the figures of `cur`, with rates against `prev`.
    #[must_use]
    pub fn derive(prev: Option<&Snapshot>, cur: &Snapshot, dt_s: Option<f64>) -> Self {
        let m = &cur.meminfo;
        let page = cur.page_size as f64;
        let rate = |f: fn(&Snapshot) -> Option<u64>| {
            per_sec(prev.and_then(f), f(cur), dt_s).map(|p| p * page)
        };
        let zswap = m.zswap.map(|pool_kb| {
            let stored_kb = m.zswapped.unwrap_or(0);
            Zswap {
                pool_bytes: pool_kb * 1024,
                stored_bytes: stored_kb * 1024,
                ratio: ratio(stored_kb, pool_kb),
                writeback_bytes_per_s: rate(|s| s.vmstat.zswpwb),
                store_bytes_per_s: rate(|s| s.vmstat.zswpout),
                load_bytes_per_s: rate(|s| s.vmstat.zswpin),
            }
        });
        Compressed {
            zswap,
            zram: cur
                .zram
                .iter()
                .map(|z| zram_device(prev, z, dt_s))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::zram::Backing;

    fn snap(zswap: Option<(u64, u64)>, zswpwb: Option<u64>, zram: Vec<ZramStat>) -> Snapshot {
        let mut s = Snapshot {
            page_size: 4096,
            zram,
            ..Snapshot::default()
        };
        s.meminfo.zswap = zswap.map(|z| z.0);
        s.meminfo.zswapped = zswap.map(|z| z.1);
        s.vmstat.zswpwb = zswpwb;
        s
    }

    #[test]
    fn zswap_pool_stored_ratio_and_writeback_by_hand() {
        // Pool 102 400 kB holding 409 600 kB: 4.0x. zswpwb 1 000 → 1 500 in 2 s: 250 pages/s
        // = 1 024 000 bytes/s.
        let a = snap(Some((102_400, 409_600)), Some(1_000), Vec::new());
        let b = snap(Some((102_400, 409_600)), Some(1_500), Vec::new());
        let z = Compressed::derive(Some(&a), &b, Some(2.0)).zswap.unwrap();
        assert_eq!(z.pool_bytes, 104_857_600);
        assert_eq!(z.stored_bytes, 419_430_400);
        assert_eq!(z.ratio, Some(4.0));
        assert_eq!(z.writeback_bytes_per_s, Some(1_024_000.0));
        assert!(z.in_use());
        // 6.1: no zswpwb, no writeback figure; an empty pool has no ratio and is not shown.
        let a = snap(Some((0, 0)), None, Vec::new());
        let z = Compressed::derive(Some(&a), &a, Some(2.0)).zswap.unwrap();
        assert_eq!((z.ratio, z.writeback_bytes_per_s), (None, None));
        assert!(!z.in_use());
        // 5.10: no Zswap line at all.
        let a = snap(None, None, Vec::new());
        assert_eq!(Compressed::derive(None, &a, None).zswap, None);
    }

    #[test]
    fn zram_sizes_ratio_limit_and_backing_writes_by_hand() {
        let dev = |used, writes| ZramStat {
            name: "zram0".into(),
            orig_bytes: 1 << 30,
            compr_bytes: 256 << 20,
            mem_used_bytes: used,
            limit_bytes: Some(300 << 20),
            backing: Some(Backing {
                count: 0,
                reads: 0,
                writes,
            }),
            ..ZramStat::default()
        };
        let a = snap(None, None, vec![dev(260 << 20, 100)]);
        let b = snap(None, None, vec![dev(300 << 20, 600)]);
        let z = &Compressed::derive(Some(&a), &b, Some(2.0)).zram[0];
        assert_eq!((z.orig_bytes, z.compr_bytes), (1 << 30, 256 << 20));
        assert_eq!(z.ratio, Some(4.0));
        assert!(z.at_limit, "300 MiB used of a 300 MiB limit");
        // 500 writes of 4 KiB in 2 s.
        assert_eq!(z.backing_write_bytes_per_s, Some(1_024_000.0));
        let z = &Compressed::derive(None, &a, None).zram[0];
        assert!(!z.at_limit);
        assert_eq!(z.backing_write_bytes_per_s, None);
    }
}
