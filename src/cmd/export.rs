//! `pagewatch export FILE`: a recording's figures as CSV, JSON lines or OpenMetrics.
//!
//! Owns: the output file (created, never overwritten) or stdout. Must not touch: the formats
//! (`export`).

use std::io::Write;

use anyhow::Result;

use super::{damage, end_of, read_recording};
use crate::model::Options;

/// `pagewatch export FILE`.
pub fn run(a: &crate::cli::ExportArgs) -> Result<()> {
    let rec = read_recording(&a.file)?;
    let damaged = rec.damaged.then(|| damage(&a.file, &rec));
    let opts = Options {
        partitions: a.partitions,
    };
    if let Some(p) = &a.out {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .map_err(|e| {
                let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                    " (it exists, and pagewatch never overwrites a file)"
                } else {
                    ""
                };
                anyhow::Error::new(e).context(format!("creating {}{why}", p.display()))
            })?;
        let mut w = std::io::BufWriter::new(f);
        crate::export::write(&rec, a.format, opts, &mut w)?;
        w.flush()?;
        return end_of(damaged);
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let res = crate::export::write(&rec, a.format, opts, &mut w).and_then(|()| Ok(w.flush()?));
    match res {
        // A closed pipe (`pagewatch export … | head`) is a normal way to stop.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) => {}
        other => other?,
    }
    end_of(damaged)
}
