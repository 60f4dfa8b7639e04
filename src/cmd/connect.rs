//! `pagewatch connect HOST...`: other machines' streams (`pagewatch stream` run there over the
//! system's ssh) fed to the same screen, batch output and `--record` as the local /proc.
//!
//! Owns: turning `connect`'s flags into ssh targets, opening the first link of each (copying
//! the binary over with `--copy` where the remote has none), and handing the streams to the
//! screen (`shell::tui`), the fleet screen or batch mode. Must not touch: ssh's pipes and the
//! reconnection (`shell::remote`), the stream's bytes (`record::stream`).

use std::io::Write;

use anyhow::{Context, Result};

use super::screen::{look, saved_settings};
use super::usage;
use crate::app::fleet::{Fleet, Host};
use crate::app::{App, Caps, Remote};
use crate::cli::{Args, ConnectArgs};
use crate::shell::remote::{DEFAULT_SSH, Link, RemoteSource, Target};
use crate::shell::tui::Feed;

/// Runs `connect`.
pub fn run(args: &Args, a: &ConnectArgs) -> Result<()> {
    if a.batch {
        for (flag, set) in [
            ("--record", a.record.is_some()),
            ("--listen", a.listen.is_some()),
        ] {
            if set {
                return Err(usage(&format!(
                    "connect --batch only prints figures, so it refuses {flag}; drop --batch"
                )));
            }
        }
        return batch(a);
    }
    if a.hosts.len() > 1 {
        if a.record.is_some() || a.listen.is_some() || a.allow_actions {
            return Err(usage(
                "--record, --listen and --allow-actions take one host: the fleet screen \
                 records nothing and starts nothing",
            ));
        }
        return fleet(args, a);
    }
    screen(args, a)
}

/// The ssh target of each host.
fn targets(a: &ConnectArgs) -> Vec<Target> {
    let ssh: Vec<String> = a
        .ssh_command
        .as_deref()
        .unwrap_or(DEFAULT_SSH)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    (a.hosts.iter())
        .map(|h| Target {
            host: h.clone(),
            ssh: ssh.clone(),
            remote_path: a.remote_path.clone(),
            sudo: a.sudo,
            interval_s: a.interval,
            actions: a.allow_actions,
        })
        .collect()
}

/// The first link to `t`; with `copy`, a remote without pagewatch gets this binary in its
/// temporary directory first (and `t` then names that copy).
fn open(t: &mut Target, copy: bool) -> Result<Link> {
    match Link::open(t) {
        Ok(l) => Ok(l),
        Err(why) if copy && why.contains("has no pagewatch") => {
            t.remote_path = copy_binary(t).with_context(|| format!("--copy to {}", t.host))?;
            eprintln!(
                "pagewatch: copied this binary to {}:{}",
                t.host, t.remote_path
            );
            Link::open(t).map_err(anyhow::Error::msg)
        }
        Err(why) => Err(anyhow::Error::msg(why)),
    }
}

/// Copies this binary into a new directory under the remote's temporary directory, over the
/// same ssh; its remote path.
fn copy_binary(t: &Target) -> Result<String> {
    let exe = std::env::current_exe().context("finding this binary")?;
    let file = std::fs::File::open(&exe).with_context(|| format!("opening {}", exe.display()))?;
    let script = "d=$(mktemp -d \"${TMPDIR:-/tmp}/pagewatch.XXXXXX\") && cat > \"$d/pagewatch\" \
                  && chmod 700 \"$d/pagewatch\" && echo \"$d/pagewatch\"";
    let (prog, opts) = t.ssh.split_first().context("an empty --ssh-command")?;
    let out = std::process::Command::new(prog)
        .args(opts)
        .arg(&t.host)
        .arg(script)
        .stdin(file)
        .output()
        .with_context(|| format!("running {prog}"))?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || !path.starts_with('/') {
        anyhow::bail!(
            "the copy failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(path)
}

/// One host's screen: the local screen's panes over the remote's samples, read-only.
fn screen(args: &Args, a: &ConnectArgs) -> Result<()> {
    let mut t = targets(a).remove(0);
    if let Some(p) = &a.record
        && p.exists()
    {
        anyhow::bail!(
            "--record {}: the file exists; pagewatch never overwrites a file",
            p.display()
        );
    }
    let link = open(&mut t, a.copy)?;
    let (config, file) = saved_settings(args);
    let settings = crate::config::with_flags(file.settings, args);
    let mut app = host_app(a, &t, &link, &settings);
    app.notice = file.notice;
    let source = RemoteSource::new(t, link);
    let (source, requests) = if a.allow_actions {
        let (s, r) = source.with_requests();
        (s, Some(r))
    } else {
        (source, None)
    };
    let feed = Feed::Source {
        source: Box::new(source),
        paced: false,
    };
    let opts = crate::shell::tui::Options {
        requests,
        record: a.record.clone(),
        listen: a.listen,
        config,
        mouse: settings.mouse.unwrap_or(true),
        ..crate::shell::tui::Options::default()
    };
    crate::shell::tui::run(app, feed, opts)
}

/// The app of one connected host: the local screen's settings, the remote's header, and
/// read-only.
fn host_app(a: &ConnectArgs, t: &Target, link: &Link, settings: &crate::config::Settings) -> App {
    let header = link.header();
    let mut app = App::new(
        header.host.clone(),
        look(a.ascii, settings),
        header.interval_s,
    );
    app.use_settings(settings);
    app.ui.partitions |= a.partitions;
    let read_only = format!("connected to {}: read-only", t.host);
    app.caps = Caps {
        // With --allow-actions the remote refuses what it cannot do, in its own words.
        drop_caches: (!t.actions).then(|| read_only.clone()),
        experiments: t.actions,
        tune: Some(read_only),
        remote: Some(Remote {
            host: t.host.clone(),
            privilege: header
                .privilege
                .clone()
                .unwrap_or_else(|| "wchan".to_owned()),
            actions: t.actions,
        }),
        ..Caps::default()
    };
    app
}

/// The fleet: one line a host, each host's stream feeding its own app; `Enter` opens a
/// host's screen.
fn fleet(args: &Args, a: &ConnectArgs) -> Result<()> {
    let (_, file) = saved_settings(args);
    let settings = crate::config::with_flags(file.settings, args);
    let mut hosts = Vec::new();
    let mut sources = Vec::new();
    for mut t in targets(a) {
        let link = open(&mut t, a.copy)?;
        hosts.push(Host {
            name: t.host.clone(),
            app: host_app(a, &t, &link, &settings),
        });
        sources.push(RemoteSource::new(t, link));
    }
    crate::shell::fleet::run(Fleet::new(hosts), sources)
}

/// `connect --batch`: every host's records, one per host per interval, each with `host` set,
/// printed whole as they come (one thread a host).
fn batch(a: &ConnectArgs) -> Result<()> {
    let mut links = Vec::new();
    for mut t in targets(a) {
        let link = open(&mut t, a.copy)?;
        links.push((t, link));
    }
    let opts = crate::model::Options {
        partitions: a.partitions,
    };
    let failed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for (t, link) in links {
            let failed = &failed;
            s.spawn(move || {
                let host = t.host.clone();
                let mut source = RemoteSource::new(t, link);
                let mut out = Whole(Vec::new());
                let mut err = std::io::stderr();
                let to = crate::batch::Output {
                    out: &mut out,
                    err: &mut err,
                    wait: &mut || {},
                };
                let summary =
                    crate::batch::run_host(&mut source, &host, a.count, a.format, opts, to);
                if crate::batch::failed(summary).unwrap_or(true) {
                    failed.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    if failed.into_inner() {
        std::process::exit(1);
    }
    Ok(())
}

/// Stdout for one of several threads: each record is kept until the flush that ends it, then
/// written whole, so the hosts' lines never interleave.
struct Whole(Vec<u8>);

impl Write for Whole {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(&self.0)?;
        self.0.clear();
        out.flush()
    }
}
