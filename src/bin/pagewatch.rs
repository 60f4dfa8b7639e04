//! The binary: parse the arguments and run the command (`pagewatch::cmd::run`). Owns nothing
//! else.

use clap::Parser;
use pagewatch::cli::Args;

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    match pagewatch::cmd::run(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // Printed here, not returned: `main`'s report would add a backtrace whenever
            // RUST_BACKTRACE is set (see `pagewatch::exit`).
            eprint!("{}", pagewatch::exit::message(&e));
            std::process::ExitCode::from(pagewatch::exit::code(&e))
        }
    }
}
