//! A tmux session for end-to-end tests: start a shell in a real terminal, send keys, read the
//! screen, wait for text.

#![allow(clippy::unwrap_used, dead_code)]

use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

/// A tmux server of its own (`-L NAME`), killed when dropped.
pub struct Session(pub String);

impl Session {
    pub fn tmux(&self, args: &[&str]) -> String {
        // The server (started by the first command) passes this to the pane's shell: each
        // session's pagewatch saves its settings in a directory of its own, never in the
        // user's ~/.config, so no test starts with another's sort or view.
        let out = Command::new("tmux")
            .args(["-u", "-L", &self.0])
            .args(args)
            .env("XDG_CONFIG_HOME", self.config_home())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "pw"])
    }
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "pw"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }
    /// Waits until the screen contains `needle`; panics with the screen after `secs`.
    pub fn wait_for(&self, needle: &str, secs: u64) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.screen();
            if s.contains(needle) {
                return s;
            }
            assert!(Instant::now() < end, "screen never showed {needle:?}:\n{s}");
            sleep(Duration::from_millis(100));
        }
    }
}

impl Session {
    /// The XDG config directory of this session's programs (removed with the session).
    pub fn config_home(&self) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("{}-config", self.0))
    }

    /// A new session `pw`, `w`x`h`, whose pane runs bash and then `cmd`; the pane stays when
    /// the shell exits, so its last screen can still be read.
    pub fn start(name: String, w: u16, h: u16, cmd: &str) -> Self {
        let s = Session(name);
        let size = [w.to_string(), h.to_string()];
        s.tmux(&[
            "new-session",
            "-d",
            "-s",
            "pw",
            "-x",
            &size[0],
            "-y",
            &size[1],
            "bash",
            "--norc",
        ]);
        s.tmux(&["set-option", "-t", "pw", "remain-on-exit", "on"]);
        s.keys(&[cmd, "Enter"]);
        s
    }

    /// Waits until the screen no longer contains `needle`.
    pub fn wait_for_not(&self, needle: &str, secs: u64) {
        let end = Instant::now() + Duration::from_secs(secs);
        while self.screen().contains(needle) {
            assert!(
                Instant::now() < end,
                "screen still shows {needle:?}:\n{}",
                self.screen()
            );
            sleep(Duration::from_millis(100));
        }
    }
}

impl Session {
    /// pagewatch's pid: the child of the pane's shell.
    pub fn pagewatch_pid(&self) -> u32 {
        let shell = self.tmux(&["list-panes", "-t", "pw", "-F", "#{pane_pid}"]);
        let out = Command::new("pgrep")
            .args(["-P", shell.trim()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .output();
        let _ = std::fs::remove_dir_all(self.config_home());
    }
}
