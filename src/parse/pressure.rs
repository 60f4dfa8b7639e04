//! `/proc/pressure/{cpu,memory,io}` → `Psi` (kernel 4.20+; absent files are "not available").
//!
//! Owns: one PSI file's `some`/`full` lines, parsed by procfs-core. Must not touch: rates.

use procfs_core::{PressureRecord, parse_pressure_record};
use serde::Serialize;

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
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let slot = if line.starts_with("some ") {
            &mut psi.some
        } else if line.starts_with("full ") {
            &mut psi.full
        } else {
            return Err(Error::parse(
                file,
                i + 1,
                format!("expected `some …` or `full …`, got {line:?}"),
            ));
        };
        let rec: PressureRecord = parse_pressure_record(line)
            .map_err(|_| Error::parse(file, i + 1, format!("bad PSI line {line:?}")))?;
        *slot = Some(PsiLine {
            avg10: rec.avg10,
            avg60: rec.avg60,
            avg300: rec.avg300,
            total_us: rec.total,
        });
    }
    Ok(psi)
}
