//! The HTTP side of the metrics endpoint: `GET /metrics` (the latest page, negotiated) and
//! `GET /` (a short HTML page linking to it), one request per connection.
//!
//! A request head arrives in pieces into a `HeadReader`, which keeps at most `MAX_HEAD`
//! bytes: a longer head, like a 1 MB request line, is answered 431 and nothing beyond
//! `MAX_HEAD` is read or kept. `parse_head` decides a head from bytes alone (no socket), so
//! the fuzz tests throw garbage at exactly what a client reaches. A scrape only clones the
//! `Arc` of the latest page under a lock held for that clone, and renders it outside: it never
//! waits for a sample and a sample never waits for it. Which connections are held, and for
//! how long, is `conns`'s.
//!
//! httparse (hyper's parser) reads the request; pagewatch parses no HTTP itself. It is used
//! in place of an HTTP server crate because tiny_http 0.12, the usual synchronous one, has
//! none of the limits: it starts a thread for every connection without a cap, sets no
//! timeouts, and buffers a request line of any length (`ClientConnection::read_next_line`).
//! Owns: the request head, the routes and the response bytes. Must not touch: what a page
//! says (`metrics`), sampling, the connection limits (`conns`).

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::metrics::live::Page;
use crate::metrics::negotiate::negotiate;
use crate::metrics::render::render;

/// The request line and headers together, bytes.
pub const MAX_HEAD: usize = 8 * 1024;

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

/// A response.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The Content-Type.
    pub content_type: &'static str,
    /// The body (sent unless the request was HEAD).
    pub body: String,
}

impl Reply {
    /// A plain-text reply.
    #[must_use]
    pub fn text(status: u16, body: &str) -> Self {
        Reply {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.to_owned(),
        }
    }
}

/// What a request head asked, once decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Head {
    /// GET or HEAD of `path` (without its query).
    Get {
        /// The path, like `/metrics`.
        path: String,
        /// The Accept header, when there is one in UTF-8.
        accept: Option<String>,
        /// HEAD: the reply goes without its body.
        head_only: bool,
    },
    /// A head answered with an error status: 400, 405 or 431.
    Refused {
        /// The status.
        status: u16,
        /// The body, one line.
        why: &'static str,
    },
}

/// A request head arriving in pieces; never holds more than `MAX_HEAD` bytes.
#[derive(Debug, Default)]
pub struct HeadReader {
    buf: Vec<u8>,
}

impl HeadReader {
    /// How many more bytes it takes: read no more than this from the client.
    #[must_use]
    pub fn room(&self) -> usize {
        MAX_HEAD - self.buf.len()
    }

    /// Bytes held so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing came yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Takes `bytes` (those beyond `room()` are dropped) and decides the head once it can:
    /// `None` while more is needed.
    pub fn push(&mut self, bytes: &[u8]) -> Option<Head> {
        let take = bytes.len().min(self.room());
        self.buf.extend_from_slice(&bytes[..take]);
        parse_head(&self.buf)
    }
}

/// Decides a request head from the bytes received so far: `None` while it is incomplete and
/// shorter than `MAX_HEAD`; a head of `MAX_HEAD` bytes or more that is still incomplete is
/// refused (431).
#[must_use]
pub fn parse_head(buf: &[u8]) -> Option<Head> {
    let refused = |status, why| Some(Head::Refused { status, why });
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(_)) => Some(head_of(&req)),
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => {
            refused(431, "request head too large\n")
        }
        Ok(httparse::Status::Partial) => None,
        Err(httparse::Error::TooManyHeaders) => refused(431, "too many headers\n"),
        Err(_) => refused(400, "bad request\n"),
    }
}

fn head_of(req: &httparse::Request<'_, '_>) -> Head {
    let head_only = match req.method {
        Some("GET") => false,
        Some("HEAD") => true,
        _ => {
            return Head::Refused {
                status: 405,
                why: "only GET and HEAD\n",
            };
        }
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

/// The reply to `head` (the page rendered here, when it asks for it), and whether it goes
/// without its body (HEAD).
#[must_use]
pub fn reply(head: &Head, latest: &Latest) -> (Reply, bool) {
    match head {
        Head::Refused { status, why } => (Reply::text(*status, why), false),
        Head::Get {
            path,
            accept,
            head_only,
        } => (route(path, accept.as_deref(), latest), *head_only),
    }
}

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

/// The response head for `r`.
#[must_use]
pub fn response_head(r: &Reply) -> String {
    let allow = if r.status == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         {allow}Connection: close\r\n\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    )
}

/// Writes `r` (its head alone when `head_only`) and ends the sending side.
pub fn respond(s: &mut std::net::TcpStream, r: &Reply, head_only: bool) -> std::io::Result<()> {
    s.write_all(response_head(r).as_bytes())?;
    if !head_only {
        s.write_all(r.body.as_bytes())?;
    }
    s.flush()?;
    s.shutdown(std::net::Shutdown::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_in_pieces_is_decided_when_whole() {
        let mut r = HeadReader::default();
        assert_eq!(r.push(b"GET /metrics?x=1 HT"), None);
        assert_eq!(r.push(b"TP/1.1\r\nAccept: text/plain\r\n"), None);
        assert_eq!(
            r.push(b"\r\n"),
            Some(Head::Get {
                path: "/metrics".into(),
                accept: Some("text/plain".into()),
                head_only: false,
            })
        );
    }

    #[test]
    fn bad_heads_are_refused_with_their_status() {
        let status = |b: &[u8]| match parse_head(b) {
            Some(Head::Refused { status, .. }) => status,
            other => panic!("{other:?}"),
        };
        assert_eq!(status(b"POST / HTTP/1.1\r\n\r\n"), 405);
        assert_eq!(status(b"\x16\x03\x01garbage\r\n\r\n"), 400);
        let many = "X-Many: y\r\n".repeat(40);
        assert_eq!(
            status(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes()),
            431
        );
    }

    #[test]
    fn nothing_beyond_max_head_is_kept() {
        let mut r = HeadReader::default();
        assert_eq!(r.push(b"GET /"), None);
        let got = r.push(&vec![b'a'; 3 * MAX_HEAD]);
        assert!(matches!(got, Some(Head::Refused { status: 431, .. })));
        assert_eq!((r.len(), r.room()), (MAX_HEAD, 0));
    }
}
