//! CPU percentages from /proc/stat ticks and PSI rates.
//!
//! Owns: cpu and pressure derivation. Must not touch: I/O.

use serde::Serialize;

use super::rate;
use crate::parse::{CpuStat, Psi};

/// CPU time split over the interval, percent of all CPUs. A field whose ticks went backwards
/// (iowait can, on tickless kernels) is `None`; the others stand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Cpu {
    /// user + nice (guest time is inside user).
    pub user_pct: Option<f64>,
    /// system + irq + softirq.
    pub system_pct: Option<f64>,
    /// Waiting for I/O with nothing else to run.
    pub iowait_pct: Option<f64>,
    /// Stolen by the hypervisor.
    pub steal_pct: Option<f64>,
    /// Idle.
    pub idle_pct: Option<f64>,
}

impl Cpu {
    /// Percentages between two reads; `None` on the first tick or when no time passed. The
    /// denominator is the sum of the fields' forward steps: one that went back counts as 0.
    #[must_use]
    pub fn derive(prev: &CpuStat, cur: &CpuStat) -> Option<Self> {
        let fields = |s: &CpuStat| {
            [
                sum(&[s.user, s.nice]),
                sum(&[s.system, s.irq, s.softirq]),
                s.iowait,
                s.steal,
                s.idle,
            ]
        };
        let steps: Vec<Option<u64>> = fields(prev)
            .iter()
            .zip(fields(cur))
            .map(|(p, c)| rate::delta(*p, c))
            .collect();
        let total = sum(&steps.iter().map(|d| d.unwrap_or(0)).collect::<Vec<_>>());
        if total == 0 {
            return None;
        }
        let pct = |i: usize| steps[i].map(|d| d as f64 / total as f64 * 100.0);
        Some(Cpu {
            user_pct: pct(0),
            system_pct: pct(1),
            iowait_pct: pct(2),
            steal_pct: pct(3),
            idle_pct: pct(4),
        })
    }

    /// user + system, when both are known.
    #[must_use]
    pub fn busy_pct(&self) -> Option<f64> {
        Some(self.user_pct? + self.system_pct?)
    }
}

/// Tick counts added without overflow (garbage input can hold anything).
fn sum(ticks: &[u64]) -> u64 {
    ticks.iter().fold(0, |a, b| a.saturating_add(*b))
}

/// One PSI line with the rate of its cumulative total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PsiFigures {
    /// Kernel's 10 s average, percent.
    pub avg10: f32,
    /// Kernel's 60 s average, percent.
    pub avg60: f32,
    /// Δtotal / Δt as a percent of wall time over exactly this interval.
    pub total_pct: Option<f64>,
}

/// `some` and `full` for one resource; `None` inside when the kernel lacks the line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Pressure {
    /// At least one task stalled.
    pub some: Option<PsiFigures>,
    /// All non-idle tasks stalled.
    pub full: Option<PsiFigures>,
}

impl Pressure {
    /// Derives one resource's pressure.
    #[must_use]
    pub fn derive(prev: Option<&Psi>, cur: &Psi, dt_s: Option<f64>) -> Self {
        let line = |p: Option<crate::parse::PsiLine>, c: Option<crate::parse::PsiLine>| {
            c.map(|c| PsiFigures {
                avg10: c.avg10,
                avg60: c.avg60,
                // total is in µs: µs per second / 10 000 = percent.
                total_pct: rate::per_sec(p.map(|p| p.total_us), Some(c.total_us), dt_s)
                    .map(|r| r / 10_000.0),
            })
        };
        Pressure {
            some: line(prev.and_then(|p| p.some), cur.some),
            full: line(prev.and_then(|p| p.full), cur.full),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_split() {
        let a = CpuStat {
            user: 100,
            idle: 100,
            ..CpuStat::default()
        };
        let b = CpuStat {
            user: 130,
            nice: 10,
            system: 10,
            irq: 5,
            softirq: 5,
            iowait: 20,
            steal: 10,
            idle: 140,
            ..a
        };
        let c = Cpu::derive(&a, &b).unwrap();
        // Δtotal = 30+10+10+5+5+20+10+40 = 130
        let near = |v: Option<f64>, want: f64| assert!((v.unwrap() - want).abs() < 1e-9);
        near(c.user_pct, 40.0 / 1.3);
        near(c.system_pct, 20.0 / 1.3);
        near(c.iowait_pct, 20.0 / 1.3);
        near(c.idle_pct, 40.0 / 1.3);
        // Every field back: no time passed forward, no figures.
        assert_eq!(Cpu::derive(&b, &a), None);
    }

    #[test]
    fn iowait_going_back_nulls_iowait_only() {
        let a = CpuStat {
            user: 100,
            iowait: 50,
            idle: 100,
            ..CpuStat::default()
        };
        let b = CpuStat {
            user: 150,
            iowait: 45,
            idle: 150,
            ..a
        };
        let c = Cpu::derive(&a, &b).unwrap();
        assert_eq!(c.iowait_pct, None);
        assert_eq!((c.user_pct, c.idle_pct), (Some(50.0), Some(50.0)));
        assert_eq!(c.busy_pct(), Some(50.0));
    }

    #[test]
    fn psi_total_rate() {
        let l = |t| crate::parse::PsiLine {
            avg10: 1.0,
            avg60: 2.0,
            avg300: 3.0,
            total_us: t,
        };
        let p = Psi {
            some: Some(l(1_000_000)),
            full: None,
        };
        let c = Psi {
            some: Some(l(1_250_000)),
            full: None,
        };
        // 250 000 µs stalled over 0.5 s = 50 %.
        let f = Pressure::derive(Some(&p), &c, Some(0.5));
        assert_eq!(f.some.unwrap().total_pct, Some(50.0));
        assert_eq!(f.full, None);
    }
}
