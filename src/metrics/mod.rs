//! Metrics for Prometheus: the family tables shared with the OpenMetrics export
//! (`families`), the counters only a live run accumulates (`counters`), the page a scrape
//! serves (`live`), its text in OpenMetrics or the classic Prometheus format (`render`), and
//! which of the two a scraper asked for (`negotiate`).
//!
//! Owns: everything a scrape says. Must not touch: sockets, threads, files or the clock (the
//! HTTP edge is `serve`; it hands in pagewatch's own CPU time, read at the scrape).

pub mod counters;
pub mod families;
pub mod live;
pub mod negotiate;
pub mod render;
