//! `pagewatch report`: a Markdown bug report with SVG charts from a recording.
//!
//! Owns: summarising derived figures over a recording and writing the report directory.
//! Records are derived and judged exactly as batch mode derives them
//! (`pipeline::derive_all`), so the report's figures and verdict are the ones `pagewatch
//! replay --batch` prints. Must not touch: the recording format (it reads `Recording`s), the
//! terminal, any file it did not create.

mod analysis;
mod charts;
mod findings;
mod heatmap;
mod load;
mod markdown;
mod md;
mod periods;
mod range;
mod reclaimers;
mod series;
mod stats;
mod story;
mod summary;
mod types;
mod victims;
pub mod who;
mod write;

pub use analysis::{Analysis, DiskReport, Row, analyse};
pub use charts::{Chart, render as render_charts};
pub use markdown::render as markdown_of;
pub use periods::{Flag, Period, merge as merge_periods};
pub use range::{Range, datetime_utc, offset};
pub use stats::Stats;
pub use story::{CulpritSum, PeriodStory, TakerSum, VictimAt};
pub use summary::ReportSummary;
pub use types::{At, WorstAwait};
pub use write::write;

use crate::model::Options;
use crate::record::Recording;

/// The report's Markdown for `rec` over `range` (pure: no files, no clock).
pub fn render_markdown(rec: &Recording, range: Range, opts: Options) -> anyhow::Result<String> {
    let a = analyse(rec, range, opts)?;
    Ok(markdown::render(rec, &a))
}
