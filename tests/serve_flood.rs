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

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serve_util::{IdleFlood, get, scrape_paused, serve, value};

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

/// `SCRAPES` scrapes started `SPACING` apart, each pausing `pause`: the statuses.
fn check(addr: SocketAddr, pause: Duration) -> Vec<u16> {
    let t0 = Instant::now();
    let mut scrapes = Vec::new();
    for i in 0..SCRAPES {
        let at = SPACING * u32::try_from(i).unwrap();
        std::thread::sleep(at.saturating_sub(t0.elapsed()));
        scrapes.push(std::thread::spawn(move || {
            scrape_paused(addr, pause, SCRAPE_TIMEOUT, true)
        }));
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
    let flood = IdleFlood::start(addr, IDLERS);
    let stop = Arc::new(AtomicBool::new(false));
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
    let connects = flood.stop();
    stop.store(true, Ordering::Relaxed);
    let most = held.join().unwrap();
    let (n1, secs) = (samples(addr), t0.elapsed().as_secs_f64());
    let ok = |codes: &[u16]| codes.iter().filter(|c| **c == 200).count();
    println!(
        "{IDLERS} idle loopers ({connects} connects in {secs:.1} s): answered {} of \
         {SCRAPES} at once {at_once:?}, {} of {SCRAPES} after 50 ms {paused:?}; sockets held \
         at most {most} ({base} before); samples {n0} -> {n1}",
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
