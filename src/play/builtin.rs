//! The built-in playbooks (`assets/playbooks/*.toml`, compiled in): the classic buffered-IO
//! experiments, and where `pagewatch play NAME` looks before trying NAME as a file.
//!
//! Owns: the list. Must not touch: anything at run time.

use super::book::{BookError, Playbook};

/// (name, TOML text) of every built-in.
pub const BUILTINS: &[(&str, &str)] = &[
    (
        "cache-reread",
        include_str!("../../assets/playbooks/cache-reread.toml"),
    ),
    (
        "eat-until-miss",
        include_str!("../../assets/playbooks/eat-until-miss.toml"),
    ),
    (
        "shrinking-thresholds",
        include_str!("../../assets/playbooks/shrinking-thresholds.toml"),
    ),
    (
        "flood-vs-fsync",
        include_str!("../../assets/playbooks/flood-vs-fsync.toml"),
    ),
    (
        "util-vs-saturation",
        include_str!("../../assets/playbooks/util-vs-saturation.toml"),
    ),
    (
        "wbt-vs-flood",
        include_str!("../../assets/playbooks/wbt-vs-flood.toml"),
    ),
    (
        "pause-ceiling",
        include_str!("../../assets/playbooks/pause-ceiling.toml"),
    ),
];

/// The TOML of a built-in.
#[must_use]
pub fn text(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Every built-in, parsed.
pub fn all() -> Result<Vec<Playbook>, BookError> {
    BUILTINS.iter().map(|(_, t)| Playbook::parse(t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_under_its_own_name() {
        for (name, text) in BUILTINS {
            let b = Playbook::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(b.name, *name);
            assert!(!b.description.is_empty());
            // Scaled down for tests, every one still validates as a spec (bs <= size).
            let s = b.scaled(0.01);
            assert_eq!(s.steps.len(), b.steps.len());
        }
        assert_eq!(all().unwrap().len(), 7);
    }
}
