//! Issue 51: the idle-connection flood on 127.0.0.1 against a scraper that pauses before its
//! request. 32 threads loop `connect(); recv()` (never sending a byte) while a scraper
//! makes 16 scrapes 0.5 s apart, sending its request at once and then 50 ms after connecting;
//! each must be answered in at least 80 % of the scrapes, sampling must keep its cadence, and
//! the server must hold no more than its cap of connections.
//!
//! The flood is bounded: 32 threads, stopped by the test after the scrapes (about 20 s in
//! all). It measures time, so run it alone: `flock -o /tmp/pw-live.lock cargo test --test
//! serve_flood`.

#![allow(clippy::unwrap_used)]

mod serve_util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serve_util::{get, serve, value};

/// Looping idle clients, as in the issue.
const IDLERS: usize = 32;
/// Scrapes per check, one every `SPACING`.
const SCRAPES: usize = 16;
const SPACING: Duration = Duration::from_millis(500);
/// How long a scrape may take (connect to last byte): well inside Prometheus's default
/// scrape timeout of 10 s.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(3);
/// The connection cap (`serve::conns::MAX_CONNECTIONS`).
const CAP: usize = 16;

/// One scrape that waits `pause` between connecting and sending its request: the status,
/// 0 when no whole answer came within `SCRAPE_TIMEOUT`.
fn scrape(addr: SocketAddr, pause: Duration) -> u16 {
    let t = Instant::now();
    let Ok(mut s) = TcpStream::connect_timeout(&addr, SCRAPE_TIMEOUT) else {
        return 0;
    };
    std::thread::sleep(pause);
    let left = SCRAPE_TIMEOUT.saturating_sub(t.elapsed());
    if left.is_zero() {
        return 0;
    }
    let _ = s.set_read_timeout(Some(left));
    let _ = s.set_write_timeout(Some(left));
    if write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").is_err() {
        return 0;
    }
    let mut raw = Vec::new();
    if s.read_to_end(&mut raw).is_err() || t.elapsed() > SCRAPE_TIMEOUT {
        return 0;
    }
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    if status == 200 && !text.contains("pagewatch_samples_total") {
        return 0;
    }
    status
}

/// `SCRAPES` scrapes started `SPACING` apart, each pausing `pause`: the statuses.
fn check(addr: SocketAddr, pause: Duration) -> Vec<u16> {
    let t0 = Instant::now();
    let mut scrapes = Vec::new();
    for i in 0..SCRAPES {
        let at = SPACING * u32::try_from(i).unwrap();
        std::thread::sleep(at.saturating_sub(t0.elapsed()));
        scrapes.push(std::thread::spawn(move || scrape(addr, pause)));
    }
    scrapes.into_iter().map(|t| t.join().unwrap()).collect()
}

/// The sockets `pid` holds.
fn sockets(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| {
        d.filter_map(Result::ok)
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
            })
            .count()
    })
}

/// `pagewatch_samples_total` from a scrape without a flood.
fn samples(addr: SocketAddr) -> f64 {
    let r = get(addr, "/metrics", "").unwrap();
    value(&r.body, "pagewatch_samples_total").unwrap_or(0.0)
}

#[test]
fn a_scraper_that_pauses_gets_through_an_idle_flood() {
    let (child, addr) = serve(&["--interval", "0.5"]);
    let pid = child.0.id();
    std::thread::sleep(Duration::from_millis(1200));
    let base = sockets(pid);
    let (n0, t0) = (samples(addr), Instant::now());
    let stop = Arc::new(AtomicBool::new(false));
    let connects = Arc::new(AtomicUsize::new(0));
    let idlers: Vec<_> = (0..IDLERS)
        .map(|_| {
            let (stop, connects) = (Arc::clone(&stop), Arc::clone(&connects));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1))
                    else {
                        continue;
                    };
                    connects.fetch_add(1, Ordering::Relaxed);
                    let _ = s.set_read_timeout(Some(Duration::from_secs(3)));
                    let _ = s.read(&mut [0u8; 64]);
                }
            })
        })
        .collect();
    let held = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut most = 0;
            while !stop.load(Ordering::Relaxed) {
                most = most.max(sockets(pid));
                std::thread::sleep(Duration::from_millis(20));
            }
            most
        })
    };
    // Let the flood take every slot first.
    std::thread::sleep(Duration::from_millis(500));
    let at_once = check(addr, Duration::ZERO);
    let paused = check(addr, Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    for t in idlers {
        t.join().unwrap();
    }
    let most = held.join().unwrap();
    let (n1, secs) = (samples(addr), t0.elapsed().as_secs_f64());
    let ok = |codes: &[u16]| codes.iter().filter(|c| **c == 200).count();
    println!(
        "{IDLERS} idle loopers ({} connects in {secs:.1} s): answered {} of {SCRAPES} at once \
         {at_once:?}, {} of {SCRAPES} after 50 ms {paused:?}; sockets held at most {most} \
         ({base} before); samples {n0} -> {n1}",
        connects.load(Ordering::Relaxed),
        ok(&at_once),
        ok(&paused),
    );
    assert!(
        ok(&at_once) * 5 >= SCRAPES * 4,
        "at once: {} of {SCRAPES} answered: {at_once:?}",
        ok(&at_once)
    );
    assert!(
        ok(&paused) * 5 >= SCRAPES * 4,
        "after 50 ms: {} of {SCRAPES} answered: {paused:?}",
        ok(&paused)
    );
    // The cap, and the connection just accepted while the one it replaces is closed.
    assert!(
        most <= base + CAP + 1,
        "held {most} sockets, {base} before the flood"
    );
    // Sampling every 0.5 s all along; the count may lag the clock by a tick's phase.
    assert!(
        n1 - n0 >= (secs / 0.5).floor() - 2.0,
        "sampling stalled: {n0} -> {n1} in {secs:.1} s"
    );
}
