//! `pagewatch --batch`: the figures as text or JSON, one sample per interval, without the
//! screen.
//!
//! Owns: batch mode's refusals (it starts no jobs, runs no playbook, records nothing) and its
//! pacing. Must not touch: what a sample prints (`batch`).

use std::io::Write;

use anyhow::Result;

use super::usage;
use crate::cli::Args;
use crate::model::Options;
use crate::source::{Source, Ticker};

/// `pagewatch --batch`: refuses what batch mode does not do, then prints the samples.
pub fn run(args: &Args) -> Result<()> {
    refuse_batch_jobs(args)?;
    let (source, _) = super::screen::source(args)?;
    if args.tree.is_none() {
        let sys = args
            .sys_root
            .as_deref()
            .unwrap_or(std::path::Path::new("/sys"));
        super::note_unresolved(sys, &args.latency);
    }
    batch(args, source)
}

fn batch(args: &Args, mut source: Box<dyn Source + Send>) -> Result<()> {
    // Captured sequences carry their own time: no waiting between them.
    let mut ticker = Ticker::on_the_clock(args.batch_interval());
    let paced = args.tree.is_none();
    let mut wait = || {
        if paced {
            ticker.wait();
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr();
    let opts = Options {
        partitions: args.partitions,
    };
    // What is measured follows what happens (`model::who::Gate`), not `--view`, which only
    // picks the screen's view: the process walk when there is something to attribute, the
    // sync syscalls (root) while writers are throttled, for `processes[]`'s fsync figures.
    let view = crate::model::who::View {
        latency: args.latency.clone(),
        queue_time: args.queue_time,
        detail: args.below,
        ..crate::model::who::View::default()
    };
    let summary = crate::batch::run_viewing(
        source.as_mut(),
        args.count,
        args.format,
        opts,
        &view,
        &mut out,
        &mut err,
        &mut wait,
    );
    if crate::batch::failed(summary)? {
        let _ = err.flush();
        std::process::exit(1);
    }
    Ok(())
}

/// Batch mode only prints figures: it refuses jobs, playbooks, a recording and a listener
/// rather than ignoring them, before any sample is read or any process started.
fn refuse_batch_jobs(args: &Args) -> Result<()> {
    if let Some(p) = &args.play {
        return Err(usage(&format!(
            "--batch does not run playbooks, so it refuses --play {p}; run it headless with \
             `pagewatch play {p} --format json` (add `--record FILE` to record it)"
        )));
    }
    let mut asked: Vec<String> = Vec::new();
    asked.extend(args.eat.iter().map(|e| format!("--eat {e}")));
    asked.extend(args.fio.iter().map(|f| format!("--fio {f}")));
    if let Some(d) = &args.fio_dir {
        asked.push(format!("--fio-dir {}", d.display()));
    }
    if args.keep_fio_files {
        asked.push("--keep-fio-files".to_owned());
    }
    asked.extend((args.playbooks.iter()).map(|p| format!("--playbook {}", p.display())));
    if (args.play_scale - 1.0).abs() > f64::EPSILON {
        asked.push(format!("--play-scale {}", args.play_scale));
    }
    if !asked.is_empty() {
        return Err(usage(&format!(
            "--batch only prints figures and starts no jobs, so it refuses {}; run an \
             experiment headless with `pagewatch play NAME|FILE [--record FILE]` (`pagewatch \
             play --list`), or drop --batch to start jobs in the screen",
            asked.join(" ")
        )));
    }
    if let Some(r) = &args.record {
        return Err(usage(&format!(
            "--batch does not record, so it refuses --record {}; use `pagewatch record {0}`",
            r.display()
        )));
    }
    if let Some(l) = args.listen {
        return Err(usage(&format!(
            "--batch serves no figures, so it refuses --listen {l}; use `pagewatch serve \
             --listen {l}`"
        )));
    }
    Ok(())
}
