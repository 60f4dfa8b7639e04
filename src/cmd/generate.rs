//! `pagewatch __gen DIR`: the man pages and shell completions, generated from the CLI
//! definition (the Debian package ships them).
//!
//! Owns: where the files go. Must not touch: their text (`docs_gen`).

use anyhow::{Context, Result};

/// `pagewatch __gen DIR`: the man pages in DIR/man/man1 (so `MANPATH=DIR/man` finds them),
/// the completions in DIR/completions.
pub fn run(dir: &std::path::Path) -> Result<()> {
    for (sub, files) in [
        ("man/man1", crate::docs_gen::man_pages()),
        ("completions", crate::docs_gen::completions()),
    ] {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        for (name, text) in files {
            let p = d.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
        }
    }
    Ok(())
}
