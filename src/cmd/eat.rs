//! `pagewatch eat SIZE`: the memory eater child (started by pagewatch's jobs, or by hand).
//!
//! Owns: handing the arguments to the eater. Must not touch: the eating (`jobs::eat`).

use anyhow::Result;

use crate::cli::EatArgs;

/// Runs the eater until released (see `jobs::eat::run`).
pub fn run(a: &EatArgs) -> Result<()> {
    crate::jobs::eat::run(&a.size, &a.step, a.force)
}
