//! The scope's headline (issue 54): inside a container the cgroup is the machine. Its memory
//! against the tightest `memory.high` / `memory.max` of the group and the ancestors this
//! mount shows, `memory.stat`'s anon, file, dirty and writeback, `memory.events`, its
//! reclaim and refault rates, memory and io PSI, `io.stat` and `io.max`, and its own dirty
//! domain (spec §1.8); the host's figures stay, labelled as the host's.
//!
//! Owns: `ScopeView` (the batch JSON `scope` object) and `missing` (which file the kernel or
//! the permissions left out). Must not touch: I/O, choosing the scope (`parse::scope`), the
//! domain formulas (`domains`).

use serde::Serialize;

use super::cgroups;
use super::domains::{Domain, Kind};
use crate::parse::Snapshot;
use crate::parse::cgroup::{Group, Limit, Status};

/// The scope's figures. Bytes unless named otherwise; rates per second.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScopeView {
    /// The group, below the cgroup2 mount; `None`: the machine.
    pub path: Option<String>,
    /// How the scope was chosen (`--cgroup`, `cgroup namespace: …`, `machine: …`).
    pub how: String,
    /// A cgroup namespace hides the groups above: their limits are not counted.
    pub ancestors_hidden: bool,
    /// `memory.current`.
    pub memory_current_bytes: Option<u64>,
    /// The tightest `memory.max` of the group and its visible ancestors; `None`: none.
    pub memory_max_bytes: Option<u64>,
    /// The tightest `memory.high` of the group and its visible ancestors; `None`: none.
    pub memory_high_bytes: Option<u64>,
    /// The group whose limit (the lower of the two above) binds.
    pub limit_group: Option<String>,
    /// memory.stat `anon`.
    pub anon_bytes: Option<u64>,
    /// memory.stat `file`.
    pub file_bytes: Option<u64>,
    /// memory.stat `file_dirty`.
    pub dirty_bytes: Option<u64>,
    /// memory.stat `file_writeback`.
    pub writeback_bytes: Option<u64>,
    /// memory.events `high`, `max`, `oom`, `oom_kill` since the group was made.
    pub events: Option<crate::parse::cgroup::MemoryEvents>,
    /// The interval's figures of the group (`cgroups::CgroupRow`): event deltas, refault,
    /// reclaim, PSI and io.stat rates.
    pub interval: Option<cgroups::CgroupRow>,
    /// `io.max`'s limited lines.
    pub io_max: Vec<String>,
    /// The scope's own dirty domain (after the interval's writers are folded in).
    pub domain: Option<Domain>,
    /// What could not be read, named: a file this kernel lacks, or one that needs root.
    pub missing: Vec<String>,
}

impl ScopeView {
    /// The header line: `scope /box (--cgroup)`, `machine (--host)`.
    #[must_use]
    pub fn title(&self) -> String {
        match &self.path {
            Some(p) => format!("scope cgroup {p} ({})", self.how),
            None => self.how.clone(),
        }
    }
}

/// The scope's figures; `None` when the sample does not say (older recordings and trees).
#[must_use]
pub fn derive(
    prev: Option<&Snapshot>,
    cur: &Snapshot,
    dt_s: Option<f64>,
    domains: &[Domain],
) -> Option<ScopeView> {
    let sc = cur.scope.as_ref()?;
    let mut v = ScopeView {
        path: sc.path.clone(),
        how: sc.how.clone(),
        ancestors_hidden: sc.ancestors_hidden,
        ..ScopeView::default()
    };
    let Some(path) = sc.path.as_deref() else {
        return Some(v);
    };
    let Some(cg) = cur.cgroups.as_ref() else {
        v.missing.push("the cgroup v2 tree (not read)".to_owned());
        return Some(v);
    };
    if cg.status != Status::Ok {
        v.missing.push(
            super::cgroups::note(cg.status)
                .unwrap_or("cgroup v2")
                .to_owned(),
        );
        return Some(v);
    }
    let Some(g) = cg.groups.iter().find(|g| g.path == path) else {
        v.missing
            .push(format!("{path}: no such group under the cgroup2 mount"));
        return Some(v);
    };
    let levels: Vec<&Group> = cg
        .groups
        .iter()
        .filter(|a| a.path == path || (a.path != "/" && path.starts_with(&format!("{}/", a.path))))
        .collect();
    limits(&mut v, &levels);
    v.memory_current_bytes = g.current;
    let st = g.stat;
    v.anon_bytes = st.and_then(|s| s.anon);
    v.file_bytes = st.and_then(|s| s.file);
    v.dirty_bytes = st.and_then(|s| s.file_dirty);
    v.writeback_bytes = st.and_then(|s| s.file_writeback);
    v.events = g.events;
    v.io_max = g.io_max.clone().unwrap_or_default();
    let before = prev
        .and_then(|p| p.cgroups.as_ref())
        .and_then(|c| c.groups.iter().find(|x| x.path == g.path && x.ino == g.ino));
    v.interval = Some(cgroups::row(g, before, dt_s, domains));
    v.domain = own_domain(domains, path).cloned();
    v.missing = missing(g, cur);
    Some(v)
}

/// The tightest memory.max and memory.high over `levels`, and the group that binds.
fn limits(v: &mut ScopeView, levels: &[&Group]) {
    let bytes = |l: Option<Limit>| match l {
        Some(Limit::Bytes(b)) => Some(b),
        _ => None,
    };
    let least = |f: fn(&Group) -> Option<Limit>| {
        levels
            .iter()
            .filter_map(|g| Some((bytes(f(g))?, g.path.as_str())))
            .min()
    };
    let max = least(|g| g.max);
    let high = least(|g| g.high);
    v.memory_max_bytes = max.map(|(b, _)| b);
    v.memory_high_bytes = high.map(|(b, _)| b);
    v.limit_group = max.into_iter().chain(high).min().map(|(_, p)| p.to_owned());
}

/// The scope's own memcg domain among `domains`.
#[must_use]
pub fn own_domain<'a>(domains: &'a [Domain], path: &str) -> Option<&'a Domain> {
    domains
        .iter()
        .find(|d| d.kind == Kind::Memcg && d.path == path)
}

/// Whether a domain is the scope's or one below it.
#[must_use]
pub fn within(d: &Domain, path: &str) -> bool {
    d.kind == Kind::Memcg
        && (d.path == path || path == "/" || d.path.starts_with(&format!("{path}/")))
}

/// The scope's files this sample lacks, and the kernel's own threshold when no wb_stats was
/// read: each named with why it may be missing.
fn missing(g: &Group, s: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    let mut file = |present: bool, name: &str, why: &str| {
        if !present {
            out.push(format!(
                "{}: {why}",
                crate::sample::names::cgroup_file(&g.path, name)
            ));
        }
    };
    file(
        g.current.is_some(),
        "memory.current",
        "no memory controller here",
    );
    file(g.stat.is_some(), "memory.stat", "no memory controller here");
    file(
        g.events.is_some(),
        "memory.events",
        "no memory controller here",
    );
    file(
        g.memory_pressure.is_some(),
        "memory.pressure",
        "no PSI (4.20+, psi=1)",
    );
    file(g.io.is_some(), "io.stat", "no io controller here");
    if let Some(t) = s
        .trace
        .as_ref()
        .filter(|t| t.status.state == crate::parse::trace::TraceState::NotRoot)
    {
        out.push(format!(
            "sys/kernel/tracing: the writers' pauses (balance_dirty_pages tracepoint) need root ({})",
            t.status.why.as_deref().unwrap_or("not root")
        ));
    }
    if s.wb_stats.is_empty() {
        out.push(
            "sys/kernel/debug/bdi/*/wb_stats: the kernel's own WbDirtyThresh needs root, \
             debugfs and kernel 6.10+"
                .to_owned(),
        );
    }
    out
}

/// Puts the folded domain (`verdict::fold_dirty`) back into the scope.
pub fn refresh_domain(scope: Option<&mut ScopeView>, domains: &[Domain]) {
    if let Some(v) = scope
        && let Some(p) = v.path.clone()
    {
        v.domain = own_domain(domains, &p).cloned();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::scope::Scope;

    fn group(path: &str, max: Option<u64>, high: Option<u64>) -> Group {
        let l = |b: Option<u64>| Some(b.map_or(Limit::Max, Limit::Bytes));
        Group {
            path: path.into(),
            current: Some(100 << 20),
            max: l(max),
            high: l(high),
            ..Group::default()
        }
    }

    fn snap(path: &str, groups: Vec<Group>) -> Snapshot {
        Snapshot {
            scope: Some(Scope {
                path: Some(path.into()),
                how: "--cgroup".into(),
                ancestors_hidden: false,
            }),
            cgroups: Some(crate::parse::cgroup::Cgroups {
                status: Status::Ok,
                full_walk: true,
                groups,
            }),
            ..Snapshot::default()
        }
    }

    #[test]
    fn the_tightest_limit_of_the_group_and_its_visible_ancestors() {
        let s = snap(
            "/k8s/pod/box",
            vec![
                group("/", None, None),
                group("/k8s", Some(1 << 30), None),
                group("/k8s/pod", None, Some(300 << 20)),
                group("/k8s/pod/box", Some(512 << 20), None),
                group("/other", Some(1 << 20), Some(1 << 20)),
            ],
        );
        let v = derive(None, &s, None, &[]).unwrap();
        assert_eq!(v.memory_max_bytes, Some(512 << 20));
        assert_eq!(v.memory_high_bytes, Some(300 << 20));
        assert_eq!(v.limit_group.as_deref(), Some("/k8s/pod"));
        assert_eq!(v.memory_current_bytes, Some(100 << 20));
        // What this sample lacks is named: no memory.stat, no wb_stats.
        assert!(
            v.missing
                .iter()
                .any(|m| m == "sys/fs/cgroup/k8s/pod/box/memory.stat: no memory controller here"),
            "{:?}",
            v.missing
        );
        assert!(
            v.missing
                .iter()
                .any(|m| m.contains("WbDirtyThresh needs root"))
        );
        assert_eq!(v.title(), "scope cgroup /k8s/pod/box (--cgroup)");
    }

    #[test]
    fn a_missing_group_or_tree_is_said() {
        let s = snap("/gone", vec![group("/", None, None)]);
        let v = derive(None, &s, None, &[]).unwrap();
        assert_eq!(v.missing, ["/gone: no such group under the cgroup2 mount"]);
        assert_eq!(v.memory_max_bytes, None);
        let mut s = snap("/box", vec![]);
        s.cgroups.as_mut().unwrap().status = Status::V1Memory;
        let v = derive(None, &s, None, &[]).unwrap();
        assert_eq!(
            v.missing,
            ["container dirty limits need cgroup v2 with the memory controller"]
        );
        assert_eq!(derive(None, &Snapshot::default(), None, &[]), None);
    }
}
