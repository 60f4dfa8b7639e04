//! Line checks run before text reaches procfs-core, so that bad input is reported with its
//! file and line and never reaches a parser that could panic on it.
//!
//! Owns: small validators for the `Key: value [unit]` and `key value` line shapes.
//! Must not touch: building typed values (procfs-core and the per-file parsers do that).

use crate::{Error, Result};

/// Checks `/proc/meminfo`-style lines: `Name:` then an unsigned number, then an optional `kB`.
pub fn check_colon_kv(file: &str, text: &str) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut it = line.split_whitespace();
        let (Some(key), Some(value)) = (it.next(), it.next()) else {
            return Err(Error::parse(
                file,
                i + 1,
                format!("expected `Name: value`, got {line:?}"),
            ));
        };
        if !key.is_ascii() || key.len() < 2 || !key.ends_with(':') {
            return Err(Error::parse(file, i + 1, format!("bad field name {key:?}")));
        }
        if value.parse::<u64>().is_err() {
            return Err(Error::parse(
                file,
                i + 1,
                format!("{key} value {value:?} is not a number"),
            ));
        }
        match it.next() {
            None | Some("kB") => {}
            Some(unit) => {
                return Err(Error::parse(
                    file,
                    i + 1,
                    format!("{key} has unknown unit {unit:?}"),
                ));
            }
        }
    }
    Ok(())
}

/// Checks `/proc/vmstat`-style lines: an ASCII name, whitespace, a signed integer.
pub fn check_space_kv(file: &str, text: &str) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut it = line.split_whitespace();
        let (Some(key), Some(value), None) = (it.next(), it.next(), it.next()) else {
            return Err(Error::parse(
                file,
                i + 1,
                format!("expected `name value`, got {line:?}"),
            ));
        };
        if !key.is_ascii() || value.parse::<i64>().is_err() {
            return Err(Error::parse(
                file,
                i + 1,
                format!("bad counter line {line:?}"),
            ));
        }
    }
    Ok(())
}

/// Maps a procfs-core error on an already-checked file to our error type.
pub fn procfs_err(file: &str, e: &procfs_core::ProcError) -> Error {
    Error::parse(file, 0, e.to_string())
}
