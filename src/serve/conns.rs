//! The connections of the metrics endpoint: which are held, which give way, which are
//! refused, and the threads that answer.
//!
//! Bad clients must not hurt the monitor or starve a scraper, so every resource a client can
//! hold is capped. One thread accepts and reads every request head, without blocking on any
//! client (`poll`, non-blocking sockets): a connection waiting for its head costs a file
//! descriptor and at most `MAX_HEAD` bytes, no thread. Only a connection whose head is in
//! gets a thread (small stack, write timeout) to be answered.
//!
//! At most `MAX_CONNECTIONS` are held at once, and at most `MAX_PER_PEER` from one peer (an
//! IPv4 address, or an IPv6 /64). A new connection over either cap takes the place of the
//! connection that has been idle longest without a complete request head (that peer's own
//! first, for its cap): holding slots with silent connections (`connect(); recv()` in a
//! loop, issue 22) only churns them, while a scraper, which sends its request at once, is
//! read before anything newer can evict it (each round reads what arrived before it
//! accepts, one connection per round). Only when every held connection is being answered is
//! a new one refused, with 503. A head must arrive whole within `HEAD_DEADLINE`
//! (slowloris), with no gap longer than `IDLE_TIMEOUT`: else 408.
//! Owns: the listener, the table of connections, the answering threads. Must not touch: the
//! request and response bytes (`http`), what a page says (`metrics`).

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::http::{self, Head, HeadReader, Latest, Reply};

/// Connections held at once (waiting for their head or being answered).
pub const MAX_CONNECTIONS: usize = 16;
/// Connections held at once from one peer.
pub const MAX_PER_PEER: usize = 4;
/// The whole request head must arrive within this.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(5);
/// The longest gap between two pieces of a request head.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(2);
/// One write of an answer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// A thread's stack (the accepting one, and each answering one).
const STACK: usize = 128 * 1024;

/// Binds `addr` and serves `latest` from a thread of its own; returns the bound address
/// (the port the system chose, for port 0).
pub fn start(addr: SocketAddr, latest: Latest) -> Result<SocketAddr> {
    let listener = TcpListener::bind(addr).map_err(|e| bind_error(addr, e))?;
    let bound = listener.local_addr().context("reading the bound address")?;
    listener
        .set_nonblocking(true)
        .context("making the listener non-blocking")?;
    std::thread::Builder::new()
        .name("http".into())
        .stack_size(STACK)
        .spawn(move || Table::new(latest).run(&listener))
        .context("starting the http thread")?;
    Ok(bound)
}

/// The error for a failed bind, with the hint that fits (not the file-permission one).
#[must_use]
pub fn bind_error(addr: SocketAddr, e: std::io::Error) -> anyhow::Error {
    let what = format!("listening on {addr} for /metrics");
    let hint = match e.kind() {
        ErrorKind::PermissionDenied if (1..1024).contains(&addr.port()) => {
            "binding a port below 1024 needs root or CAP_NET_BIND_SERVICE: pick a port above \
             1023 (the default is 7463)"
        }
        ErrorKind::PermissionDenied => {
            "binding was denied: ports below net.ipv4.ip_unprivileged_port_start need root or \
             CAP_NET_BIND_SERVICE, and a security policy (SELinux, AppArmor) may forbid it"
        }
        ErrorKind::AddrInUse => {
            "another program listens there: pick another port (0: any free one)"
        }
        ErrorKind::AddrNotAvailable => {
            "that address is not this host's: use 127.0.0.1, 0.0.0.0 or one `ip addr` lists"
        }
        _ => return anyhow::Error::new(e).context(what),
    };
    anyhow::Error::new(crate::exit::Hinted {
        what,
        hint,
        source: e,
    })
}

/// Who a per-peer cap counts: an IPv4 address (IPv4-mapped ones too), or an IPv6 /64,
/// the block one host or site usually gets.
#[must_use]
pub fn peer_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        v4 @ IpAddr::V4(_) => v4,
    }
}

/// What to do with a new connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit {
    /// Hold it.
    Take,
    /// Hold it in place of the waiting connection at this index, closed.
    Evict(usize),
    /// Refuse it (503): every connection it could replace is being answered.
    Refuse,
}

/// The decision for a connection from `peer`, given the connections still waiting for their
/// head (`(peer, last activity)` each), and how many are being answered in all and for
/// `peer`. Over a cap, the one idle longest gives way: `peer`'s own for its cap.
#[must_use]
pub fn admit(
    waiting: &[(IpAddr, Instant)],
    answering: usize,
    answering_peer: usize,
    peer: IpAddr,
) -> Admit {
    let idlest = |of_peer: bool| {
        waiting
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| !of_peer || *p == peer)
            .min_by_key(|(_, (_, last))| *last)
            .map_or(Admit::Refuse, |(i, _)| Admit::Evict(i))
    };
    let mine = waiting.iter().filter(|(p, _)| *p == peer).count() + answering_peer;
    if mine >= MAX_PER_PEER {
        idlest(true)
    } else if waiting.len() + answering >= MAX_CONNECTIONS {
        idlest(false)
    } else {
        Admit::Take
    }
}

/// A connection waiting for its request head.
struct Waiting {
    stream: TcpStream,
    peer: IpAddr,
    accepted: Instant,
    last: Instant,
    head: HeadReader,
}

/// How many connections are being answered, per peer; each answering thread holds a `Held`.
#[derive(Clone, Default)]
struct Answering(Arc<Mutex<HashMap<IpAddr, usize>>>);

impl Answering {
    fn counts(&self, peer: IpAddr) -> (usize, usize) {
        let m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (m.values().sum(), m.get(&peer).copied().unwrap_or(0))
    }

    fn hold(&self, peer: IpAddr) -> Held {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(peer)
            .or_default() += 1;
        Held(self.clone(), peer)
    }
}

/// One answering connection, counted until dropped.
struct Held(Answering, IpAddr);

impl Drop for Held {
    fn drop(&mut self) {
        let mut m = (self.0)
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

/// What a read of a waiting connection gave.
enum Got {
    /// Bytes, but not a whole head yet.
    Some,
    /// Nothing (a wake-up with nothing to read): its idle time runs on.
    Nothing,
    /// The client closed or the connection failed.
    Gone,
    /// The whole head.
    Head(Head),
}

/// The accepting thread's state: the connections waiting for their head.
struct Table {
    latest: Latest,
    waiting: Vec<Waiting>,
    answering: Answering,
}

impl Table {
    fn new(latest: Latest) -> Self {
        Self {
            latest,
            waiting: Vec::new(),
            answering: Answering::default(),
        }
    }

    /// Forever: wait for the listener or a waiting connection, read what came, expire what
    /// is too slow, then accept one connection.
    fn run(mut self, listener: &TcpListener) {
        let mut fds = Vec::new();
        loop {
            let now = Instant::now();
            let wait = self
                .waiting
                .iter()
                .map(|w| (w.accepted + HEAD_DEADLINE).min(w.last + IDLE_TIMEOUT))
                .min()
                .map(|d| d.saturating_duration_since(now));
            fds.clear();
            fds.push(pollfd(listener.as_raw_fd()));
            fds.extend(self.waiting.iter().map(|w| pollfd(w.stream.as_raw_fd())));
            if poll(&mut fds, wait).is_err() {
                continue; // EINTR; the other errors need a bad array, which this never is
            }
            // Newest first, so that swap_remove only moves entries already seen.
            for i in (0..self.waiting.len()).rev() {
                if fds[i + 1].revents != 0 {
                    self.read(i);
                }
            }
            self.expire(Instant::now());
            if fds[0].revents != 0 {
                self.accept(listener);
            }
        }
    }

    /// Reads what connection `i` sent; answers it once its head is in.
    fn read(&mut self, i: usize) {
        let w = &mut self.waiting[i];
        match read_some(w) {
            Got::Some => w.last = Instant::now(),
            Got::Nothing => {}
            Got::Gone => drop(self.waiting.swap_remove(i)),
            Got::Head(h) => {
                let w = self.waiting.swap_remove(i);
                self.answer(w.stream, w.peer, h);
            }
        }
    }

    /// 408 to the connections too slow with their head.
    fn expire(&mut self, now: Instant) {
        self.waiting.retain_mut(|w| {
            let late = now >= w.accepted + HEAD_DEADLINE || now >= w.last + IDLE_TIMEOUT;
            if late {
                best_effort(&mut w.stream, &Reply::text(408, "request head too slow\n"));
            }
            !late
        });
    }

    /// Accepts one connection, if one is there, and holds, swaps or refuses it.
    fn accept(&mut self, listener: &TcpListener) {
        let (mut stream, addr) = match listener.accept() {
            Ok(c) => c,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                return;
            }
            Err(_) => {
                // Out of file descriptors or similar: back off instead of spinning.
                std::thread::sleep(Duration::from_millis(100));
                return;
            }
        };
        let peer = peer_key(addr.ip());
        let held: Vec<(IpAddr, Instant)> = self.waiting.iter().map(|w| (w.peer, w.last)).collect();
        let (all, mine) = self.answering.counts(peer);
        match admit(&held, all, mine, peer) {
            Admit::Refuse => {
                best_effort(
                    &mut stream,
                    &Reply::text(503, "busy: too many connections\n"),
                );
                return;
            }
            Admit::Evict(i) => {
                let mut old = self.waiting.swap_remove(i);
                best_effort(
                    &mut old.stream,
                    &Reply::text(503, "busy: an idle connection gave way to a new one\n"),
                );
            }
            Admit::Take => {}
        }
        if stream.set_nonblocking(true).is_err() {
            return;
        }
        let now = Instant::now();
        self.waiting.push(Waiting {
            stream,
            peer,
            accepted: now,
            last: now,
            head: HeadReader::default(),
        });
        // A scraper's request is usually there already.
        self.read(self.waiting.len() - 1);
    }

    /// Answers on a thread of its own, counted against the caps until it ends.
    fn answer(&self, stream: TcpStream, peer: IpAddr, head: Head) {
        let counted = self.answering.hold(peer);
        let latest = self.latest.clone();
        let spawned = std::thread::Builder::new()
            .name("http-conn".into())
            .stack_size(STACK)
            .spawn(move || {
                let _counted = counted;
                let mut s = stream;
                if s.set_nonblocking(false).is_err() {
                    return;
                }
                let _ = s.set_write_timeout(Some(WRITE_TIMEOUT));
                let _ = s.set_nodelay(true);
                let (reply, head_only) = http::reply(&head, &latest);
                let _ = http::respond(&mut s, &reply, head_only);
            });
        // A thread that could not start dropped the connection and its count with the closure.
        drop(spawned);
    }
}

/// Reads what is there without blocking, never beyond the head reader's room.
fn read_some(w: &mut Waiting) -> Got {
    let mut buf = [0u8; 4096];
    let mut got = false;
    loop {
        let room = w.head.room().min(buf.len());
        match w.stream.read(&mut buf[..room]) {
            Ok(0) => return Got::Gone,
            Ok(n) => {
                got = true;
                if let Some(h) = w.head.push(&buf[..n]) {
                    return Got::Head(h);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                return if got { Got::Some } else { Got::Nothing };
            }
            Err(_) => return Got::Gone,
        }
    }
}

/// Writes a short reply on a non-blocking socket if it fits at once, then closes.
fn best_effort(s: &mut TcpStream, r: &Reply) {
    let _ = s.write_all(http::response_head(r).as_bytes());
    let _ = s.write_all(r.body.as_bytes());
    let _ = s.shutdown(std::net::Shutdown::Write);
}

fn pollfd(fd: std::os::fd::RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// poll(2) on `fds` for at most `wait` (`None`: until one is ready).
#[allow(unsafe_code)]
fn poll(fds: &mut [libc::pollfd], wait: Option<Duration>) -> std::io::Result<usize> {
    let ms = wait.map_or(-1, |d| {
        // Round up, so that a deadline is past when poll returns.
        i32::try_from(d.as_micros().div_ceil(1000)).unwrap_or(i32::MAX)
    });
    // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd structs for
    // the whole call; poll(2) writes only their `revents` fields.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn over_a_cap_the_idlest_waiting_connection_gives_way() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let (a, b) = (ip("192.0.2.1"), ip("192.0.2.2"));
        assert_eq!(admit(&[], 0, 0, a), Admit::Take);
        // a holds its 4: its own idlest gives way, whoever else is idler.
        let w = [
            (b, at(0)),
            (a, at(30)),
            (a, at(10)),
            (a, at(20)),
            (a, at(40)),
        ];
        assert_eq!(admit(&w, 0, 0, a), Admit::Evict(2));
        // b is under its cap and the table has room.
        assert_eq!(admit(&w, 0, 0, b), Admit::Take);
        // a's 4 are being answered: nothing of a's can give way.
        assert_eq!(admit(&w[..1], 4, 4, a), Admit::Refuse);
        // The table is full: the idlest of all gives way.
        assert_eq!(admit(&w, 11, 0, ip("192.0.2.3")), Admit::Evict(0));
        // Every slot is being answered.
        assert_eq!(admit(&[], MAX_CONNECTIONS, 0, b), Admit::Refuse);
    }

    #[test]
    fn a_peer_is_an_ipv4_address_or_an_ipv6_64() {
        assert_eq!(peer_key(ip("192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(peer_key(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(
            peer_key(ip("2001:db8::1")),
            peer_key(ip("2001:db8::ffff:2"))
        );
        assert_ne!(peer_key(ip("2001:db8::1")), peer_key(ip("2001:db8:0:1::1")));
    }

    /// Issue 22: a port below 1024 as non-root said "run as the file's owner".
    #[test]
    fn a_low_port_gets_the_port_hint_not_the_file_one() {
        let denied = || std::io::Error::from(ErrorKind::PermissionDenied);
        let m = crate::exit::message(&bind_error("127.0.0.1:80".parse().unwrap(), denied()));
        assert!(
            m.starts_with("pagewatch: error: listening on 127.0.0.1:80 for /metrics: ")
                && m.contains("hint: binding a port below 1024 needs root or CAP_NET_BIND_SERVICE")
                && !m.contains("file's owner"),
            "{m}"
        );
        let m = crate::exit::message(&bind_error("127.0.0.1:8080".parse().unwrap(), denied()));
        assert!(
            m.contains("ip_unprivileged_port_start") && !m.contains("file's owner"),
            "{m}"
        );
        let used = std::io::Error::from(ErrorKind::AddrInUse);
        let m = crate::exit::message(&bind_error("127.0.0.1:7463".parse().unwrap(), used));
        assert!(m.contains("hint: another program listens there"), "{m}");
    }
}
