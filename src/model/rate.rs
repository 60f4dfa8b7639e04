//! Rates over the exact elapsed time between two reads.
//!
//! Owns: counter deltas and per-second rates. A counter that went backwards (reset, 32-bit
//! wrap, device re-inserted) yields `None` for that tick rather than a spike.
//! Must not touch: the clock; elapsed time comes from the samples' own timestamps.

/// Elapsed seconds between two monotonic timestamps; `None` when time did not advance.
#[must_use]
pub fn elapsed_s(prev_ns: u64, cur_ns: u64) -> Option<f64> {
    (cur_ns > prev_ns).then(|| (cur_ns - prev_ns) as f64 / 1e9)
}

/// `cur - prev`, or `None` when the counter went backwards.
#[must_use]
pub fn delta(prev: u64, cur: u64) -> Option<u64> {
    cur.checked_sub(prev)
}

/// Per-second rate of a cumulative counter.
#[must_use]
pub fn per_sec(prev: Option<u64>, cur: Option<u64>, dt_s: Option<f64>) -> Option<f64> {
    let d = delta(prev?, cur?)?;
    Some(d as f64 / dt_s?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_use_exact_elapsed_time() {
        // 1.25 s jittered interval: 500 events → 400/s, not 500/s.
        let dt = elapsed_s(1_000_000_000, 2_250_000_000);
        assert_eq!(per_sec(Some(1000), Some(1500), dt), Some(400.0));
    }

    #[test]
    fn no_rate_on_reset_first_tick_or_zero_interval() {
        assert_eq!(per_sec(Some(10), Some(5), Some(1.0)), None);
        assert_eq!(per_sec(None, Some(5), Some(1.0)), None);
        assert_eq!(elapsed_s(5, 5), None);
        assert_eq!(per_sec(Some(1), Some(2), elapsed_s(5, 5)), None);
        // A 32-bit counter that wrapped reads as going backwards: no rate, no spike.
        assert_eq!(
            per_sec(Some(u64::from(u32::MAX) - 5), Some(10), Some(1.0)),
            None
        );
    }
}
