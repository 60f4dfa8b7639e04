//! Playbooks: repeatable experiments as a sequence of steps (drop caches, eat memory, run
//! fio, tune a kernel setting, wait, mark, start a phase), run headless (`pagewatch play`) or
//! from the screen, and the phase table that compares the phases.
//!
//! Owns: the playbook format and its validation (book, expr), the built-ins (builtin), the
//! phase table (table, pure) and the headless runner (run, an edge like `jobs/supervisor.rs`: it
//! starts jobs through the `Supervisor` and settings through `jobs::tune`). Must not touch:
//! the terminal, the app state.

pub mod book;
pub mod builtin;
pub mod expr;
pub mod run;
pub mod screen;
pub mod seq;
pub mod table;

pub use book::{Action, BookError, EatSize, Playbook, Step, Wait};
