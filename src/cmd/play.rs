//! `pagewatch play NAME|FILE`: lists, shows or runs a playbook headless.
//!
//! Owns: the command's choices (`--list`, `--show`, `--scale`, the refusal to overwrite
//! `--record`'s file). Must not touch: the run itself (`shell::headless`).

use anyhow::{Result, bail};

use crate::play::Playbook;
use crate::shell::headless::{PlayOptions, play};

/// `pagewatch play`: lists, shows or runs a playbook (a built-in's name or a file).
pub fn run(a: &crate::cli::PlayArgs) -> Result<()> {
    if a.list {
        use std::fmt::Write as _;
        let mut text = String::new();
        for b in crate::play::builtin::all()? {
            let _ = writeln!(text, "{:<22} {}", b.name, b.description);
        }
        return Ok(crate::batch::print_stdout(&text)?);
    }
    let Some(what) = &a.playbook else {
        bail!("name a playbook (pagewatch play --list) or a playbook file");
    };
    let (text, book) = match crate::play::builtin::text(what) {
        Some(t) => (
            t.to_owned(),
            Playbook::parse(t).map_err(|e| anyhow::anyhow!("{what}: {e}"))?,
        ),
        None if std::fs::symlink_metadata(what).is_err() => {
            bail!("{what} is neither a built-in playbook (pagewatch play --list) nor a file")
        }
        None => {
            let text = crate::play::file::read_text(std::path::Path::new(what))?;
            let origin = format!("playbook {what}");
            let book = Playbook::parse(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", crate::fmt::escape_controls(&origin)))?;
            (text, book.with_origin(&origin))
        }
    };
    if a.show {
        // The file as it is, but no control character reaches the terminal.
        return Ok(crate::batch::print_stdout(
            &crate::fmt::escape_controls_multiline(&text),
        )?);
    }
    if !(0.01..=10.0).contains(&a.scale) {
        bail!("--scale must be between 0.01 and 10");
    }
    let book = if (a.scale - 1.0).abs() > f64::EPSILON {
        book.scaled(a.scale)
    } else {
        book
    };
    if let Some(p) = &a.record
        && p.exists()
    {
        bail!(
            "--record {}: the file exists; pagewatch never overwrites a file",
            p.display()
        );
    }
    let scaled = (a.scale - 1.0).abs() > f64::EPSILON;
    let out = play(
        &book,
        &PlayOptions {
            record: a.record.clone(),
            json: a.format == crate::cli::Format::Json,
            fio_dir: a.fio_dir.clone(),
            interval: a.interval,
            accept_wbt_manual: a.accept_wbt_manual,
        },
    )
    .map_err(|e| {
        if scaled
            && e.downcast_ref::<crate::shell::headless::LastingRefused>()
                .is_none()
        {
            anyhow::anyhow!("{e:#} (--scale {} scaled the sizes)", a.scale)
        } else {
            e
        }
    })?;
    if let Some(e) = out.error {
        eprintln!("pagewatch play: {} stopped: {e}", book.name);
        std::process::exit(1);
    }
    Ok(())
}
