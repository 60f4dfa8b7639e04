//! Which cgroup pagewatch shows as "the machine" (issue 54): the scope, found from raw text
//! the source put in the sample (`names::SCOPE`, `proc/self/cgroup`, `proc/1/cgroup`), and
//! how it was chosen. Inside a container the cgroup is the machine: its memory limit, its
//! dirty domain, its processes.
//!
//! Owns: `Scope`, `Choice` and the rule that picks the scope (`resolve`). Must not touch: I/O
//! (the source reads the files and searches for its own pid), the figures of the scope
//! (`model::scope`).
//!
//! The rule, for `Choice::Auto`:
//! - the cgroup2 mount's root is above pagewatch's cgroup namespace (mountinfo's root field
//!   `/..`, cgroup_namespaces(7)): a namespace hides where the group is; the source found
//!   its own pid's group by searching the mounted tree (`found`);
//! - `/proc/self/cgroup` says `0::/` and the mount's root directory is a non-root group (it
//!   has `cgroup.type`, which the root has not): a container's own cgroup2 mount in its own
//!   namespace; the scope is the mount's root `/`, whose ancestors are hidden;
//! - `0::/P` with `P` a container runtime's group (docker, libpod, kubepods, containerd,
//!   lxc, machine.slice): the scope is `P`;
//! - else the machine (a login session's group is not a container).

use serde::Serialize;

use crate::sample::{RawSample, names};
use crate::{Error, Result};

/// What the command line asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Choice {
    /// Find the scope (the rule above).
    #[default]
    Auto,
    /// `--host`: the machine view.
    Host,
    /// `--cgroup PATH`: this group, a path below the cgroup2 mount.
    Cgroup(String),
}

impl Choice {
    /// The `choice` line of `names::SCOPE`.
    #[must_use]
    pub fn line(&self) -> String {
        match self {
            Choice::Auto => "choice\tauto".to_owned(),
            Choice::Host => "choice\thost".to_owned(),
            Choice::Cgroup(p) => format!("choice\tcgroup\t{p}"),
        }
    }
}

/// The scope shown, and how it was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scope {
    /// The group, a path below the cgroup2 mount as this process sees it (`/box`, or `/`
    /// for a container's own mount); `None`: the machine.
    pub path: Option<String>,
    /// How it was chosen, in words (`--cgroup`, `cgroup namespace: …`).
    pub how: String,
    /// A cgroup namespace hides the groups above the scope: their limits cannot be read.
    pub ancestors_hidden: bool,
}

impl Scope {
    /// The machine view, for `why`.
    fn host(how: impl Into<String>) -> Self {
        Self {
            path: None,
            how: how.into(),
            ancestors_hidden: false,
        }
    }
}

/// The raw facts, as the source read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// What the command line asked for.
    pub choice: Choice,
    /// `/proc/self/cgroup`'s `0::` path.
    pub own: Option<String>,
    /// `/proc/1/cgroup`'s `0::` path.
    pub init: Option<String>,
    /// The cgroup2 mount's root field (mountinfo field 4) and mount point.
    pub mount: Option<(String, String)>,
    /// The mount's root directory is a non-root group (it has `cgroup.type`).
    pub root_is_group: bool,
    /// The group whose `cgroup.procs` lists pagewatch's pid, found by the source when the
    /// mount's root is above the namespace.
    pub found: Option<String>,
}

/// Names in a cgroup path that container runtimes make.
const RUNTIMES: [&str; 8] = [
    "docker",
    "libpod",
    "kubepods",
    "containerd",
    "lxc",
    "machine.slice",
    "crio",
    "garden",
];

/// The `0::PATH` line of a `/proc/PID/cgroup` text.
#[must_use]
pub fn v2_path(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| p.trim().to_owned())
}

/// Picks the scope from the facts (the module's rule).
#[must_use]
pub fn resolve(f: &Facts) -> Scope {
    match &f.choice {
        Choice::Host => return Scope::host("--host"),
        Choice::Cgroup(p) if normal(p) == "/" => {
            return Scope::host("--cgroup /: the root group is the machine");
        }
        Choice::Cgroup(p) => {
            return Scope {
                path: Some(normal(p)),
                how: "--cgroup".to_owned(),
                ancestors_hidden: false,
            };
        }
        Choice::Auto => {}
    }
    let Some(own) = f.own.as_deref() else {
        return Scope::host("machine: no cgroup v2 line in /proc/self/cgroup");
    };
    let root = f.mount.as_ref().map(|(r, _)| r.as_str());
    if root.is_some_and(|r| r == "/.." || r.starts_with("/../")) {
        return match &f.found {
            Some(g) => Scope {
                path: Some(normal(g)),
                how: format!(
                    "cgroup namespace: /proc/self/cgroup says 0::{own}, the cgroup2 mount's \
                     root is above it ({}); own pid found in {g}/cgroup.procs",
                    root.unwrap_or("")
                ),
                ancestors_hidden: false,
            },
            None => Scope::host(format!(
                "machine: a cgroup namespace hides pagewatch's group (0::{own}) and its pid is \
                 in no cgroup.procs of the mount (--cgroup PATH to choose)"
            )),
        };
    }
    if own == "/" {
        if f.root_is_group {
            return Scope {
                path: Some("/".to_owned()),
                how: "cgroup namespace: /proc/self/cgroup says 0::/ and the cgroup2 mount's root \
                      is a non-root group (the container's own)"
                    .to_owned(),
                ancestors_hidden: true,
            };
        }
        return Scope::host("machine: pagewatch runs in the root cgroup");
    }
    // The path as the mount shows it: a mount of a subtree (root `/a`) shows `/a/b` as `/b`.
    let rel = match root {
        Some(r) if r != "/" => own.strip_prefix(r).map_or(own, |p| p),
        _ => own,
    };
    if own
        .split('/')
        .any(|c| RUNTIMES.iter().any(|r| c.contains(r)))
    {
        return Scope {
            path: Some(normal(rel)),
            how: format!("container runtime's group in /proc/self/cgroup (0::{own})"),
            ancestors_hidden: false,
        };
    }
    let init = f.init.as_deref().unwrap_or("?");
    Scope::host(format!(
        "machine: pagewatch's group {own} is not a container's (pid 1 in {init}; --cgroup {own} \
         to scope to it)"
    ))
}

/// `/box/` and `box` as `/box`; empty as `/`.
fn normal(p: &str) -> String {
    let t = p.trim().trim_matches('/');
    format!("/{t}")
}

/// Parses `names::SCOPE` (and the cgroup files beside it) into the scope; `None` when the
/// sample has none (older recordings and trees).
pub fn parse(sample: &RawSample) -> Result<Option<Scope>> {
    let Some(text) = sample.file(names::SCOPE) else {
        return Ok(None);
    };
    let bad = |n: usize, what: &str| Error::parse(names::SCOPE, n, what.to_owned());
    let mut f = Facts {
        own: sample.file(names::SELF_CGROUP).and_then(v2_path),
        init: sample.file(names::INIT_CGROUP).and_then(v2_path),
        ..Facts::default()
    };
    for (i, line) in text.lines().enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        match cols.as_slice() {
            ["choice", "auto"] => f.choice = Choice::Auto,
            ["choice", "host"] => f.choice = Choice::Host,
            ["choice", "cgroup", p] => f.choice = Choice::Cgroup((*p).to_owned()),
            ["mount", root, point] => f.mount = Some(((*root).to_owned(), (*point).to_owned())),
            ["root_group", yes] => f.root_is_group = *yes == "yes",
            ["found", g] => f.found = Some((*g).to_owned()),
            _ => {
                return Err(bad(
                    i + 1,
                    "expected choice, mount, root_group or found, tab-separated",
                ));
            }
        }
    }
    Ok(Some(resolve(&f)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(own: &str, root: &str) -> Facts {
        Facts {
            own: v2_path(own),
            mount: Some((root.to_owned(), "/sys/fs/cgroup".to_owned())),
            ..Facts::default()
        }
    }

    #[test]
    fn a_namespace_over_the_hosts_mount_uses_the_group_found_by_pid() {
        // `unshare --cgroup` in /box, the host's cgroup2 mount still there: mountinfo shows
        // its root as `/..` and /proc/self/cgroup as `0::/`.
        let mut f = facts("0::/\n", "/..");
        f.found = Some("/box".to_owned());
        let s = resolve(&f);
        assert_eq!(s.path.as_deref(), Some("/box"));
        assert!(s.how.starts_with("cgroup namespace"), "{}", s.how);
        f.found = None;
        let s = resolve(&f);
        assert_eq!(s.path, None);
        assert!(s.how.contains("--cgroup PATH"), "{}", s.how);
    }

    #[test]
    fn a_containers_own_mount_is_the_scope_with_its_ancestors_hidden() {
        let mut f = facts("0::/\n", "/");
        f.root_is_group = true;
        let s = resolve(&f);
        assert_eq!((s.path.as_deref(), s.ancestors_hidden), (Some("/"), true));
        // The same lines on the host's root group: the machine.
        f.root_is_group = false;
        assert_eq!(resolve(&f).path, None);
    }

    #[test]
    fn runtimes_sessions_and_the_flags() {
        let s = resolve(&facts("0::/system.slice/docker-4f1e.scope\n", "/"));
        assert_eq!(s.path.as_deref(), Some("/system.slice/docker-4f1e.scope"));
        let mut f = facts("0::/user.slice/user-0.slice/session-3.scope\n", "/");
        f.init = Some("/init.scope".to_owned());
        let s = resolve(&f);
        assert_eq!(s.path, None);
        assert!(s.how.contains("pid 1 in /init.scope"), "{}", s.how);
        f.choice = Choice::Cgroup("box/".to_owned());
        assert_eq!(resolve(&f).path.as_deref(), Some("/box"));
        assert_eq!(resolve(&f).how, "--cgroup");
        f.choice = Choice::Host;
        assert_eq!(resolve(&f), Scope::host("--host"));
    }

    #[test]
    fn parses_the_pseudo_file_and_names_a_bad_line() {
        let mut s = RawSample::default();
        s.files.insert(names::SELF_CGROUP.into(), "0::/\n".into());
        s.files.insert(
            names::SCOPE.into(),
            "choice\tauto\nmount\t/..\t/sys/fs/cgroup\nroot_group\tno\nfound\t/box\n".into(),
        );
        let got = parse(&s).unwrap().unwrap();
        assert_eq!(got.path.as_deref(), Some("/box"));
        s.files
            .insert(names::SCOPE.into(), "choice\tauto\nwhat\n".into());
        let e = parse(&s).unwrap_err().to_string();
        assert!(e.contains("pagewatch/scope:2"), "{e}");
        assert_eq!(parse(&RawSample::default()).unwrap(), None);
    }
}
