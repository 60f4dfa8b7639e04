//! `/proc/stat` → aggregate CPU ticks and runnable/blocked task counts, via procfs-core.
//!
//! Owns: parsing. Must not touch: percentages (model/cpu.rs).

use procfs_core::{FromBufReadSI, KernelStats, SystemInfoInterface};
use serde::Serialize;

use super::fast::line_at;
use super::lines::procfs_err;
use crate::sample::names::STAT;
use crate::{Error, Result};

/// Aggregate CPU time in clock ticks (`cpu` line), plus task counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub struct CpuStat {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    /// Tasks runnable now.
    pub procs_running: Option<u32>,
    /// Tasks blocked on I/O now (uninterruptible sleep).
    pub procs_blocked: Option<u32>,
}

impl CpuStat {
    /// Sum of every state, the denominator for percentages (guest is inside user).
    #[must_use]
    pub fn total(&self) -> u64 {
        // Saturating: real tick counts are far from 2^64, garbage is not (tests/fuzz.rs).
        [
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(self.user, |a, b| a.saturating_add(*b))
    }
}

/// procfs-core wants system facts; only tick counts are used, and they stay in ticks.
struct Ticks;

impl SystemInfoInterface for Ticks {
    fn boot_time_secs(&self) -> procfs_core::ProcResult<u64> {
        Ok(0)
    }
    fn ticks_per_second(&self) -> u64 {
        100
    }
    fn page_size(&self) -> u64 {
        4096
    }
    fn is_little_endian(&self) -> bool {
        cfg!(target_endian = "little")
    }
}

const NUMERIC_LINES: [&str; 6] = [
    "cpu",
    "ctxt",
    "btime",
    "processes",
    "procs_running",
    "procs_blocked",
];

/// Parses `/proc/stat`.
///
/// Every line whose first word starts with one of `NUMERIC_LINES` is checked here (numbers
/// only; four or more on `cpu` lines), then procfs-core's `KernelStats` reads the lines it
/// would read, less the per-cpu `cpuN` ones: pagewatch uses only the aggregate, and a `cpuN`
/// line that passed the check cannot fail there. So procfs-core gives the same result and
/// the same first error as on the whole file, without copying the long `intr` and `softirq`
/// lines or parsing one line per CPU.
pub fn parse(text: &str) -> Result<CpuStat> {
    let mut has_total = false;
    // The lines for procfs-core, each with its own line ending, as in `text`.
    let mut feed = String::with_capacity(256);
    let (mut start, mut n) = (0, 0);
    while start < text.len() {
        n += 1;
        let (line, end) = line_at(text, start);
        let raw = &text[start..text.len().min(end + 1)];
        start = end + 1;
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        if !NUMERIC_LINES.iter().any(|p| key.starts_with(p)) {
            continue;
        }
        let mut fields = 0;
        if !it.all(|t| {
            fields += 1;
            t.parse::<u64>().is_ok()
        }) {
            return Err(Error::parse(
                STAT,
                n,
                format!("non-numeric field in {line:?}"),
            ));
        }
        // user nice system idle are present on every kernel; the rest came later.
        if key.starts_with("cpu") && fields < 4 {
            return Err(Error::parse(
                STAT,
                n,
                format!("cpu line with {fields} fields, expected 4 or more"),
            ));
        }
        if fields == 0 {
            return Err(Error::parse(STAT, n, format!("{key} has no value")));
        }
        has_total |= key == "cpu";
        if !is_per_cpu(line, key) {
            feed.push_str(raw);
        }
    }
    if !has_total {
        return Err(Error::parse(STAT, 0, "no aggregate `cpu` line"));
    }
    // Lines procfs-core does not look at (`intr`, `softirq`, …) were never fed; the ones it
    // does are fed unchanged and in order.
    let ks =
        KernelStats::from_buf_read(feed.as_bytes(), &Ticks).map_err(|e| procfs_err(STAT, &e))?;
    let t = ks.total;
    Ok(CpuStat {
        user: t.user,
        nice: t.nice,
        system: t.system,
        idle: t.idle,
        iowait: t.iowait.unwrap_or(0),
        irq: t.irq.unwrap_or(0),
        softirq: t.softirq.unwrap_or(0),
        steal: t.steal.unwrap_or(0),
        procs_running: ks.procs_running,
        procs_blocked: ks.procs_blocked,
    })
}

/// Whether a checked line is one procfs-core would read as a per-cpu line, and whose first word
/// is the kernel's `cpu<digits>`. Its other words are then numbers in ASCII, so procfs-core's
/// own split finds the same words and the line cannot fail there.
fn is_per_cpu(line: &str, key: &str) -> bool {
    line.starts_with(key)
        && key
            .strip_prefix("cpu")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser before the feed was trimmed: every line to procfs-core. The reference.
    fn reference(text: &str) -> Result<CpuStat> {
        let mut has_total = false;
        for (i, line) in text.lines().enumerate() {
            let mut it = line.split_ascii_whitespace();
            let Some(key) = it.next() else { continue };
            if !NUMERIC_LINES.iter().any(|p| key.starts_with(p)) {
                continue;
            }
            let mut n = 0;
            if !it.all(|t| {
                n += 1;
                t.parse::<u64>().is_ok()
            }) {
                return Err(Error::parse(
                    STAT,
                    i + 1,
                    format!("non-numeric field in {line:?}"),
                ));
            }
            if key.starts_with("cpu") && n < 4 {
                return Err(Error::parse(
                    STAT,
                    i + 1,
                    format!("cpu line with {n} fields, expected 4 or more"),
                ));
            }
            if n == 0 {
                return Err(Error::parse(STAT, i + 1, format!("{key} has no value")));
            }
            has_total |= key == "cpu";
        }
        if !has_total {
            return Err(Error::parse(STAT, 0, "no aggregate `cpu` line"));
        }
        let ks = KernelStats::from_buf_read(text.as_bytes(), &Ticks)
            .map_err(|e| procfs_err(STAT, &e))?;
        let t = ks.total;
        Ok(CpuStat {
            user: t.user,
            nice: t.nice,
            system: t.system,
            idle: t.idle,
            iowait: t.iowait.unwrap_or(0),
            irq: t.irq.unwrap_or(0),
            softirq: t.softirq.unwrap_or(0),
            steal: t.steal.unwrap_or(0),
            procs_running: ks.procs_running,
            procs_blocked: ks.procs_blocked,
        })
    }

    const STAT_TEXT: &str = "cpu  1417655 3 321597 1716703 19154 7 8360 69142 0 0
cpu0 682253 0 149935 904301 6681 0 347 33441 0 0
cpu1 735401 0 171662 812402 12473 0 8012 35700 0 0
intr 11271666 0 0 0 0 0 0 0 0 0 0 0 1 1 13 0 0 0 3538 2701 0 300 1 2116088
ctxt 21765244
btime 1767000000
processes 268114
procs_running 2
procs_blocked 1
softirq 7329178 0 1916457 9 247281 0 0 1 2590017 0 2575413
";

    #[test]
    fn reads_the_aggregate_line_and_task_counts() {
        let c = parse(STAT_TEXT).unwrap();
        assert_eq!(
            (
                c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal
            ),
            (1_417_655, 3, 321_597, 1_716_703, 19_154, 7, 8_360, 69_142)
        );
        assert_eq!((c.procs_running, c.procs_blocked), (Some(2), Some(1)));
        let old = parse("cpu 1 2 3 4\ncpu0 1 2 3 4\nctxt 1\nbtime 2\nprocesses 3\n").unwrap();
        assert_eq!((old.idle, old.iowait, old.procs_running), (4, 0, None));
    }

    #[test]
    fn equals_the_whole_file_reference_on_odd_input() {
        let edits: [(&str, &str); 25] = [
            ("cpu0 682253", "cpu0 x682253"),
            (
                "cpu0 682253 0 149935 904301 6681 0 347 33441 0 0",
                "cpu0 1 2 3",
            ),
            ("cpu1 735401", "cpu1\u{a0}735401"),
            ("cpu1 735401", "cpu\u{2003}1 735401"),
            ("cpu1 735401", "cpuX 735401"),
            ("cpu1 735401", "cpu\u{2003}x 735401"),
            ("cpu1 735401", " cpu1 735401"),
            (
                "cpu1 735401 0 171662 812402 12473 0 8012 35700 0 0",
                "cpu1 1 2 3 4 5 6 7 8 9 10 11 12",
            ),
            ("cpu  1417655", "cpu 1417655"),
            ("cpu  1417655", "cpu\t1417655"),
            ("cpu  1417655", " cpu  1417655"),
            ("cpu  1417655 3 321597 1716703 19154 7 8360 69142 0 0\n", ""),
            ("ctxt 21765244\n", ""),
            ("ctxt 21765244", "ctxt 1 2"),
            ("ctxt 21765244", "ctxt  21765244"),
            ("ctxt 21765244", "ctxtx 5"),
            ("btime 1767000000", "btime +1767000000"),
            ("processes 268114", "processes"),
            ("procs_running 2", "procs_running 99999999999"),
            ("procs_blocked 1", "procs_blocked -1"),
            ("intr 11271666", "intr eleven"),
            ("\nsoftirq", "\n\nsoftirq"),
            ("softirq 7329178", "cpu 9 9 9 9\nsoftirq 7329178"),
            ("\n", "\r\n"),
            ("procs_blocked 1\n", "procs_blocked 1\r"),
        ];
        let mut variants: Vec<String> = edits
            .iter()
            .map(|(from, to)| STAT_TEXT.replacen(from, to, 1))
            .collect();
        variants.push(STAT_TEXT.replace('\n', "\r\n"));
        variants.push(STAT_TEXT.trim_end().to_owned());
        variants.push(format!("{}\r", STAT_TEXT.trim_end()));
        variants.push("procs_blocked 1\nbtime 5\r".to_owned());
        variants.push(String::new());
        let mut errors = 0;
        for (i, text) in variants.iter().enumerate() {
            assert_ne!(text, STAT_TEXT, "edit {i} did not apply");
            let want = reference(text).map_err(|e| e.to_string());
            errors += usize::from(want.is_err());
            assert_eq!(
                parse(text).map_err(|e| e.to_string()),
                want,
                "{i}: {text:?}"
            );
        }
        assert!(errors >= 12, "{errors}");
    }
}
