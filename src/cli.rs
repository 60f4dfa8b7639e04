//! Command-line arguments.
//!
//! Owns: the clap definition. Must not touch: anything it configures.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Batch output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A compact vmstat/iostat-like table, 80 columns wide.
    Text,
    /// One JSON object per line per interval (schema in README.md).
    Json,
}

/// pagewatch: why is buffered IO slow right now?
#[derive(Debug, Parser)]
#[command(version, about)]
pub struct Args {
    /// Seconds between samples (fractions allowed).
    #[arg(long, short = 'i', default_value_t = 1.0, value_parser = positive_secs)]
    pub interval: f64,
    /// Print figures to stdout instead of opening the screen.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: stop after N intervals (N objects take N+1 reads). Default: run until killed.
    #[arg(long, short = 'n')]
    pub count: Option<u64>,
    /// With --batch: output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Read a captured tree in place of /proc (same relative paths).
    #[arg(long, value_name = "DIR")]
    pub proc_root: Option<PathBuf>,
    /// Read a captured tree in place of /sys.
    #[arg(long, value_name = "DIR")]
    pub sys_root: Option<PathBuf>,
    /// Replay a captured sequence DIR/000, DIR/001, … (each a root with proc/ and sys/);
    /// time comes from each root's proc/uptime.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["proc_root", "sys_root"])]
    pub tree: Option<PathBuf>,
    /// No braille, block or box-drawing characters (for terminals without Unicode).
    #[arg(long)]
    pub ascii: bool,
    /// Show partitions as well as whole disks.
    #[arg(long, short = 'p')]
    pub partitions: bool,
}

fn positive_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if v.is_finite() && (0.05..=3600.0).contains(&v) {
        Ok(v)
    } else {
        Err("interval must be between 0.05 and 3600 seconds".to_owned())
    }
}
