//! The imperative shells: threads, signals, the terminal and the other edges around the pure
//! core. Each runs one way of using pagewatch and is started by its command in `cmd`.
//!
//! Owns: the screen's runtime (`tui`, with the terminal `term`, the recording `tee` and the
//! settings saver `config_io`), the screen's playbook edge (`play_edge`) and the headless
//! playbook runner (`headless`), the link to another machine's stream (`remote`); each drives the one sampler loop (`crate::sampler`) with its
//! sink. Must not touch: argument parsing (`cmd` hands each shell its validated options).

pub mod config_io;
pub mod fleet;
pub mod headless;
pub mod play_edge;
pub mod preflight;
pub mod remote;
pub mod tee;
pub mod term;
pub mod tui;
