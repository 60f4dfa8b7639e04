//! HTTP clients as fuzz inputs (issue 22): the request heads that real scrapers send
//! (Prometheus, curl, a browser) and bad ones, mutated at the byte level (bits flipped,
//! garbage and control bytes inserted, cut short, a header line repeated past the header
//! limit, a byte repeated past `MAX_HEAD`) and fed to the endpoint's head reader in random
//! pieces, as a socket would deliver them, without a socket.
//!
//! Each case must end without a panic and with a bounded answer: the reader never keeps
//! more than `MAX_HEAD` bytes and has decided by then; the decision does not depend on how
//! the bytes were split; a refusal is 400, 405 or 431; and the reply is one of the routes'
//! statuses with a short head and a body no larger than the page.
//! Owns: these cases. Must not touch: the sample fuzzing (`fuzz.rs`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use pagewatch::serve::http::{
    Head, HeadReader, Latest, MAX_HEAD, parse_head, reply, response_head,
};

use super::{Rng, cases};

/// Heads as clients send them.
const SEEDS: &[&[u8]] = &[
    b"GET /metrics HTTP/1.1\r\nHost: 10.0.0.5:7463\r\nUser-Agent: Prometheus/2.53.0\r\n\
      Accept: application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,\
      application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2\r\n\
      Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
    b"GET /metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1:7463\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: localhost:7463\r\nAccept: text/html,application/xhtml+xml;q=0.9\r\n\
      Accept-Language: en\r\nConnection: keep-alive\r\nUpgrade-Insecure-Requests: 1\r\n\r\n",
    b"HEAD /metrics HTTP/1.0\r\n\r\n",
    b"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
    b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
];

/// Mutates `b` once; returns what it did.
fn mutate(rng: &mut Rng, b: &mut Vec<u8>) -> String {
    let at = rng.below(b.len() + 1);
    match rng.below(7) {
        0 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
            format!("flipped a bit at {i}")
        }
        1 => {
            const ODD: &[u8] = b"\0\r\n :\t\x7f\xff\xc3/?%#";
            let g: Vec<u8> = (0..=rng.below(12))
                .map(|_| ODD[rng.below(ODD.len())])
                .collect();
            b.splice(at..at, g.iter().copied());
            format!("inserted {g:?} at {at}")
        }
        2 => {
            b.truncate(at);
            format!("cut at {at}")
        }
        3 => {
            let n = 1 + rng.below(60);
            let line = format!("X-Many-{}: v\r\n", rng.below(1000));
            let at = b
                .windows(2)
                .position(|w| w == b"\r\n")
                .map_or(b.len(), |i| i + 2);
            b.splice(at..at, line.repeat(n).into_bytes());
            format!("{n} header lines at {at}")
        }
        4 => {
            let n = MAX_HEAD / 2 + rng.below(2 * MAX_HEAD);
            let byte = [b'a', b'/', b' ', b'\r', 0][rng.below(5)];
            b.splice(at..at, std::iter::repeat_n(byte, n));
            format!("{n} of {byte:?} at {at}")
        }
        5 => {
            let i = rng.below(b.len() + 1);
            let tail = b.split_off(i);
            b.extend_from_slice(&tail[..tail.len().min(rng.below(tail.len() + 1))]);
            b.extend_from_slice(&tail);
            format!("repeated part of the tail at {i}")
        }
        _ => {
            b.retain(|c| *c != b'\r' || rng.below(2) == 0);
            "dropped some CRs".into()
        }
    }
}

/// Feeds `bytes` in random pieces; returns the decision and the bytes it took.
fn feed(rng: &mut Rng, bytes: &[u8]) -> (Option<Head>, usize) {
    let mut r = HeadReader::default();
    let mut at = 0;
    while at < bytes.len() {
        // Mostly small pieces; now and then all the rest at once, past the reader's room.
        let left = bytes.len() - at;
        let n = if rng.below(8) == 0 {
            left
        } else {
            1 + rng.below(64.min(left))
        };
        let got = r.push(&bytes[at..at + n]);
        assert!(r.len() <= MAX_HEAD, "kept {} bytes", r.len());
        at += n;
        if got.is_some() {
            return (got, at);
        }
        assert!(r.room() > 0, "{} bytes kept and nothing decided", r.len());
    }
    (None, at)
}

fn check(head: &Head, latest: &Latest, case: &str) {
    if let Head::Refused { status, .. } = head {
        assert!(matches!(status, 400 | 405 | 431), "{status} in {case}");
    }
    let (r, _) = reply(head, latest);
    assert!(
        matches!(r.status, 200 | 400 | 404 | 405 | 431),
        "{} in {case}",
        r.status
    );
    assert!(response_head(&r).len() < 256, "head of {case}");
    let limit = if r.status == 200 { 1 << 20 } else { 64 };
    assert!(
        r.body.len() < limit,
        "{} body bytes in {case}",
        r.body.len()
    );
}

/// Issue 22: mutated request heads, fed in pieces, never panic and get a bounded answer.
#[test]
fn mutated_request_heads_never_panic_and_get_a_bounded_answer() {
    let latest = Latest::default();
    let n = (cases() / 2).max(1000);
    let (mut decided, mut refused) = (0u64, 0u64);
    for seed in 0..n {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut bytes = SEEDS[rng.below(SEEDS.len())].to_vec();
        let notes: Vec<String> = (0..rng.below(4))
            .map(|_| mutate(&mut rng, &mut bytes))
            .collect();
        let case = format!("http case {seed}: {}", notes.join("; "));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let (got, took) = feed(&mut rng, &bytes);
            // Undecided only while short of the limit.
            assert!(
                got.is_some() || bytes.len() < MAX_HEAD,
                "undecided at {took}"
            );
            // The same bytes whole give the same decision.
            assert_eq!(
                got,
                parse_head(&bytes[..took.min(MAX_HEAD)]),
                "split or whole"
            );
            if let Some(h) = &got {
                check(h, &latest, &case);
            }
            got
        }));
        match outcome.unwrap_or_else(|_| panic!("panic in {case}")) {
            Some(Head::Refused { .. }) => refused += 1,
            Some(Head::Get { .. }) => decided += 1,
            None => {}
        }
    }
    eprintln!("{n} mutated request heads: {decided} GET or HEAD, {refused} refused");
    // Both outcomes must be common, or the mutations test nothing.
    assert!(
        decided > n / 10 && refused > n / 10,
        "{decided} and {refused} of {n}"
    );
}
