//! Per-device (BDI) dirty limits and the kernel's per-cgroup writeback figures (spec §1.8,
//! §1.9): the `sys/class/bdi/` pseudo-file and debugfs `wb_stats`.
//!
//! Owns: `BdiLimits`, `WbStat`, `BdiStat` (debugfs `stats`, spec §15.1), `StatsUnread` (why
//! those could not be read, `names::BDI_STATS_STATUS`). Must not touch:
//! derivation, I/O. Files a kernel lacks are `None` (`max_ratio_fine`, `max_bytes`,
//! `strict_limit` since 6.2; `wb_stats` since 6.10).

use serde::Serialize;

use crate::sample::names;
use crate::{Error, Result};

/// One BDI's limits from `/sys/class/bdi/<name>/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BdiLimits {
    /// The BDI's name, `maj:min` for block devices.
    pub name: String,
    /// `min_ratio`, percent.
    pub min_ratio: Option<u64>,
    /// `max_ratio`, percent.
    pub max_ratio: Option<u64>,
    /// `max_ratio_fine`, millionths (6.2+; the kernel keeps the cap in this unit).
    pub max_ratio_fine: Option<u64>,
    /// `max_bytes` (6.2+; the cap in bytes at the current threshold).
    pub max_bytes: Option<u64>,
    /// `strict_limit` (6.2+; FUSE sets it): writers are throttled on this BDI's own share.
    pub strict_limit: Option<bool>,
}

/// Parses the `sys/class/bdi/` pseudo-file.
pub fn parse_limits(text: &str) -> Result<Vec<BdiLimits>> {
    let file = names::BDI_LIMITS;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() != 1 + names::BDI_FILES.len() || cols[0].is_empty() {
            return Err(Error::parse(
                file,
                i + 1,
                "expected name, min_ratio, max_ratio, max_ratio_fine, max_bytes, strict_limit",
            ));
        }
        let num = |c: &str| -> Result<Option<u64>> {
            if c.is_empty() {
                return Ok(None);
            }
            c.parse()
                .map(Some)
                .map_err(|_| Error::parse(file, i + 1, format!("expected a number, found {c:?}")))
        };
        out.push(BdiLimits {
            name: cols[0].to_owned(),
            min_ratio: num(cols[1])?,
            max_ratio: num(cols[2])?,
            max_ratio_fine: num(cols[3])?,
            max_bytes: num(cols[4])?,
            strict_limit: num(cols[5])?.map(|v| v != 0),
        });
    }
    Ok(out)
}

/// One wb's block of debugfs `wb_stats`, kB as the kernel prints them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WbStat {
    /// `WbCgIno`: the inode of the wb's cgroup (1 for the root on cgroup2).
    pub cg_ino: u64,
    /// `WbWriteback`, kB.
    pub writeback_kb: Option<u64>,
    /// `WbReclaimable` (dirty), kB.
    pub reclaimable_kb: Option<u64>,
    /// `WbDirtyThresh`, kB: the wb's share of its domain's threshold, the smaller of the
    /// global and (for a cgroup's wb) the memcg domain's.
    pub dirty_thresh_kb: Option<u64>,
}

/// Parses one `wb_stats` file (`file` names it in errors): a block per wb, each starting
/// with `WbCgIno:`.
pub fn parse_wb_stats(file: &str, text: &str) -> Result<Vec<WbStat>> {
    let mut out: Vec<WbStat> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some((k, v)) = line.split_once(':') else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(Error::parse(file, i + 1, "expected <key>: <value>"));
        };
        let v = v.trim();
        let num = || -> Result<u64> {
            let digits = v.split_whitespace().next().unwrap_or("");
            digits
                .parse()
                .map_err(|_| Error::parse(file, i + 1, format!("expected a number, found {v:?}")))
        };
        if k == "WbCgIno" {
            out.push(WbStat {
                cg_ino: num()?,
                ..WbStat::default()
            });
            continue;
        }
        let Some(last) = out.last_mut() else {
            return Err(Error::parse(file, i + 1, "a block must start with WbCgIno"));
        };
        match k {
            "WbWriteback" => last.writeback_kb = Some(num()?),
            "WbReclaimable" => last.reclaimable_kb = Some(num()?),
            "WbDirtyThresh" => last.dirty_thresh_kb = Some(num()?),
            _ => {}
        }
    }
    Ok(out)
}

/// A BDI's debugfs `stats` (spec §15.1), kB and kBps as the kernel prints them: the root
/// wb's before 6.10, every wb's summed since.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BdiStat {
    /// `BdiWriteback`, kB: pages under writeback.
    pub writeback_kb: u64,
    /// `BdiReclaimable`, kB: dirty pages not yet under writeback.
    pub reclaimable_kb: u64,
    /// `BdiWritten`, kB since the BDI appeared.
    pub written_kb: Option<u64>,
    /// `BdiWriteBandwidth`, kBps: the kernel's estimate (spec §15.3).
    pub write_bandwidth_kbps: Option<u64>,
}

/// Why the BDIs' debugfs `stats` could not be listed (`names::BDI_STATS_STATUS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StatsUnread {
    /// No permission: not root (debugfs is root's).
    Denied,
    /// No `bdi` directory: debugfs not mounted.
    Absent,
    /// Another error.
    Error,
}

/// Parses `names::BDI_STATS_STATUS`'s first word; `None` for an empty or unknown one (a newer
/// pagewatch's word: the figures are still apportioned, said as `Error`'s).
#[must_use]
pub fn parse_stats_unread(text: &str) -> Option<StatsUnread> {
    match text.split_whitespace().next()? {
        "denied" => Some(StatsUnread::Denied),
        "absent" => Some(StatsUnread::Absent),
        _ => Some(StatsUnread::Error),
    }
}

/// Parses one debugfs `bdi/<name>/stats` (`file` names it in errors). `BdiWriteback` and
/// `BdiReclaimable` are required; the other keys are optional and unknown ones ignored.
pub fn parse_bdi_stats(file: &str, text: &str) -> Result<BdiStat> {
    let (mut wb, mut rec, mut out) = (None, None, BdiStat::default());
    for (i, line) in text.lines().enumerate() {
        let Some((k, v)) = line.split_once(':') else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(Error::parse(file, i + 1, "expected <key>: <value>"));
        };
        let num = || -> Result<u64> {
            let digits = v.split_whitespace().next().unwrap_or("");
            digits
                .parse()
                .map_err(|_| Error::parse(file, i + 1, format!("expected a number, found {v:?}")))
        };
        match k.trim() {
            "BdiWriteback" => wb = Some(num()?),
            "BdiReclaimable" => rec = Some(num()?),
            "BdiWritten" => out.written_kb = Some(num()?),
            "BdiWriteBandwidth" => out.write_bandwidth_kbps = Some(num()?),
            _ => {}
        }
    }
    let lines = text.lines().count();
    out.writeback_kb = wb.ok_or_else(|| Error::parse(file, lines, "no BdiWriteback line"))?;
    out.reclaimable_kb = rec.ok_or_else(|| Error::parse(file, lines, "no BdiReclaimable line"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_old_and_new_kernels() {
        let l = parse_limits("254:0\t0\t100\t1000000\t157609984\t0\n0:52\t0\t1\t\t\t\n").unwrap();
        assert_eq!(l[0].max_bytes, Some(157_609_984));
        assert_eq!(l[0].strict_limit, Some(false));
        assert_eq!(
            (l[1].max_ratio, l[1].max_ratio_fine, l[1].strict_limit),
            (Some(1), None, None)
        );
        let e = parse_limits("254:0\t0\n").unwrap_err().to_string();
        assert!(e.starts_with("sys/class/bdi/:1:"), "{e}");
    }

    #[test]
    fn wb_stats_blocks() {
        // As 6.12 prints it (kernel lab), two blocks.
        let text = "WbCgIno:                    1\nWbWriteback:               64 kB\n\
            WbReclaimable:           7680 kB\nWbDirtyThresh:         153916 kB\n\
            WbWriteBandwidth:      115188 kBps\nstate:                      5\n\n\
            WbCgIno:                   27\nWbDirtyThresh:          59316 kB\n";
        let w = parse_wb_stats("x/wb_stats", text).unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!(
            (w[0].cg_ino, w[0].reclaimable_kb, w[0].dirty_thresh_kb),
            (1, Some(7680), Some(153_916))
        );
        assert_eq!(
            (w[1].cg_ino, w[1].dirty_thresh_kb, w[1].writeback_kb),
            (27, Some(59_316), None)
        );
        let e = parse_wb_stats("x/wb_stats", "WbDirtyThresh: 5 kB\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x/wb_stats:1:"), "{e}");
    }

    #[test]
    fn why_the_stats_are_unread() {
        let p = parse_stats_unread;
        assert_eq!(
            p("denied /sys/kernel/debug/bdi: Permission denied (os error 13)\n"),
            Some(StatsUnread::Denied)
        );
        assert_eq!(
            p("absent /sys/kernel/debug/bdi: No such file"),
            Some(StatsUnread::Absent)
        );
        assert_eq!(p("error x: Input/output error"), Some(StatsUnread::Error));
        assert_eq!(p("later-word x"), Some(StatsUnread::Error));
        assert_eq!(p(" \n"), None);
    }

    #[test]
    fn bdi_stats_as_the_kernel_prints_them() {
        // 6.x layout (spec §15.1): `state` is hex, unused keys ignored.
        let text = "BdiWriteback:            12288 kB\nBdiReclaimable:        2093056 kB\n\
            BdiDirtyThresh:        3911660 kB\nDirtyThresh:           4194304 kB\n\
            BackgroundThresh:      2097152 kB\nBdiDirtied:           52428800 kB\n\
            BdiWritten:           50335744 kB\nBdiWriteBandwidth:       31240 kBps\n\
            b_dirty:                     3\nb_io:                        0\n\
            b_more_io:                   0\nb_dirty_time:                0\n\
            bdi_list:                    1\nstate:                       1\n";
        let s = parse_bdi_stats("x/stats", text).unwrap();
        assert_eq!(
            s,
            BdiStat {
                writeback_kb: 12_288,
                reclaimable_kb: 2_093_056,
                written_kb: Some(50_335_744),
                write_bandwidth_kbps: Some(31_240),
            }
        );
        let e = parse_bdi_stats("x/stats", "BdiWriteback: 5 kB\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("BdiReclaimable"), "{e}");
        let e = parse_bdi_stats("x/stats", "BdiWriteback: many kB\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x/stats:1:"), "{e}");
    }
}
