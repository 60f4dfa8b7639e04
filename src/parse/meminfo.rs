//! `/proc/meminfo` → `Meminfo` (kB), in one pass with no allocation.
//!
//! Not procfs-core's `Meminfo`: it builds a `HashMap<String, u64>` of every line per read,
//! which measured 25 µs here against a 70 µs budget for the whole sample (docs/PERFORMANCE.md).
//! Owns: parsing and checking meminfo. Must not touch: derivation.

use serde::Serialize;

use super::fast::{digits, line_at, token_end};
use crate::sample::names::MEMINFO;
use crate::{Error, Result};

/// The meminfo fields pagewatch uses, in kB. `None`: not printed by this kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub struct Meminfo {
    pub mem_total: u64,
    pub mem_free: u64,
    pub mem_available: Option<u64>,
    pub buffers: Option<u64>,
    pub cached: Option<u64>,
    pub swap_cached: Option<u64>,
    pub active_file: Option<u64>,
    pub inactive_file: Option<u64>,
    pub anon_pages: Option<u64>,
    pub shmem: Option<u64>,
    pub k_reclaimable: Option<u64>,
    pub s_reclaimable: Option<u64>,
    pub dirty: Option<u64>,
    pub writeback: Option<u64>,
    pub mapped: Option<u64>,
    pub swap_total: Option<u64>,
    pub swap_free: Option<u64>,
    /// zswap's compressed pool and the original size of what it stores (5.19+, spec §14.1).
    pub zswap: Option<u64>,
    pub zswapped: Option<u64>,
}

/// Parses `/proc/meminfo`. Every line must be `Name: number [kB]`; unknown names are skipped.
///
/// Lines in the kernel's exact form (`Name:`, spaces, digits, ` kB` or nothing) take a
/// byte-level fast path; anything else goes through `line_fields`, which also words the errors.
pub fn parse(text: &str) -> Result<Meminfo> {
    let mut m = Meminfo::default();
    let (mut total, mut free) = (None, None);
    let (mut start, mut n) = (0, 0);
    while start < text.len() {
        n += 1;
        let (fields, end) = if let Some((name, val, end)) = fast_line(text, start) {
            (Some((name, val)), end)
        } else {
            slow_line(text, start, n)?
        };
        start = end + 1;
        let Some((name, v)) = fields else { continue };
        let slot = match name {
            "MemTotal" => &mut total,
            "MemFree" => &mut free,
            "MemAvailable" => &mut m.mem_available,
            "Buffers" => &mut m.buffers,
            "Cached" => &mut m.cached,
            "SwapCached" => &mut m.swap_cached,
            "Active(file)" => &mut m.active_file,
            "Inactive(file)" => &mut m.inactive_file,
            "AnonPages" => &mut m.anon_pages,
            "Shmem" => &mut m.shmem,
            "KReclaimable" => &mut m.k_reclaimable,
            "SReclaimable" => &mut m.s_reclaimable,
            "Dirty" => &mut m.dirty,
            "Writeback" => &mut m.writeback,
            "Mapped" => &mut m.mapped,
            "SwapTotal" => &mut m.swap_total,
            "SwapFree" => &mut m.swap_free,
            "Zswap" => &mut m.zswap,
            "Zswapped" => &mut m.zswapped,
            _ => continue,
        };
        if slot.is_some() {
            return Err(Error::parse(
                MEMINFO,
                n,
                format!("a second {name} line: the kernel prints each once"),
            ));
        }
        if v > MAX_KB {
            return Err(Error::parse(
                MEMINFO,
                n,
                format!("{name} {v} kB is beyond any machine's memory (256 PiB)"),
            ));
        }
        *slot = Some(v);
    }
    let missing = |f: &str| Error::parse(MEMINFO, 0, format!("no {f} line"));
    m.mem_total = total.ok_or_else(|| missing("MemTotal"))?;
    m.mem_free = free.ok_or_else(|| missing("MemFree"))?;
    if m.mem_total == 0 {
        return Err(Error::parse(MEMINFO, 0, "MemTotal is 0"));
    }
    for (name, v) in [
        ("MemFree", Some(m.mem_free)),
        ("MemAvailable", m.mem_available),
    ] {
        if v.is_some_and(|v| v > m.mem_total) {
            return Err(Error::parse(
                MEMINFO,
                0,
                format!("{name} is larger than MemTotal ({} kB)", m.mem_total),
            ));
        }
    }
    Ok(m)
}

/// The largest kB value accepted: 256 PiB, far beyond any machine, and small enough that
/// byte counts and sums of a few values stay far from u64 overflow.
const MAX_KB: u64 = 1 << 48;

/// The line at byte `start` when it is `Name:` (no blank inside), one or more spaces, 1 to 19
/// digits, then ` kB` or nothing, up to its `\n` or the end of the text: the name without its
/// colon, the value and where the line ends. `None` for any other shape, which `line_fields`
/// judges.
fn fast_line(text: &str, start: usize) -> Option<(&str, u64, usize)> {
    let b = text.as_bytes();
    let sp = token_end(b, start);
    if sp <= start + 1 || b[sp - 1] != b':' || b.get(sp) != Some(&b' ') {
        return None;
    }
    let mut i = sp + 1;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    let (val, mut end) = digits(b, i)?;
    if b[end..].starts_with(b" kB") {
        end += 3;
    }
    if end < b.len() && b[end] != b'\n' {
        return None;
    }
    Some((&text[start..sp - 1], val, end))
}

/// The line at byte `start`, number `n`, that `fast_line` did not take: its fields (see
/// `line_fields`) and where it ends. Kept out of line, away from the loop it almost never runs
/// in, so that the loop's code stays small.
#[cold]
#[inline(never)]
fn slow_line(text: &str, start: usize, n: usize) -> Result<(Option<(&str, u64)>, usize)> {
    let (line, end) = line_at(text, start);
    Ok((line_fields(line, n)?, end))
}

/// Any line: `None` when blank, else `Name: value [kB]` split on blanks, or the error for line `n`.
fn line_fields(line: &str, n: usize) -> Result<Option<(&str, u64)>> {
    let mut it = line.split_ascii_whitespace();
    let Some(key) = it.next() else {
        return Ok(None);
    };
    let bad = |msg: String| Error::parse(MEMINFO, n, msg);
    let Some(name) = key.strip_suffix(':') else {
        return Err(bad(format!("expected `Name: value`, got {line:?}")));
    };
    let value = it.next().unwrap_or("");
    let v: u64 = value
        .parse()
        .map_err(|_| bad(format!("{name} value {value:?} is not a number")))?;
    if let Some(unit) = it.next().filter(|u| *u != "kB") {
        return Err(bad(format!("{name} has unknown unit {unit:?}")));
    }
    Ok(Some((name, v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_values_are_rejected_with_the_line() {
        let base = "MemTotal: 1000 kB\nMemFree: 400 kB\n";
        let cases = [
            (
                format!("{base}MemTotal: 1 kB\n"),
                "proc/meminfo:3: a second MemTotal",
            ),
            (
                "MemTotal: 0 kB\nMemFree: 0 kB\n".to_owned(),
                "MemTotal is 0",
            ),
            (
                format!("MemTotal: 1000 kB\nMemFree: {} kB\n", u64::MAX),
                "proc/meminfo:2: MemFree",
            ),
            (
                "MemTotal: 1000 kB\nMemFree: 2000 kB\n".to_owned(),
                "larger than MemTotal",
            ),
            (
                format!("{base}MemAvailable: 1001 kB\n"),
                "larger than MemTotal",
            ),
        ];
        for (text, want) in cases {
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn parses_and_names_bad_lines() {
        let m =
            parse("MemTotal: 100 kB\nMemFree:  40 kB\nActive(file): 7 kB\nHugePages_Total: 0\n")
                .unwrap();
        assert_eq!(
            (m.mem_total, m.mem_free, m.active_file, m.mem_available),
            (100, 40, Some(7), None)
        );
        let e = parse("MemTotal: 100 kB\nMemFree: x kB\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("proc/meminfo:2:"), "{e}");
        let e = parse("MemTotal: 100 kB\n\u{e9}\u{e9}\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("proc/meminfo:2:"), "{e}");
        let e = parse("MemTotal: 100 MB\n").unwrap_err().to_string();
        assert!(e.contains("unit"), "{e}");
        assert!(
            parse("MemTotal: 100 kB\n")
                .unwrap_err()
                .to_string()
                .contains("MemFree")
        );
    }

    /// The parser before the fast path (`str::lines` and a split per line): the reference.
    fn reference(text: &str) -> Result<Meminfo> {
        let mut m = Meminfo::default();
        let (mut total, mut free) = (None, None);
        for (i, line) in text.lines().enumerate() {
            let Some((name, v)) = line_fields(line, i + 1)? else {
                continue;
            };
            let slot = match name {
                "MemTotal" => &mut total,
                "MemFree" => &mut free,
                "MemAvailable" => &mut m.mem_available,
                "Dirty" => &mut m.dirty,
                "Active(file)" => &mut m.active_file,
                _ => continue,
            };
            if v > MAX_KB {
                return Err(Error::parse(
                    MEMINFO,
                    i + 1,
                    format!("{name} {v} kB is beyond any machine's memory (256 PiB)"),
                ));
            }
            *slot = Some(v);
        }
        let missing = |f: &str| Error::parse(MEMINFO, 0, format!("no {f} line"));
        m.mem_total = total.ok_or_else(|| missing("MemTotal"))?;
        m.mem_free = free.ok_or_else(|| missing("MemFree"))?;
        Ok(m)
    }

    #[test]
    fn fast_path_agrees_with_the_general_one() {
        let lines = [
            "Dirty:            1234 kB",
            "Dirty: 1234 kB",
            "Dirty: 1234",
            "Dirty:1234 kB",
            "Dirty:  1234  kB",
            "Dirty:\t1234 kB",
            " Dirty: 1234 kB",
            "Dirty : 1234 kB",
            "Dirty: 1234 kB ",
            "Dirty: 1234 kB extra",
            "Dirty: 1234 MB",
            "Dirty: 1234 kBx",
            "Dirty: 1234kB",
            "Dirty: +1234 kB",
            "Dirty: -1 kB",
            "Dirty: kB",
            "Dirty:",
            "Dirty: 9999999999999999999 kB",
            "Dirty: 18446744073709551615 kB",
            "Dirty: 18446744073709551616 kB",
            "Dirty: 00000000000000000000000042 kB",
            "Dirty: 12\u{e9} kB",
            "Dirt\u{e9}y: 12 kB",
            "Dirty:: 12 kB",
            ": 12 kB",
            "Dirty: 12 kB\r",
            "Dirty: 12\r",
            "",
            "   ",
        ];
        let head = "MemTotal: 100 kB\nMemFree: 40 kB\n";
        for line in lines {
            for text in [
                format!("{head}{line}\n"),
                format!("{head}{line}"),
                format!("{head}{line}\r\n"),
                format!("{line}\n{head}"),
                format!("{head}{line}\nActive(file): 7 kB\n"),
            ] {
                let want = reference(&text).map_err(|e| e.to_string());
                let got = parse(&text).map_err(|e| e.to_string());
                // `reference` keeps only the fields it names; compare those.
                let got = got.map(|m| Meminfo {
                    mem_total: m.mem_total,
                    mem_free: m.mem_free,
                    mem_available: m.mem_available,
                    dirty: m.dirty,
                    active_file: m.active_file,
                    ..Meminfo::default()
                });
                assert_eq!(got, want, "{text:?}");
            }
        }
        let m = parse(&format!(
            "MemTotal: 100 kB\nMemFree: 40 kB\nDirty:  {MAX_KB} kB\n"
        ))
        .unwrap();
        assert_eq!(m.dirty, Some(MAX_KB));
        assert_eq!(
            fast_line("Dirty:    12 kB\nX: 1\n", 0),
            Some(("Dirty", 12, 15))
        );
        assert_eq!(fast_line("Dirty:    12 kB\nX: 1\n", 16), Some(("X", 1, 20)));
        assert_eq!(fast_line("X: 1 kB", 0), Some(("X", 1, 7)));
    }
}
