//! The period a report covers, from `--from`/`--to`, and UTC date formatting for reports.
//!
//! Owns: parsing time points relative to a recording and the civil-date arithmetic the
//! report prints (no time-zone database: always UTC). Must not touch: the clock, samples.

use anyhow::{Context, bail};

/// A closed interval of wall-clock time, ms since the epoch; `None` = unbounded.
/// A derived record belongs to the range when its read time lies inside it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Range {
    /// First included instant.
    pub from_ms: Option<i64>,
    /// Last included instant.
    pub to_ms: Option<i64>,
}

const DAY_MS: i64 = 86_400_000;

impl Range {
    /// The whole recording.
    pub const ALL: Range = Range {
        from_ms: None,
        to_ms: None,
    };

    /// Parses `--from`/`--to` against a recording that started at `started_ms`.
    ///
    /// Each point is either
    /// - an **offset from the start**: seconds (`90`, `90.5`), `MM:SS` or `HH:MM:SS`; or
    /// - a **wall-clock time in UTC** prefixed with `@`: `@HH:MM` or `@HH:MM:SS`. It means
    ///   the first time that clock time occurs at or after the recording's start, so a clock
    ///   time earlier than the start's means the next day (a recording across midnight).
    ///
    /// Without the `@` a value is always an offset, so `10:30` is ten minutes thirty seconds
    /// into the recording, never half past ten.
    pub fn parse(from: Option<&str>, to: Option<&str>, started_ms: i64) -> anyhow::Result<Range> {
        let point = |s: Option<&str>, what: &str| {
            s.map(|s| point(s, started_ms).with_context(|| format!("{what} {s:?}")))
                .transpose()
        };
        let r = Range {
            from_ms: point(from, "--from")?,
            to_ms: point(to, "--to")?,
        };
        if let (Some(f), Some(t)) = (r.from_ms, r.to_ms)
            && t < f
        {
            bail!(
                "--to ({}) is before --from ({})",
                datetime_utc(t),
                datetime_utc(f)
            );
        }
        Ok(r)
    }

    /// Whether `ms` lies in the range.
    #[must_use]
    pub fn contains(&self, ms: i64) -> bool {
        self.from_ms.is_none_or(|f| ms >= f) && self.to_ms.is_none_or(|t| ms <= t)
    }
}

/// Seconds in `H:M:S`, `M:S` or `S` form; the fields after the first must be below 60.
fn clock_secs(s: &str) -> anyhow::Result<f64> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        bail!("expected seconds, MM:SS or HH:MM:SS");
    }
    let mut total = 0.0;
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let v: f64 = if last {
            p.parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0)
        } else {
            p.parse::<u32>().ok().map(f64::from)
        }
        .with_context(|| format!("{p:?} is not a number"))?;
        if i > 0 && v >= 60.0 {
            bail!("minutes and seconds must be below 60");
        }
        total = total * 60.0 + v;
    }
    Ok(total)
}

fn point(s: &str, started_ms: i64) -> anyhow::Result<i64> {
    let s = s.trim();
    if let Some(clock) = s.strip_prefix('@') {
        if clock.split(':').count() < 2 {
            bail!("a wall-clock time needs HH:MM or HH:MM:SS after '@'");
        }
        // `HH:MM` is hours and minutes here, not minutes and seconds.
        let hms = if clock.split(':').count() == 2 {
            format!("{clock}:00")
        } else {
            clock.to_owned()
        };
        let tod = (clock_secs(&hms)? * 1000.0).round() as i64;
        if tod >= DAY_MS {
            bail!("a wall-clock time must be before 24:00:00");
        }
        let day = started_ms.div_euclid(DAY_MS) * DAY_MS;
        let at = day + tod;
        return Ok(if at < started_ms { at + DAY_MS } else { at });
    }
    let offset = clock_secs(s)?;
    // Longer than any recording; and in ms it still fits an i64 beside any start time.
    if !(0.0..=MAX_OFFSET_S).contains(&offset) {
        bail!("{s}: an offset from the start must be between 0 and 100 years");
    }
    Ok(started_ms.saturating_add((offset * 1000.0).round() as i64))
}

/// The largest offset `--from`/`--to` accept: 100 years, in seconds.
const MAX_OFFSET_S: f64 = 100.0 * 366.0 * 86_400.0;

/// `(year, month, day)` of a day count since 1970-01-01 (proleptic Gregorian; H. Hinnant's
/// `civil_from_days`).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `YYYY-MM-DD HH:MM:SS` in UTC.
#[must_use]
pub fn datetime_utc(ms: i64) -> String {
    let (y, m, d) = civil(ms.div_euclid(DAY_MS));
    format!("{y:04}-{m:02}-{d:02} {}", crate::fmt::clock_utc(ms))
}

/// An offset from the start as `+M:SS.s` or `+H:MM:SS.s`.
#[must_use]
pub fn offset(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let tenths = (ms.unsigned_abs() + 50) / 100;
    let (s, t) = (tenths / 10, tenths % 10);
    if s >= 3600 {
        format!("{sign}{}:{:02}:{:02}.{t}", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{sign}{}:{:02}.{t}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-11-22 07:09:14.500 UTC.
    const START: i64 = 1_795_331_354_500;

    #[test]
    fn formats_dates() {
        assert_eq!(datetime_utc(0), "1970-01-01 00:00:00");
        assert_eq!(datetime_utc(START), "2026-11-22 07:09:14");
        assert_eq!(datetime_utc(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(offset(0), "+0:00.0");
        assert_eq!(offset(90_040), "+1:30.0");
        assert_eq!(offset(3_723_960), "+1:02:04.0");
        assert_eq!(offset(-1_500), "-0:01.5");
    }

    #[test]
    fn offsets() {
        let r = Range::parse(Some("90"), Some("2:30.5"), START).unwrap();
        assert_eq!(r.from_ms, Some(START + 90_000));
        assert_eq!(r.to_ms, Some(START + 150_500));
        let r = Range::parse(Some("1:00:00"), None, START).unwrap();
        assert_eq!(r.from_ms, Some(START + 3_600_000));
        assert_eq!(r.to_ms, None);
        assert!(r.contains(START + 3_600_000));
        assert!(!r.contains(START + 3_599_999));
        assert_eq!(Range::parse(None, None, START).unwrap(), Range::ALL);
    }

    #[test]
    fn wall_clock_on_the_recording_day_or_the_next() {
        let r = Range::parse(Some("@07:10"), Some("@07:10:30"), START).unwrap();
        assert_eq!(r.from_ms, Some(START + 45_500));
        assert_eq!(r.to_ms, Some(START + 75_500));
        // Earlier than the start's clock time: the next day.
        let r = Range::parse(Some("@00:30:00"), None, START).unwrap();
        assert_eq!(datetime_utc(r.from_ms.unwrap()), "2026-11-23 00:30:00");
    }

    #[test]
    fn rejects_garbage_and_reversed_ranges() {
        for bad in [
            "18446744073709551615",
            "1e300",
            "",
            "abc",
            "1:2:3:4",
            "1:60",
            "-5",
            "@7",
            "@24:00:00",
            "1::2",
            "nan",
        ] {
            assert!(Range::parse(Some(bad), None, START).is_err(), "{bad:?}");
        }
        let e = Range::parse(Some("60"), Some("30"), START).unwrap_err();
        assert!(format!("{e:#}").contains("before --from"), "{e:#}");
    }
}
