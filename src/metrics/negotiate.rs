//! Which text format a scraper asked for, from its `Accept` header: OpenMetrics 1.0 for
//! Prometheus 2.5 and later (which ask `application/openmetrics-text` first), the classic
//! Prometheus text format 0.0.4 for older scrapers, curl and browsers.
//!
//! Each media range of the header is weighed by its `q` parameter (1 when absent); the best
//! range pagewatch can serve wins, OpenMetrics on a tie. Without a header, or when nothing in
//! it matches, the classic format is served, as node_exporter does.
//! Owns: that choice and each format's Content-Type. Must not touch: I/O.

/// A scrape's text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0.0 text: `# UNIT`, counters without `_total` in `# TYPE`, stateset,
    /// `# EOF`.
    OpenMetrics,
    /// The classic Prometheus text format, version 0.0.4.
    Classic,
}

impl Format {
    /// The Content-Type of a response in this format.
    #[must_use]
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Classic => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// The format to serve for an `Accept` header value (`None`: no header).
#[must_use]
pub fn negotiate(accept: Option<&str>) -> Format {
    let mut best: Option<(f64, Format)> = None;
    for range in accept.unwrap_or("").split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let mut q = 1.0;
        let mut version = None;
        for p in parts {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let v = v.trim().trim_matches('"');
            match k.trim().to_ascii_lowercase().as_str() {
                "q" => {
                    q = v
                        .parse::<f64>()
                        .ok()
                        .filter(|q| (0.0..=1.0).contains(q))
                        .unwrap_or(0.0);
                }
                "version" => version = Some(v.to_owned()),
                _ => {}
            }
        }
        let format = match (media.as_str(), version.as_deref()) {
            ("application/openmetrics-text", None | Some("1.0.0" | "0.0.1")) => Format::OpenMetrics,
            ("text/plain" | "text/*" | "*/*", None | Some("0.0.4")) => Format::Classic,
            _ => continue,
        };
        if q <= 0.0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((bq, bf)) => match q.total_cmp(&bq) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => format == Format::OpenMetrics && bf != format,
                std::cmp::Ordering::Less => false,
            },
        };
        if better {
            best = Some((q, format));
        }
    }
    best.map_or(Format::Classic, |(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_gets_openmetrics() {
        // What Prometheus 2.42 sends.
        let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                    version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(negotiate(Some(prom)), Format::OpenMetrics);
    }

    #[test]
    fn older_scrapers_curl_and_browsers_get_the_classic_format() {
        // Prometheus before 2.5.
        let old = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                   encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.1";
        assert_eq!(negotiate(Some(old)), Format::Classic);
        assert_eq!(negotiate(None), Format::Classic);
        assert_eq!(negotiate(Some("*/*")), Format::Classic);
        assert_eq!(
            negotiate(Some("text/html,application/xhtml+xml")),
            Format::Classic
        );
    }

    #[test]
    fn weights_decide_and_openmetrics_wins_ties() {
        let prefers_text = "application/openmetrics-text;q=0.2, text/plain;version=0.0.4;q=0.9";
        assert_eq!(negotiate(Some(prefers_text)), Format::Classic);
        assert_eq!(
            negotiate(Some("text/plain, application/openmetrics-text")),
            Format::OpenMetrics
        );
        // q=0 refuses a format; an unknown version is not served.
        assert_eq!(
            negotiate(Some("application/openmetrics-text;q=0, text/plain;q=0.1")),
            Format::Classic
        );
        assert_eq!(
            negotiate(Some("application/openmetrics-text; version=2.0.0")),
            Format::Classic
        );
        assert_eq!(
            negotiate(Some("Application/OpenMetrics-Text; Q=\"0.5\"")),
            Format::OpenMetrics
        );
    }
}
