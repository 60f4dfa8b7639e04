//! The `names::THROTTLED_LINEAGE` pseudo-file: each throttled task's thread group and parents.
//!
//! Owns: `Task` and `parse`. Must not touch: /proc (`source::lineage` reads it). A line that
//! does not parse (not numbers, fewer than two) is left out: the link it would give is a
//! nicety, never a figure.

use std::collections::BTreeMap;

use crate::sample::{RawSample, names};

/// One task's thread group and parents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Task {
    /// Its thread group (the process; the task itself when it is a process's main thread).
    pub tgid: u32,
    /// Its thread group's parent, that one's parent, … (at most three).
    pub parents: Vec<u32>,
}

/// The tasks of the sample's pseudo-file, by task id; empty when it has none.
#[must_use]
pub fn parse(sample: &RawSample) -> BTreeMap<u32, Task> {
    let Some(text) = sample.file(names::THROTTLED_LINEAGE) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|l| {
            let nums: Vec<u32> = l
                .split(' ')
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            let (&task, rest) = nums.split_first()?;
            let (&group, parents) = rest.split_first()?;
            Some((
                task,
                Task {
                    tgid: group,
                    parents: parents.iter().copied().take(8).collect(),
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_garbage() {
        let mut s = RawSample::default();
        s.files.insert(
            names::THROTTLED_LINEAGE.to_owned(),
            "12 11 10 5 1\n7 7\nx 1 2\n9\n\n-1 2\n".to_owned(),
        );
        let t = parse(&s);
        assert_eq!(t.len(), 2, "{t:?}");
        assert_eq!(
            t[&12],
            Task {
                tgid: 11,
                parents: vec![10, 5, 1]
            }
        );
        assert_eq!(t[&7].parents, Vec::<u32>::new());
        assert!(parse(&RawSample::default()).is_empty());
    }
}
