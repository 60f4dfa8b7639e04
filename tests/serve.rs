//! `pagewatch serve` on a loopback port: the routes and negotiation, `promtool check
//! metrics` on a scrape, hostile clients (100 connections at once, slowloris, a 1 MB request
//! line) against its sampling and memory, and a real Prometheus scraping it
//! (`serve_prometheus.rs`).

#![allow(clippy::unwrap_used)]

mod serve_util;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serve_util::{get, have, rss_kb, serve, value};

const OM: &str =
    "Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n";

/// Scrapes until the endpoint has a record (two samples).
fn first_record(addr: std::net::SocketAddr) -> String {
    let t = Instant::now();
    loop {
        let r = get(addr, "/metrics", "").unwrap();
        if r.body.contains("pagewatch_dirty_threshold_bytes{") {
            return r.body;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no record: {}",
            r.body
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn routes_negotiation_and_promtool_check_metrics() {
    let (_child, addr) = serve(&["--interval", "0.5"]);
    let classic = first_record(addr);
    let r = get(addr, "/metrics", "").unwrap();
    assert_eq!(r.status, 200);
    assert!(
        r.head.contains("Content-Type: text/plain; version=0.0.4"),
        "{}",
        r.head
    );
    assert!(!r.body.contains("# EOF") && !r.body.contains("# UNIT"));
    let r = get(addr, "/metrics?x=1", OM).unwrap();
    assert!(
        r.head
            .contains("Content-Type: application/openmetrics-text; version=1.0.0"),
        "{}",
        r.head
    );
    assert!(r.body.ends_with("# EOF\n"));
    assert!(
        r.body
            .contains("# UNIT pagewatch_dirty_threshold_bytes bytes\n")
    );
    let r = get(addr, "/", "").unwrap();
    assert_eq!(r.status, 200);
    assert!(r.body.contains("<a href=\"/metrics\">"), "{}", r.body);
    assert_eq!(get(addr, "/nope", "").unwrap().status, 404);
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 405 "), "{out}");
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"\x16\x03\x01garbage\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 400 "), "{out}");

    if !have("promtool") {
        println!(
            "skipped promtool check metrics: promtool not installed (apt-get install prometheus)"
        );
        return;
    }
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    p.stdin
        .take()
        .unwrap()
        .write_all(classic.as_bytes())
        .unwrap();
    let out = p.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {out:?}"
    );
}

/// Scrapes (retrying while the endpoint is busy) and returns `pagewatch_samples_total`.
fn samples(addr: std::net::SocketAddr) -> f64 {
    let t = Instant::now();
    loop {
        if let Ok(r) = get(addr, "/metrics", "")
            && r.status == 200
        {
            return value(&r.body, "pagewatch_samples_total").unwrap();
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "no scrape got through"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One round of abuse, about 6 s: 100 scrapes at once, 100 idle connections, 20 slowloris
/// clients and a 1 MB request line.
fn attack(addr: std::net::SocketAddr) -> (usize, usize) {
    let mut threads = Vec::new();
    for _ in 0..100 {
        threads.push(std::thread::spawn(move || {
            get(addr, "/metrics", "").map_or(0, |r| r.status)
        }));
    }
    let idle: Vec<TcpStream> = (0..100)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    let slow: Vec<_> = (0..20)
        .map(|_| {
            std::thread::spawn(move || {
                let Ok(mut s) = TcpStream::connect(addr) else {
                    return;
                };
                let t = Instant::now();
                // One byte of a never-ending header every 300 ms, for 6 s.
                let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nX-Slow: ");
                while t.elapsed() < Duration::from_secs(6) {
                    if s.write_all(b"a").is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(300));
                }
            })
        })
        .collect();
    let big = std::thread::spawn(move || big_line(addr));
    let codes: Vec<u16> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for t in slow {
        t.join().unwrap();
    }
    drop(idle);
    // During the burst the cap may refuse it (503); alone, the head limit does (431).
    let big = big.join().unwrap();
    assert!(
        big.is_empty() || big.starts_with("HTTP/1.1 431 ") || big.starts_with("HTTP/1.1 503 "),
        "1 MB request line: {big:.80}"
    );
    let big = big_line(addr);
    assert!(
        big.is_empty() || big.starts_with("HTTP/1.1 431 "),
        "1 MB request line alone: {big:.80}"
    );
    let ok = codes.iter().filter(|c| **c == 200).count();
    let busy = codes.iter().filter(|c| **c == 503).count();
    assert_eq!(
        ok + busy + codes.iter().filter(|c| **c == 0).count(),
        100,
        "{codes:?}"
    );
    (ok, busy)
}

/// Sends a 1 MB request line; returns what came back.
fn big_line(addr: std::net::SocketAddr) -> String {
    {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut line = b"GET /".to_vec();
        line.resize(1024 * 1024, b'a');
        line.extend_from_slice(b" HTTP/1.1\r\n\r\n");
        // The server stops reading at its head limit: the write fails or the reply is 431.
        let _ = s.write_all(&line);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[test]
fn hostile_clients_neither_stop_sampling_nor_grow_memory() {
    let (child, addr) = serve(&["--interval", "1"]);
    let pid = child.0.id();
    first_record(addr);
    let (n0, t0) = (samples(addr), Instant::now());
    let rss0 = rss_kb(pid);
    let (ok1, busy1) = attack(addr);
    std::thread::sleep(Duration::from_secs(1));
    let rss1 = rss_kb(pid);
    let (ok2, busy2) = attack(addr);
    std::thread::sleep(Duration::from_secs(1));
    let rss2 = rss_kb(pid);
    let (n1, secs) = (samples(addr), t0.elapsed().as_secs_f64());
    println!(
        "samples {n0} -> {n1} over {secs:.1} s; RSS {rss0} -> {rss1} -> {rss2} kB; \
         scrapes ok/refused {ok1}/{busy1}, {ok2}/{busy2}"
    );
    // One sample a second all along: the count may lag the clock by the phase of the ticks.
    assert!(
        n1 - n0 >= secs.floor() - 1.0,
        "sampling stalled: {n0} -> {n1} in {secs:.1} s"
    );
    assert!(ok1 > 0 && ok2 > 0, "some scrapes must get through");
    // Bounded by the connection cap (16 small threads), and flat from one round to the next.
    assert!(rss1 < rss0 + 4096, "RSS {rss0} -> {rss1} kB");
    assert!(rss2 < rss1 + 512, "RSS grew again: {rss1} -> {rss2} kB");
}

/// Issue 22, must-fix 5: threads that `connect(); recv()` in a loop (never sending a byte)
/// used to hold every connection slot for the 2 s read timeout, so about 1 scrape in 40 got
/// through. Idle connections are now evicted for new ones, and a scraper that sends its
/// request at once must get through while the attack runs.
#[test]
fn idle_connectors_in_a_loop_do_not_starve_scrapes() {
    let (_child, addr) = serve(&["--interval", "1"]);
    first_record(addr);
    let flood = serve_util::IdleFlood::start(addr, 40);
    // Let the attack take every slot first.
    std::thread::sleep(Duration::from_millis(500));
    let codes: Vec<u16> = (0..20)
        .map(|_| serve_util::scrape_within(addr, Duration::from_secs(1)))
        .collect();
    let connects = flood.stop();
    let ok = codes.iter().filter(|c| **c == 200).count();
    println!("scrapes ok {ok} of 20 against 40 idle connectors ({connects} connects): {codes:?}");
    assert!(ok >= 18, "{ok} of 20 scrapes got through: {codes:?}");
}

/// Issue 22: `record OUT --listen P` on a busy port failed after creating OUT, so the
/// retry failed with "already exists". The port is bound before OUT is created.
#[test]
fn record_on_a_busy_port_leaves_no_file_behind() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.pwrec");
    let run = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .arg("record")
        .arg(&out)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--duration", "1s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(
        !out.exists(),
        "a failed listen left {} behind",
        out.display()
    );
}

/// Issue 22: `serve --listen 80` as non-root said "run as the file's owner". Run as
/// `nobody` (through runuser, when this runs as root and the unprivileged ports start at
/// 1024), the hint must name what a low port needs.
#[test]
fn a_low_port_as_non_root_gets_the_port_hint() {
    let start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_unprivileged_port_start")
        .ok()
        .and_then(|s| s.trim().parse::<u16>().ok());
    if !rustix::process::geteuid().is_root() || !have_runuser() || start.is_none_or(|s| s <= 80) {
        println!("skipped: needs root, runuser and ip_unprivileged_port_start above 80");
        return;
    }
    let run = Command::new("runuser")
        .args(["-u", "nobody", "--", env!("CARGO_BIN_EXE_pagewatch")])
        .args(["serve", "--listen", "127.0.0.1:80"])
        .env_remove("HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("listening on 127.0.0.1:80"), "{err}");
    assert!(
        err.contains("hint: ") && err.contains("CAP_NET_BIND_SERVICE") && err.contains("1023"),
        "{err}"
    );
    assert!(!err.contains("file's owner"), "{err}");
}

fn have_runuser() -> bool {
    Command::new("runuser")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
