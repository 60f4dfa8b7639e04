//! fio jobs started from pagewatch: presets (preset), the form (spec, value), the test-file
//! directory (dir), fio's JSON status stream (stream, status), live figures and summaries
//! (live), and running, stopping and judging a job (child, runner, verdict).
//!
//! Owns: everything about the fio processes pagewatch starts. Must not touch: the terminal, the
//! app state, recordings (callers take `FioUpdate`s and turn them into events).

mod child;
pub mod dir;
pub mod live;
pub mod preset;
pub mod runner;
pub mod spec;
pub mod status;
pub mod stream;
pub mod update;
pub mod value;
mod verdict;

pub use child::{find_fio, find_fio_in};
pub use dir::FioDir;
pub use live::{DirLive, FioFigures, FioLive, JobLive, live, summary};
pub use runner::{FioJob, Notify, STOP_GRACE};
pub use spec::{FioSpec, Preset, SpecError, presets};
pub use status::FioStatus;
pub use stream::{Frame, Framer};
pub use update::FioUpdate;
