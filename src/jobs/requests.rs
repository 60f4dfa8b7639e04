//! The requests a client sends a remote `pagewatch stream --actions` on its stdin (the ssh
//! channel), one line each: `eat ID SIZE [force]`, `stop ID`, `drop LEVEL`. The remote runs
//! them with its own supervisor: its own refusals, locks and restore guard.
//!
//! Owns: the request lines, both ways. Must not touch: the pipe they travel on (the shell's
//! `remote` link, `cmd::record`'s stream).

use super::protocol::JobCmd;

/// The line for `cmd` (without its newline); `None` for a command not forwarded (fio,
/// settings, reads of the client's own /proc).
#[must_use]
pub fn line(cmd: &JobCmd) -> Option<String> {
    match cmd {
        JobCmd::StartEat { id, size, force } => {
            let force = if *force { " force" } else { "" };
            Some(format!("eat {id} {size}{force}"))
        }
        JobCmd::StopJob(id) => Some(format!("stop {id}")),
        JobCmd::DropCaches(level) => Some(format!("drop {level}")),
        _ => None,
    }
}

/// The command a request line asks for, or why it is not one.
pub fn parse(line: &str) -> Result<JobCmd, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let num = |w: Option<&&str>| {
        w.and_then(|w| w.parse::<u32>().ok())
            .ok_or_else(|| format!("request {line:?}: a number is missing"))
    };
    match words.first().copied() {
        Some("eat") => {
            let size = words
                .get(2)
                .ok_or_else(|| format!("request {line:?}: no size"))?;
            Ok(JobCmd::StartEat {
                id: num(words.get(1))?,
                size: (*size).to_owned(),
                force: words.get(3) == Some(&"force"),
            })
        }
        Some("stop") => Ok(JobCmd::StopJob(num(words.get(1))?)),
        Some("drop") => match num(words.get(1))? {
            l @ (1 | 3) => Ok(JobCmd::DropCaches(l as u8)),
            l => Err(format!("request {line:?}: drop level {l}, not 1 or 3")),
        },
        _ => Err(format!(
            "request {line:?}: not one of eat, stop, drop (this pagewatch is older?)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_go_and_come_back_the_same() {
        for cmd in [
            JobCmd::StartEat {
                id: 3,
                size: "64M".into(),
                force: false,
            },
            JobCmd::StartEat {
                id: 4,
                size: "90%".into(),
                force: true,
            },
            JobCmd::StopJob(3),
            JobCmd::DropCaches(1),
        ] {
            let l = line(&cmd).unwrap_or_default();
            assert_eq!(parse(&l), Ok(cmd), "{l}");
        }
        assert_eq!(line(&JobCmd::ReadStack(1)), None);
        assert!(parse("fio 1 randread").is_err());
        assert!(parse("drop 2").is_err());
        assert!(parse("eat x 1G").is_err());
    }
}
