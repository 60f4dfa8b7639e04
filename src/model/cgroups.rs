//! Rows for a cgroups pane (spec §11): each cgroup v2 group read this tick with its memory
//! against high/max, file/dirty/writeback pages, its dirty domain (`domains`), PSI, memory
//! events, io.stat rates and memory.stat's reclaim and thrashing rates (refaults,
//! activations, pgscan, pgsteal, major faults: hierarchical, like every memory.stat counter)
//! since the previous sample; plus why there are none.
//!
//! Owns: `Cgroups`, `CgroupRow` and their order (most active first). Must not touch: I/O,
//! the domain formulas (`domains`), drawing.

use serde::Serialize;

use super::dirty::State;
use super::domains::{Domain, Kind};
use super::rate;
use crate::parse::Snapshot;
use crate::parse::cgroup::{Group, Limit, MemoryStat, Status};

/// One group's row. Bytes unless named otherwise; rates per second.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CgroupRow {
    /// Path below the cgroup2 mount.
    pub path: String,
    /// Depth below the root (1 for `/box`).
    pub depth: usize,
    /// The group's inode (cgroup id).
    pub ino: u64,
    /// `memory.current`.
    pub current_bytes: Option<u64>,
    /// `memory.high`; `None` when `max` (no limit) or absent.
    pub high_bytes: Option<u64>,
    /// `memory.max`; `None` when `max` (no limit) or absent.
    pub max_bytes: Option<u64>,
    /// memory.stat `file`.
    pub file_bytes: Option<u64>,
    /// memory.stat `active_file + inactive_file`: the file pages of the domain (spec §1.8;
    /// `file` also counts shmem).
    pub file_lru_bytes: Option<u64>,
    /// memory.stat `file_dirty`.
    pub dirty_bytes: Option<u64>,
    /// memory.stat `file_writeback`.
    pub writeback_bytes: Option<u64>,
    /// The group's own dirty domain's threshold, pages (when it has one, see `domains`).
    pub thresh_pages: Option<u64>,
    /// Its freerun ceiling, pages.
    pub freerun_pages: Option<u64>,
    /// Where its dirty count stands.
    pub state: Option<State>,
    /// memory.pressure `some` avg10, percent.
    pub memory_psi_avg10: Option<f32>,
    /// io.pressure `some` avg10, percent.
    pub io_psi_avg10: Option<f32>,
    /// memory.events `high` since the previous sample.
    pub events_high: Option<u64>,
    /// memory.events `max` since the previous sample.
    pub events_max: Option<u64>,
    /// memory.events `oom` since the previous sample.
    pub events_oom: Option<u64>,
    /// io.stat read bytes per second, all devices.
    pub read_bytes_per_s: Option<f64>,
    /// io.stat written bytes per second (writeback charged to the dirtying group).
    pub write_bytes_per_s: Option<f64>,
    /// io.stat reads per second.
    pub read_ios_per_s: Option<f64>,
    /// io.stat writes per second.
    pub write_ios_per_s: Option<f64>,
    /// memory.stat `workingset_refault_anon`, pages per second: evicted anon pages faulted
    /// back in (swap thrashing).
    pub refault_anon_per_s: Option<f64>,
    /// memory.stat `workingset_refault_file` (`workingset_refault` before 5.9), pages per
    /// second: evicted page cache read back in, the group thrashing its own cache.
    pub refault_file_per_s: Option<f64>,
    /// memory.stat `workingset_activate_anon + _file` (`workingset_activate` before 5.9),
    /// pages per second: refaults of pages that were part of the working set.
    pub activate_per_s: Option<f64>,
    /// memory.stat `pgscan`, pages scanned by reclaim per second.
    pub pgscan_per_s: Option<f64>,
    /// memory.stat `pgsteal`, pages reclaimed per second.
    pub pgsteal_per_s: Option<f64>,
    /// memory.stat `pgmajfault`, major faults per second.
    pub pgmajfault_per_s: Option<f64>,
    /// memory.stat `zswap` (5.19+), bytes of zswap pool; absent where the kernel has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswap_bytes: Option<u64>,
    /// memory.stat `zswapped` (5.19+): original bytes the group keeps in zswap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswapped_bytes: Option<u64>,
    /// memory.stat `zswpin` (5.19+), pages loaded from zswap per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswpin_per_s: Option<f64>,
    /// memory.stat `zswpout` (5.19+), pages stored into zswap per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswpout_per_s: Option<f64>,
    /// memory.stat `zswpwb` (6.8+), pages written back from zswap to swap per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswpwb_per_s: Option<f64>,
    /// memory.stat `thp_fault_alloc`, huge-page faults per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thp_fault_alloc_per_s: Option<f64>,
}

/// The cgroups pane's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cgroups {
    /// Whether memcg dirty domains exist here.
    pub status: Status,
    /// One line saying why there are no container dirty limits, when there are none.
    pub note: Option<&'static str>,
    /// The whole tree was read this tick (else only the groups with dirty pages).
    pub full_walk: bool,
    /// Every group but the root, most active first (dirty + writeback bytes plus I/O bytes
    /// per second), then by path.
    pub rows: Vec<CgroupRow>,
}

/// The pane's note for a status.
#[must_use]
pub fn note(status: Status) -> Option<&'static str> {
    match status {
        Status::Ok => None,
        Status::V1Memory => {
            Some("container dirty limits need cgroup v2 with the memory controller")
        }
        Status::NoMemoryIo => {
            Some("container dirty limits need the memory and io controllers on cgroup v2")
        }
        Status::NoCgroup2 => Some("container dirty limits need cgroup v2 (not mounted)"),
    }
}

/// Derives the rows; `None` when the sample carries no cgroup index.
#[must_use]
pub fn derive(
    prev: Option<&Snapshot>,
    cur: &Snapshot,
    dt_s: Option<f64>,
    domains: &[Domain],
) -> Option<Cgroups> {
    let cg = cur.cgroups.as_ref()?;
    let before = |g: &Group| {
        prev.and_then(|p| p.cgroups.as_ref())
            .and_then(|c| c.groups.iter().find(|x| x.path == g.path && x.ino == g.ino))
    };
    let mut rows: Vec<CgroupRow> = cg
        .groups
        .iter()
        .filter(|g| g.path != "/")
        .map(|g| row(g, before(g), dt_s, domains))
        .collect();
    let activity = |r: &CgroupRow| {
        r.dirty_bytes.unwrap_or(0) as f64
            + r.writeback_bytes.unwrap_or(0) as f64
            + r.read_bytes_per_s.unwrap_or(0.0)
            + r.write_bytes_per_s.unwrap_or(0.0)
    };
    rows.sort_by(|a, b| {
        activity(b)
            .total_cmp(&activity(a))
            .then_with(|| a.path.cmp(&b.path))
    });
    Some(Cgroups {
        status: cg.status,
        note: note(cg.status),
        full_walk: cg.full_walk,
        rows,
    })
}

/// One group's row: `p` is the same group in the previous sample.
pub(super) fn row(
    g: &Group,
    p: Option<&Group>,
    dt_s: Option<f64>,
    domains: &[Domain],
) -> CgroupRow {
    let limit = |l: Option<Limit>| match l {
        Some(Limit::Bytes(b)) => Some(b),
        _ => None,
    };
    let dom = domains
        .iter()
        .find(|d| d.kind == Kind::Memcg && d.path == g.path);
    let event = |f: fn(&crate::parse::cgroup::MemoryEvents) -> Option<u64>| {
        rate::delta(f(&p?.events?)?, f(&g.events?)?)
    };
    let io = |f: fn(&crate::parse::cgroup::IoStat) -> u64| {
        rate::per_sec(
            p.and_then(|p| p.io).map(|i| f(&i)),
            g.io.map(|i| f(&i)),
            dt_s,
        )
    };
    // memory.stat's event counters: a rate needs the same group (path and inode) in the
    // previous sample; a counter that went back (a group re-made with the same inode) is None.
    let mem = |f: fn(&MemoryStat) -> Option<u64>| {
        rate::per_sec(
            p.and_then(|p| f(&p.stat?)),
            g.stat.and_then(|s| f(&s)),
            dt_s,
        )
    };
    let avg10 = |psi: Option<crate::parse::Psi>| psi?.some.map(|l| l.avg10);
    CgroupRow {
        path: g.path.clone(),
        depth: g.depth(),
        ino: g.ino,
        current_bytes: g.current,
        high_bytes: limit(g.high),
        max_bytes: limit(g.max),
        file_bytes: g.stat.and_then(|s| s.file),
        file_lru_bytes: g
            .stat
            .and_then(|s| s.active_file?.checked_add(s.inactive_file?)),
        dirty_bytes: g.stat.and_then(|s| s.file_dirty),
        writeback_bytes: g.stat.and_then(|s| s.file_writeback),
        thresh_pages: dom.and_then(|d| d.thresh_pages),
        freerun_pages: dom.and_then(|d| d.freerun_pages),
        state: dom.and_then(|d| d.state),
        memory_psi_avg10: avg10(g.memory_pressure),
        io_psi_avg10: avg10(g.io_pressure),
        events_high: event(|e| e.high),
        events_max: event(|e| e.max),
        events_oom: event(|e| e.oom),
        read_bytes_per_s: io(|i| i.rbytes),
        write_bytes_per_s: io(|i| i.wbytes),
        read_ios_per_s: io(|i| i.rios),
        write_ios_per_s: io(|i| i.wios),
        refault_anon_per_s: mem(|s| s.refault_anon),
        refault_file_per_s: mem(MemoryStat::refault_file_pages),
        activate_per_s: mem(MemoryStat::activate_pages),
        pgscan_per_s: mem(|s| s.pgscan),
        pgsteal_per_s: mem(|s| s.pgsteal),
        pgmajfault_per_s: mem(|s| s.pgmajfault),
        zswap_bytes: g.stat.and_then(|s| s.zswap),
        zswapped_bytes: g.stat.and_then(|s| s.zswapped),
        zswpin_per_s: mem(|s| s.zswpin),
        zswpout_per_s: mem(|s| s.zswpout),
        zswpwb_per_s: mem(|s| s.zswpwb),
        thp_fault_alloc_per_s: mem(|s| s.thp_fault_alloc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::cgroup::{IoStat, MemoryEvents};

    #[test]
    fn rates_events_order_and_a_replaced_group() {
        let g = |path: &str, ino: u64, wbytes: u64, max_ev: u64| Group {
            path: path.into(),
            ino,
            io: Some(IoStat {
                wbytes,
                wios: wbytes / 4096,
                ..IoStat::default()
            }),
            events: Some(MemoryEvents {
                max: Some(max_ev),
                ..MemoryEvents::default()
            }),
            ..Group::default()
        };
        let snap = |groups: Vec<Group>| Snapshot {
            cgroups: Some(crate::parse::cgroup::Cgroups {
                status: Status::Ok,
                full_walk: true,
                groups,
            }),
            ..Snapshot::default()
        };
        let p = snap(vec![
            g("/", 1, 0, 0),
            g("/a", 2, 1_000, 3),
            g("/b", 3, 0, 0),
        ]);
        // /a wrote 2 MiB in 2 s and hit max 4 more times; /b was replaced (new inode).
        let c = snap(vec![
            g("/", 1, 9, 0),
            g("/a", 2, 1_000 + (2 << 20), 7),
            g("/b", 9, 0, 0),
        ]);
        let m = derive(Some(&p), &c, Some(2.0), &[]).unwrap();
        assert_eq!(m.note, None);
        let paths: Vec<&str> = m.rows.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/b"], "root left out, the busy group first");
        assert_eq!(m.rows[0].write_bytes_per_s, Some(1_048_576.0));
        assert_eq!(m.rows[0].write_ios_per_s, Some(256.0));
        assert_eq!(m.rows[0].events_max, Some(4));
        assert_eq!(
            (m.rows[1].write_bytes_per_s, m.rows[1].events_max),
            (None, None)
        );
        assert_eq!(
            note(Status::V1Memory),
            Some("container dirty limits need cgroup v2 with the memory controller")
        );
    }

    #[test]
    fn zswap_and_thp_per_group_by_hand_or_absent() {
        let text = |wb: u64, thp: u64| {
            format!(
                "anon 0\nfile 0\nzswap 1048576\nzswapped 4194304\nzswpin 10\nzswpout 20\n\
                 zswpwb {wb}\nthp_fault_alloc {thp}\n"
            )
        };
        let g = |t: &str| Group {
            path: "/box".into(),
            ino: 5,
            stat: Some(crate::parse::cgroup::stat("memory.stat", t).unwrap()),
            ..Group::default()
        };
        let snap = |g: Group| Snapshot {
            cgroups: Some(crate::parse::cgroup::Cgroups {
                status: Status::Ok,
                full_walk: true,
                groups: vec![g],
            }),
            ..Snapshot::default()
        };
        // In 2 s: zswpwb 100 → 300 (100/s), thp_fault_alloc 7 → 17 (5/s).
        let (p, c) = (snap(g(&text(100, 7))), snap(g(&text(300, 17))));
        let r = &derive(Some(&p), &c, Some(2.0), &[]).unwrap().rows[0];
        assert_eq!(
            (r.zswap_bytes, r.zswapped_bytes),
            (Some(1 << 20), Some(4 << 20))
        );
        assert_eq!(
            (r.zswpwb_per_s, r.thp_fault_alloc_per_s),
            (Some(100.0), Some(5.0))
        );
        assert_eq!(r.zswpin_per_s, Some(0.0));
        // 5.10's memory.stat: none of them, and none in JSON.
        let old = snap(g("anon 0\nfile 0\n"));
        let r = &derive(Some(&old), &old, Some(2.0), &[]).unwrap().rows[0];
        assert_eq!((r.zswap_bytes, r.zswpwb_per_s), (None, None));
        let json = serde_json::to_string(r).unwrap();
        assert!(
            !json.contains("zswap") && !json.contains("thp_fault"),
            "{json}"
        );
    }

    #[test]
    fn thrashing_rates_by_hand_from_memory_stat_text() {
        let text = |rf_anon: u64,
                    rf_file: u64,
                    act_anon: u64,
                    act_file: u64,
                    scan: u64,
                    steal: u64,
                    maj: u64| {
            format!(
                "anon 0\nfile 66502656\nfile_dirty 0\nworkingset_refault_anon {rf_anon}\n\
                 workingset_refault_file {rf_file}\nworkingset_activate_anon {act_anon}\n\
                 workingset_activate_file {act_file}\nworkingset_restore_anon 0\n\
                 pgfault 33\npgmajfault {maj}\npgrefill 0\npgscan {scan}\npgsteal {steal}\n"
            )
        };
        let g = |path: &str, ino: u64, t: &str| Group {
            path: path.into(),
            ino,
            stat: Some(crate::parse::cgroup::stat("memory.stat", t).unwrap()),
            ..Group::default()
        };
        let snap = |groups: Vec<Group>| Snapshot {
            cgroups: Some(crate::parse::cgroup::Cgroups {
                status: Status::Ok,
                full_walk: true,
                groups,
            }),
            ..Snapshot::default()
        };
        let before = text(0, 1000, 0, 40, 3752, 3752, 3);
        let p = snap(vec![
            g("/thrash", 5, &before),
            g("/back", 6, &text(9, 9, 9, 9, 9, 9, 9)),
            g("/old", 7, &before),
        ]);
        let c = snap(vec![
            g("/thrash", 5, &text(10, 5096, 2, 90, 7848, 7000, 4)),
            // Counters below the previous read's: not a rate.
            g("/back", 6, &text(1, 1, 1, 1, 1, 1, 1)),
            // Same path, another inode: a new group, no rate.
            g("/old", 8, &before),
            g("/new", 9, &before),
        ]);
        let m = derive(Some(&p), &c, Some(0.5), &[]).unwrap();
        let row = |path: &str| m.rows.iter().find(|r| r.path == path).unwrap();
        let t = row("/thrash");
        // Over 0.5 s: +4096 file and +10 anon refaults, +2 anon and +50 file activations,
        // +4096 scanned, +3248 stolen, +1 major fault.
        assert_eq!(
            (t.refault_file_per_s, t.refault_anon_per_s, t.activate_per_s),
            (Some(8192.0), Some(20.0), Some(104.0))
        );
        assert_eq!(
            (t.pgscan_per_s, t.pgsteal_per_s, t.pgmajfault_per_s),
            (Some(8192.0), Some(6496.0), Some(2.0))
        );
        for path in ["/back", "/old", "/new"] {
            let r = row(path);
            assert_eq!(
                (r.refault_file_per_s, r.activate_per_s, r.pgscan_per_s),
                (None, None, None),
                "{path}"
            );
        }
        // The first sample has no rates.
        let first = derive(None, &c, None, &[]).unwrap();
        assert!(first.rows.iter().all(|r| r.refault_file_per_s.is_none()));
    }
}
