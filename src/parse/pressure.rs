//! `/proc/pressure/{cpu,memory,io}` → `Psi` (kernel 4.20+; absent files are "not available").
//!
//! Owns: one PSI file's `some`/`full` lines (`key=value` words, in any order, unknown keys
//! skipped, as procfs-core reads them; read here without its map and vectors, which cost
//! more than the rest of a tick's PSI parse: issue 52). Must not touch: rates.

use serde::Serialize;

use super::fast::lines;
use crate::{Error, Result};

/// One PSI line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PsiLine {
    /// Percent of the last 10 s stalled.
    pub avg10: f32,
    /// Percent of the last 60 s stalled.
    pub avg60: f32,
    /// Percent of the last 300 s stalled.
    pub avg300: f32,
    /// Cumulative stall time, microseconds.
    pub total_us: u64,
}

/// One PSI file. `cpu` has no `full` line before 5.13.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Psi {
    /// Some task stalled.
    pub some: Option<PsiLine>,
    /// All non-idle tasks stalled.
    pub full: Option<PsiLine>,
}

/// Parses one PSI file.
pub fn parse(file: &str, text: &str) -> Result<Psi> {
    let mut psi = Psi::default();
    for (i, line) in lines(text).enumerate() {
        psi = psi.then(parse_line(file, line, i + 1)?);
    }
    Ok(psi)
}

impl Psi {
    /// `self` with the lines `later` has put in place of its own (a later line wins).
    #[must_use]
    pub fn then(self, later: Option<Psi>) -> Psi {
        let Some(l) = later else { return self };
        Psi {
            some: l.some.or(self.some),
            full: l.full.or(self.full),
        }
    }
}

/// Parses line `n` of a PSI file: `None` when blank, else a `Psi` with the one line it holds.
/// The result depends on nothing but `line` and `n` (and `file`, for the error).
pub fn parse_line(file: &str, line: &str, n: usize) -> Result<Option<Psi>> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let full = if line.starts_with("some ") {
        false
    } else if line.starts_with("full ") {
        true
    } else {
        return Err(Error::parse(
            file,
            n,
            format!("expected `some …` or `full …`, got {line:?}"),
        ));
    };
    let rec = record(&line[5..])
        .ok_or_else(|| Error::parse(file, n, format!("bad PSI line {line:?}")))?;
    // A share of time: the kernel prints 0.00 to 100.00 (rounding aside).
    for (name, v) in [
        ("avg10", rec.avg10),
        ("avg60", rec.avg60),
        ("avg300", rec.avg300),
    ] {
        if !(0.0..=100.5).contains(&v) {
            return Err(Error::parse(
                file,
                n,
                format!("{name}={v} is not a percentage (0 to 100)"),
            ));
        }
    }
    let l = Some(rec);
    Ok(Some(if full {
        Psi {
            some: None,
            full: l,
        }
    } else {
        Psi {
            some: l,
            full: None,
        }
    }))
}

/// The four values of a PSI line after its `some `/`full `: `avg10=`, `avg60=`, `avg300=` and
/// `total=` words in any order (a later one wins), other words skipped; `None` when one is
/// missing or does not parse.
fn record(words: &str) -> Option<PsiLine> {
    let (mut avg10, mut avg60, mut avg300, mut total) = (None, None, None, None);
    for word in words.split_ascii_whitespace() {
        let Some((key, value)) = word.split_once('=') else {
            continue;
        };
        match key {
            "avg10" => avg10 = Some(value.parse().ok()?),
            "avg60" => avg60 = Some(value.parse().ok()?),
            "avg300" => avg300 = Some(value.parse().ok()?),
            "total" => total = Some(value.parse().ok()?),
            _ => {}
        }
    }
    Some(PsiLine {
        avg10: avg10?,
        avg60: avg60?,
        avg300: avg300?,
        total_us: total?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_outside_0_to_100_are_rejected() {
        for bad in ["1e30", "-5.00", "NaN", "inf"] {
            let line = format!("some avg10={bad} avg60=0.00 avg300=0.00 total=1");
            let e = parse_line("proc/pressure/io", &line, 2);
            let e = e.expect_err(bad).to_string();
            assert!(e.starts_with("proc/pressure/io:2: "), "{e}");
        }
        let ok = "some avg10=100.00 avg60=0.00 avg300=0.00 total=1";
        assert!(parse_line("proc/pressure/io", ok, 1).unwrap().is_some());
    }

    #[test]
    fn words_are_read_in_any_order_and_each_is_required() {
        let moved = "full total=9 avg300=0.30 extra=1 avg10=0.10 avg60=0.20";
        let p = parse_line("proc/pressure/io", moved, 2).unwrap().unwrap();
        let full = p.full.unwrap();
        assert_eq!((full.avg10, full.avg60, full.total_us), (0.1, 0.2, 9));
        assert!((full.avg300 - 0.3).abs() < 1e-6);
        assert_eq!(p.some, None);
        for bad in [
            "some avg10=0.00 avg60=0.00 avg300=0.00",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1",
            "some avg10=x avg60=0.00 avg300=0.00 total=1",
        ] {
            let e = parse_line("proc/pressure/io", bad, 3)
                .expect_err(bad)
                .to_string();
            assert!(e.starts_with("proc/pressure/io:3: bad PSI line"), "{e}");
        }
    }

    #[test]
    fn lines_land_in_place_and_later_lines_win() {
        let text = "some avg10=1.50 avg60=0.25 avg300=0.00 total=123\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n\
                    some avg10=2.00 avg60=0.00 avg300=0.00 total=124\n";
        let p = parse("proc/pressure/io", text).unwrap();
        let some = p.some.unwrap();
        assert_eq!((some.avg10, some.total_us), (2.0, 124));
        assert_eq!(p.full.unwrap().total_us, 7);
        let cpu = parse(
            "proc/pressure/cpu",
            "some avg10=0.10 avg60=0.20 avg300=0.30 total=5\n",
        )
        .unwrap();
        assert_eq!(cpu.full, None);
        assert!((cpu.some.unwrap().avg300 - 0.3).abs() < 1e-6);
        assert_eq!(parse("proc/pressure/io", "\n").unwrap(), Psi::default());
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = parse(
            "proc/pressure/io",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nhalf x\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("proc/pressure/io:2:"), "{e}");
        let e = parse(
            "proc/pressure/memory",
            "full avg10=x avg60=0.00 avg300=0.00 total=1",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("proc/pressure/memory:1:"), "{e}");
    }
}
