//! The choices the screen offers and the config file saves: the disk table's and the processes
//! view's sort columns and the "who" views. They sit below `app` so that `config` can name them
//! without importing the app.
//!
//! Owns: `SortKey`, `ProcSort`, `CgroupSort`, `WhoView`, `Units`, `ColorMode`. Must not touch:
//! drawing, files.

use crate::model::Disk;

/// The disk table's sort column; all but `Name` sort busiest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// %util.
    #[default]
    Util,
    /// aqu-sz.
    AquSz,
    /// The larger of r_await and w_await.
    Await,
    /// r/s + w/s.
    Iops,
    /// rkB/s + wkB/s.
    Throughput,
    /// Device name, ascending.
    Name,
}

/// The item after `cur` in `order`, wrapping (the first when `cur` is not in it).
fn next_in<T: Copy + PartialEq>(order: &[T], cur: T) -> T {
    let i = order.iter().position(|k| *k == cur).map_or(0, |i| i + 1);
    order[i % order.len()]
}

impl SortKey {
    const ORDER: [SortKey; 6] = [
        SortKey::Util,
        SortKey::AquSz,
        SortKey::Await,
        SortKey::Iops,
        SortKey::Throughput,
        SortKey::Name,
    ];

    /// The next sort column, wrapping.
    #[must_use]
    pub fn next(self) -> Self {
        next_in(&Self::ORDER, self)
    }

    /// The column title this key sorts on.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Util => "%util",
            SortKey::AquSz => "aqu-sz",
            SortKey::Await => "await",
            SortKey::Iops => "IOPS",
            SortKey::Throughput => "kB/s",
            SortKey::Name => "name",
        }
    }

    fn value(self, d: &Disk) -> f64 {
        let c = &d.cols;
        let z = |v: Option<f64>| v.unwrap_or(0.0);
        match self {
            SortKey::Util => z(c.util_pct),
            SortKey::AquSz => z(c.aqu_sz),
            SortKey::Await => z(c.r_await).max(z(c.w_await)),
            SortKey::Iops => z(c.r_s) + z(c.w_s),
            SortKey::Throughput => z(c.rkB_s) + z(c.wkB_s),
            SortKey::Name => 0.0,
        }
    }

    /// Sorts busiest first, a stable, explicit order: ties by IOPS, then kB/s, then the device
    /// busy most recently (`last_busy`, the tick of its last I/O; never busy last), then the
    /// most I/Os since boot, then name (`Name` by name alone). A fast device (RAM-backed, NVMe) can serve thousands of IOPS
    /// with io_ticks, and so %util, at 0 for the tick: it still sorts above the idle ones. A
    /// disk that was flooded a minute ago stays above the loop devices that never did any I/O,
    /// so the rows do not swap on every tick with a few writes, and the charts, which follow
    /// the first row, keep showing it once the flood ends. On a machine idle since pagewatch
    /// started, the disk it runs on leads, not `loop0`.
    pub fn sort(self, disks: &mut [&Disk], last_busy: impl Fn(&Disk) -> Option<u64>) {
        if self == SortKey::Name {
            disks.sort_by(|a, b| a.name.cmp(&b.name));
            return;
        }
        // Each disk's keys once (`last_busy` looks the history up), not at every comparison.
        let mut keyed: Vec<_> = disks.iter().map(|&d| self.keyed(d, &last_busy)).collect();
        keyed.sort_by(Keyed::busiest_first);
        for (slot, k) in disks.iter_mut().zip(keyed) {
            *slot = k.disk;
        }
    }

    /// The disk `sort` puts first, found without sorting: the charts follow it on every frame
    /// while the table sorts once (100 loop devices sorted twice a frame, cold).
    pub fn first(self, disks: &[Disk], last_busy: impl Fn(&Disk) -> Option<u64>) -> Option<&Disk> {
        if self == SortKey::Name {
            return disks.iter().min_by(|a, b| a.name.cmp(&b.name));
        }
        (disks.iter().map(|d| self.keyed(d, &last_busy)))
            .min_by(Keyed::busiest_first)
            .map(|k| k.disk)
    }

    fn keyed(self, d: &Disk, last_busy: impl Fn(&Disk) -> Option<u64>) -> Keyed<'_> {
        Keyed {
            now: [
                self.value(d),
                SortKey::Iops.value(d),
                SortKey::Throughput.value(d),
            ],
            last_busy: last_busy(d),
            disk: d,
        }
    }
}

/// A disk with the keys `SortKey::sort` orders it by.
struct Keyed<'a> {
    /// The sort column's value, then IOPS, then kB/s.
    now: [f64; 3],
    last_busy: Option<u64>,
    disk: &'a Disk,
}

impl Keyed<'_> {
    /// `SortKey::sort`'s order: busiest now, then busy most recently, then the most I/Os since
    /// boot, then the name.
    fn busiest_first(a: &Self, b: &Self) -> std::cmp::Ordering {
        (b.now.iter().zip(&a.now))
            .map(|(y, x)| y.total_cmp(x))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| b.last_busy.cmp(&a.last_busy))
            .then_with(|| b.disk.ios_since_boot.cmp(&a.disk.ios_since_boot))
            .then_with(|| a.disk.name.cmp(&b.disk.name))
    }
}

/// The processes view's sort column; all but `Pid` sort busiest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcSort {
    /// Bytes to or from storage per second: dirtied + read (as batch JSON orders).
    #[default]
    Storage,
    /// Memory: stalled in reclaim first, then resident bytes (`model::procs_memory`).
    Memory,
    /// Bytes dirtied per second (`write_bytes`).
    Dirtied,
    /// Bytes read from storage per second (`read_bytes`).
    Read,
    /// Bytes read by syscalls per second (`rchar`).
    Rchar,
    /// Bytes written by syscalls per second (`wchar`).
    Wchar,
    /// Block-IO wait (delay accounting), ms per second.
    IoWait,
    /// Time in sync calls (fsync and the like) per second, then the longest wait: the
    /// victims first (`model::sync`).
    Sync,
    /// Process id, ascending.
    Pid,
}

impl ProcSort {
    const ORDER: [ProcSort; 9] = [
        ProcSort::Storage,
        ProcSort::Memory,
        ProcSort::Dirtied,
        ProcSort::Read,
        ProcSort::Rchar,
        ProcSort::Wchar,
        ProcSort::IoWait,
        ProcSort::Sync,
        ProcSort::Pid,
    ];

    /// The next sort column, wrapping.
    #[must_use]
    pub fn next(self) -> Self {
        next_in(&Self::ORDER, self)
    }

    /// The column's name, as the footer shows it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            ProcSort::Storage => "storage/s",
            ProcSort::Memory => "memory",
            ProcSort::Dirtied => "dirtied/s",
            ProcSort::Read => "read/s",
            ProcSort::Rchar => "rchar/s",
            ProcSort::Wchar => "wchar/s",
            ProcSort::IoWait => "iowait",
            ProcSort::Sync => "sync",
            ProcSort::Pid => "pid",
        }
    }
}

/// The cgroups view's sort. `Activity` is the model's order (dirty + writeback bytes and IO
/// bytes per second); the thrashing sorts order by the group's own share of a memory.stat
/// rate (its figure less its children's: the counters are hierarchical, so a parent would
/// otherwise lead with its busiest child's refaults), busiest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CgroupSort {
    /// Dirty + writeback bytes plus IO bytes per second.
    #[default]
    Activity,
    /// Workingset refaults (anon + file) per second: the group thrashing its own memory.
    Refault,
    /// Pages scanned by reclaim per second.
    Scan,
    /// Major faults per second.
    MajFault,
    /// Path, ascending.
    Path,
}

impl CgroupSort {
    const ORDER: [CgroupSort; 5] = [
        CgroupSort::Activity,
        CgroupSort::Refault,
        CgroupSort::Scan,
        CgroupSort::MajFault,
        CgroupSort::Path,
    ];

    /// The next sort, wrapping.
    #[must_use]
    pub fn next(self) -> Self {
        next_in(&Self::ORDER, self)
    }

    /// The sort's name, as the footer shows it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            CgroupSort::Activity => "activity",
            CgroupSort::Refault => "refault/s",
            CgroupSort::Scan => "scan/s",
            CgroupSort::MajFault => "majflt/s",
            CgroupSort::Path => "path",
        }
    }

    /// Whether the view leads with the thrashing columns.
    #[must_use]
    pub fn thrashing(self) -> bool {
        matches!(
            self,
            CgroupSort::Refault | CgroupSort::Scan | CgroupSort::MajFault
        )
    }
}

/// The "who" views: who dirties, reads, waits or is throttled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhoView {
    /// Processes by IO activity.
    Processes,
    /// The cgroup v2 tree with each group's dirty domain.
    Cgroups,
}

/// How dirty figures are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// Bytes (the default).
    Bytes,
    /// Pages.
    Pages,
}

/// Whether the screen uses colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    /// Colours unless NO_COLOR is set (the default).
    Auto,
    /// Never: emphasis by weight and reverse video only, as with NO_COLOR.
    Never,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::disk::Columns;

    fn disk(name: &str, util: f64, r_s: f64, rkb_s: f64) -> Disk {
        Disk::from_cols(
            name,
            Columns {
                util_pct: Some(util),
                r_s: Some(r_s),
                rkB_s: Some(rkb_s),
                ..Columns::default()
            },
        )
    }

    /// The names of `all` in `key`'s order.
    fn order(all: &[Disk], key: SortKey, last_busy: impl Fn(&Disk) -> Option<u64>) -> Vec<&str> {
        let mut v: Vec<&Disk> = all.iter().collect();
        key.sort(&mut v, last_busy);
        v.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn ties_go_to_the_device_doing_io_then_to_the_name() {
        // loop95 serves 2,000 reads/s with io_ticks still for the tick (0 %util): above the
        // idle loops that sort before it by name, below a disk with any %util.
        let all = [
            disk("loop0", 0.0, 0.0, 0.0),
            disk("loop1", 0.0, 0.0, 0.0),
            disk("loop95", 0.0, 2000.0, 8000.0),
            disk("loop96", 0.0, 2000.0, 9000.0),
            disk("vda", 0.1, 3.0, 12.0),
        ];
        let order = |key: SortKey| order(&all, key, |_| None);
        assert_eq!(
            order(SortKey::Util),
            ["vda", "loop96", "loop95", "loop0", "loop1"]
        );
        assert_eq!(
            order(SortKey::Iops),
            ["loop96", "loop95", "vda", "loop0", "loop1"]
        );
        assert_eq!(
            order(SortKey::Name),
            ["loop0", "loop1", "loop95", "loop96", "vda"]
        );
    }

    #[test]
    fn idle_ties_go_to_the_device_busy_most_recently() {
        // After a flood: vda idle this tick but busy 40 ticks ago, sdb 200 ticks ago, the
        // loops never. vda leads, so the charts that follow the first row keep showing it.
        let all = [
            disk("loop0", 0.0, 0.0, 0.0),
            disk("sdb", 0.0, 0.0, 0.0),
            disk("loop1", 0.0, 0.0, 0.0),
            disk("vda", 0.0, 0.0, 0.0),
            disk("nvme0n1", 5.0, 90.0, 360.0),
        ];
        let last_busy = |d: &Disk| match d.name.as_str() {
            "vda" => Some(560),
            "sdb" => Some(400),
            _ => None,
        };
        let order = |key: SortKey| order(&all, key, last_busy);
        for key in [SortKey::Util, SortKey::AquSz, SortKey::Await, SortKey::Iops] {
            assert_eq!(
                order(key),
                ["nvme0n1", "vda", "sdb", "loop0", "loop1"],
                "{key:?}"
            );
        }
        assert_eq!(
            order(SortKey::Name),
            ["loop0", "loop1", "nvme0n1", "sdb", "vda"]
        );
    }

    #[test]
    fn first_is_the_disk_sort_puts_first_for_every_key() {
        // Ties on every figure but the history, the I/Os since boot and the name, in an order
        // none of the keys sorts them in.
        let boot = |name: &str, ios: u64, util: f64| Disk {
            ios_since_boot: ios,
            ..disk(name, util, 0.0, 0.0)
        };
        let sets = [
            vec![
                boot("sdb", 5, 0.0),
                boot("loop1", 9, 0.0),
                boot("loop0", 9, 0.0),
            ],
            vec![
                boot("loop1", 1, 0.0),
                boot("vda", 1, 0.0),
                boot("sda", 1, 0.0),
            ],
            vec![
                boot("loop0", 1, 0.0),
                boot("nvme0n1", 0, 2.0),
                boot("vda", 9, 1.0),
            ],
        ];
        let last_busy = |d: &Disk| (d.name == "vda").then_some(3);
        for all in &sets {
            for key in SortKey::ORDER {
                let first = key.first(all, last_busy).map(|d| d.name.as_str());
                assert_eq!(first, Some(order(all, key, last_busy)[0]), "{key:?}");
            }
        }
        assert!(SortKey::Util.first(&[], last_busy).is_none());
    }

    #[test]
    fn devices_idle_since_start_go_to_the_most_ios_since_boot() {
        // pagewatch just started on an idle machine: no device busy in the history. The disk
        // the machine runs on (33.9M I/Os since boot) leads the loop devices (4.4M, 156k).
        let boot = |name: &str, ios: u64| Disk {
            ios_since_boot: ios,
            ..disk(name, 0.0, 0.0, 0.0)
        };
        let all = [
            boot("loop0", 4_422_926),
            boot("loop1", 156_399),
            boot("vda", 33_892_166),
        ];
        assert_eq!(
            order(&all, SortKey::Util, |_| None),
            ["vda", "loop0", "loop1"]
        );
        // A device busy within the history still leads, however little it did since boot.
        let loop1_busy = |d: &Disk| (d.name == "loop1").then_some(7);
        assert_eq!(
            order(&all, SortKey::Util, loop1_busy),
            ["loop1", "vda", "loop0"]
        );
    }
}
