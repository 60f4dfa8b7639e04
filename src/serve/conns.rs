//! The connections of the metrics endpoint: which are held, which give way, which wait,
//! which are refused, and the threads that answer.
//!
//! Bad clients must not hurt the monitor or starve a scraper, so every resource a client can
//! hold is capped. One thread accepts and reads every request head, without blocking on any
//! client (`poll`, non-blocking sockets): a connection waiting for its head costs a file
//! descriptor and at most `MAX_HEAD` bytes, no thread. Only a connection whose head is in
//! gets a thread (small stack, write timeout) to be answered.
//!
//! At most `MAX_CONNECTIONS` are held at once. Every connection held gets `GRACE` to send its
//! head before it may give way, so a scraper that pauses before its request (a proxy, a
//! loaded host) is read like one that sends at once. A new connection over the cap takes the
//! place of the connection idle longest, past its grace, without a complete head: holding
//! slots with silent connections (`connect(); recv()` in a loop, issues 22 and 51) only
//! churns them. While every slot is full and none may give way yet, the listener is not
//! polled: new connections wait in the kernel's listen backlog (`BACKLOG`), which is first
//! in, first out, so a scraper's turn comes after the connections ahead of it (at most
//! `BACKLOG`, at `MAX_CONNECTIONS` per `GRACE`), and its request, already in its socket, is
//! read the moment it is accepted. Before issue 51 each new connection evicted the idlest at
//! once: at ~12,700 connections/s a scraper that sent 2-50 ms after connecting got 0 of 8.
//!
//! `MAX_PER_PEER` (an IPv4 address, or an IPv6 /64) decides who gives way first: a peer
//! holding that many loses its own idlest, then a peer holding more than that loses one. A
//! peer may hold more waiting while the table has room, but never more than `MAX_PER_PEER`
//! being answered (threads): a new connection or a head of a peer at that count, or any
//! connection when every slot is being answered, is refused with 503. A head must
//! arrive whole within `HEAD_DEADLINE` (slowloris), with no gap longer than `IDLE_TIMEOUT`:
//! else 408.
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
/// How long a connection held may take to send its head before it may give way to a new
/// one: a scraper behind a proxy or on a loaded host pauses between connect and request.
pub const GRACE: Duration = Duration::from_millis(250);
/// The listen backlog: connections waiting in the kernel while every slot is held. At
/// `MAX_CONNECTIONS` per `GRACE`, the last of them waits about 2 s, inside Prometheus's
/// default scrape timeout of 10 s.
pub const BACKLOG: i32 = 128;
/// One write of an answer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// A thread's stack (the accepting one, and each answering one).
const STACK: usize = 128 * 1024;

/// Binds `addr` and serves `latest` from a thread of its own; returns the bound address
/// (the port the system chose, for port 0).
pub fn start(addr: SocketAddr, latest: Latest) -> Result<SocketAddr> {
    let listener = TcpListener::bind(addr).map_err(|e| bind_error(addr, e))?;
    let bound = listener.local_addr().context("reading the bound address")?;
    // listen(2) again on a listening socket sets its backlog.
    rustix::net::listen(&listener, BACKLOG).context("sizing the listen backlog")?;
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
    /// Refuse it (503): its peer's share, or every slot, is being answered.
    Refuse,
}

/// A connection waiting for its head, as `admit` sees it.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// Its peer (`peer_key`).
    pub peer: IpAddr,
    /// When it was accepted: it may give way `GRACE` later.
    pub accepted: Instant,
    /// When it last sent something (or was accepted).
    pub last: Instant,
}

/// The decision at `now` for a connection from `peer`, given the connections waiting for
/// their head and how many are being answered per peer. Over the cap, the one idle longest
/// past its grace gives way: `peer`'s own when it holds its share, else one of a peer
/// holding more than its share, else any.
#[must_use]
fn admit(
    waiting: &[Slot],
    answering: &HashMap<IpAddr, usize>,
    peer: IpAddr,
    now: Instant,
) -> Admit {
    let answered = |p: &IpAddr| answering.get(p).copied().unwrap_or(0);
    let holds = |p: IpAddr| waiting.iter().filter(|w| w.peer == p).count() + answered(&p);
    let idlest = |of: &dyn Fn(&Slot) -> bool| {
        waiting
            .iter()
            .enumerate()
            .filter(|(_, w)| now >= w.accepted + GRACE && of(w))
            .min_by_key(|(_, w)| w.last)
            .map(|(i, _)| Admit::Evict(i))
    };
    let all = waiting.len() + answering.values().sum::<usize>();
    if answered(&peer) >= MAX_PER_PEER || waiting.is_empty() && all >= MAX_CONNECTIONS {
        return Admit::Refuse;
    }
    if holds(peer) >= MAX_PER_PEER
        && let Some(own) = idlest(&|w| w.peer == peer)
    {
        return own;
    }
    if all < MAX_CONNECTIONS {
        return Admit::Take;
    }
    idlest(&|w| holds(w.peer) > MAX_PER_PEER)
        .or_else(|| idlest(&|_| true))
        .unwrap_or(Admit::Refuse)
}

/// Whether a new connection could be decided at `now` without refusing it for want of a
/// slot: the table has room, one held may give way, or every slot is being answered (the
/// new one is refused at once). Otherwise the listener is left alone and new connections
/// wait in its backlog.
#[must_use]
pub fn may_accept(waiting: &[Slot], answering: usize, now: Instant) -> bool {
    waiting.is_empty()
        || waiting.len() + answering < MAX_CONNECTIONS
        || waiting.iter().any(|w| now >= w.accepted + GRACE)
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
    fn counts(&self) -> HashMap<IpAddr, usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
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

    fn slots(&self) -> Vec<Slot> {
        self.waiting
            .iter()
            .map(|w| Slot {
                peer: w.peer,
                accepted: w.accepted,
                last: w.last,
            })
            .collect()
    }

    /// Forever: wait for a waiting connection or the listener (only while a new connection
    /// could be held: `may_accept`), read what came, expire what is too slow, then accept
    /// one connection.
    fn run(mut self, listener: &TcpListener) {
        let mut fds = Vec::new();
        loop {
            let now = Instant::now();
            let answering = self.answering.counts().values().sum();
            let listen = may_accept(&self.slots(), answering, now);
            // Wake for the next head deadline and, while the listener rests, for the next
            // grace to end (or a slot to free: an answer takes milliseconds).
            let wait = self
                .waiting
                .iter()
                .map(|w| {
                    let due = (w.accepted + HEAD_DEADLINE).min(w.last + IDLE_TIMEOUT);
                    if listen {
                        due
                    } else {
                        due.min(w.accepted + GRACE)
                    }
                })
                .min()
                .map(|d| d.saturating_duration_since(now));
            fds.clear();
            fds.extend(self.waiting.iter().map(|w| pollfd(w.stream.as_raw_fd())));
            let held = fds.len();
            if listen {
                fds.push(pollfd(listener.as_raw_fd()));
            }
            if poll(&mut fds, wait).is_err() {
                continue; // EINTR; the other errors need a bad array, which this never is
            }
            // Newest first, so that swap_remove only moves entries already seen.
            for i in (0..held).rev() {
                if fds[i].revents != 0 {
                    self.read(i);
                }
            }
            self.expire(Instant::now());
            if listen && fds[held].revents != 0 {
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
        match admit(
            &self.slots(),
            &self.answering.counts(),
            peer,
            Instant::now(),
        ) {
            Admit::Refuse => {
                best_effort(
                    &mut stream,
                    &Reply::text(503, "busy: too many connections being answered\n"),
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
    /// A peer with `MAX_PER_PEER` being answered already gets 503 at once: a peer holds at
    /// most that many answering threads, whatever it holds waiting.
    fn answer(&self, mut stream: TcpStream, peer: IpAddr, head: Head) {
        if self.answering.counts().get(&peer).copied().unwrap_or(0) >= MAX_PER_PEER {
            best_effort(
                &mut stream,
                &Reply::text(
                    503,
                    "busy: too many of this peer's requests being answered\n",
                ),
            );
            return;
        }
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

    /// A connection accepted `ms` ms before `t0 + 1 s`, silent since.
    fn slot(peer: IpAddr, t0: Instant, ms: u64) -> Slot {
        let at = t0 + Duration::from_millis(1000 - ms);
        Slot {
            peer,
            accepted: at,
            last: at,
        }
    }

    #[test]
    fn over_a_cap_the_idlest_past_its_grace_gives_way() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(1);
        let none = HashMap::new();
        let (a, b, c) = (ip("192.0.2.1"), ip("192.0.2.2"), ip("192.0.2.3"));
        assert_eq!(admit(&[], &none, a, now), Admit::Take);
        // a holds its 4: its own idlest past its grace gives way, whoever else is idler.
        let w = [
            slot(b, t0, 900),
            slot(a, t0, 300),
            slot(a, t0, 400),
            slot(a, t0, 100),
            slot(a, t0, 10),
        ];
        assert_eq!(admit(&w, &none, a, now), Admit::Evict(2));
        // b is under its cap and the table has room.
        assert_eq!(admit(&w, &none, b, now), Admit::Take);
        // a's 4 all within their grace: a may hold a fifth while the table has room.
        let young = [
            slot(a, t0, 200),
            slot(a, t0, 2),
            slot(a, t0, 50),
            slot(a, t0, 0),
        ];
        assert_eq!(admit(&young, &none, a, now), Admit::Take);
        // a's 4 are being answered: a new one of a's is refused.
        assert_eq!(
            admit(&w[..1], &HashMap::from([(a, 4)]), a, now),
            Admit::Refuse
        );
        // Every slot is being answered.
        assert_eq!(
            admit(&[], &HashMap::from([(b, MAX_CONNECTIONS)]), c, now),
            Admit::Refuse
        );
        assert!(may_accept(&[], MAX_CONNECTIONS, now));
    }

    /// Issue 51: a connection 2-50 ms old gave way to the next, so a scraper that paused
    /// before its request was never read. Within its grace it is kept, and the listener
    /// rests until one may give way.
    #[test]
    fn a_full_table_within_its_grace_keeps_every_connection_and_rests_the_listener() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(1);
        let none = HashMap::new();
        let (a, b) = (ip("192.0.2.1"), ip("192.0.2.2"));
        let mut w: Vec<Slot> = (0..MAX_CONNECTIONS as u64)
            .map(|i| slot(a, t0, 2 + i * 10))
            .collect();
        assert!(!may_accept(&w, 0, now));
        assert!(!may_accept(&w[..12], 4, now));
        assert!(may_accept(&w[..12], 3, now));
        assert_eq!(admit(&w, &none, a, now), Admit::Refuse);
        // One past its grace: it gives way, to anyone.
        w[5] = slot(a, t0, 260);
        assert!(may_accept(&w, 0, now));
        assert_eq!(admit(&w, &none, b, now), Admit::Evict(5));
        assert_eq!(admit(&w, &none, a, now), Admit::Evict(5));
        // A peer over its share gives way before an idler one within it.
        w[0] = slot(b, t0, 900);
        assert_eq!(admit(&w, &none, ip("192.0.2.3"), now), Admit::Evict(5));
        // A peer at its share loses its own first.
        assert_eq!(admit(&w, &HashMap::from([(b, 3)]), b, now), Admit::Evict(0));
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
