//! `/proc/meminfo` → procfs-core's `Meminfo` (values in bytes).
//!
//! Owns: checking the text and handing it to procfs-core. Must not touch: derivation.

use procfs_core::{FromBufRead, Meminfo};

use super::lines;
use crate::Result;
use crate::sample::names::MEMINFO;

/// Parses `/proc/meminfo`.
pub fn parse(text: &str) -> Result<Meminfo> {
    lines::check_colon_kv(MEMINFO, text)?;
    Meminfo::from_buf_read(text.as_bytes()).map_err(|e| lines::procfs_err(MEMINFO, &e))
}
