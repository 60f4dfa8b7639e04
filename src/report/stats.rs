//! Summary statistics of one series over the report's records.
//!
//! Owns: min / mean / p95 / max. The mean is the plain mean of the records (records are
//! evenly spaced in a recording, so it is also the time average up to interval jitter);
//! p95 is the nearest-rank percentile: the ⌈0.95·n⌉-th smallest value, always one of the
//! measured values. Must not touch: formatting, I/O.

/// Statistics of the values a series had; records without a value are not counted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Smallest value.
    pub min: f64,
    /// Arithmetic mean.
    pub avg: f64,
    /// Nearest-rank 95th percentile.
    pub p95: f64,
    /// Largest value.
    pub max: f64,
    /// How many records had a value.
    pub n: usize,
}

impl Stats {
    /// Statistics of the present, finite values; `None` when there are none.
    #[must_use]
    pub fn of(values: impl IntoIterator<Item = Option<f64>>) -> Option<Stats> {
        let mut v: Vec<f64> = values
            .into_iter()
            .flatten()
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let rank = (n * 95).div_ceil(100).max(1);
        Some(Stats {
            min: v[0],
            avg: v.iter().sum::<f64>() / n as f64,
            p95: v[rank - 1],
            max: v[n - 1],
            n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp, reason = "sums of small integers are exact")]
    fn hand_computed() {
        // 1..=20 shuffled, with gaps: mean 10.5, ⌈0.95·20⌉ = 19th smallest = 19.
        let mut vals: Vec<Option<f64>> = (1..=20).rev().map(|i| Some(f64::from(i))).collect();
        vals.insert(3, None);
        vals.push(Some(f64::NAN));
        let s = Stats::of(vals).unwrap();
        assert_eq!(
            s,
            Stats {
                min: 1.0,
                avg: 10.5,
                p95: 19.0,
                max: 20.0,
                n: 20
            }
        );
        // 3 values: ⌈2.85⌉ = 3rd smallest = the max; mean (2 + 4 + 9) / 3 = 5.
        let s = Stats::of([Some(9.0), Some(2.0), Some(4.0)]).unwrap();
        assert_eq!((s.min, s.avg, s.p95, s.max, s.n), (2.0, 5.0, 9.0, 9.0, 3));
        // 100 values 0..99: 95th smallest = 94.
        assert_eq!(
            Stats::of((0..100).map(|i| Some(f64::from(i)))).unwrap().p95,
            94.0
        );
        let one = Stats::of([Some(7.5)]).unwrap();
        assert_eq!((one.min, one.p95, one.max), (7.5, 7.5, 7.5));
        assert_eq!(Stats::of([None, None]), None);
    }
}
