//! Size expressions in playbooks: `2G`, `30%` (of MemTotal), `file(read)` (the file size of
//! the fio step with `id = "read"`), joined by `+` and `-`, such as `file(read) - 256M`.
//!
//! Owns: parsing and evaluating them. Pure: MemTotal and the file sizes are passed in.
//! Must not touch: /proc, files.

use std::collections::BTreeMap;

use crate::jobs::fio::value::size_text;

/// One term of an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// An absolute size, bytes.
    Bytes(u64),
    /// A percentage of MemTotal.
    Percent(f64),
    /// The file size of the fio step with this id.
    File(String),
}

/// A sum of signed terms.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeExpr {
    /// (negative, term), in order.
    pub terms: Vec<(bool, Term)>,
}

impl SizeExpr {
    /// Parses `term (+|- term)*`.
    pub fn parse(text: &str) -> Result<SizeExpr, String> {
        let mut terms = Vec::new();
        let mut neg = false;
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err("empty size".into());
        }
        loop {
            let end = rest.find(['+', '-']).unwrap_or(rest.len());
            let word = rest[..end].trim();
            terms.push((neg, term(word)?));
            if end == rest.len() {
                break;
            }
            neg = rest.as_bytes()[end] == b'-';
            rest = &rest[end + 1..];
        }
        Ok(SizeExpr { terms })
    }

    /// The fio step ids the expression refers to.
    pub fn refs(&self) -> impl Iterator<Item = &str> {
        self.terms.iter().filter_map(|(_, t)| match t {
            Term::File(id) => Some(id.as_str()),
            _ => None,
        })
    }

    /// The value in bytes; an error when it is not above zero or names an unknown file.
    pub fn eval(&self, mem_total: u64, files: &BTreeMap<String, u64>) -> Result<u64, String> {
        let mut sum: i128 = 0;
        for (neg, t) in &self.terms {
            let v = match t {
                Term::Bytes(b) => i128::from(*b),
                Term::Percent(p) => (mem_total as f64 * p / 100.0) as i128,
                Term::File(id) => i128::from(
                    *files
                        .get(id)
                        .ok_or_else(|| format!("file({id}): no earlier fio step has id {id:?}"))?,
                ),
            };
            sum += if *neg { -v } else { v };
        }
        u64::try_from(sum)
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| format!("the size comes to {sum} bytes, not above zero"))
    }

    /// Scales the absolute terms (not percentages or file references, which scale with what
    /// they name).
    #[must_use]
    pub fn scaled(&self, f: f64) -> SizeExpr {
        let terms = self
            .terms
            .iter()
            .map(|(n, t)| match t {
                Term::Bytes(b) => (*n, Term::Bytes(((*b as f64) * f) as u64)),
                other => (*n, other.clone()),
            })
            .collect();
        SizeExpr { terms }
    }
}

impl std::fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (neg, t)) in self.terms.iter().enumerate() {
            match (i, neg) {
                (0, true) => write!(f, "-")?,
                (0, false) => {}
                (_, true) => write!(f, " - ")?,
                (_, false) => write!(f, " + ")?,
            }
            match t {
                Term::Bytes(b) => write!(f, "{}", size_text(*b))?,
                Term::Percent(p) => write!(f, "{p}%")?,
                Term::File(id) => write!(f, "file({id})")?,
            }
        }
        Ok(())
    }
}

fn term(word: &str) -> Result<Term, String> {
    if let Some(inner) = word.strip_prefix("file(").and_then(|w| w.strip_suffix(')')) {
        let id = inner.trim();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "{word:?}: file(ID) needs a fio step's id (letters, digits, _)"
            ));
        }
        return Ok(Term::File(id.to_owned()));
    }
    if let Some(p) = word.strip_suffix('%') {
        return p
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
            .map(Term::Percent)
            .ok_or_else(|| format!("{word:?}: a percentage of MemTotal from 0 to 100"));
    }
    crate::jobs::fio::value::parse_size(word)
        .map(Term::Bytes)
        .ok_or_else(|| {
            format!("{word:?} is not a size: give 512M, 2G, 30% (of MemTotal) or file(ID)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_sizes_percentages_and_file_references() {
        let files = BTreeMap::from([("read".to_owned(), 2u64 << 30)]);
        let e = SizeExpr::parse("file(read) - 512M").unwrap();
        assert_eq!(e.eval(0, &files), Ok((2u64 << 30) - (512 << 20)));
        assert_eq!(e.refs().collect::<Vec<_>>(), ["read"]);
        // 10% of 8 GiB + 1G = 0.8 GiB + 1 GiB.
        let p = SizeExpr::parse("10% + 1G").unwrap();
        assert_eq!(p.eval(8 << 30, &files), Ok((8u64 << 30) / 10 + (1 << 30)));
        assert_eq!(e.to_string(), "file(read) - 512M");
    }

    #[test]
    fn refuses_bad_terms_and_non_positive_results() {
        for bad in ["", "2X", "file()", "file(a b)", "150%", "1G +"] {
            assert!(SizeExpr::parse(bad).is_err(), "{bad}");
        }
        let e = SizeExpr::parse("1G - 2G").unwrap();
        assert!(e.eval(0, &BTreeMap::new()).is_err());
        let r = SizeExpr::parse("file(nope)").unwrap();
        assert!(r.eval(0, &BTreeMap::new()).unwrap_err().contains("nope"));
    }

    #[test]
    fn scaling_leaves_references_alone() {
        let e = SizeExpr::parse("file(a) + 1G").unwrap().scaled(0.5);
        assert_eq!(e.to_string(), "file(a) + 512M");
    }
}
