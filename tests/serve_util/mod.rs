//! Helpers for the endpoint tests: start `pagewatch serve` on a free loopback port, a plain
//! HTTP/1.0 client for loopback servers, percent-encoding, RSS of a process.

#![allow(clippy::unwrap_used, dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// A child process killed when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `pagewatch serve --listen 127.0.0.1:0 ARGS…` and the address it reported.
pub fn serve(args: &[&str]) -> (Killed, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("pagewatch: serving http://")
        .and_then(|l| l.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    // Keep draining stderr so the child never blocks on it.
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = err.read_to_end(&mut sink);
    });
    (Killed(child), addr)
}

/// A response: status, head, body.
pub struct Resp {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// GET `path` from `addr` with extra header lines (`"Accept: …\r\n"`).
pub fn get(addr: SocketAddr, path: &str, headers: &str) -> std::io::Result<Resp> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n{headers}\r\n")?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Ok(Resp {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    })
}

/// The value of sample `name{...}` (the first series of that name) in a scrape.
pub fn value(scrape: &str, name: &str) -> Option<f64> {
    scrape
        .lines()
        .find(|l| l.starts_with(&format!("{name}{{")))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Every byte but letters and digits as %XX.
pub fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// VmRSS of `pid`, kB.
pub fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Whether `tool --version` runs.
pub fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A loopback port free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET /metrics with `timeout` for the connect and for each read: the status, 0 when no
/// whole response came in time.
pub fn scrape_within(addr: SocketAddr, timeout: Duration) -> u16 {
    scrape_paused(addr, Duration::ZERO, timeout, false)
}

/// GET /metrics, sent `pause` after connecting, with `timeout` for the connect and for each
/// read (`whole`: for the whole scrape, connect to last byte): the status, 0 when no whole
/// response came in time.
pub fn scrape_paused(addr: SocketAddr, pause: Duration, timeout: Duration, whole: bool) -> u16 {
    let t = std::time::Instant::now();
    let Ok(mut s) = TcpStream::connect_timeout(&addr, timeout) else {
        return 0;
    };
    std::thread::sleep(pause);
    let left = if whole {
        timeout.saturating_sub(t.elapsed())
    } else {
        timeout
    };
    if left.is_zero() {
        return 0;
    }
    let _ = s.set_read_timeout(Some(left));
    let _ = s.set_write_timeout(Some(left));
    if write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").is_err() {
        return 0;
    }
    let mut raw = Vec::new();
    if s.read_to_end(&mut raw).is_err() || (whole && t.elapsed() > timeout) {
        return 0;
    }
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    // A 200 counts only when its whole body came.
    if status == 200 && !text.contains("pagewatch_samples_total") {
        return 0;
    }
    status
}

/// Threads that loop `connect(); recv()` on `addr`, never sending a byte (issues 22 and 51),
/// until `stop`; counting their connections.
pub struct IdleFlood {
    stop: Arc<AtomicBool>,
    connects: Arc<AtomicUsize>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl IdleFlood {
    /// Starts `n` looping threads.
    pub fn start(addr: SocketAddr, n: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let connects = Arc::new(AtomicUsize::new(0));
        let threads = (0..n)
            .map(|_| {
                let (stop, connects) = (Arc::clone(&stop), Arc::clone(&connects));
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1))
                        else {
                            continue;
                        };
                        connects.fetch_add(1, Ordering::Relaxed);
                        // Longer than the server's own read timeout: the server decides when
                        // this connection ends, as in the attack.
                        let _ = s.set_read_timeout(Some(Duration::from_secs(3)));
                        let _ = s.read(&mut [0u8; 64]);
                    }
                })
            })
            .collect();
        Self {
            stop,
            connects,
            threads,
        }
    }

    /// Stops the threads; returns how many connections they made.
    pub fn stop(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
        self.connects.load(Ordering::Relaxed)
    }
}
