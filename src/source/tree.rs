//! Captured tree sequences: `DIR/000/`, `DIR/001/`, … each a fake root holding `proc/` and `sys/`.
//!
//! Owns: walking the numbered roots in order. Time comes from each root's own `proc/uptime`,
//! so rates over a captured sequence are exact and reproducible. Must not touch: parsing
//! beyond reading that one uptime figure, derivation, UI.

use std::path::{Path, PathBuf};

use super::{Clock, FsSource, Source};
use crate::sample::names;
use crate::{Error, Result};

/// A clock that is never consulted: tree samples take their time from `proc/uptime`.
struct NoClock;

impl Clock for NoClock {
    fn mono_ns(&self) -> u64 {
        0
    }
    fn wall_ms(&self) -> i64 {
        0
    }
}

/// Yields one sample per numbered root directory, in order.
pub struct TreeSource {
    roots: std::vec::IntoIter<PathBuf>,
    page_size: u64,
    /// The scope asked for (`--cgroup`, `--host`).
    choice: crate::parse::scope::Choice,
}

impl TreeSource {
    /// Opens a tree sequence. A directory without numbered roots is itself one root.
    pub fn open(dir: &Path) -> Result<Self> {
        let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
            path: dir.to_owned(),
            source,
        })?;
        let mut roots: Vec<PathBuf> = entries
            .filter_map(std::result::Result::ok)
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) && e.path().is_dir()
            })
            .map(|e| e.path())
            .collect();
        roots.sort();
        if roots.is_empty() {
            roots.push(dir.to_owned());
        }
        let page_size = match super::read::read_optional(&dir.join("page_size"), &mut Vec::new())? {
            None => 4096,
            Some(text) => parse_page_size(&text)?,
        };
        Ok(Self {
            roots: roots.into_iter(),
            page_size,
            choice: crate::parse::scope::Choice::Auto,
        })
    }

    /// Shows `choice`'s scope (`--cgroup PATH`, `--host`).
    #[must_use]
    pub fn with_scope(mut self, choice: crate::parse::scope::Choice) -> Self {
        self.choice = choice;
        self
    }
}

impl Source for TreeSource {
    fn next_sample(&mut self) -> Result<Option<RawSample>> {
        let Some(root) = self.roots.next() else {
            return Ok(None);
        };
        let mut src = FsSource::new(root.join("proc"), root.join("sys"), Box::new(NoClock))
            .with_page_size(self.page_size)
            .with_scope(self.choice.clone());
        let mut sample = src.read()?;
        let uptime = sample.file(names::UPTIME).ok_or_else(|| Error::Missing {
            file: names::UPTIME.to_owned(),
        })?;
        let cs = parse_uptime_cs(uptime)
            .filter(|cs| *cs <= MAX_UPTIME_CS)
            .ok_or_else(|| {
                Error::parse(
                    names::UPTIME,
                    1,
                    "expected seconds since boot like 1234.56 (at most 100 years)",
                )
            })?;
        sample.mono_ns = cs * 10_000_000;
        // Captured trees carry no wall clock: show time since boot from the epoch.
        sample.wall_ms = i64::try_from(cs * 10).unwrap_or(i64::MAX);
        Ok(Some(sample))
    }
}

use crate::sample::RawSample;

/// The longest uptime a tree may claim: 100 years, in centiseconds (its time in nanoseconds
/// must fit in a u64).
const MAX_UPTIME_CS: u64 = 100 * 366 * 86_400 * 100;

/// A tree's `page_size` file: a power of two from 4 KiB to 1 MiB, as Linux pages are.
fn parse_page_size(text: &str) -> Result<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|p| p.is_power_of_two() && (4096..=1 << 20).contains(p))
        .ok_or_else(|| {
            Error::parse(
                "page_size",
                1,
                format!(
                    "{:?} is not a page size (a power of two from 4096 to 1048576)",
                    text.trim()
                ),
            )
        })
}

/// `/proc/uptime`'s first field in centiseconds, parsed the way sysstat does (`%lu.%lu`);
/// `None` when it is not a number or overflows.
#[must_use]
pub fn parse_uptime_cs(text: &str) -> Option<u64> {
    let first = text.split_whitespace().next()?;
    let (s, frac) = first.split_once('.').unwrap_or((first, "0"));
    let s: u64 = s.parse().ok()?;
    let frac = frac.get(..2).unwrap_or(frac);
    let cs: u64 = if frac.len() == 1 {
        frac.parse::<u64>().ok()? * 10
    } else {
        frac.parse().ok()?
    };
    s.checked_mul(100)?.checked_add(cs)
}

/// Every sample of the captured tree `assets/trees/<name>`, for tests.
///
/// # Panics
/// When the tree cannot be read: a test fixture is missing or broken.
#[cfg(test)]
#[must_use]
pub fn test_samples(name: &str) -> Vec<crate::sample::RawSample> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/trees")
        .join(name);
    let mut src = TreeSource::open(&dir).unwrap();
    std::iter::from_fn(|| src.next_sample().unwrap()).collect()
}
