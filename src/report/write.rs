//! Writing a report directory: report.md and the SVG charts.
//!
//! Owns: the only file writes of `pagewatch report`. Safety rule: pagewatch never overwrites
//! a file. The directory must not exist (it is created, with its parents) or be an empty
//! directory; a previous report's directory is refused. Each file is created new
//! (`create_new`: never over an existing file, never through a symlink) and synced. The
//! analysis and every chart are rendered before the directory is touched, so a recording
//! that cannot be analysed leaves nothing behind.
//! Must not touch: any file it did not create.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::analysis::analyse;
use super::range::Range;
use super::summary::ReportSummary;
use super::{charts, markdown};
use crate::model::Options;
use crate::record::Recording;

/// Writes the report of `rec` over `range` into `out_dir` (created if missing) and returns
/// its headline figures with the files written.
pub fn write(
    rec: &Recording,
    range: Range,
    opts: Options,
    out_dir: &Path,
) -> anyhow::Result<ReportSummary> {
    let a = analyse(rec, range, opts)?;
    let md = markdown::render(rec, &a);
    let charts = charts::render(&a, rec.header.started_ms)?;
    prepare(out_dir)?;
    let mut files = Vec::new();
    for c in &charts {
        files.push(put(out_dir, &c.file, c.svg.as_bytes())?);
    }
    files.push(put(out_dir, "report.md", md.as_bytes())?);
    let mut summary = a.summary;
    summary.files = files;
    Ok(summary)
}

/// Creates `dir`, or accepts it when it exists and is empty: pagewatch never overwrites a file,
/// a previous report's included (choose a new directory with -o).
fn prepare(dir: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
        }
        Err(e) => Err(e).with_context(|| format!("checking {}", dir.display())),
        Ok(m) if !m.is_dir() => bail!("{} exists and is not a directory", dir.display()),
        Ok(_) => {
            let mut entries =
                std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
            if entries.next().is_none() {
                Ok(())
            } else {
                bail!(
                    "{} is not empty: refusing to write into it, pagewatch never overwrites a \
                     file (choose a new or empty directory with -o)",
                    dir.display()
                )
            }
        }
    }
}

/// Writes `name` in `dir` as a new file (never through a link, never over a file).
fn put(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
