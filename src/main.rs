//! The binary: parse arguments, build the source, run. Owns nothing else.

use std::io::Write;

use anyhow::{Context, Result};
use clap::Parser;
use pagewatch::cli::Args;
use pagewatch::model::Options;
use pagewatch::source::{FsSource, Source, SystemClock, Ticker, TreeSource};

fn main() -> Result<()> {
    let args = Args::parse();
    let opts = Options {
        partitions: args.partitions,
    };
    let mut source: Box<dyn Source> = if let Some(dir) = &args.tree {
        Box::new(TreeSource::open(dir).with_context(|| format!("opening tree {}", dir.display()))?)
    } else {
        let proc_root = args.proc_root.clone().unwrap_or_else(|| "/proc".into());
        let sys_root = args.sys_root.clone().unwrap_or_else(|| "/sys".into());
        Box::new(FsSource::new(proc_root, sys_root, Box::new(SystemClock)))
    };
    // Captured sequences carry their own time: no waiting between them.
    let mut ticker = Ticker::new(args.interval);
    let paced = args.tree.is_none();
    let mut wait = || {
        if paced {
            ticker.wait();
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr();
    let summary = pagewatch::batch::run(
        source.as_mut(),
        args.count,
        args.format,
        opts,
        &mut out,
        &mut err,
        &mut wait,
    );
    match summary {
        Ok(s) if s.errors > 0 => {
            let _ = err.flush();
            std::process::exit(1);
        }
        Ok(_) => Ok(()),
        // A closed pipe (`pagewatch --batch | head`) is a normal way to stop.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e).context("writing output"),
    }
}
