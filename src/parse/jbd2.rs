//! `/proc/fs/jbd2/<journal>/info` → `Journal`: the ext4 (jbd2) journal's transaction counts
//! and its averages per commit.
//!
//! Owns: parsing that file and naming its sample files. Must not touch: I/O, rates
//! (`model::journal`).
//!
//! The file (`fs/jbd2/journal.c`, `jbd2_seq_info_show`) is one header line, `N transactions
//! (R requested), each up to B blocks`, and, once a transaction committed, the averages since
//! the journal was loaded: waiting for a transaction, request delay, running, locked,
//! flushing data (ordered mode) and logging, in ms (whole jiffies: 4 ms steps at HZ=250),
//! then `j_average_commit_time` in µs, which the kernel keeps as a moving average
//! (`(new + 3·old) / 4` per commit, so it follows the last few commits), then handles,
//! blocks and logged blocks per transaction. `requested` counts the commits someone asked
//! for (fsync, sync, a full journal) rather than the 5 s commit timer. Lines are taken by
//! their words, so an added line is ignored. The counts and averages are a copy taken when
//! the file is opened (`jbd2_seq_info_open`), the commit time is read live: the source opens
//! the file afresh each time.

use serde::Serialize;

use crate::{Error, Result};

/// The sample's prefix for the journals: `proc/fs/jbd2/<journal>/info`.
pub const PREFIX: &str = "proc/fs/jbd2/";

/// The sample name of a journal's `info` (`vda-8`, `nvme0n1p2-8`).
#[must_use]
pub fn sample_name(journal: &str) -> String {
    format!("{PREFIX}{journal}/info")
}

/// The journal of a sample name, `None` for any other file.
#[must_use]
pub fn journal_of(name: &str) -> Option<&str> {
    let j = name.strip_prefix(PREFIX)?.strip_suffix("/info")?;
    (!j.is_empty() && !j.contains('/')).then_some(j)
}

/// One journal's `info`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Journal {
    /// The directory name: the device and the journal inode (`vda-8`; 8 for an internal
    /// journal).
    pub name: String,
    /// Transactions committed since the journal was loaded (`ts_tid`).
    pub transactions: u64,
    /// Of them, those whose commit was asked for (fsync, sync) rather than timed.
    pub requested: u64,
    /// The largest transaction, blocks.
    pub max_blocks: u64,
    /// The averages; `None` before the first commit (the kernel prints only the header).
    pub avg: Option<Averages>,
}

/// The averages of `info`, since the journal was loaded except `commit_us`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Averages {
    /// Waiting for a new transaction to start (the previous one still locked), ms.
    pub wait_ms: u64,
    /// From a commit being asked for to its start, ms (per requested commit).
    pub request_delay_ms: u64,
    /// The transaction running (open for handles), ms.
    pub running_ms: u64,
    /// Locked: waiting for its handles to finish, ms.
    pub locked_ms: u64,
    /// Flushing data blocks before the commit (data=ordered), ms.
    pub flushing_ms: u64,
    /// Writing the transaction to the journal, ms.
    pub logging_ms: u64,
    /// The commit's moving average (`(new + 3·old) / 4`), µs.
    pub commit_us: u64,
    /// Handles per transaction.
    pub handles: u64,
    /// Blocks per transaction.
    pub blocks: u64,
    /// Blocks written to the journal per transaction.
    pub logged_blocks: u64,
}

/// Parses one `info` file of journal `name`.
pub fn parse(name: &str, text: &str) -> Result<Journal> {
    let file = sample_name(name);
    let mut lines = text.lines();
    let head = lines
        .next()
        .ok_or_else(|| Error::parse(&file, 1, "empty"))?;
    let w: Vec<&str> = head.split_whitespace().collect();
    let num = |s: Option<&&str>, what: &str| -> Result<u64> {
        s.map(|s| s.trim_matches(|c| c == '(' || c == ')'))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| Error::parse(&file, 1, format!("no {what}")))
    };
    if w.get(1) != Some(&"transactions") {
        return Err(Error::parse(&file, 1, "not a jbd2 info header"));
    }
    let mut j = Journal {
        name: name.to_owned(),
        transactions: num(w.first(), "transaction count")?,
        requested: num(w.get(2), "requested count")?,
        max_blocks: w
            .iter()
            .position(|x| *x == "to")
            .and_then(|i| w.get(i + 1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
        avg: None,
    };
    let mut a = Averages::default();
    let mut seen = 0u32;
    for (i, line) in lines.enumerate() {
        let t = line.trim();
        let Some((value, rest)) = t.split_once(' ') else {
            continue;
        };
        let (digits, unit) = value.split_at(
            value
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(value.len()),
        );
        if digits.is_empty() {
            continue;
        }
        let v: u64 = digits
            .parse()
            .map_err(|_| Error::parse(&file, i + 2, "number out of range"))?;
        let slot = match (unit, rest) {
            ("ms", "waiting for transaction") => &mut a.wait_ms,
            ("ms", "request delay") => &mut a.request_delay_ms,
            ("ms", "running transaction") => &mut a.running_ms,
            ("ms", "transaction was being locked") => &mut a.locked_ms,
            ("ms", r) if r.starts_with("flushing data") => &mut a.flushing_ms,
            ("ms", "logging transaction") => &mut a.logging_ms,
            ("us", "average transaction commit time") => &mut a.commit_us,
            ("", "handles per transaction") => &mut a.handles,
            ("", "blocks per transaction") => &mut a.blocks,
            ("", "logged blocks per transaction") => &mut a.logged_blocks,
            _ => continue,
        };
        *slot = v;
        seen += 1;
    }
    if seen > 0 {
        j.avg = Some(a);
    }
    Ok(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRESH: &str = include_str!("../../tests/fixtures/jbd2/info-fresh");
    const FLOOD: &str = include_str!("../../tests/fixtures/jbd2/info-flood");

    #[test]
    fn a_fresh_journal_has_only_its_header() {
        let j = parse("loop100-8", FRESH).unwrap();
        assert_eq!((j.transactions, j.requested, j.max_blocks), (0, 0, 1365));
        assert_eq!(j.avg, None);
    }

    #[test]
    fn a_captured_journal_under_fsync_and_a_flood() {
        let j = parse("loop100-8", FLOOD).unwrap();
        assert_eq!((j.transactions, j.requested, j.max_blocks), (31, 31, 1365));
        let a = j.avg.unwrap();
        assert_eq!(a.running_ms, 20);
        assert_eq!(a.commit_us, 7706);
        assert_eq!((a.handles, a.blocks, a.logged_blocks), (8, 6, 8));
        assert_eq!(
            (a.wait_ms, a.locked_ms, a.flushing_ms, a.logging_ms),
            (0, 0, 0, 0)
        );
    }

    #[test]
    fn each_average_goes_to_its_field() {
        let text = "7 transactions (3 requested), each up to 8192 blocks\naverage: \n  \
                    1ms waiting for transaction\n  2ms request delay\n  3ms running transaction\n  \
                    4ms transaction was being locked\n  5ms flushing data (in ordered mode)\n  \
                    6ms logging transaction\n  7us average transaction commit time\n  \
                    8 handles per transaction\n  9 blocks per transaction\n  \
                    10 logged blocks per transaction\n  11 future things per transaction\n";
        let a = parse("sda1-8", text).unwrap().avg.unwrap();
        assert_eq!(
            [
                a.wait_ms,
                a.request_delay_ms,
                a.running_ms,
                a.locked_ms,
                a.flushing_ms,
                a.logging_ms,
                a.commit_us,
                a.handles,
                a.blocks,
                a.logged_blocks
            ],
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        );
    }

    #[test]
    fn bad_headers_name_the_file() {
        for t in [
            "",
            "x transactions (1 requested)",
            "hello world",
            "3 transactions (x requested)",
        ] {
            let e = parse("vda-8", t).unwrap_err().to_string();
            assert!(e.contains("proc/fs/jbd2/vda-8/info"), "{t:?}: {e}");
        }
        assert!(parse("vda-8", "3 transactions (1 requested), each up to 9 blocks\n  99999999999999999999999ms request delay\n").is_err());
    }

    #[test]
    fn names() {
        assert_eq!(journal_of(&sample_name("vda-8")), Some("vda-8"));
        assert_eq!(journal_of("proc/fs/jbd2//info"), None);
        assert_eq!(journal_of("proc/fs/jbd2/a/b/info"), None);
        assert_eq!(journal_of("proc/meminfo"), None);
    }
}
