//! An sshd of the test's own for `pagewatch connect`: `sshd -D` on 127.0.0.1 at a free high
//! port, with a throwaway host key, client key and authorized key in a temporary directory.
//! It never touches the system's sshd (port 22, /etc/ssh's keys): `bash .ci/run` installs
//! openssh-server with services kept from starting (policy-rc.d), and this starts its own.
//!
//! `Sshd::start` returns why not when it cannot run (no sshd or ssh-keygen, not root).

#![allow(clippy::unwrap_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running sshd, killed when dropped.
pub struct Sshd {
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Child,
}

const SSHD: &str = "/usr/sbin/sshd";

impl Sshd {
    /// Starts it, or says why it cannot.
    pub fn start() -> Result<Sshd, String> {
        if !Path::new(SSHD).exists() {
            return Err(format!(
                "{SSHD} is missing (openssh-server: bash .ci/run installs it)"
            ));
        }
        if !rustix::process::geteuid().is_root() {
            return Err("sshd for the test needs root".into());
        }
        let dir = tempfile::Builder::new()
            .prefix("pw-sshd")
            .tempdir()
            .unwrap();
        // The remote side may run as nobody (`as_nobody`): it must read the keys' directory.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let base = dir.path().to_owned();
        let p = |n: &str| base.join(n);
        for key in ["host_key", "id"] {
            let ok = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(p(key))
                .status()
                .map_err(|e| format!("ssh-keygen: {e}"))?;
            assert!(ok.success());
        }
        std::fs::copy(p("id.pub"), p("authorized_keys")).unwrap();
        // sshd's privilege separation directory (the package makes it at boot).
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
             PidFile none\nStrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nLogLevel ERROR\n",
            p("host_key").display(),
            p("authorized_keys").display()
        );
        std::fs::write(p("sshd_config"), config).unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(p("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(p("sshd.log")).unwrap())
            .spawn()
            .map_err(|e| format!("{SSHD}: {e}"))?;
        let s = Sshd { port, dir, child };
        let end = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > end {
                let log = std::fs::read_to_string(p("sshd.log")).unwrap_or_default();
                return Err(format!("sshd did not listen on {port}: {log}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(s)
    }

    /// The `--ssh-command` that reaches it.
    pub fn ssh_command(&self) -> String {
        format!(
            "ssh -T -p {} -i {} -o BatchMode=yes -o StrictHostKeyChecking=no \
             -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
            self.port,
            self.dir.path().join("id").display()
        )
    }

    /// A file in its directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A `--remote-path` script that records its pid in `NAME.pid` and runs the built binary
    /// (as `nobody` with `as_nobody`), so a test can kill the remote side.
    pub fn remote(&self, name: &str, as_nobody: bool) -> String {
        let bin = env!("CARGO_BIN_EXE_pagewatch");
        let pid = self.path(&format!("{name}.pid"));
        let run = if as_nobody {
            format!("runuser -u nobody -- {bin}")
        } else {
            bin.to_owned()
        };
        let script = format!(
            "#!/bin/sh\necho $$ > {}\nexec {run} \"$@\"\n",
            pid.display()
        );
        let path = self.path(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        path.display().to_string()
    }

    /// The bytes the client side of every connection to this sshd has received so far
    /// (`ss -ti`'s `bytes_received`).
    pub fn bytes_received(&self) -> u64 {
        let out = Command::new("ss")
            .args(["-tinH", "state", "established", "dst"])
            .arg(format!("127.0.0.1:{}", self.port))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .filter_map(|w| w.strip_prefix("bytes_received:"))
            .filter_map(|n| n.parse::<u64>().ok())
            .sum()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    l.local_addr().unwrap().port()
}
