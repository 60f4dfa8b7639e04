//! Rows for a cgroups pane (spec §11): each cgroup v2 group read this tick with its memory
//! against high/max, file/dirty/writeback pages, its dirty domain (`domains`), PSI, memory
//! events and io.stat rates since the previous sample; plus why there are none.
//!
//! Owns: `Cgroups`, `CgroupRow` and their order (most active first). Must not touch: I/O,
//! the domain formulas (`domains`), drawing.

use serde::Serialize;

use super::dirty::State;
use super::domains::{Domain, Kind};
use super::rate;
use crate::parse::Snapshot;
use crate::parse::cgroup::{Group, Limit, Status};

/// One group's row. Bytes unless named otherwise; rates per second.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

fn row(g: &Group, p: Option<&Group>, dt_s: Option<f64>, domains: &[Domain]) -> CgroupRow {
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
}
