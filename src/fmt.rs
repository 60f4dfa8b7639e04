//! Number formatting shared by the text output and the TUI: sizes, rates, percentages, time.
//!
//! Owns: pure `value → String` helpers. Must not touch: I/O or the clock.

/// A byte count as a short human size with binary units: `512B`, `1.5K`, `23.1G`.
#[must_use]
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "K", "M", "G", "T", "P"];
    let mut v = b;
    let mut u = 0;
    while v.abs() >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v.abs() >= 100.0 {
        format!("{v:.0}{}", UNITS[u])
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
}

/// Pages as a human size.
#[must_use]
pub fn pages(p: u64, page_size: u64) -> String {
    bytes(p as f64 * page_size as f64)
}

/// An optional figure with `decimals`, or `-` when there is none (first tick, reset).
#[must_use]
pub fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

/// A rate in compact form: `0`, `12`, `3.4k`, `12M`.
#[must_use]
pub fn rate(v: Option<f64>) -> String {
    let Some(v) = v else { return "-".to_owned() };
    if v < 10.0 {
        format!("{v:.1}").trim_end_matches(".0").to_owned()
    } else if v < 10_000.0 {
        format!("{v:.0}")
    } else if v < 10_000_000.0 {
        format!("{:.1}k", v / 1000.0)
    } else {
        format!("{:.0}M", v / 1e6)
    }
}

/// `HH:MM:SS` in UTC for milliseconds since the epoch (deterministic: no time zone lookup).
#[must_use]
pub fn clock_utc(ms: i64) -> String {
    let s = ms.div_euclid(1000);
    let day = s.rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", day / 3600, day % 3600 / 60, day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(bytes(512.0), "512B");
        assert_eq!(bytes(1536.0), "1.5K");
        assert_eq!(bytes(24_402_324.0 * 1024.0), "23.3G");
        assert_eq!(bytes(200.0 * 1024.0 * 1024.0), "200M");
        assert_eq!(pages(262_144, 4096), "1.0G");
        assert_eq!(opt(None, 2), "-");
        assert_eq!(opt(Some(1.234), 2), "1.23");
        assert_eq!(rate(Some(0.0)), "0");
        assert_eq!(rate(Some(2.5)), "2.5");
        assert_eq!(rate(Some(12_345.0)), "12.3k");
        assert_eq!(clock_utc(86_400_000 + 3_723_000), "01:02:03");
    }
}
