//! The commands: one file per subcommand, each validating its arguments, building its shell
//! and running it. `run` is the one `match` over `Cmd` (the binary calls it and nothing else).
//!
//! Owns: which command runs, the refusals that come before any sample is read or process
//! started, and reading a recording for the commands that take one. Must not touch: the pure
//! layers' state (each command hands its shell what it needs).

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

use anyhow::{Context, Result};

use crate::cli::{Args, Cmd};

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

/// A usage error (exit code 2).
pub(crate) fn usage(msg: &str) -> anyhow::Error {
    anyhow::Error::new(crate::exit::Usage(msg.to_owned()))
}

/// Reads a recording, printing what was skipped.
pub(crate) fn read_recording(path: &std::path::Path) -> Result<crate::record::Recording> {
    let rec = crate::record::read(path)
        .with_context(|| format!("reading recording {}", path.display()))?;
    for w in &rec.warnings {
        eprintln!("pagewatch: {}: {w}", path.display());
    }
    Ok(rec)
}
