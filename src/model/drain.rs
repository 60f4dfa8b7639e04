//! When is it on disk: each whole disk's dirty and writeback bytes, how fast they leave and
//! how long until they are written (spec §15.5).
//!
//! Owns: `Drain` (the disk row's "to write" columns) and `derive`, which works it out for
//! the rows (`disk::fill_drain` puts it on them) from the snapshot's debugfs BDI stats (root) or, without them, by apportioning the
//! machine's Dirty + Writeback over the disks by their share of the writes. Must not touch:
//! I/O, the other disk columns.
//!
//! Apportioning (no root or no debugfs): each whole disk gets the machine's dirty and
//! writeback pages in proportion to the bytes it wrote in the interval; when no disk wrote in
//! the interval (the pages wait for the flusher's 30 s expiry), in proportion to the bytes
//! it wrote since boot. Exact when one disk takes the writes; a stacked device (dm over sda)
//! counts twice, and pages that wait for a disk that wrote nothing lately go to the others.
//! Labelled `apportioned` wherever shown.

use serde::Serialize;

use crate::parse::Snapshot;
use crate::parse::bdi::{BdiStat, StatsUnread};

/// `INIT_BW`: the kernel's starting write-bandwidth guess, 100 MB/s, in kBps (spec §15.3).
const INIT_BW_KBPS: u64 = 100 * 1024;

/// A disk's data waiting to be written, and its drain (spec §15.5). Empty for partitions and
/// when nothing is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Drain {
    /// Dirty bytes waiting for this disk (not yet under writeback).
    pub dirty_bytes: Option<u64>,
    /// Bytes under writeback to this disk.
    pub writeback_bytes: Option<u64>,
    /// Where the two come from: `kernel` (debugfs `BdiReclaimable`, `BdiWriteback`) or
    /// `apportioned` (the machine's, by the disk's share of the writes).
    pub dirty_from: Option<&'static str>,
    /// Why they are apportioned, when the sample says (`parse::bdi::StatsUnread`): the
    /// kernel's own per-device figures need root and debugfs (`WHY_DENIED`, `WHY_ABSENT`,
    /// `WHY_UNREAD`).
    pub dirty_from_why: Option<&'static str>,
    /// The kernel's write-bandwidth estimate for the disk (`BdiWriteBandwidth`), bytes/s;
    /// `None` without debugfs, or while it is the kernel's starting guess.
    pub kernel_write_bytes_per_s: Option<f64>,
    /// The drain rate the ETA uses: the kernel's estimate when there is one, else the
    /// disk's measured write rate (wkB/s), bytes/s.
    pub drain_bytes_per_s: Option<f64>,
    /// Which: `kernel` or `measured`.
    pub drain_from: Option<&'static str>,
    /// (dirty + writeback) / drain, seconds; 0 with nothing to write; `None` when nothing
    /// drains (no write rate).
    pub drain_eta_s: Option<f64>,
}

/// The screens and batch text name a disk's waiting data from this much (16 MiB): below it
/// the disk drains in well under a second and the line would be noise. JSON and `/metrics`
/// carry every figure.
pub const SHOWN_FROM: u64 = 16 << 20;

impl Drain {
    /// Whether the screens name it: at least `SHOWN_FROM` waits.
    #[must_use]
    pub fn shown(&self) -> bool {
        self.to_write().is_some_and(|b| b >= SHOWN_FROM)
    }

    /// Dirty + writeback bytes, when known.
    #[must_use]
    pub fn to_write(&self) -> Option<u64> {
        Some(self.dirty_bytes? + self.writeback_bytes?)
    }

    /// One line for the panes and batch text: `2.8G to write, ~92 s at 31.0M/s (kernel)`; the
    /// ETA before the rate, so a narrow pane cut at a clause keeps it.
    #[must_use]
    pub fn text(&self) -> Option<String> {
        let to_write = self.to_write()?;
        let from = self.dirty_from.unwrap_or("");
        let bytes = crate::fmt::bytes(to_write as f64);
        Some(match (self.drain_bytes_per_s, self.drain_eta_s) {
            (Some(r), Some(eta)) if to_write > 0 => format!(
                "{bytes} to write, ~{} at {}/s ({from})",
                eta_text(eta),
                crate::fmt::bytes(r)
            ),
            _ if to_write == 0 => format!("nothing to write ({from})"),
            _ => format!("{bytes} to write, not draining ({from})"),
        })
    }
}

/// Why the figures are apportioned without root (debugfs is root's).
pub const WHY_DENIED: &str =
    "needs root for the kernel's own per-device figures (debugfs bdi/*/stats)";
/// Why, without debugfs mounted.
pub const WHY_ABSENT: &str =
    "needs debugfs mounted at /sys/kernel/debug, and root, for the kernel's own per-device figures";
/// Why, when the listing failed otherwise.
pub const WHY_UNREAD: &str =
    "needs root and a readable debugfs for the kernel's own per-device figures (bdi/*/stats)";

/// The sentence for `unread`.
#[must_use]
pub fn why(unread: StatsUnread) -> &'static str {
    match unread {
        StatsUnread::Denied => WHY_DENIED,
        StatsUnread::Absent => WHY_ABSENT,
        StatsUnread::Error => WHY_UNREAD,
    }
}

/// The line the batch text and the Dirty pane add under the disks' drains when they are
/// apportioned for want of root or debugfs, the reason first so a narrow pane keeps it:
/// `apportioned: needs root for the kernel's own per-device figures (debugfs bdi/*/stats)`.
/// `None` when no shown drain is.
#[must_use]
pub fn apportioned_note<'a>(drains: impl IntoIterator<Item = &'a Drain>) -> Option<String> {
    let why = drains
        .into_iter()
        .filter(|d| d.shown())
        .find_map(|d| d.dirty_from_why)?;
    Some(format!("apportioned: {why}"))
}

/// The screens' notes, long and short, under or beside a drain line that already ends
/// `(apportioned)`: `needs root for kernel figures` (the disk's detail view, 32 columns at
/// most) and `needs root` (the Dirty pane's title, where the long one does not fit). The
/// Dirty pane says it in its title so that its lines stay as they are (a line of its own
/// pushed the last check, `kernel T/b = derived`, out of the pane). `None` when no shown
/// drain is apportioned for want of root or debugfs.
#[must_use]
pub fn screen_note<'a>(
    drains: impl IntoIterator<Item = &'a Drain>,
) -> Option<(&'static str, &'static str)> {
    let why = drains
        .into_iter()
        .filter(|d| d.shown())
        .find_map(|d| d.dirty_from_why)?;
    Some(match why {
        WHY_DENIED => ("needs root for kernel figures", "needs root"),
        WHY_ABSENT => ("needs root, debugfs mounted", "needs debugfs"),
        _ => ("needs root, readable debugfs", "needs debugfs"),
    })
}

/// A drain this long (5 s) is the reason a process blocked in a sync wait waits.
pub const LONG_DRAIN_S: f64 = 5.0;

/// Whether a task sleeping in `wchan` waits for writeback to finish: sync(2)/syncfs(2)
/// (`wb_wait_for_completion`, `sync_inodes_sb`), fsync and fdatasync (the folio writeback
/// waits, `filemap_fdatawait*`, `file_write_and_wait_range`, the ext4 and xfs log waits).
#[must_use]
pub fn sync_wait(wchan: &str) -> bool {
    [
        "wb_wait_for_completion",
        "sync_inodes_sb",
        "folio_wait_writeback",
        "folio_wait_bit_common",
        "wait_on_page_writeback",
        "wait_on_page_bit_common",
        "filemap_fdatawait_range",
        "__filemap_fdatawait_range",
        "file_write_and_wait_range",
        "jbd2_log_wait_commit",
        "xlog_wait_on_iclog",
    ]
    .contains(&wchan)
}

/// Seconds as `0.4 s`, `92 s`, `4.0 min`, `1.3 h`.
#[must_use]
pub fn eta_text(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 100.0 {
        format!("{s:.0} s")
    } else if s < 6000.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// What `derive` needs of a disk row.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// Kernel name, as in diskstats.
    pub name: &'a str,
    /// A partition (its BDI is its disk's: it gets nothing).
    pub partition: bool,
    /// Its measured write rate over the interval, kB/s.
    pub wkb_s: Option<f64>,
}

/// Each row's `Drain` (spec §15.5), in `rows`' order. `dirty` and `writeback`: the
/// machine's pages (vmstat `nr_dirty`, `nr_writeback`).
#[must_use]
pub fn derive(
    rows: &[Seen<'_>],
    cur: &Snapshot,
    dirty: Option<u64>,
    writeback: Option<u64>,
) -> Vec<Drain> {
    // The derived rows keep diskstats' order: walk both together for each row's counters.
    let mut devno = Vec::with_capacity(rows.len());
    let mut j = 0;
    for d in rows {
        while j < cur.disks.len() && cur.disks[j].name != d.name {
            j += 1;
        }
        devno.push(
            cur.disks
                .get(j)
                .map(|c| (c.major, c.minor, c.sectors_written)),
        );
    }
    if !cur.bdi_stats.is_empty() {
        return rows
            .iter()
            .zip(&devno)
            .map(|(d, n)| {
                let stat = n.filter(|_| !d.partition).and_then(|(maj, min, _)| {
                    let name = format!("{maj}:{min}");
                    cur.bdi_stats.iter().find(|(b, _)| *b == name).map(|x| x.1)
                });
                stat.map_or_else(Drain::default, |s| from_kernel(&s, d.wkb_s))
            })
            .collect();
    }
    let (Some(dirty), Some(writeback)) = (dirty, writeback) else {
        return vec![Drain::default(); rows.len()];
    };
    let page = cur.page_size as f64;
    let reason = cur.bdi_stats_unread.map(why);
    rows.iter()
        .zip(shares(rows, &devno))
        .map(|(d, w)| {
            w.map_or_else(Drain::default, |w| {
                let dirty_b = (dirty as f64 * page * w).round() as u64;
                let wb_b = (writeback as f64 * page * w).round() as u64;
                Drain {
                    dirty_from_why: reason,
                    ..with_rate(dirty_b, wb_b, "apportioned", None, d.wkb_s)
                }
            })
        })
        .collect()
}

/// Each whole disk's share of the interval's written bytes, or of those since boot when no
/// disk wrote in the interval; `None` for partitions. All `None` when no disk ever wrote.
fn shares(rows: &[Seen<'_>], devno: &[Option<(u32, u32, u64)>]) -> Vec<Option<f64>> {
    let now: f64 = rows
        .iter()
        .filter(|d| !d.partition)
        .filter_map(|d| d.wkb_s)
        .sum();
    let boot: f64 = rows
        .iter()
        .zip(devno)
        .filter(|(d, _)| !d.partition)
        .filter_map(|(_, n)| n.map(|x| x.2 as f64))
        .sum();
    rows.iter()
        .zip(devno)
        .map(|(d, n)| {
            if d.partition {
                None
            } else if now > 0.0 {
                Some(d.wkb_s.unwrap_or(0.0) / now)
            } else if boot > 0.0 {
                n.map(|x| x.2 as f64 / boot)
            } else {
                None
            }
        })
        .collect()
}

/// Writeback in flight from this much on (bytes), the device's measured write rate is its
/// drain (spec §15.5).
const WRITING_BACK_BYTES: u64 = 1 << 20;

/// A disk's drain from its BDI's debugfs stats.
fn from_kernel(s: &BdiStat, wkb_s: Option<f64>) -> Drain {
    // The starting guess on a BDI that never wrote back is no estimate (spec §15.3).
    let guess = s.written_kb == Some(0) && s.write_bandwidth_kbps == Some(INIT_BW_KBPS);
    let bw = s
        .write_bandwidth_kbps
        .filter(|&k| k > 0 && !guess)
        .map(|k| k as f64 * 1024.0);
    with_rate(
        s.reclaimable_kb * 1024,
        s.writeback_kb * 1024,
        "kernel",
        bw,
        wkb_s,
    )
}

/// The drain of `dirty` + `writeback` bytes: while at least `WRITING_BACK_BYTES` are being
/// written back, at the device's measured `wkb_s` (what it completes now: the kernel's
/// estimate is the root wb's, and lags; a writer in a cgroup capped by io.max drained at 20
/// MB/s while the kernel still said its 100 MB/s starting guess, an ETA 3-4x short in the 6.12
/// lab); else at the kernel's rate `bw` when known (dirty pages not yet being written will go
/// at the device's pace), else at the measured rate.
fn with_rate(
    dirty: u64,
    writeback: u64,
    from: &'static str,
    bw: Option<f64>,
    wkb_s: Option<f64>,
) -> Drain {
    let measured = wkb_s.map(|k| k * 1024.0).filter(|&r| r > 0.0);
    let writing = writeback >= WRITING_BACK_BYTES;
    let (rate, rate_from) = match (bw, measured) {
        (_, Some(m)) if writing => (Some(m), Some("measured")),
        (Some(b), _) => (Some(b), Some("kernel")),
        (None, Some(m)) => (Some(m), Some("measured")),
        (None, None) => (None, None),
    };
    let to_write = dirty + writeback;
    let eta = if to_write == 0 {
        Some(0.0)
    } else {
        rate.map(|r| to_write as f64 / r)
    };
    Drain {
        dirty_bytes: Some(dirty),
        writeback_bytes: Some(writeback),
        dirty_from: Some(from),
        dirty_from_why: None,
        kernel_write_bytes_per_s: bw,
        drain_bytes_per_s: rate,
        drain_from: rate_from,
        drain_eta_s: eta,
    }
}

#[cfg(test)]
#[path = "drain_tests.rs"]
mod tests;
