//! Adapting procfs-core errors to ours.
//!
//! Owns: the mapping. Must not touch: parsing itself.

use crate::Error;

/// Maps a procfs-core error on an already-checked file to our error type.
pub fn procfs_err(file: &str, e: &procfs_core::ProcError) -> Error {
    Error::parse(file, 0, e.to_string())
}
