//! `pagewatch export`: a recording's derived figures as CSV, JSON lines or OpenMetrics.
//!
//! Records are derived exactly as batch mode derives them (`pipeline::derive_all`): one per sample
//! after the first, unparsable samples skipped. Owns: the three output formats.
//! Must not touch: the recording format, the terminal, files (the caller opens `out`).

mod csv;
mod openmetrics;

use std::io::Write;

use anyhow::Context;

use crate::cli::ExportFormat;
use crate::model::Options;
use crate::pipeline;
use crate::record::Recording;

pub use csv::columns as csv_columns;

/// Writes every record of `rec` to `out` in `format`.
///
/// - `Csv`: a header row, then one row per record; see [`csv_columns`] for the columns.
/// - `Jsonl`: one JSON object per record, byte for byte what `--batch --format json` prints.
/// - `Openmetrics`: gauges named `pagewatch_*`, ending with `# EOF`.
pub fn write(
    rec: &Recording,
    format: ExportFormat,
    opts: Options,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let s = pipeline::derive_all(&rec.samples, opts);
    if s.models.is_empty() {
        anyhow::bail!(
            "the recording has no records to export ({} sample(s), {} unparsable)",
            rec.samples.len(),
            s.failures.len()
        );
    }
    match format {
        ExportFormat::Csv => csv::write(&s.models, out),
        ExportFormat::Jsonl => {
            for m in &s.models {
                serde_json::to_writer(&mut *out, m)?;
                writeln!(out)?;
            }
            Ok(())
        }
        ExportFormat::Openmetrics => openmetrics::write(&rec.header.host.hostname, &s.models, out),
    }
    .context("writing the export")?;
    out.flush().context("writing the export")
}
