//! Playbooks: repeatable experiments as a sequence of steps (drop caches, eat memory, run
//! fio, tune a kernel setting, wait, mark, start a phase), run headless (`pagewatch play`) or
//! from the screen, and the phase table that compares the phases.
//!
//! Owns: the playbook format and its validation (book, expr), reading a playbook file
//! (file: regular, bounded, out of other users' reach), the built-ins (builtin), the step sequencing (seq, pure: it speaks `jobs::protocol`) and
//! the phase table (table, pure). The runners are shells: `shell::headless` (`pagewatch
//! play`) and `shell::play_edge` (the screen's). Must not touch: the terminal, the app state,
//! processes.

pub mod book;
pub mod builtin;
pub mod expr;
pub mod file;
pub mod seq;
pub mod table;

pub use book::{Action, BookError, EatSize, Playbook, Step, Wait};
