//! How pagewatch ends on an error: one line naming what failed (the whole chain of causes,
//! outermost first), one hint line, and an exit code that tells a usage error (2, as clap
//! exits for a bad flag) from a failure at run time (1).
//!
//! The binary prints this itself rather than returning the error from `main`: `main`'s
//! default report is anyhow's `Debug` form, which adds a Rust backtrace whenever
//! `RUST_BACKTRACE` is set. Owns: the wording and the codes. Must not touch: stderr (the
//! binary writes what this returns).

use std::fmt;
use std::io::ErrorKind;

/// Exit code of a usage error: a flag or argument that cannot work (clap uses 2 too).
pub const USAGE: u8 = 2;

/// Exit code of a failure at run time: a file that cannot be read, a terminal that cannot
/// show the screen, a recording that is damaged.
pub const FAILURE: u8 = 1;

/// A usage error found after clap parsed the arguments (flags that clash, a bad value clap
/// cannot check): exits with `USAGE`.
#[derive(Debug)]
pub struct Usage(pub String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A failure that knows its hint, where the io error kind alone would give the wrong one
/// (binding a port below 1024 is `PermissionDenied`, but no file's owner can help).
#[derive(Debug)]
pub struct Hinted {
    /// What was being done (`listening on 127.0.0.1:80 for /metrics`).
    pub what: String,
    /// The hint line, in place of the one for `source`'s kind.
    pub hint: &'static str,
    /// Why it failed.
    pub source: std::io::Error,
}

impl fmt::Display for Hinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)
    }
}

impl std::error::Error for Hinted {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A recording read up to damage (`Recording::damaged`), after the command showed what
/// precedes it: exits with `FAILURE`, as README's exit-status table says of a damaged
/// recording, whatever the command managed to show.
#[derive(Debug)]
pub struct Damaged {
    /// The recording's path, as given.
    pub path: String,
    /// The samples before the damage, which the command used.
    pub kept: usize,
}

impl fmt::Display for Damaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is damaged: only the {} sample(s) before the damage were used",
            self.path, self.kept
        )
    }
}

impl std::error::Error for Damaged {}

/// The exit code for `err`: `USAGE` when a `Usage` error is anywhere in its chain.
#[must_use]
pub fn code(err: &anyhow::Error) -> u8 {
    if err.chain().any(<dyn std::error::Error>::is::<Usage>) {
        USAGE
    } else {
        FAILURE
    }
}

/// What to print for `err`: `pagewatch: error: outer: inner: cause` and a hint line, each
/// ending in a newline. Never a backtrace.
#[must_use]
pub fn message(err: &anyhow::Error) -> String {
    let mut line = String::from("pagewatch: error: ");
    let mut first = true;
    for cause in err.chain() {
        let text = cause.to_string();
        // A context that repeats its cause's text adds nothing.
        if !first && line.ends_with(&text) {
            continue;
        }
        if !first {
            line.push_str(": ");
        }
        line.push_str(text.trim_end());
        first = false;
    }
    // One line: causes that span lines (a parser's report) are joined.
    let mut out: String = line.lines().collect::<Vec<_>>().join(" ");
    out.push('\n');
    out.push_str("hint: ");
    out.push_str(hint(err));
    out.push('\n');
    out
}

/// A hint for the kind of failure: the io error kind when there is one, else where the
/// options are described.
fn hint(err: &anyhow::Error) -> &'static str {
    if code(err) == USAGE {
        return "`pagewatch --help` lists the options; `man pagewatch` explains them";
    }
    if let Some(h) = err.chain().find_map(|e| e.downcast_ref::<Hinted>()) {
        return h.hint;
    }
    if err.chain().any(<dyn std::error::Error>::is::<Damaged>) {
        return "the file changed after pagewatch wrote it (a disk or a copy went wrong): \
                nothing past the damage can be read; the warning above says where it starts";
    }
    let kind = err
        .chain()
        .find_map(|e| e.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    match kind {
        Some(ErrorKind::NotFound) => "check the path: it does not exist",
        Some(ErrorKind::PermissionDenied) => {
            "this needs more permission: run as the file's owner, or as root"
        }
        Some(ErrorKind::AlreadyExists) => "choose a new file name: pagewatch never overwrites",
        Some(ErrorKind::StorageFull | ErrorKind::QuotaExceeded) => {
            "the filesystem (or your quota) is full: free some space, or write to a directory \
             on another filesystem"
        }
        Some(ErrorKind::ReadOnlyFilesystem) => {
            "that filesystem is mounted read-only: write to a directory on a writable one"
        }
        _ => "`pagewatch --help` lists the options; `man pagewatch` explains them",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn one_line_chain_and_a_hint() {
        let io = std::io::Error::new(
            ErrorKind::NotFound,
            "No such file or directory (os error 2)",
        );
        let err = Err::<(), _>(io)
            .context("reading recording /x/y.pwrec")
            .unwrap_err();
        let m = message(&err);
        assert_eq!(
            m,
            "pagewatch: error: reading recording /x/y.pwrec: No such file or directory (os error \
             2)\nhint: check the path: it does not exist\n"
        );
        assert_eq!(code(&err), FAILURE);
    }

    /// Issue 51: a full disk and a read-only filesystem ended with the `--help` hint.
    #[test]
    fn a_full_or_read_only_filesystem_gets_its_own_hint() {
        for (errno, want) in [
            (
                libc::ENOSPC,
                "hint: the filesystem (or your quota) is full: free some space",
            ),
            (libc::EDQUOT, "hint: the filesystem (or your quota) is full"),
            (
                libc::EROFS,
                "hint: that filesystem is mounted read-only: write to a directory",
            ),
        ] {
            let err = Err::<(), _>(std::io::Error::from_raw_os_error(errno))
                .context("writing /x/y.pwrec")
                .unwrap_err();
            let m = message(&err);
            assert!(m.contains(want) && !m.contains("--help"), "{errno}: {m}");
            assert_eq!(code(&err), FAILURE);
        }
    }

    #[test]
    fn a_damaged_recording_exits_1_with_its_own_hint() {
        let err = anyhow::Error::new(Damaged {
            path: "/x/y.pwrec".into(),
            kept: 2,
        });
        assert_eq!(code(&err), FAILURE);
        let m = message(&err);
        assert!(
            m.starts_with(
                "pagewatch: error: /x/y.pwrec is damaged: only the 2 sample(s) before the \
                 damage were used\nhint: the file changed after pagewatch wrote it"
            ),
            "{m}"
        );
    }

    #[test]
    fn usage_errors_exit_2_wherever_they_are_in_the_chain() {
        let err = anyhow::Error::new(Usage("--eat needs live /proc".into())).context("starting");
        assert_eq!(code(&err), USAGE);
        assert!(message(&err).starts_with("pagewatch: error: starting: --eat needs live /proc\n"));
        let plain = anyhow::anyhow!("first line\nsecond line");
        assert_eq!(code(&plain), FAILURE);
        assert!(message(&plain).starts_with("pagewatch: error: first line second line\n"));
    }
}
