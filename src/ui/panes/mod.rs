//! One file per pane, each exposing `render(app, area, buf)`.
//!
//! Owns: the panes' content. Must not touch: app state (read only), I/O, the clock.

pub mod below;
pub mod cgroups;
pub mod charts;
pub mod detail;
pub mod dirty;
pub mod disks;
pub mod footer;
pub mod header;
pub mod help;
pub mod job_detail;
pub mod jobs;
pub mod latency;
pub mod memory;
pub mod phases;
mod proc_cells;
pub mod processes;
mod processes_memory;
pub mod prompt;
pub mod reclaim;
pub mod scope;
pub mod throttled;
