//! The memory eater's rules and its progress protocol, as pure functions.
//!
//! Owns: the safety margin, the refusal before starting, the floor checked before each step,
//! and `EatLine`, the JSON line the eater child prints for each change of state (the parent,
//! `eater.rs`, parses the same type). Must not touch: /proc, memory, processes or the clock;
//! every figure is passed in (bytes).

use serde::{Deserialize, Serialize};

use crate::fmt::bytes;

const MIB: u64 = 1 << 20;
/// The smallest safety margin: MemAvailable is never taken below this without --force.
pub const MIN_MARGIN: u64 = 256 * MIB;
/// With --force the eater still stops growing when MemAvailable would fall below this.
pub const FORCE_FLOOR: u64 = 64 * MIB;

/// The safety margin: max(256 MiB, 5% of MemTotal).
#[must_use]
pub fn margin(mem_total: u64) -> u64 {
    MIN_MARGIN.max(mem_total / 20)
}

/// The MemAvailable the eater must leave: the margin, or the hard floor with --force.
#[must_use]
pub fn floor(mem_total: u64, force: bool) -> u64 {
    if force {
        FORCE_FLOOR
    } else {
        margin(mem_total)
    }
}

/// Refuses a target above MemAvailable − margin unless `force`; the message states the figures.
pub fn check_target(
    target: u64,
    mem_total: u64,
    mem_available: u64,
    force: bool,
) -> Result<(), String> {
    let m = margin(mem_total);
    let allowed = mem_available.saturating_sub(m);
    if force || target <= allowed {
        return Ok(());
    }
    Err(format!(
        "refusing to eat {} ({target} bytes): MemAvailable is {} and the safety margin is {} \
         (the larger of 256M and 5% of MemTotal {}), so at most {} may be taken; \
         use --force to take it anyway (the eater still stops growing at MemAvailable {})",
        bytes(target as f64),
        bytes(mem_available as f64),
        bytes(m as f64),
        bytes(mem_total as f64),
        bytes(allowed as f64),
        bytes(FORCE_FLOOR as f64),
    ))
}

/// Before touching `step` more bytes: Err(reason) when that would leave less than `floor` of
/// MemAvailable (measured just now).
pub fn check_step(step: u64, mem_available: u64, floor: u64, force: bool) -> Result<(), String> {
    if mem_available.saturating_sub(step) >= floor {
        return Ok(());
    }
    let what = if force {
        "the hard floor kept even with --force"
    } else {
        "the safety margin"
    };
    Err(format!(
        "stopped growing: MemAvailable is {} and the next {} would leave less than {} ({what})",
        bytes(mem_available as f64),
        bytes(step as f64),
        bytes(floor as f64),
    ))
}

/// At most this many steps (and progress lines) per eater.
pub const MAX_STEPS: u64 = 1024;
const PAGE: u64 = 4096;

/// The step actually used for `target` bytes: the asked `step`, raised to at least one page
/// and to `target / MAX_STEPS` (rounded up to pages), so a tiny `--step` cannot print hundreds
/// of thousands of lines or loop without progress.
#[must_use]
pub fn effective_step(step: u64, target: u64) -> u64 {
    let fewest = target.div_ceil(MAX_STEPS).div_ceil(PAGE) * PAGE;
    step.max(PAGE).max(fewest)
}

/// Where the eater is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EatState {
    /// Touching memory step by step.
    Ramping,
    /// All of the target is touched and held.
    Holding,
    /// Stopped growing early (the reason says why); what was touched is still held.
    Aborted,
    /// Letting go (stdin closed or a signal); the process exits right after this line.
    Released,
}

/// One line of the eater's JSON progress on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EatLine {
    /// The state after this step.
    pub state: EatState,
    /// Bytes allocated and touched so far (one write per page).
    pub touched: u64,
    /// Bytes asked for.
    pub target: u64,
    /// Why it aborted or was released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl EatLine {
    /// The line as a human reads it in a terminal.
    #[must_use]
    pub fn human(&self) -> String {
        let pct = if self.target == 0 {
            0.0
        } else {
            self.touched as f64 * 100.0 / self.target as f64
        };
        let what = match self.state {
            EatState::Ramping => "ramping",
            EatState::Holding => "holding (close stdin, Ctrl-D or Ctrl-C to release)",
            EatState::Aborted => "aborted, holding what was touched",
            EatState::Released => "released",
        };
        let mut s = format!(
            "{} of {} ({pct:.0}%) {what}",
            bytes(self.touched as f64),
            bytes(self.target as f64)
        );
        if let Some(r) = &self.reason {
            s.push_str(": ");
            s.push_str(r);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn margin_is_at_least_256m_else_5_percent() {
        assert_eq!(margin(GIB), MIN_MARGIN);
        assert_eq!(margin(100 * GIB), 5 * GIB);
        assert_eq!(floor(100 * GIB, true), FORCE_FLOOR);
        assert_eq!(floor(100 * GIB, false), 5 * GIB);
    }

    #[test]
    fn refusal_names_the_figures() {
        let (total, avail) = (24 * GIB, 20 * GIB);
        // margin = 1.2G, so 18.8G is allowed.
        assert!(check_target(18 * GIB, total, avail, false).is_ok());
        let e = check_target(19 * GIB, total, avail, false).unwrap_err();
        assert!(e.contains("MemAvailable is 20.0G"), "{e}");
        assert!(e.contains("margin is 1.2G"), "{e}");
        assert!(e.contains("--force"), "{e}");
        assert!(check_target(19 * GIB, total, avail, true).is_ok());
        // Nothing available at all: refuse anything.
        assert!(check_target(1, total, 0, false).is_err());
    }

    #[test]
    fn steps_stop_at_the_floor() {
        let f = floor(24 * GIB, false);
        assert!(check_step(64 << 20, f + (64 << 20), f, false).is_ok());
        let e = check_step(64 << 20, f + (63 << 20), f, false).unwrap_err();
        assert!(e.contains("safety margin"), "{e}");
        let e = check_step(64 << 20, 100 << 20, FORCE_FLOOR, true).unwrap_err();
        assert!(e.contains("--force"), "{e}");
    }

    #[test]
    fn steps_are_bounded() {
        // `eat 256K --step 1`: one page at a time, 64 steps, not 262,144.
        assert_eq!(effective_step(1, 256 << 10), 4096);
        assert_eq!((256u64 << 10).div_ceil(effective_step(1, 256 << 10)), 64);
        assert_eq!(
            effective_step(0, 1 << 20),
            4096,
            "a zero step still progresses"
        );
        // 8 GiB in 1 MiB steps would be 8,192 steps: raised to 8 MiB, 1,024 steps.
        assert_eq!(effective_step(1 << 20, 8 << 30), 8 << 20);
        assert_eq!(
            effective_step(64 << 20, 1 << 30),
            64 << 20,
            "a sane step is kept"
        );
        for (step, target) in [(1, u64::MAX), (3, 12_345_678_901), (4095, 1 << 40)] {
            let n = effective_step(step, target);
            assert!(target.div_ceil(n) <= MAX_STEPS, "{step} {target}");
        }
    }

    #[test]
    fn lines_round_trip_as_json() {
        let l = EatLine {
            state: EatState::Aborted,
            touched: 5,
            target: 10,
            reason: Some("x".into()),
        };
        let s = serde_json::to_string(&l).unwrap();
        assert_eq!(
            s,
            r#"{"state":"aborted","touched":5,"target":10,"reason":"x"}"#
        );
        assert_eq!(serde_json::from_str::<EatLine>(&s).unwrap(), l);
        let h: EatLine =
            serde_json::from_str(r#"{"state":"holding","touched":10,"target":10}"#).unwrap();
        assert_eq!(h.reason, None);
        assert!(h.human().starts_with("10B of 10B (100%) holding"));
    }
}
