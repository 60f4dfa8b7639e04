//! The link to another machine's `pagewatch stream`: the system's `ssh` run as a child
//! (`ssh -T -o BatchMode=yes HOST pagewatch stream`, or the user's `--ssh-command`), its stdout
//! followed as a recording (`record::Follower`), its stderr kept to explain a failure. As a
//! `Source` (`RemoteSource`) it feeds the one sampler loop, so the screen, batch, `--record`
//! and `--listen` run on a remote machine as on the local /proc.
//!
//! The remote side paces the samples: `next_sample` blocks until the next one arrives. A
//! broken stream is a sample error that names the host and the time it was lost; the next read
//! reconnects after a backoff (1, 2, 4 … 30 s), each failure another sample error, so the
//! screen keeps its history and says what is going on.
//!
//! Owns: the ssh child processes and their pipes. Must not touch: the stream's bytes
//! (`record::stream`), the app.

use std::io::Read;
use std::io::Write;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::app::REMOTE_LOST as LOST;
use crate::record::{Followed, Follower, Header, StreamError};
use crate::sample::RawSample;
use crate::source::{Clock, Source, SystemClock};

/// How to reach one remote machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The host as the user gave it.
    pub host: String,
    /// The ssh command and its options, split into words (`ssh -T -o BatchMode=yes`).
    pub ssh: Vec<String>,
    /// pagewatch's path on the remote machine (`pagewatch`: found on its PATH).
    pub remote_path: String,
    /// Run the remote side through `sudo -n` (root there: the tracepoint).
    pub sudo: bool,
    /// Seconds between the remote's samples.
    pub interval_s: f64,
    /// `--allow-actions`: the remote carries out the requests sent on its stdin
    /// (`stream --actions`).
    pub actions: bool,
}

/// The ssh command `connect` runs when `--ssh-command` is not given.
pub const DEFAULT_SSH: &str = "ssh -T -o BatchMode=yes";

impl Target {
    /// The command line run on the remote machine.
    #[must_use]
    pub fn remote_command(&self) -> String {
        let sudo = if self.sudo { "sudo -n " } else { "" };
        let actions = if self.actions { " --actions" } else { "" };
        format!(
            "{sudo}{} stream --interval {}{actions}",
            quote(&self.remote_path),
            self.interval_s
        )
    }

    fn command(&self) -> Command {
        let (prog, opts) = self
            .ssh
            .split_first()
            .map_or(("ssh", &[][..]), |(p, o)| (p, o));
        let mut cmd = Command::new(prog);
        cmd.args(opts).arg(&self.host).arg(self.remote_command());
        cmd
    }
}

/// `word` for a POSIX shell: as is when it is plain, else in single quotes.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && (word.bytes()).all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// One running ssh child and the stream it carries.
pub struct Link {
    child: Child,
    follower: Follower<ChildStdout>,
}

impl Link {
    /// Runs ssh and reads the stream's header. The error says in plain words why not: ssh
    /// failed (its own words), the remote has no pagewatch, sudo asked for a password, or the
    /// remote's format is newer.
    pub fn open(t: &Target) -> Result<Link, String> {
        let mut child = t
            .command()
            // With actions the pipe carries the requests, and its closing (this process gone)
            // tells the remote to stop its jobs.
            .stdin(if t.actions {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run `{}`: {e}", t.ssh.join(" ")))?;
        let said = keep_stderr(&mut child);
        let Some(out) = child.stdout.take() else {
            return Err("ssh's stdout is not a pipe".to_owned());
        };
        match Follower::open(out) {
            Ok(follower) => Ok(Link { child, follower }),
            Err(e) => {
                let _ = child.kill();
                let status = child.wait().ok().and_then(|s| s.code());
                let said = said.join().unwrap_or_default();
                Err(explain(t, &e, status, said.trim()))
            }
        }
    }

    /// The remote's header.
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.follower.header
    }

    /// The pipe to the remote's stdin (`--allow-actions`), once.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// The next sample, waiting for it; `Err` when the stream stopped.
    fn sample(&mut self) -> Result<RawSample, String> {
        loop {
            match self.follower.follow() {
                Ok(Followed::Sample(s)) => return Ok(s),
                Ok(Followed::Event(_)) => {}
                Ok(Followed::End) => return Err("the remote pagewatch ended its stream".into()),
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads the child's stderr on a thread (so a chatty remote never blocks on a full pipe),
/// keeping its last 2 KiB.
fn keep_stderr(child: &mut Child) -> std::thread::JoinHandle<String> {
    let err = child.stderr.take();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let Some(mut err) = err else {
            return String::new();
        };
        let mut buf = [0u8; 1024];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            let over = kept.len().saturating_sub(2048);
            kept.drain(..over);
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// Why a link did not open, for the user.
fn explain(t: &Target, e: &StreamError, status: Option<i32>, said: &str) -> String {
    let host = &t.host;
    let said_text = if said.is_empty() {
        String::new()
    } else {
        format!(" (it said: {})", said.replace('\n', " / "))
    };
    let missing = status == Some(127)
        || said.contains("command not found")
        || said.contains("No such file or directory");
    match e {
        StreamError::TooNew { .. } => format!("{host}: {e}"),
        _ if t.sudo && said.contains("sudo") => format!(
            "`sudo -n` on {host} did not run pagewatch{said_text}; allow it without a password \
             there, or connect without --sudo"
        ),
        _ if missing => format!(
            "{host} has no pagewatch at `{}`{said_text}; install it there, give its path with \
             --remote-path, or add --copy to copy this binary there",
            t.remote_path
        ),
        _ if status == Some(255) => format!("ssh to {host} failed{said_text}"),
        _ => format!(
            "{host}: {e} (the remote command exited with {}){said_text}",
            status.map_or_else(|| "a signal".to_owned(), |c| format!("status {c}"))
        ),
    }
}

/// A remote machine's samples as a `Source`: blocks until each arrives; reconnects after a
/// backoff when the stream breaks.
pub struct RemoteSource {
    target: Target,
    link: Option<Link>,
    /// When the connection was lost (wall ms), while it is.
    lost_ms: Option<i64>,
    /// Reconnections tried since it was lost.
    tries: u32,
    /// Where each new link's stdin goes (`--allow-actions`).
    requests: Option<Requests>,
}

/// The requests pipe to a remote `pagewatch stream --actions` (`jobs::requests`), shared
/// between the screen's effects and the source, which puts each new link's pipe in it.
#[derive(Debug, Clone, Default)]
pub struct Requests(Arc<Mutex<Option<ChildStdin>>>);

impl Requests {
    fn set(&self, pipe: Option<ChildStdin>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = pipe;
    }

    /// Sends `cmd` to the remote; why not, for the user, when it is not forwarded or the
    /// connection is down.
    pub fn send(&self, cmd: &crate::jobs::protocol::JobCmd) -> Result<(), String> {
        let Some(line) = crate::jobs::requests::line(cmd) else {
            return Err(
                "connected: only eat memory, stop and drop caches are carried out on the remote"
                    .to_owned(),
            );
        };
        let mut pipe = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let sent = (pipe.as_mut()).map(|p| p.write_all(format!("{line}\n").as_bytes()));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err("the connection is down: the request was not sent".to_owned()),
        }
    }
}

impl RemoteSource {
    /// A source over an open link.
    #[must_use]
    pub fn new(target: Target, link: Link) -> Self {
        Self {
            target,
            link: Some(link),
            lost_ms: None,
            tries: 0,
            requests: None,
        }
    }

    /// The requests pipe of this source's links, from the first on (`--allow-actions`).
    #[must_use]
    pub fn with_requests(mut self) -> (Self, Requests) {
        let r = Requests::default();
        r.set(self.link.as_mut().and_then(Link::take_stdin));
        self.requests = Some(r.clone());
        (self, r)
    }

    fn lost(&self, why: &str) -> crate::Error {
        let at = crate::fmt::ClockUtc(self.lost_ms.unwrap_or_default());
        crate::Error::Remote(format!(
            "{LOST}{} lost at {at} UTC ({why}); reconnecting in {} s",
            self.target.host,
            backoff(self.tries).as_secs()
        ))
    }
}

/// The wait before reconnection `tries` (counted from 0): 1, 2, 4 … 30 s.
fn backoff(tries: u32) -> Duration {
    Duration::from_secs((1u64 << tries.min(5)).min(30))
}

impl Source for RemoteSource {
    fn next_sample(&mut self) -> crate::Result<Option<RawSample>> {
        let Some(link) = &mut self.link else {
            std::thread::sleep(backoff(self.tries));
            self.tries += 1;
            match Link::open(&self.target) {
                Ok(mut l) => {
                    if let Some(r) = &self.requests {
                        r.set(l.take_stdin());
                    }
                    self.link = Some(l);
                }
                Err(why) => return Err(self.lost(&format!("reconnecting failed: {why}"))),
            }
            return self.next_sample();
        };
        match link.sample() {
            Ok(s) => {
                self.lost_ms = None;
                self.tries = 0;
                Ok(Some(s))
            }
            Err(why) => {
                self.link = None;
                if let Some(r) = &self.requests {
                    r.set(None);
                }
                self.lost_ms = Some(SystemClock.wall_ms());
                Err(self.lost(&why))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(ssh: &str) -> Target {
        Target {
            host: "db1".into(),
            ssh: ssh.split_whitespace().map(str::to_owned).collect(),
            remote_path: "/opt/page watch".into(),
            sudo: true,
            interval_s: 1.0,
            actions: false,
        }
    }

    #[test]
    fn the_remote_command_is_quoted_for_the_remote_shell() {
        assert_eq!(
            target(DEFAULT_SSH).remote_command(),
            "sudo -n '/opt/page watch' stream --interval 1"
        );
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("/usr/bin/pagewatch"), "/usr/bin/pagewatch");
    }

    #[test]
    fn a_remote_without_pagewatch_is_named_and_the_ways_out_given() {
        // `sh` plays ssh: `sh db1 CMD` fails to open a script named db1, as a remote shell
        // fails to find pagewatch.
        let mut t = target("sh -c");
        t.sudo = false;
        t.host = "exit 127; :".into();
        let e = Link::open(&t).err().unwrap_or_default();
        assert!(
            e.contains("has no pagewatch") && e.contains("--copy"),
            "{e}"
        );
    }

    #[test]
    fn reconnections_back_off_to_half_a_minute() {
        let waits: Vec<u64> = (0..8).map(|t| backoff(t).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
