//! The processes of a walk rolled up by command: many short pids doing the same thing (a
//! shell loop of dd, a build's compilers) read as one row with a count.
//!
//! Owns: `CommandRow` and `roll_up` (pure: a walk's rows → one row per comm). Must not
//! touch: files, the clock, the per-process rates (`model::procs`).
//!
//! A command's rates are the bytes its processes counted over the walk, per second of the
//! walk's interval: each row's rate × the span it covers (`ProcRow::walk_ms`: a process born
//! since the previous walk covers less than the interval), summed, over the interval.
//! So a 1 s dd at 1 GB/s in a 5 s walk adds 200 MB/s to `dd`, and a consumer multiplying the
//! command's rate by `walk_ms` gets bytes. Rows without a rate (no permission, reaped
//! children) count in `pids` and add nothing; `reaped_children` counts them.
//!
//! Over many records, bytes are `walk_bytes` summed over the walks, each walk once
//! (`rates_from_walk_ms`): the records between two walks repeat the last walk's rows, and
//! they cover the time to the next walk, not the span the rates were measured over, so rate
//! × each record's interval counts a walk more or fewer times whenever the walk's pace
//! changes (a 1 s walk after a first walk repeated by the five records to the next one, rows
//! lingering after the walk stops).

use serde::Serialize;

use super::proc_row::{ProcRow, TOP};

/// One command at one walk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandRow {
    /// The command name (`comm`).
    pub comm: String,
    /// How many of the walk's processes had it (the walk lists the active ones).
    pub pids: usize,
    /// Pages dirtied, bytes/s over the walk (see the module doc).
    pub dirtied_bytes_per_s: Option<f64>,
    /// Bytes read from storage, bytes/s over the walk.
    pub read_bytes_per_s: Option<f64>,
    /// Bytes passed to read syscalls, bytes/s over the walk.
    pub rchar_per_s: Option<f64>,
    /// Bytes passed to write syscalls, bytes/s over the walk.
    pub wchar_per_s: Option<f64>,
    /// Of its processes, those whose io jumped with reaped children (no rate of their own).
    pub reaped_children: usize,
    /// Of its processes, those that exited since the previous walk (`ProcRow::exited`). A
    /// process is one exited row once, so summed over the walks this counts each that ended
    /// in the run once, where `pids` counts again one a walk read before it exited.
    pub exited: usize,
    /// The span the rates cover, ms (the walk's interval); `None` when no row had a rate.
    pub walk_ms: Option<u64>,
    /// The monotonic time (ms) of the walk the rates come from.
    pub rates_from_walk_ms: u64,
}

/// The bytes a walk measured at `rate` (bytes/s: a `CommandRow`'s or a `ProcRow`'s) over the
/// span the rate covers (`walk_ms`); 0 without either. Summed over the walks, each once (see
/// the module doc), what the processes did: the report's "who" tables, and what a consumer
/// of batch JSON's `commands[]` sums (`tests/exits_burst.rs`).
#[must_use]
pub fn walk_bytes(rate: Option<f64>, walk_ms: Option<u64>) -> f64 {
    match (rate, walk_ms) {
        (Some(rate), Some(ms)) => rate * ms as f64 / 1000.0,
        _ => 0.0,
    }
}

/// The name a process keeps for its life, for rows kept by pid: a kernel workqueue thread's
/// comm without the work it does now (`kworker/u8:0+flush-254:0` and
/// `kworker/u8:0-writeback` are both `kworker/u8:0`: the kernel renames the worker for each
/// workqueue it serves, and a report listed one worker four times), anything else as it is
/// (a new comm on a pid is an exec: a new program).
#[must_use]
pub fn instance_name(comm: &str) -> &str {
    let Some(rest) = comm.strip_prefix("kworker/") else {
        return comm;
    };
    rest.find(['+', '-'])
        .map_or(comm, |i| &comm[..comm.len() - rest.len() + i])
}

/// The name a process rolls up under: its comm, except that the kernel's workqueue threads,
/// `kworker/<pool>:<id>` with `+<workqueue>` (running) or `-<workqueue>` (last ran) after
/// it, roll up by workqueue (`kworker/flush-253:0`), or as `kworker` when the comm names
/// none: their ids change from walk to walk and say nothing.
#[must_use]
pub fn rollup_name(comm: &str) -> std::borrow::Cow<'_, str> {
    let Some(rest) = comm.strip_prefix("kworker/") else {
        return comm.into();
    };
    match rest.find(['+', '-']) {
        Some(i) if i + 1 < rest.len() => format!("kworker/{}", &rest[i + 1..]).into(),
        _ => "kworker".into(),
    }
}

/// One row per comm of a walk's rows, most storage bytes first (then most pids, then by
/// name); at most `TOP`. `interval_ms` is the walk's interval (`None` on a first walk).
#[must_use]
pub fn roll_up(rows: &[ProcRow], interval_ms: Option<u64>) -> Vec<CommandRow> {
    let span = interval_ms;
    let mut out: Vec<CommandRow> = Vec::new();
    let mut index: std::collections::HashMap<std::borrow::Cow<'_, str>, usize> =
        std::collections::HashMap::new();
    for r in rows {
        let name = rollup_name(&r.comm);
        let i = *index.entry(name.clone()).or_insert_with(|| {
            out.push(CommandRow {
                comm: name.into_owned(),
                pids: 0,
                dirtied_bytes_per_s: None,
                read_bytes_per_s: None,
                rchar_per_s: None,
                wchar_per_s: None,
                reaped_children: 0,
                exited: 0,
                walk_ms: span,
                rates_from_walk_ms: r.rates_from_walk_ms,
            });
            out.len() - 1
        });
        let c = &mut out[i];
        c.pids += 1;
        c.reaped_children += usize::from(r.reaped_children);
        c.exited += usize::from(r.exited);
        let add = |sum: &mut Option<f64>, rate: Option<f64>| {
            if let (Some(rate), Some(ms), Some(span)) = (rate, r.walk_ms, span)
                && span > 0
            {
                *sum = Some(sum.unwrap_or(0.0) + rate * ms as f64 / span as f64);
            }
        };
        add(&mut c.dirtied_bytes_per_s, r.dirtied_bytes_per_s);
        add(&mut c.read_bytes_per_s, r.read_bytes_per_s);
        add(&mut c.rchar_per_s, r.rchar_per_s);
        add(&mut c.wchar_per_s, r.wchar_per_s);
    }
    let storage =
        |c: &CommandRow| c.dirtied_bytes_per_s.unwrap_or(0.0) + c.read_bytes_per_s.unwrap_or(0.0);
    out.sort_by(|a, b| {
        storage(b)
            .total_cmp(&storage(a))
            .then(b.pids.cmp(&a.pids))
            .then(a.comm.cmp(&b.comm))
    });
    out.truncate(TOP);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pid: u32, comm: &str, dirtied: Option<f64>, walk_ms: Option<u64>) -> ProcRow {
        ProcRow {
            pid,
            comm: comm.into(),
            dirtied_bytes_per_s: dirtied,
            walk_ms,
            rates_from_walk_ms: 9000,
            ..ProcRow::default()
        }
    }

    #[test]
    fn a_kworker_keeps_its_name_whatever_work_it_does() {
        assert_eq!(instance_name("kworker/u8:0+flush-254:0"), "kworker/u8:0");
        assert_eq!(instance_name("kworker/u8:0-writeback"), "kworker/u8:0");
        assert_eq!(instance_name("kworker/3:1H-kblockd"), "kworker/3:1H");
        assert_eq!(instance_name("kworker/u8:0"), "kworker/u8:0");
        assert_eq!(instance_name("dd"), "dd");
        assert_eq!(instance_name("my-tool+x"), "my-tool+x");
    }

    #[test]
    fn short_pids_of_one_command_roll_up_into_bytes_over_the_walk() {
        let mb = 1e6;
        let rows = [
            // Two dd born in a 5 s walk: 1 s at 100 MB/s and 2 s at 50 MB/s: 200 MB in all.
            row(10, "dd", Some(100.0 * mb), Some(1000)),
            row(11, "dd", Some(50.0 * mb), Some(2000)),
            // fio over the whole walk at 30 MB/s.
            row(12, "fio", Some(30.0 * mb), Some(5000)),
            // The shell: its jump is reaped, no rate.
            ProcRow {
                reaped_children: true,
                ..row(13, "sh", None, None)
            },
        ];
        let c = roll_up(&rows, Some(5000));
        let names: Vec<(&str, usize)> = c.iter().map(|c| (c.comm.as_str(), c.pids)).collect();
        assert_eq!(names, [("dd", 2), ("fio", 1), ("sh", 1)]);
        assert!(
            (c[0].dirtied_bytes_per_s.unwrap() - 40.0 * mb).abs() < 1e-6,
            "200 MB / 5 s"
        );
        assert!((c[1].dirtied_bytes_per_s.unwrap() - 30.0 * mb).abs() < 1e-6);
        assert_eq!((c[2].dirtied_bytes_per_s, c[2].reaped_children), (None, 1));
        assert_eq!((c[0].walk_ms, c[0].rates_from_walk_ms), (Some(5000), 9000));
        // A first walk: no interval, no rates, still the counts.
        assert!(
            roll_up(&rows, None)
                .iter()
                .all(|c| c.dirtied_bytes_per_s.is_none())
        );
    }

    #[test]
    fn kernel_workers_roll_up_by_workqueue() {
        assert_eq!(
            rollup_name("kworker/u8:2+flush-253:0"),
            "kworker/flush-253:0"
        );
        assert_eq!(
            rollup_name("kworker/u8:7-flush-253:0"),
            "kworker/flush-253:0"
        );
        assert_eq!(rollup_name("kworker/1:1H-kblockd"), "kworker/kblockd");
        assert_eq!(rollup_name("kworker/0:2"), "kworker");
        assert_eq!(rollup_name("kworker/u8:2-"), "kworker");
        assert_eq!(rollup_name("dd"), "dd");
        assert_eq!(rollup_name("jbd2/vda1-8"), "jbd2/vda1-8");
        let rows = [
            row(20, "kworker/u8:2+flush-253:0", Some(5e6), Some(5000)),
            row(21, "kworker/u8:5-flush-253:0", Some(5e6), Some(5000)),
        ];
        let c = roll_up(&rows, Some(5000));
        assert_eq!((c[0].comm.as_str(), c[0].pids), ("kworker/flush-253:0", 2));
    }
}
