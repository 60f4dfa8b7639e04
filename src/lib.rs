//! pagewatch: why is buffered IO slow right now?
//!
//! The pipeline has one route for live /proc, a captured tree and a recording alike:
//!
//! ```text
//! source (reads files + clock) → RawSample → parse → Snapshot → model (pure) → Model → output
//! ```
//!
//! `source` is the only module that touches the filesystem or the clock; `parse` and `model`
//! are pure functions of their inputs, so captured trees and recordings give the same figures
//! as the live system did. The formulas follow `docs/kernel-formulas.md` (cited as §N in the code).

pub mod app;
pub mod batch;
pub mod child;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod docs_gen;
pub mod error;
pub mod event;
pub mod exit;
pub mod export;
pub mod fmt;
pub mod history;
pub mod jobs;
pub mod malloc;
pub mod metrics;
pub mod model;
pub mod parse;
pub mod pipeline;
pub mod play;
pub mod record;
pub mod report;
pub mod sample;
pub mod sampler;
pub mod serve;
pub mod shell;
pub mod source;
pub mod ui;
pub mod userfile;

pub use error::{Error, Result};
