//! When to look for fio processes pagewatch did not start.
//!
//! Owns: the rule, a pure function of the latest model. A scan reads files of every /proc/PID
//! (about 2 ms of CPU here with under 100 processes, more on a big server), so it runs only
//! while something suggests a fio: often while one is known, now and then while a disk or the
//! CPUs are busy (a fio served from the page cache burns CPU but no disk), never on an idle
//! machine. While the process walk covers every process, the scan reads only the fio pids
//! the walk found (`Effect::ScanFio(Some(pids))`, `jobs::foreign::scan_pids`): no comm of
//! every process. Must not touch: /proc (the supervisor runs the scan).

use crate::model::Model;

/// Scan period while a foreign fio is known (its rates are shown), ms.
pub const KNOWN_MS: i64 = 2_000;
/// Scan period while a disk or the CPUs are busy, ms.
pub const BUSY_MS: i64 = 5_000;
/// Reads + writes per second above which a disk counts as busy.
const BUSY_IOPS: f64 = 10.0;
/// CPUs' worth of user + system time from which the machine counts as busy.
const BUSY_CPUS: f64 = 0.25;

/// How often to scan, given the latest model, the machine's CPU count (0: unknown, taken as
/// 1) and whether a foreign fio is known; `None`: do not scan.
#[must_use]
pub fn period_ms(model: Option<&Model>, cpus: usize, foreign_known: bool) -> Option<i64> {
    if foreign_known {
        return Some(KNOWN_MS);
    }
    let m = model?;
    let disk_busy = m
        .disks
        .iter()
        .any(|d| d.cols.r_s.unwrap_or(0.0) + d.cols.w_s.unwrap_or(0.0) > BUSY_IOPS);
    let cpu_busy = m
        .cpu
        .and_then(|c| c.busy_pct())
        .is_some_and(|busy| busy / 100.0 * cpus.max(1) as f64 >= BUSY_CPUS);
    (disk_busy || cpu_busy).then_some(BUSY_MS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Cpu;
    use crate::source::{Source, TreeSource};

    /// The last model of a captured tree.
    fn model(tree: &str) -> Model {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/trees")
            .join(tree);
        let mut src = TreeSource::open(&dir).unwrap();
        let mut prev = None;
        let mut last = None;
        while let Some(raw) = src.next_sample().unwrap() {
            let snap = crate::parse::Snapshot::parse(&raw).unwrap();
            last = Some(Model::derive(
                prev.as_ref(),
                &snap,
                crate::model::Options::default(),
            ));
            prev = Some(snap);
        }
        last.unwrap()
    }

    fn with_cpu(mut m: Model, user_pct: f64, system_pct: f64) -> Model {
        m.cpu = Some(Cpu {
            user_pct: Some(user_pct),
            system_pct: Some(system_pct),
            ..Cpu::default()
        });
        m
    }

    #[test]
    fn idle_machine_is_never_scanned() {
        let idle = model("live-idle");
        assert_eq!(period_ms(Some(&idle), 2, false), None);
        assert_eq!(period_ms(None, 2, false), None);
    }

    #[test]
    fn known_fio_is_followed_every_2_s() {
        assert_eq!(period_ms(Some(&model("live-idle")), 2, true), Some(2_000));
        assert_eq!(period_ms(None, 2, true), Some(2_000));
    }

    #[test]
    fn busy_disk_scans_every_5_s() {
        let m = model("live-fio-randwrite");
        assert!(m.disks.iter().any(|d| d.cols.w_s.unwrap_or(0.0) > 10.0));
        assert_eq!(period_ms(Some(&m), 2, false), Some(5_000));
    }

    #[test]
    fn busy_cpus_scan_every_5_s() {
        let idle = model("live-idle");
        // 2 CPUs: 12.5 % of all is a quarter of one CPU (a cached fio burns a whole one).
        assert_eq!(
            period_ms(Some(&with_cpu(idle.clone(), 10.0, 2.5)), 2, false),
            Some(5_000)
        );
        assert_eq!(
            period_ms(Some(&with_cpu(idle.clone(), 10.0, 2.4)), 2, false),
            None
        );
        // 8 CPUs: 3.125 % of all is the same quarter CPU.
        assert_eq!(
            period_ms(Some(&with_cpu(idle.clone(), 3.0, 0.125)), 8, false),
            Some(5_000)
        );
        // CPU count unknown: taken as one CPU.
        assert_eq!(
            period_ms(Some(&with_cpu(idle.clone(), 20.0, 0.0)), 0, false),
            None
        );
        assert_eq!(
            period_ms(Some(&with_cpu(idle, 25.0, 0.0)), 0, false),
            Some(5_000)
        );
    }
}
