//! Pure parsers for one process's /proc/PID files (`io`, `stat`, `cmdline`) and the rates
//! between two readings of `io`.
//!
//! Owns: text → typed values, and counters → per-second rates over an elapsed time the caller
//! measured. `io` and `stat` go through the walk's parsers (`parse::procs`). Must not touch:
//! files or the clock.

use serde::Serialize;

pub use crate::parse::procs::IoCounters;

/// Per-second rates of `IoCounters`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct IoRates {
    /// rchar per second: what the process read, cache hits included.
    pub rchar_s: f64,
    /// wchar per second.
    pub wchar_s: f64,
    /// read_bytes per second: what storage had to deliver.
    pub read_bytes_s: f64,
    /// write_bytes per second: pages newly dirtied.
    pub write_bytes_s: f64,
}

impl IoRates {
    /// The rates from `prev` to `cur` over `dt_ns`; None when dt is 0 or a counter went back.
    #[must_use]
    pub fn between(prev: &IoCounters, cur: &IoCounters, dt_ns: u64) -> Option<IoRates> {
        if dt_ns == 0 {
            return None;
        }
        let secs = dt_ns as f64 / 1e9;
        let r = |a: u64, b: u64| b.checked_sub(a).map(|d| d as f64 / secs);
        Some(IoRates {
            rchar_s: r(prev.rchar, cur.rchar)?,
            wchar_s: r(prev.wchar, cur.wchar)?,
            read_bytes_s: r(prev.read_bytes, cur.read_bytes)?,
            write_bytes_s: r(prev.write_bytes, cur.write_bytes)?,
        })
    }

    /// Field-wise sum.
    #[must_use]
    pub fn plus(self, o: IoRates) -> IoRates {
        IoRates {
            rchar_s: self.rchar_s + o.rchar_s,
            wchar_s: self.wchar_s + o.wchar_s,
            read_bytes_s: self.read_bytes_s + o.read_bytes_s,
            write_bytes_s: self.write_bytes_s + o.write_bytes_s,
        }
    }
}

/// Parses /proc/PID/io (`parse::procs::parse_io`).
pub fn parse_io(text: &[u8]) -> Result<IoCounters, String> {
    crate::parse::procs::parse_io(&String::from_utf8_lossy(text))
}

/// The fields of /proc/PID/stat pairing needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatFields {
    /// The command name (`comm`, up to 15 bytes, may contain spaces and parentheses).
    pub comm: String,
    /// R, S, D (uninterruptible: usually waiting for IO), Z, …
    pub state: char,
    /// Parent pid.
    pub ppid: u32,
    /// What the kernel adds from each child it reaps (`parse::procs::StatLine::reaped_marks`):
    /// a move means the io counters jumped with the children's totals.
    pub reaped_marks: u64,
}

/// Parses /proc/PID/stat (`parse::procs::parse_stat`).
pub fn parse_stat(text: &[u8]) -> Result<StatFields, String> {
    let s = crate::parse::procs::parse_stat(&String::from_utf8_lossy(text))?;
    Ok(StatFields {
        comm: s.comm,
        state: s.state,
        ppid: s.ppid,
        reaped_marks: s.reaped_marks,
    })
}

/// Splits /proc/PID/cmdline (NUL-separated, usually NUL-terminated) into arguments.
#[must_use]
pub fn parse_cmdline(bytes: &[u8]) -> Vec<String> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if bytes.is_empty() {
        return Vec::new();
    }
    bytes
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const IO: &str = "rchar: 1540000000\nwchar: 200\nsyscr: 10\nsyscw: 2\nread_bytes: 8192\n\
                      write_bytes: 4096\ncancelled_write_bytes: 0\n";

    #[test]
    fn io_parses() {
        let io = parse_io(IO.as_bytes()).unwrap();
        assert_eq!(
            io,
            IoCounters {
                rchar: 1_540_000_000,
                wchar: 200,
                read_bytes: 8192,
                write_bytes: 4096
            }
        );
        assert!(parse_io(b"rchar: 1\n").is_err());
        assert!(parse_io(b"rchar: x\nwchar: 1\n").is_err());
    }

    #[test]
    fn stat_handles_odd_comm() {
        let s = parse_stat(b"4242 (fio) D 4100 4242 4100 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n").unwrap();
        assert_eq!(
            s,
            StatFields {
                comm: "fio".into(),
                state: 'D',
                ppid: 4100,
                reaped_marks: 0
            }
        );
        let s = parse_stat(b"7 (a) b) (c) S 1 7 7 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n").unwrap();
        assert_eq!(s.comm, "a) b) (c");
        assert!(parse_stat(b"garbage").is_err());
        assert!(parse_stat(b"").is_err());
    }

    #[test]
    fn cmdline_splits_on_nul() {
        assert_eq!(
            parse_cmdline(b"fio\0--name=t\0--filename=/tmp/a b\0"),
            vec!["fio", "--name=t", "--filename=/tmp/a b"]
        );
        assert_eq!(parse_cmdline(b"fio\0--x"), vec!["fio", "--x"]);
        assert!(parse_cmdline(b"").is_empty());
        assert_eq!(parse_cmdline(b"a\0\0b\0"), vec!["a", "", "b"]);
    }

    #[test]
    fn rates_over_exact_elapsed_time() {
        let a = IoCounters {
            rchar: 1000,
            wchar: 0,
            read_bytes: 0,
            write_bytes: 0,
        };
        let b = IoCounters {
            rchar: 3000,
            wchar: 500,
            read_bytes: 1000,
            write_bytes: 0,
        };
        let r = IoRates::between(&a, &b, 500_000_000).unwrap();
        assert!((r.rchar_s - 4000.0).abs() < 1e-9);
        assert!((r.wchar_s - 1000.0).abs() < 1e-9);
        assert!((r.read_bytes_s - 2000.0).abs() < 1e-9);
        assert_eq!(IoRates::between(&a, &b, 0), None);
        assert_eq!(IoRates::between(&b, &a, 1), None);
        let s = r.plus(r);
        assert!((s.rchar_s - 8000.0).abs() < 1e-9);
    }
}
