//! Merging consecutive flagged records into periods (throttled, in direct reclaim, saturated).
//!
//! A record stands for the interval that ends at its read: its rates are averages over that
//! interval, and a state read at its end is taken to hold for it. So a run of consecutive
//! flagged records becomes one period from the start of the first one's interval to the read
//! of the last, lasting the sum of their intervals. Two runs apart by a single unflagged
//! record are one period: a sampled state that dips for one read does not end a throttled
//! period (issue 50: one was split in two by a single sample). The dip is inside the
//! period's span but not in its seconds, so the seconds still add up to the flagged
//! records' own, as every other output counts them.
//! Owns: that rule. Must not touch: I/O.

/// One record's verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flag {
    /// Read time of the record, ms since the epoch.
    pub time_ms: i64,
    /// Seconds the record covers (since the previous read).
    pub interval_s: f64,
    /// Whether the condition held.
    pub on: bool,
    /// The figure that shows how bad it was (compared by max within a period).
    pub peak: f64,
    /// Whether the worse level was reached (over thresh, critical saturation).
    pub severe: bool,
}

/// A run of consecutive flagged records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Period {
    /// Start of the first record's interval, ms since the epoch.
    pub start_ms: i64,
    /// Read time of the last record, ms since the epoch.
    pub end_ms: i64,
    /// Sum of the records' intervals, seconds.
    pub seconds: f64,
    /// Records in the period.
    pub records: usize,
    /// Largest `peak` in the period.
    pub peak: f64,
    /// Whether any record was severe.
    pub severe: bool,
}

/// Merges consecutive `on` flags into periods, in order, across single `off` flags.
#[must_use]
pub fn merge(flags: impl IntoIterator<Item = Flag>) -> Vec<Period> {
    let mut out = Vec::new();
    let mut cur: Option<Period> = None;
    // An `off` flag came right after the period: the next flag says whether it goes on.
    let mut gap = false;
    for f in flags {
        if !f.on {
            if cur.is_some() && !gap {
                gap = true;
            } else {
                out.extend(cur.take());
                gap = false;
            }
            continue;
        }
        gap = false;
        let p = cur.get_or_insert(Period {
            start_ms: f.time_ms - (f.interval_s * 1000.0).round() as i64,
            end_ms: f.time_ms,
            seconds: 0.0,
            records: 0,
            peak: f.peak,
            severe: false,
        });
        p.end_ms = f.time_ms;
        p.seconds += f.interval_s;
        p.records += 1;
        p.peak = p.peak.max(f.peak);
        p.severe |= f.severe;
    }
    out.extend(cur);
    out
}

/// Total seconds over periods.
#[must_use]
pub fn total_seconds(periods: &[Period]) -> f64 {
    periods.iter().fold(0.0, |a, p| a + p.seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(t: i64, on: bool, peak: f64) -> Flag {
        Flag {
            time_ms: t,
            interval_s: 1.0,
            on,
            peak,
            severe: peak > 5.0,
        }
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "sums of small integers are exact")]
    fn merges_runs() {
        let flags = [
            f(1000, false, 0.0),
            f(2000, true, 3.0),
            f(3000, true, 7.0),
            f(4000, true, 1.0),
            f(5000, false, 9.0),
            f(6000, false, 9.0),
            f(7000, false, 9.0),
            f(8000, true, 2.0),
        ];
        let p = merge(flags);
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0],
            Period {
                start_ms: 1000,
                end_ms: 4000,
                seconds: 3.0,
                records: 3,
                peak: 7.0,
                severe: true
            }
        );
        assert_eq!((p[1].start_ms, p[1].end_ms, p[1].records), (7000, 8000, 1));
        assert!(!p[1].severe);
        assert_eq!(total_seconds(&p), 4.0);
        assert!(merge([f(1, false, 0.0)]).is_empty());
        assert!(merge(std::iter::empty()).is_empty());
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "sums of small integers are exact")]
    fn a_single_unflagged_record_does_not_split_a_period() {
        let flags = [
            f(1000, true, 3.0),
            f(2000, true, 4.0),
            f(3000, false, 99.0),
            f(4000, true, 6.0),
            f(5000, false, 0.0),
            f(6000, false, 0.0),
            f(7000, true, 1.0),
            f(8000, false, 0.0),
        ];
        let p = merge(flags);
        assert_eq!(p.len(), 2, "{p:?}");
        // The dip at 3000 is inside the first period's span; its second and figure are not.
        assert_eq!(
            p[0],
            Period {
                start_ms: 0,
                end_ms: 4000,
                seconds: 3.0,
                records: 3,
                peak: 6.0,
                severe: true
            }
        );
        // Two records off end a period; one trailing off record adds nothing.
        assert_eq!(
            (p[1].start_ms, p[1].end_ms, p[1].seconds),
            (6000, 7000, 1.0)
        );
    }

    #[test]
    fn uneven_intervals_sum() {
        let a = Flag {
            interval_s: 1.02,
            ..f(10_000, true, 1.0)
        };
        let b = Flag {
            interval_s: 0.99,
            ..f(10_990, true, 1.0)
        };
        let p = merge([a, b]);
        assert_eq!(p[0].start_ms, 8_980);
        assert!((p[0].seconds - 2.01).abs() < 1e-9);
    }
}
