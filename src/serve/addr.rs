//! Where the metrics endpoint listens: `--listen ADDR`.
//!
//! Loopback unless an address is given: no `--listen` is `127.0.0.1:7463`, a bare `PORT` is
//! `127.0.0.1:PORT`, `localhost:PORT` is `127.0.0.1:PORT`. Any other address must be written
//! out (`0.0.0.0:7463`, `[::]:7463`, `192.0.2.7:7463`). `:PORT`, which other tools read as
//! every address, is refused with a message saying which to write. Port 0 takes a free port
//! (pagewatch prints the one it got).
//!
//! The default port, 7463, is outside 9100–9999: Prometheus's wiki allocates that range to
//! exporters one port each, and pagewatch has no allocation there, so taking a port in it
//! could collide with an exporter running on the same host.
//! Owns: that syntax and rule. Must not touch: sockets (pure; no name lookup).
//! No name is ever resolved, `localhost` aside, which is read as 127.0.0.1 here: the static
//! build (packaging/static.sh) links glibc in, whose resolver would need the server's NSS
//! libraries at run time, so a hostname is refused with a message saying so.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The port served when none is given.
pub const DEFAULT_PORT: u16 = 7463;

/// The address for `--listen` (`None`: not given).
pub fn parse(text: Option<&str>) -> Result<SocketAddr, String> {
    let loopback = |port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
    let Some(t) = text.map(str::trim) else {
        return Ok(loopback(DEFAULT_PORT));
    };
    let port = |p: &str| {
        p.parse::<u16>()
            .map_err(|_| format!("--listen {t}: {p:?} is not a port (0 to 65535)"))
    };
    if t.bytes().all(|b| b.is_ascii_digit()) && !t.is_empty() {
        return port(t).map(loopback);
    }
    if let Some(p) = t.strip_prefix(':') {
        return Err(format!(
            "--listen {t}: a bare :PORT would mean every address; write {p} or 127.0.0.1:{p} \
             for loopback, or 0.0.0.0:{p} (or [::]:{p}) to accept scrapes from other hosts"
        ));
    }
    if let Some(p) = t.strip_prefix("localhost:") {
        return port(p).map(loopback);
    }
    t.parse::<SocketAddr>().map_err(|_| {
        // A name before the last colon (not an IP, not a bracketed IPv6): say it is not looked up.
        let host = t.rsplit_once(':').map_or(t, |(h, _)| h);
        let named = !host.is_empty()
            && !host.starts_with('[')
            && host.parse::<IpAddr>().is_err()
            && host.bytes().any(|b| b.is_ascii_alphabetic());
        if named {
            format!(
                "--listen {t}: give an IP address and port, such as 127.0.0.1:7463 or \
                 0.0.0.0:7463; hostnames are not resolved (localhost aside)"
            )
        } else {
            format!(
                "--listen {t}: expected PORT, IP:PORT or [IPv6]:PORT (like 7463, 127.0.0.1:7463, \
                 [::1]:7463)"
            )
        }
    })
}

/// Whether only this host can reach `addr`. An IPv4-mapped loopback (`[::ffff:127.0.0.1]`)
/// is loopback: a socket bound there takes IPv4 connections to 127.0.0.1 only.
#[must_use]
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().to_canonical().is_loopback()
}

/// The warning for an endpoint other hosts can reach (`None` on loopback): on stderr, and
/// first in the screen's notice, which the jobs pane cuts at its width.
#[must_use]
pub fn warning(bound: &SocketAddr) -> Option<String> {
    (!is_loopback(bound)).then(|| {
        format!(
            "warning: {bound} is not loopback: any host that can reach it can read the \
             metrics (no authentication, no TLS)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_unless_an_address_is_written_out() {
        let ok = |t: Option<&str>| parse(t).unwrap().to_string();
        assert_eq!(ok(None), "127.0.0.1:7463");
        assert_eq!(ok(Some("8080")), "127.0.0.1:8080");
        assert_eq!(ok(Some("localhost:9")), "127.0.0.1:9");
        assert_eq!(ok(Some("0")), "127.0.0.1:0");
        assert_eq!(ok(Some("[::1]:7463")), "[::1]:7463");
        assert_eq!(ok(Some("0.0.0.0:7463")), "0.0.0.0:7463");
        assert_eq!(ok(Some("[::]:80")), "[::]:80");
        assert!(is_loopback(&parse(Some("[::1]:1")).unwrap()));
        assert!(is_loopback(&parse(None).unwrap()));
        assert!(!is_loopback(&parse(Some("0.0.0.0:1")).unwrap()));
    }

    #[test]
    fn an_ipv4_mapped_loopback_is_loopback() {
        let p = |t| parse(Some(t)).unwrap();
        assert!(is_loopback(&p("[::ffff:127.0.0.1]:7463")));
        assert!(is_loopback(&p("[::ffff:127.1.2.3]:7463")));
        assert!(!is_loopback(&p("[::ffff:192.0.2.7]:7463")));
        assert!(!is_loopback(&p("[::ffff:0.0.0.0]:7463")));
        assert!(!is_loopback(&p("[::]:7463")));
    }

    #[test]
    fn a_bare_colon_port_and_garbage_are_refused() {
        let e = parse(Some(":7463")).unwrap_err();
        assert!(
            e.contains("0.0.0.0:7463") && e.contains("127.0.0.1:7463"),
            "{e}"
        );
        for bad in [
            "",
            "70000",
            "host:7463",
            "1.2.3.4",
            "[::1]",
            "-1",
            "localhost:x",
        ] {
            assert!(parse(Some(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_hostname_is_refused_not_resolved() {
        for name in [
            "myhost:7463",
            "db1.example.com:80",
            "localhost6:9",
            "ip6-localhost",
        ] {
            let e = parse(Some(name)).unwrap_err();
            assert!(
                e.contains("hostnames are not resolved") && e.contains("127.0.0.1:7463"),
                "{name}: {e}"
            );
        }
        // Not names: the general message.
        for bad in ["1.2.3.4", "[::1]", "1.2.3:80"] {
            let e = parse(Some(bad)).unwrap_err();
            assert!(!e.contains("hostnames"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_default_port_is_outside_the_exporters_range() {
        assert!(!(9100..=9999).contains(&DEFAULT_PORT));
    }
}
