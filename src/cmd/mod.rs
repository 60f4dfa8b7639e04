//! The commands: one file per subcommand, each validating its arguments, building its shell
//! and running it. `run` is the one `match` over `Cmd` (the binary calls it and nothing else).
//!
//! Owns: which command runs. The helpers the commands share, `usage`, `read_recording` and
//! `damage`/`end_of` (a damaged recording exits 1 once what precedes the damage is shown),
//! stay in `screen.rs` (where main.rs had them, so merges carry edits across) and are
//! re-exported here. Must not touch: the pure layers' state (each command hands its shell
//! what it needs).

pub mod batch;
pub mod eat;
pub mod export;
pub mod generate;
pub mod guard;
pub mod play;
pub mod record;
pub mod report;
pub mod screen;
pub mod serve;

use anyhow::Result;

use crate::cli::{Args, Cmd};
pub(crate) use screen::{damage, end_of, read_recording, usage};

/// Runs the command `args` names.
pub fn run(args: &Args) -> Result<()> {
    match &args.cmd {
        None if args.batch => batch::run(args),
        None => screen::run(args),
        Some(Cmd::Eat(a)) => eat::run(a),
        Some(Cmd::Guard(a)) => guard::run(a),
        Some(Cmd::Record(a)) => record::record(a),
        Some(Cmd::Replay(a)) if a.batch => record::replay_batch(a),
        Some(Cmd::Replay(a)) => screen::replay(args, a),
        Some(Cmd::Report(a)) => report::run(a),
        Some(Cmd::Export(a)) => export::run(a),
        Some(Cmd::Play(a)) => play::run(a),
        Some(Cmd::Serve(a)) => serve::run(a),
        Some(Cmd::Gen(a)) => generate::run(&a.dir),
    }
}
