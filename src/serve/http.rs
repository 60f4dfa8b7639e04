//! The HTTP side of the metrics endpoint: `GET /metrics` (the latest page, negotiated) and
//! `GET /` (a short HTML page linking to it), one request per connection.
//!
//! Bad clients must not hurt the monitor, so every resource a client can hold is capped:
//! at most `MAX_CONNECTIONS` at once (more are answered 503 and closed at once, without
//! reading), each on its own short-lived thread with a small stack; the request head must
//! arrive whole within `HEAD_DEADLINE` (slowloris) and fit in `MAX_HEAD` bytes (a longer one,
//! like a 1 MB request line, gets 431 and the connection is closed: nothing beyond
//! `MAX_HEAD` is read or kept); each read and write times out. A scrape only clones the
//! `Arc` of the latest page under a lock held for that clone, and renders it outside: it never
//! waits for a sample and a sample never waits for it.
//!
//! httparse (hyper's parser) reads the request; pagewatch parses no HTTP itself. It is used
//! in place of an HTTP server crate because tiny_http 0.12, the usual synchronous one, has
//! none of these limits: it starts a thread for every connection without a cap, sets no
//! timeouts, and buffers a request line of any length (`ClientConnection::read_next_line`).
//! Owns: the listener, its threads and the limits. Must not touch: what a page says
//! (`metrics`), sampling.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::metrics::live::Page;
use crate::metrics::negotiate::negotiate;
use crate::metrics::render::render;

/// Connections served at once; more are refused with 503.
pub const MAX_CONNECTIONS: usize = 16;
/// The request line and headers together, bytes.
pub const MAX_HEAD: usize = 8 * 1024;
/// The whole request head must arrive within this.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(5);
/// One read or write.
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// A connection thread's stack: the head buffer and httparse's header array live on it.
const STACK: usize = 128 * 1024;

/// The latest page, swapped whole by the sampler and cloned (an `Arc`) by each scrape.
#[derive(Debug, Clone, Default)]
pub struct Latest(Arc<Mutex<Arc<Page>>>);

impl Latest {
    /// Publishes `page`; the previous one is dropped outside the lock (or by the last
    /// scrape still rendering it).
    pub fn publish(&self, page: Page) {
        let new = Arc::new(page);
        let old = {
            let mut g = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            std::mem::replace(&mut *g, new)
        };
        drop(old);
    }

    /// The page to serve now.
    #[must_use]
    pub fn get(&self) -> Arc<Page> {
        Arc::clone(
            &self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// Binds `addr` and serves `latest` from a thread of its own; returns the bound address
/// (the port the system chose, for port 0).
pub fn start(addr: SocketAddr, latest: Latest) -> Result<SocketAddr> {
    let listener =
        TcpListener::bind(addr).with_context(|| format!("listening on {addr} for /metrics"))?;
    let bound = listener.local_addr().context("reading the bound address")?;
    let active = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("http".into())
        .stack_size(STACK)
        .spawn(move || accept_loop(&listener, &latest, &active))
        .context("starting the http thread")?;
    Ok(bound)
}

fn accept_loop(listener: &TcpListener, latest: &Latest, active: &Arc<AtomicUsize>) {
    loop {
        let Ok((stream, _)) = listener.accept() else {
            // Out of file descriptors or similar: back off instead of spinning.
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
        if active.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::AcqRel);
            let mut s = stream;
            let _ = respond(
                &mut s,
                &Reply::text(503, "busy: too many connections\n"),
                false,
            );
            continue;
        }
        let slot = Slot(Arc::clone(active));
        let latest = latest.clone();
        let spawned = std::thread::Builder::new()
            .name("http-conn".into())
            .stack_size(STACK)
            .spawn(move || {
                let _slot = slot;
                let mut s = stream;
                serve_one(&mut s, &latest);
            });
        // A thread that could not start dropped its slot with the closure.
        drop(spawned);
    }
}

/// One of the `MAX_CONNECTIONS` slots, given back when the connection ends.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response.
struct Reply {
    status: u16,
    content_type: &'static str,
    body: String,
}

impl Reply {
    fn text(status: u16, body: &str) -> Self {
        Reply {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.to_owned(),
        }
    }
}

/// What the request asked, once its head is in.
enum Head {
    Get {
        path: String,
        accept: Option<String>,
        head_only: bool,
    },
    Reply(Reply),
}

/// Reads one request head within the limits and answers it.
fn serve_one(s: &mut TcpStream, latest: &Latest) {
    let _ = s.set_read_timeout(Some(IO_TIMEOUT));
    let _ = s.set_nodelay(true);
    let (reply, head_only) = match read_head(s) {
        None => return, // closed, timed out or failed: nothing to answer
        Some(Head::Reply(r)) => (r, false),
        Some(Head::Get {
            path,
            accept,
            head_only,
        }) => (route(&path, accept.as_deref(), latest), head_only),
    };
    let _ = respond(s, &reply, head_only);
}

fn read_head(s: &mut TcpStream) -> Option<Head> {
    let start = Instant::now();
    let mut buf = [0u8; MAX_HEAD];
    let mut len = 0;
    loop {
        if start.elapsed() > HEAD_DEADLINE {
            return Some(Head::Reply(Reply::text(408, "request head too slow\n")));
        }
        let n = match s.read(&mut buf[len..]) {
            Ok(0) => return None,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Some(Head::Reply(Reply::text(408, "request head too slow\n")));
            }
            Err(_) => return None,
        };
        len += n;
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => return Some(head_of(&req)),
            Ok(httparse::Status::Partial) if len == MAX_HEAD => {
                return Some(Head::Reply(Reply::text(431, "request head too large\n")));
            }
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => {
                return Some(Head::Reply(Reply::text(431, "too many headers\n")));
            }
            Err(_) => return Some(Head::Reply(Reply::text(400, "bad request\n"))),
        }
    }
}

fn head_of(req: &httparse::Request<'_, '_>) -> Head {
    let head_only = match req.method {
        Some("GET") => false,
        Some("HEAD") => true,
        _ => return Head::Reply(Reply::text(405, "only GET and HEAD\n")),
    };
    let accept = req
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("accept"))
        .and_then(|h| std::str::from_utf8(h.value).ok())
        .map(str::to_owned);
    let path = req.path.unwrap_or("/");
    Head::Get {
        path: path.split('?').next().unwrap_or("/").to_owned(),
        accept,
        head_only,
    }
}

const INDEX: &str = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pagewatch</title></head>\n\
<body><h1>pagewatch</h1>\n<p>Why buffered IO is slow: memory, dirty-page thresholds, reclaim and disks, \
as Prometheus metrics.</p>\n<p><a href=\"/metrics\">/metrics</a></p>\n</body></html>\n";

fn route(path: &str, accept: Option<&str>, latest: &Latest) -> Reply {
    match path {
        "/metrics" => {
            let fmt = negotiate(accept);
            let page = latest.get();
            Reply {
                status: 200,
                content_type: fmt.content_type(),
                body: render(&page, fmt, Some(own_cpu_seconds())),
            }
        }
        "/" => Reply {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: INDEX.to_owned(),
        },
        _ => Reply::text(404, "not found: try /metrics\n"),
    }
}

/// pagewatch's CPU time so far (all threads), read at the scrape.
fn own_cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

fn respond(s: &mut TcpStream, r: &Reply, head_only: bool) -> std::io::Result<()> {
    let allow = if r.status == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         {allow}Connection: close\r\n\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    s.write_all(head.as_bytes())?;
    if !head_only {
        s.write_all(r.body.as_bytes())?;
    }
    s.flush()?;
    s.shutdown(std::net::Shutdown::Write)
}
