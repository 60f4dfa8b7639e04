//! Sample deltas: how one `RawSample` is stored against the one before it.
//!
//! Owns: `SampleDelta` and the line patch of one file's text. A file that did not change is
//! left out; a file with the same number of lines is stored as a line patch (unchanged lines
//! empty, lines whose numbers moved as the signed differences of those numbers, other lines
//! literally); any other file is stored whole. Decoding gives back the exact text, byte for
//! byte. Must not touch: files, compression, framing (`format.rs`), parsing of kernel text.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sample::RawSample;

/// One sample as stored: its times and the files that differ from the previous sample.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleDelta {
    /// `RawSample::mono_ns`.
    pub mono_ns: u64,
    /// `RawSample::wall_ms`.
    pub wall_ms: i64,
    /// `RawSample::page_size`.
    pub page_size: u64,
    /// Files stored whole (all files of the first sample).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub full: BTreeMap<String, String>,
    /// Files stored as a line patch against the previous sample's text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub patch: BTreeMap<String, String>,
    /// Files the previous sample had and this one lacks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gone: Vec<String>,
}

impl SampleDelta {
    /// The delta that turns `prev` (or nothing, for the first sample) into `cur`.
    #[must_use]
    pub fn encode(prev: Option<&RawSample>, cur: &RawSample) -> Self {
        let mut d = SampleDelta {
            mono_ns: cur.mono_ns,
            wall_ms: cur.wall_ms,
            page_size: cur.page_size,
            ..SampleDelta::default()
        };
        let empty = BTreeMap::new();
        let before = prev.map_or(&empty, |p| &p.files);
        for (name, text) in &cur.files {
            match before.get(name) {
                Some(old) if old == text => {}
                Some(old) => match patch_text(old, text) {
                    Some(p) => drop(d.patch.insert(name.clone(), p)),
                    None => drop(d.full.insert(name.clone(), text.clone())),
                },
                None => drop(d.full.insert(name.clone(), text.clone())),
            }
        }
        d.gone = before
            .keys()
            .filter(|k| !cur.files.contains_key(*k))
            .cloned()
            .collect();
        d
    }

    /// Applies the delta to the previous sample's files. `None` when a patch does not fit
    /// them (which only a damaged file can cause).
    #[must_use]
    pub fn apply(self, prev: Option<&RawSample>) -> Option<RawSample> {
        let mut files = prev.map(|p| p.files.clone()).unwrap_or_default();
        for name in &self.gone {
            files.remove(name);
        }
        for (name, p) in &self.patch {
            let text = apply_patch(files.get(name)?, p)?;
            files.insert(name.clone(), text);
        }
        files.extend(self.full);
        Some(RawSample {
            mono_ns: self.mono_ns,
            wall_ms: self.wall_ms,
            page_size: self.page_size,
            files,
        })
    }
}

/// Line patch of `new` against `old`, or `None` when their line counts differ.
fn patch_text(old: &str, new: &str) -> Option<String> {
    let mut out = String::with_capacity(new.len() / 4);
    let (mut la, mut lb) = (old.split('\n'), new.split('\n'));
    let mut first = true;
    loop {
        let (a, b) = match (la.next(), lb.next()) {
            (Some(a), Some(b)) => (a, b),
            (None, None) => return Some(out),
            _ => return None,
        };
        if !first {
            out.push('\n');
        }
        first = false;
        if a != b && !patch_line(a, b, &mut out) {
            out.push('=');
            out.push_str(b);
        }
    }
}

/// Appends `~d1,d2,…` (one signed difference per digit run, empty when unchanged) when `b`
/// is `a` with only its numbers changed; false (nothing appended) otherwise.
fn patch_line(a: &str, b: &str, out: &mut String) -> bool {
    use std::fmt::Write;
    let mark = out.len();
    out.push('~');
    let (mut ta, mut tb) = (Tokens(a), Tokens(b));
    let mut first = true;
    let same = loop {
        match (ta.next(), tb.next()) {
            (None, None) => break true,
            (Some(Token::Text(x)), Some(Token::Text(y))) if x == y => {}
            (Some(Token::Digits(x)), Some(Token::Digits(y))) => {
                if !first {
                    out.push(',');
                }
                first = false;
                if x != y {
                    let (Some(x), Some(y)) = (number(x), number(y)) else {
                        break false;
                    };
                    let _ = write!(out, "{}", i128::from(y) - i128::from(x));
                }
            }
            _ => break false,
        }
    };
    if !same {
        out.truncate(mark);
    }
    same
}

/// Rebuilds a file from the previous text and its line patch.
fn apply_patch(old: &str, patch: &str) -> Option<String> {
    let mut out = String::with_capacity(old.len() + 64);
    let (mut la, mut lp) = (old.split('\n'), patch.split('\n'));
    let mut first = true;
    loop {
        let (a, p) = match (la.next(), lp.next()) {
            (Some(a), Some(p)) => (a, p),
            (None, None) => return Some(out),
            _ => return None,
        };
        if !first {
            out.push('\n');
        }
        first = false;
        if p.is_empty() {
            out.push_str(a);
        } else if let Some(lit) = p.strip_prefix('=') {
            out.push_str(lit);
        } else {
            apply_line(a, p.strip_prefix('~')?, &mut out)?;
        }
    }
}

fn apply_line(a: &str, deltas: &str, out: &mut String) -> Option<()> {
    let mut deltas = deltas.split(',');
    for t in Tokens(a) {
        match t {
            Token::Text(s) => out.push_str(s),
            Token::Digits(s) => match deltas.next()? {
                "" => out.push_str(s),
                d => {
                    let v = i128::from(number(s)?) + d.parse::<i128>().ok()?;
                    out.push_str(&u64::try_from(v).ok()?.to_string());
                }
            },
        }
    }
    deltas.next().is_none().then_some(())
}

/// A piece of a line: a run of ASCII digits or a run of anything else.
#[derive(Debug, PartialEq, Eq)]
enum Token<'a> {
    Digits(&'a str),
    Text(&'a str),
}

/// The tokens of a line, in order.
struct Tokens<'a>(&'a str);

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let first = *self.0.as_bytes().first()?;
        let digit = first.is_ascii_digit();
        let len = self
            .0
            .bytes()
            .take_while(|b| b.is_ascii_digit() == digit)
            .count();
        // Splitting at ASCII digits always falls on char boundaries.
        let (s, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(if digit {
            Token::Digits(s)
        } else {
            Token::Text(s)
        })
    }
}

/// A digit run that prints back as itself (`0`, `42`; not `05`, not beyond 19 digits).
fn number(s: &str) -> Option<u64> {
    let canonical = s.len() <= 19 && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(files: &[(&str, &str)]) -> RawSample {
        RawSample {
            mono_ns: 5,
            wall_ms: 7,
            page_size: 4096,
            files: files
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    fn round_trip(a: &RawSample, b: &RawSample) -> SampleDelta {
        let d = SampleDelta::encode(Some(a), b);
        let json = serde_json::to_string(&d).unwrap();
        let back: SampleDelta = serde_json::from_str(&json).unwrap();
        assert_eq!(back.clone().apply(Some(a)).as_ref(), Some(b));
        back
    }

    #[test]
    fn numbers_become_differences_and_text_survives_exactly() {
        let a = sample(&[
            (
                "m",
                "Dirty:    999 kB\nCached:  5 kB\nsome avg10=0.05 total=7\n",
            ),
            ("u", "12.50 3.00\n"),
            ("x", "gone"),
        ]);
        let b = sample(&[
            (
                "m",
                "Dirty:   1000 kB\nCached:  3 kB\nsome avg10=0.10 total=9\n",
            ),
            ("u", "12.50 3.00\n"),
            ("n", "new"),
        ]);
        let d = round_trip(&a, &b);
        assert_eq!(d.gone, ["x"]);
        assert!(!d.patch.contains_key("u"), "unchanged files are left out");
        assert_eq!(d.full.get("n").map(String::as_str), Some("new"));
        // Width change: literal line; 5→3: difference; 05→10: leading zero, literal line.
        assert_eq!(
            d.patch["m"],
            "=Dirty:   1000 kB\n~-2\n=some avg10=0.10 total=9\n"
        );
    }

    #[test]
    fn line_count_changes_and_huge_numbers_are_stored_whole_or_literally() {
        let a = sample(&[("d", "a 1\n"), ("h", "99999999999999999999 1\n")]);
        let b = sample(&[("d", "a 1\nb 2\n"), ("h", "99999999999999999998 2\n")]);
        let d = round_trip(&a, &b);
        assert!(d.full.contains_key("d"));
        assert_eq!(d.patch["h"], "=99999999999999999998 2\n");
    }

    #[test]
    fn first_sample_is_stored_whole_and_a_patch_that_does_not_fit_is_refused() {
        let b = sample(&[("a", "1 2 3")]);
        let d = SampleDelta::encode(None, &b);
        assert_eq!(d.full.len(), 1);
        assert_eq!(d.apply(None), Some(b.clone()));
        let mut bad = SampleDelta::encode(Some(&b), &sample(&[("a", "1 2 4")]));
        bad.patch.insert("a".to_owned(), "~,,,,9".to_owned());
        assert_eq!(bad.clone().apply(Some(&b)), None);
        bad.patch.insert("a".to_owned(), "~,,-9".to_owned());
        assert_eq!(bad.apply(Some(&b)), None, "negative counter");
    }
}
