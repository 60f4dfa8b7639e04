//! The cgroup v2 files a sample carries (spec §1.8, §11) → `Cgroups`: the index the source
//! wrote (`sample::names::CGROUP_INDEX`) and each group's memory.*, io.* and PSI files.
//!
//! Owns: the typed groups. Must not touch: derivation (headroom, thresholds: `model`), I/O.
//! A group's file the sample lacks is `None` (removed between listing and reading, or a
//! controller not enabled there, or an older kernel); bad text is an error naming the
//! sample file and line.

use serde::Serialize;

use super::pressure::{self, Psi};
use crate::sample::{RawSample, names};
use crate::{Error, Result};

/// Why the machine has, or has not, memcg dirty domains (the index's `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// cgroup v2 with the memory and io controllers: memcg domains exist.
    Ok,
    /// The memory controller is on a cgroup v1 hierarchy: no cgroup writeback.
    V1Memory,
    /// cgroup v2 is mounted without the memory or io controller.
    NoMemoryIo,
    /// No cgroup v2 mount.
    NoCgroup2,
}

/// `memory.max` / `memory.high`: a byte limit or none (`max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// `max`: no limit.
    Max,
    /// A limit in bytes.
    Bytes(u64),
}

/// The `memory.stat` counters pagewatch uses (hierarchical: a group's include its
/// descendants'). Sizes in bytes, events in pages or faults since the group was made.
/// `None` where the kernel does not print the key: the split `workingset_*_anon/_file` keys
/// came in 5.9 (before, `workingset_refault` / `workingset_activate`, file pages only), the
/// `pgscan` / `pgsteal` sums in 5.4.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryStat {
    /// `anon`.
    pub anon: Option<u64>,
    /// `file` (page cache, shmem included).
    pub file: Option<u64>,
    /// `active_file`.
    pub active_file: Option<u64>,
    /// `inactive_file`.
    pub inactive_file: Option<u64>,
    /// `file_dirty`.
    pub file_dirty: Option<u64>,
    /// `file_writeback`.
    pub file_writeback: Option<u64>,
    /// `workingset_refault_anon` (5.9+): evicted anon pages faulted back in.
    pub refault_anon: Option<u64>,
    /// `workingset_refault_file` (5.9+): evicted file pages read back in.
    pub refault_file: Option<u64>,
    /// `workingset_refault` (before 5.9: file pages only).
    pub refault_legacy: Option<u64>,
    /// `workingset_activate_anon` (5.9+): refaults activated at once (their working set).
    pub activate_anon: Option<u64>,
    /// `workingset_activate_file` (5.9+).
    pub activate_file: Option<u64>,
    /// `workingset_activate` (before 5.9).
    pub activate_legacy: Option<u64>,
    /// `pgscan`: pages scanned by reclaim (kswapd, direct and memory.high/max reclaim).
    pub pgscan: Option<u64>,
    /// `pgsteal`: pages reclaimed.
    pub pgsteal: Option<u64>,
    /// `pgmajfault`: major faults.
    pub pgmajfault: Option<u64>,
    /// `zswap` (5.19+, bytes): the group's share of the zswap pool (spec §14.1).
    pub zswap: Option<u64>,
    /// `zswapped` (5.19+, bytes): the original size of what the group keeps in zswap.
    pub zswapped: Option<u64>,
    /// `zswpin` (5.19+): pages loaded from zswap.
    pub zswpin: Option<u64>,
    /// `zswpout` (5.19+): pages stored into zswap.
    pub zswpout: Option<u64>,
    /// `zswpwb` (6.8+): pages written back from zswap to the swap device.
    pub zswpwb: Option<u64>,
    /// `thp_fault_alloc`: anonymous faults served by a huge page (spec §13).
    pub thp_fault_alloc: Option<u64>,
}

impl MemoryStat {
    /// File refaults: `workingset_refault_file`, or `workingset_refault` on kernels before
    /// 5.9, which kept shadow entries for file pages only.
    #[must_use]
    pub fn refault_file_pages(&self) -> Option<u64> {
        self.refault_file.or(self.refault_legacy)
    }

    /// Activations on refault: `workingset_activate_anon + _file`, or `workingset_activate`
    /// before 5.9.
    #[must_use]
    pub fn activate_pages(&self) -> Option<u64> {
        match (self.activate_anon, self.activate_file) {
            (Some(a), Some(f)) => a.checked_add(f),
            _ => self.activate_legacy,
        }
    }
}

/// `memory.events` counters (hierarchical).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryEvents {
    /// `high`: times over memory.high (throttled, reclaimed).
    pub high: Option<u64>,
    /// `max`: times at memory.max.
    pub max: Option<u64>,
    /// `oom`.
    pub oom: Option<u64>,
    /// `oom_kill`.
    pub oom_kill: Option<u64>,
}

/// `io.stat` summed over the devices, cumulative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IoStat {
    /// `rbytes`.
    pub rbytes: u64,
    /// `wbytes` (buffered writeback is charged to the group that dirtied the pages).
    pub wbytes: u64,
    /// `rios`.
    pub rios: u64,
    /// `wios`.
    pub wios: u64,
}

/// One group as read this tick.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Group {
    /// Path below the cgroup2 mount: `/`, `/system.slice/db.service`.
    pub path: String,
    /// The directory's inode: the cgroup id `wb_stats` prints as `WbCgIno`.
    pub ino: u64,
    /// `memory.current`, bytes (absent on the root).
    pub current: Option<u64>,
    /// `memory.max`.
    pub max: Option<Limit>,
    /// `memory.high`.
    pub high: Option<Limit>,
    /// `memory.stat` (present when the memory controller is enabled in the group).
    pub stat: Option<MemoryStat>,
    /// `memory.events`.
    pub events: Option<MemoryEvents>,
    /// `memory.pressure`.
    pub memory_pressure: Option<Psi>,
    /// `io.pressure`.
    pub io_pressure: Option<Psi>,
    /// `io.stat` (present when the io controller is enabled in the group).
    pub io: Option<IoStat>,
    /// `io.max`'s lines with a limit (`8:0 rbps=max wbps=4194304 riops=max wiops=max`); read
    /// for the scope's group only (`parse::scope`), `None` when not read.
    pub io_max: Option<Vec<String>>,
}

impl Group {
    /// Depth below the root (0 for `/`).
    #[must_use]
    pub fn depth(&self) -> usize {
        self.path.trim_end_matches('/').matches('/').count()
    }
}

/// The cgroup v2 tree as read this tick.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cgroups {
    /// Whether memcg domains exist here, and why not.
    pub status: Status,
    /// The whole tree was read (`false`: only the groups with dirty pages at their last read,
    /// and their ancestors).
    pub full_walk: bool,
    /// The groups read, parents before children.
    pub groups: Vec<Group>,
}

/// Parses the cgroup files of a sample; `None` when it has no index.
pub fn parse(sample: &RawSample) -> Result<Option<Cgroups>> {
    let Some(index) = sample.file(names::CGROUP_INDEX) else {
        return Ok(None);
    };
    let file = names::CGROUP_INDEX;
    let bad = |n: usize, what: &str| Error::parse(file, n, what.to_owned());
    let mut lines = index.lines();
    let status = match lines.next().and_then(|l| l.strip_prefix("status\t")) {
        Some("ok") => Status::Ok,
        Some("v1_memory") => Status::V1Memory,
        Some("no_memory_io") => Status::NoMemoryIo,
        Some("no_cgroup2") => Status::NoCgroup2,
        _ => {
            return Err(bad(
                1,
                "expected status\\t<ok|v1_memory|no_memory_io|no_cgroup2>",
            ));
        }
    };
    let full_walk = match lines.next().and_then(|l| l.strip_prefix("walk\t")) {
        Some("full") => true,
        Some("active" | "none") => false,
        _ => return Err(bad(2, "expected walk\\t<full|active|none>")),
    };
    let mut groups = Vec::new();
    for (i, line) in lines.enumerate() {
        let n = i + 3;
        let mut cols = line.splitn(3, '\t');
        let (Some(ino), Some(_flags), Some(path)) = (cols.next(), cols.next(), cols.next()) else {
            return Err(bad(n, "expected <inode>\\t<flags>\\t<path>"));
        };
        let ino = ino
            .parse()
            .map_err(|_| bad(n, "the inode is not a number"))?;
        if !path.starts_with('/') {
            return Err(bad(n, "the group path does not start with /"));
        }
        groups.push(group(sample, path, ino)?);
    }
    Ok(Some(Cgroups {
        status,
        full_walk,
        groups,
    }))
}

fn group(sample: &RawSample, path: &str, ino: u64) -> Result<Group> {
    let file = |f: &str| {
        let name = names::cgroup_file(path, f);
        sample.file(&name).map(|t| (name, t))
    };
    let psi = |f: &str| -> Result<Option<Psi>> {
        file(f).map(|(n, t)| pressure::parse(&n, t)).transpose()
    };
    Ok(Group {
        path: path.to_owned(),
        ino,
        current: file("memory.current")
            .map(|(n, t)| number(&n, 1, t.trim()))
            .transpose()?,
        max: file("memory.max").map(|(n, t)| limit(&n, t)).transpose()?,
        high: file("memory.high").map(|(n, t)| limit(&n, t)).transpose()?,
        stat: file("memory.stat").map(|(n, t)| stat(&n, t)).transpose()?,
        events: file("memory.events")
            .map(|(n, t)| events(&n, t))
            .transpose()?,
        memory_pressure: psi("memory.pressure")?,
        io_pressure: psi("io.pressure")?,
        io: file("io.stat").map(|(n, t)| io(&n, t)).transpose()?,
        io_max: file("io.max").map(|(_, t)| {
            t.lines()
                .filter(|l| l.split_whitespace().skip(1).any(|kv| !kv.ends_with("=max")))
                .map(str::to_owned)
                .collect()
        }),
    })
}

fn number(file: &str, line: usize, v: &str) -> Result<u64> {
    v.parse()
        .map_err(|_| Error::parse(file, line, format!("expected a number, found {v:?}")))
}

/// `memory.max` / `memory.high`: `max` or bytes.
pub fn limit(file: &str, text: &str) -> Result<Limit> {
    match text.trim() {
        "max" => Ok(Limit::Max),
        v => number(file, 1, v).map(Limit::Bytes),
    }
}

/// `key value` lines: the values of `keys`, in that order.
fn keyed<const N: usize>(file: &str, text: &str, keys: [&str; N]) -> Result<[Option<u64>; N]> {
    let mut out = [None; N];
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once(' ') else {
            return Err(Error::parse(file, i + 1, "expected <key> <value>"));
        };
        if let Some(j) = keys.iter().position(|x| *x == k) {
            out[j] = Some(number(file, i + 1, v.trim())?);
        }
    }
    Ok(out)
}

/// `memory.stat`.
pub fn stat(file: &str, text: &str) -> Result<MemoryStat> {
    let keys = [
        "anon",
        "file",
        "active_file",
        "inactive_file",
        "file_dirty",
        "file_writeback",
        "workingset_refault_anon",
        "workingset_refault_file",
        "workingset_refault",
        "workingset_activate_anon",
        "workingset_activate_file",
        "workingset_activate",
        "pgscan",
        "pgsteal",
        "pgmajfault",
        "zswap",
        "zswapped",
        "zswpin",
        "zswpout",
        "zswpwb",
        "thp_fault_alloc",
    ];
    let [
        anon,
        file_,
        active_file,
        inactive_file,
        file_dirty,
        file_writeback,
        refault_anon,
        refault_file,
        refault_legacy,
        activate_anon,
        activate_file,
        activate_legacy,
        pgscan,
        pgsteal,
        pgmajfault,
        zswap,
        zswapped,
        zswpin,
        zswpout,
        zswpwb,
        thp_fault_alloc,
    ] = keyed(file, text, keys)?;
    Ok(MemoryStat {
        anon,
        file: file_,
        active_file,
        inactive_file,
        file_dirty,
        file_writeback,
        refault_anon,
        refault_file,
        refault_legacy,
        activate_anon,
        activate_file,
        activate_legacy,
        pgscan,
        pgsteal,
        pgmajfault,
        zswap,
        zswapped,
        zswpin,
        zswpout,
        zswpwb,
        thp_fault_alloc,
    })
}

/// `memory.events`.
pub fn events(file: &str, text: &str) -> Result<MemoryEvents> {
    let [high, max, oom, oom_kill] = keyed(file, text, ["high", "max", "oom", "oom_kill"])?;
    Ok(MemoryEvents {
        high,
        max,
        oom,
        oom_kill,
    })
}

/// `io.stat`: `maj:min rbytes=… wbytes=… rios=… wios=… …` per device, summed. Keys other
/// than these four (discards, io.cost and io.latency figures) are skipped.
pub fn io(file: &str, text: &str) -> Result<IoStat> {
    let mut s = IoStat::default();
    for (i, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        let Some(dev) = words.next() else { continue };
        if !dev.contains(':') {
            return Err(Error::parse(file, i + 1, "expected <maj:min> key=value …"));
        }
        for w in words {
            let Some((k, v)) = w.split_once('=') else {
                return Err(Error::parse(
                    file,
                    i + 1,
                    format!("expected key=value, found {w:?}"),
                ));
            };
            let slot = match k {
                "rbytes" => &mut s.rbytes,
                "wbytes" => &mut s.wbytes,
                "rios" => &mut s.rios,
                "wios" => &mut s.wios,
                _ => continue,
            };
            *slot = slot.saturating_add(number(file, i + 1, v)?);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(files: &[(&str, &str)]) -> RawSample {
        let mut s = RawSample::default();
        for (k, v) in files {
            s.files.insert((*k).to_owned(), (*v).to_owned());
        }
        s
    }

    #[test]
    fn a_lab_group_parses() {
        // Text as a 6.12 kernel printed it (the kernel lab), trimmed.
        let s = sample(&[
            (
                names::CGROUP_INDEX,
                "status\tok\nwalk\tfull\n1\tmi\t/\n27\tmi\t/box\n",
            ),
            ("sys/fs/cgroup/box/memory.current", "314572800\n"),
            ("sys/fs/cgroup/box/memory.max", "314572800\n"),
            ("sys/fs/cgroup/box/memory.high", "max\n"),
            (
                "sys/fs/cgroup/box/memory.stat",
                "anon 65536\nfile 302739456\nfile_dirty 41943040\nfile_writeback 8388608\n\
                 inactive_file 200000000\nactive_file 100000000\npgfault 262\n",
            ),
            (
                "sys/fs/cgroup/box/memory.events",
                "low 0\nhigh 0\nmax 17\noom 0\noom_kill 0\n",
            ),
            (
                "sys/fs/cgroup/box/io.pressure",
                "some avg10=41.50 avg60=10.00 avg300=2.00 total=123\nfull avg10=40.00 avg60=9.00 avg300=1.00 total=100\n",
            ),
            (
                "sys/fs/cgroup/box/io.stat",
                "254:0 rbytes=4096 wbytes=1000 rios=1 wios=2 dbytes=0 dios=0\n8:0 rbytes=1 wbytes=2 rios=3 wios=4\n",
            ),
            ("sys/fs/cgroup/io.stat", ""),
        ]);
        let c = parse(&s).unwrap().unwrap();
        assert_eq!(
            (c.status, c.full_walk, c.groups.len()),
            (Status::Ok, true, 2)
        );
        let b = &c.groups[1];
        assert_eq!((b.path.as_str(), b.ino, b.depth()), ("/box", 27, 1));
        assert_eq!(b.max, Some(Limit::Bytes(314_572_800)));
        assert_eq!(b.high, Some(Limit::Max));
        let st = b.stat.unwrap();
        assert_eq!(
            (st.file_dirty, st.active_file),
            (Some(41_943_040), Some(100_000_000))
        );
        assert_eq!(b.events.unwrap().max, Some(17));
        assert_eq!(
            b.io.unwrap(),
            IoStat {
                rbytes: 4097,
                wbytes: 1002,
                rios: 4,
                wios: 6
            }
        );
        assert!((b.io_pressure.unwrap().some.unwrap().avg10 - 41.5).abs() < 1e-6);
        assert_eq!(c.groups[0].io, Some(IoStat::default()));
        assert_eq!(c.groups[0].current, None);
    }

    #[test]
    fn bad_text_names_file_and_line() {
        let s = sample(&[
            (
                names::CGROUP_INDEX,
                "status\tok\nwalk\tactive\n27\tm\t/box\n",
            ),
            ("sys/fs/cgroup/box/memory.stat", "anon 1\nfile_dirty lots\n"),
        ]);
        let e = parse(&s).unwrap_err().to_string();
        assert!(e.starts_with("sys/fs/cgroup/box/memory.stat:2:"), "{e}");
        let s = sample(&[(names::CGROUP_INDEX, "status\tv1_memory\nwalk\tnone\nx\n")]);
        let e = parse(&s).unwrap_err().to_string();
        assert!(e.starts_with("sys/fs/cgroup/:3:"), "{e}");
        let s = sample(&[(names::CGROUP_INDEX, "status\tv1_memory\nwalk\tnone\n")]);
        assert_eq!(parse(&s).unwrap().unwrap().status, Status::V1Memory);
        assert_eq!(parse(&RawSample::default()).unwrap(), None);
    }

    /// memory.stat as 5.10 printed it in the kernel lab (a group capped at 64M reading a
    /// 160M file, 3 s in), verbatim.
    const STAT_5_10: &str = "anon 0\nfile 66502656\nkernel_stack 0\npercpu 0\nsock 0\n\
        shmem 0\nfile_mapped 0\nfile_dirty 0\nfile_writeback 0\nanon_thp 0\n\
        inactive_anon 0\nactive_anon 0\ninactive_file 66424832\nactive_file 0\n\
        unevictable 0\nslab_reclaimable 0\nslab_unreclaimable 0\nslab 0\n\
        workingset_refault_anon 0\nworkingset_refault_file 0\nworkingset_activate_anon 0\n\
        workingset_activate_file 0\nworkingset_restore_anon 0\nworkingset_restore_file 0\n\
        workingset_nodereclaim 0\npgfault 33\npgmajfault 0\npgrefill 0\npgscan 3752\n\
        pgsteal 3752\npgactivate 0\npgdeactivate 0\npglazyfree 0\npglazyfreed 0\n\
        thp_fault_alloc 0\nthp_collapse_alloc 0\n";

    #[test]
    fn thrashing_counters_on_5_10_6_12_and_before_5_9() {
        let s = stat("m", STAT_5_10).unwrap();
        assert_eq!(
            (s.refault_anon, s.refault_file, s.refault_legacy),
            (Some(0), Some(0), None)
        );
        assert_eq!(
            (s.pgscan, s.pgsteal, s.pgmajfault),
            (Some(3752), Some(3752), Some(0))
        );
        assert_eq!(
            (s.refault_file_pages(), s.activate_pages()),
            (Some(0), Some(0))
        );
        // 6.12 (the lab's captured tree): pgscan beside its kswapd/direct/khugepaged split,
        // which must not be taken for it.
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/trees/kernel-6.12-lab-memcg/003/sys/fs/cgroup/box/memory.stat"
        ))
        .unwrap();
        let s = stat("m", &text).unwrap();
        assert_eq!((s.pgscan, s.pgsteal), (Some(95_936), Some(95_934)));
        assert_eq!(s.activate_pages(), Some(0));
        // Before 5.9: one refault and one activate key (file pages only), no split.
        let s = stat(
            "m",
            "file 4096\nworkingset_refault 120\nworkingset_activate 7\n\
             workingset_nodereclaim 0\npgfault 9\npgmajfault 2\n",
        )
        .unwrap();
        assert_eq!((s.refault_anon, s.refault_file), (None, None));
        assert_eq!(
            (s.refault_file_pages(), s.activate_pages()),
            (Some(120), Some(7))
        );
        assert_eq!((s.pgscan, s.pgsteal, s.pgmajfault), (None, None, Some(2)));
        // A kernel that prints none of them: all None, not an error.
        let s = stat("m", "anon 1\nfile 2\n").unwrap();
        assert_eq!(
            (s.refault_file_pages(), s.activate_pages(), s.pgscan),
            (None, None, None)
        );
    }
}
