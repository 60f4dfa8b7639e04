//! The commands. `run` is the one `match` over the parsed arguments; each file sets up one
//! command or two: `screen.rs` the screen (no subcommand) and `replay FILE`, `batch.rs`
//! `--batch`, `record.rs` `record`, `stream` and `replay --batch`, `connect.rs` `connect`, and one file each for `eat`, `play`,
//! `report`, `export`, `serve`, `__gen` and `__guard`. Each checks its arguments (`usage`: a
//! usage error, exit status 2) and hands the work on: to a shell (`shell::tui`,
//! `shell::headless`, the serve loop), to a guard, or to a writer (`report`, `export`,
//! `docs_gen`); `record.rs` runs its own sampling loop.
//!
//! Owns: which command runs, and turning flags into each command's options. The binary calls
//! `run` and prints what it returns with `exit::message` and `exit::code`; batch mode, `play`
//! and `record` exit with status 1 themselves when a run fails after its output is printed.
//! The helpers the commands share, `usage`, `read_recording` and `damage`/`end_of` (a damaged
//! recording exits 1 once what precedes the damage is shown), live in `screen.rs` and are
//! re-exported here. Must not touch: the pure layers' state (each command hands its shell
//! what it needs).

pub mod batch;
pub mod connect;
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
pub(crate) use screen::{damage, end_of, note_unresolved, read_recording, usage};

/// Runs the command `args` names.
pub fn run(args: &Args) -> Result<()> {
    crate::malloc::keep_small();
    // Each command runs in a frame of its own: called through an opaque pointer, no command's
    // body is inlined here. With all fourteen inlined this frame was 86 KB, and a frame's
    // pages are all touched on entry (stack probes), so every command kept 86 KB of stack
    // resident for its whole run, the screen's own needs included (issue 52: RSS).
    let command: Box<dyn FnOnce() -> Result<()> + '_> = match &args.cmd {
        None if args.batch => Box::new(|| batch::run(args)),
        None => Box::new(|| screen::run(args)),
        Some(Cmd::Eat(a)) => Box::new(|| eat::run(a)),
        Some(Cmd::Guard(a)) => Box::new(|| guard::run(a)),
        Some(Cmd::Record(a)) => Box::new(|| record::record(a)),
        Some(Cmd::Replay(a)) if a.batch => Box::new(|| record::replay_batch(a)),
        Some(Cmd::Replay(a)) => Box::new(|| screen::replay(args, a)),
        Some(Cmd::Report(a)) => Box::new(|| report::run(a)),
        Some(Cmd::Export(a)) => Box::new(|| export::run(a)),
        Some(Cmd::Play(a)) => Box::new(|| play::run(a)),
        Some(Cmd::Serve(a)) => Box::new(|| serve::run(a)),
        Some(Cmd::Stream(a)) => Box::new(|| record::stream(a)),
        Some(Cmd::Connect(a)) => Box::new(|| connect::run(args, a)),
        Some(Cmd::Gen(a)) => Box::new(|| generate::run(&a.dir)),
    };
    std::hint::black_box(command)()
}
