//! Experiments started from pagewatch: memory eaters, fio jobs and cache drops, and pairing
//! with fio processes pagewatch did not start.
//!
//! Owns: child processes, their safety rules (refusals, oom_score_adj, parent-death signal,
//! process groups, test files pagewatch created) and the threads that read their output.
//! The job protocol (`protocol`) and the supervisor that performs it (`supervisor`).
//! Must not touch: the terminal, the app state (it reports through callbacks), /proc sampling.

pub mod cachestat;
pub mod dropcache;
pub mod eat;
pub mod eat_plan;
pub mod eater;
pub mod file_pace;
pub mod fio;
pub mod foreign;
pub mod foreign_files;
pub mod guard;
pub mod job_files;
pub mod lockfile;
pub mod pid_io;
pub mod protocol;
pub mod requests;
pub mod size;
pub mod supervisor;
pub mod tune;
pub mod tuner;
pub mod wbt;
