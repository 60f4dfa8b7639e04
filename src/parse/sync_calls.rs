//! The sync-latency pseudo-file (`names::SYNC_CALLS`): the sync tracer's state, where the
//! figures come from, and one line per process with its sync calls since the last sample.
//!
//! Owns: `SyncCalls` and its text, both ways. Must not touch: tracefs (`source::sync_trace`
//! writes it), pairing (`parse::trace_sync`), rates (the model divides by the interval).
//!
//! The text, one `key value` a line, then the rows:
//! ```text
//! state armed            armed, off, not-root, no-tracefs, no-event, error
//! source syscalls        syscalls (the tracepoints) or delayacct (no syscall tracepoints:
//!                        IO wait from delay accounting is the only sign)
//! clock mono             the instance's trace clock
//! why ...                optional, free text
//! bytes 4096             read this sample
//! capped 0               1: the read stopped at the cap
//! events 42              records read
//! lost 0                 records the kernel dropped (its buffer wrapped)
//! unpaired 0             entries or exits dropped without their other half
//! cpu_ns 81000           the tracer's own CPU this sample (read, pair, map); only when it
//!                        read its buffers (not on the sample that arms it)
//! tgid=7 calls=20 total_ns=160000000 max_ns=42000000 open_ns=0 comm=python3
//! ```

use std::fmt::Write as _;

use super::trace::TraceState;
use super::trace_sync::SyncRow;
use crate::Error;
use crate::sample::names;

/// Where the sync figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncSource {
    /// The syscall tracepoints, per process.
    Syscalls,
    /// This kernel has no syscall tracepoints (`CONFIG_FTRACE_SYSCALLS`): the block-IO wait
    /// of delay accounting (the IOWAIT column) is the only sign of a sync wait.
    Delayacct,
    /// Neither said (the tracer is off or could not be armed for another reason).
    #[default]
    None,
}

impl SyncSource {
    fn name(self) -> &'static str {
        match self {
            Self::Syscalls => "syscalls",
            Self::Delayacct => "delayacct",
            Self::None => "none",
        }
    }
}

/// The pseudo-file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncCalls {
    /// Armed, or why not.
    pub state: TraceState,
    /// Where the figures come from.
    pub source: SyncSource,
    /// The trace clock (`mono`), when armed.
    pub clock: Option<String>,
    /// Why not armed, or a read error.
    pub why: Option<String>,
    /// Bytes read this sample.
    pub bytes: u64,
    /// The read stopped at its cap: more waits for the next sample.
    pub capped: bool,
    /// Records read.
    pub events: u64,
    /// Records the kernel dropped.
    pub lost: u64,
    /// Records dropped without their other half.
    pub unpaired: u64,
    /// The tracer's own CPU time this sample, ns (its thread's clock around the read).
    pub cpu_ns: Option<u64>,
    /// One row per process with a completed or open sync call, in tgid order.
    pub rows: Vec<SyncRow>,
    /// The first line that could not be read and was skipped (`file:line: problem`).
    pub skipped: Option<String>,
}

impl SyncCalls {
    /// A state without figures.
    #[must_use]
    pub fn state(state: TraceState, source: SyncSource, why: Option<String>) -> Self {
        Self {
            state,
            source,
            clock: None,
            why,
            bytes: 0,
            capped: false,
            events: 0,
            lost: 0,
            unpaired: 0,
            cpu_ns: None,
            rows: Vec::new(),
            skipped: None,
        }
    }
}

fn state_name(s: TraceState) -> &'static str {
    match s {
        TraceState::Armed => "armed",
        TraceState::Off => "off",
        TraceState::NotRoot => "not-root",
        TraceState::NoTracefs => "no-tracefs",
        TraceState::NoEvent => "no-event",
        TraceState::Error => "error",
    }
}

/// The pseudo-file's text.
#[must_use]
pub fn render(c: &SyncCalls) -> String {
    let mut s = format!(
        "state {}\nsource {}\n",
        state_name(c.state),
        c.source.name()
    );
    if let Some(clock) = &c.clock {
        let _ = writeln!(s, "clock {clock}");
    }
    if let Some(w) = &c.why {
        let _ = writeln!(s, "why {}", w.replace('\n', " "));
    }
    let _ = write!(
        s,
        "bytes {}\ncapped {}\nevents {}\nlost {}\nunpaired {}\n",
        c.bytes,
        u8::from(c.capped),
        c.events,
        c.lost,
        c.unpaired
    );
    if let Some(ns) = c.cpu_ns {
        let _ = writeln!(s, "cpu_ns {ns}");
    }
    for r in &c.rows {
        let _ = writeln!(
            s,
            "tgid={} calls={} total_ns={} max_ns={} open_ns={} comm={}",
            r.tgid,
            r.calls,
            r.total_ns,
            r.max_ns,
            r.open_ns,
            r.comm.replace('\n', " ")
        );
    }
    s
}

/// Parses the pseudo-file. A file without a `state` line is an error; a line that cannot be
/// read is skipped and named in `skipped`: the good rows stand.
pub fn parse(text: &str) -> crate::Result<SyncCalls> {
    let file = names::SYNC_CALLS;
    let mut c = SyncCalls::state(TraceState::Error, SyncSource::None, None);
    let mut seen_state = false;
    let mut bad: Vec<Error> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.starts_with("tgid=") {
            match row(line) {
                Ok(r) => c.rows.push(r),
                Err(m) => bad.push(Error::parse(file, n, m)),
            }
            continue;
        }
        let (k, v) = line.split_once(' ').unwrap_or((line, ""));
        let v = v.trim();
        let num = || {
            v.parse::<u64>()
                .map_err(|_| Error::parse(file, n, "not a number"))
        };
        let res = match k {
            "state" => {
                seen_state = true;
                match v {
                    "armed" => Ok(TraceState::Armed),
                    "off" => Ok(TraceState::Off),
                    "not-root" => Ok(TraceState::NotRoot),
                    "no-tracefs" => Ok(TraceState::NoTracefs),
                    "no-event" => Ok(TraceState::NoEvent),
                    "error" => Ok(TraceState::Error),
                    _ => Err(Error::parse(file, n, "unknown state")),
                }
                .map(|s| c.state = s)
            }
            "source" => match v {
                "syscalls" => Ok(SyncSource::Syscalls),
                "delayacct" => Ok(SyncSource::Delayacct),
                "none" => Ok(SyncSource::None),
                _ => Err(Error::parse(file, n, "unknown source")),
            }
            .map(|s| c.source = s),
            "clock" => {
                c.clock = Some(v.to_owned());
                Ok(())
            }
            "why" => {
                c.why = Some(v.to_owned());
                Ok(())
            }
            "bytes" => num().map(|v| c.bytes = v),
            "capped" => num().map(|v| c.capped = v != 0),
            "events" => num().map(|v| c.events = v),
            "lost" => num().map(|v| c.lost = v),
            "unpaired" => num().map(|v| c.unpaired = v),
            "cpu_ns" => num().map(|v| c.cpu_ns = Some(v)),
            "" => Ok(()),
            _ => Err(Error::parse(file, n, "not a sync line")),
        };
        if let Err(e) = res {
            if k == "state" {
                return Err(e);
            }
            bad.push(e);
        }
    }
    if !seen_state {
        return Err(Error::parse(file, 0, "no state line"));
    }
    c.rows.sort_by_key(|r| r.tgid);
    c.rows.dedup_by_key(|r| r.tgid);
    c.skipped = bad.first().map(|e| match bad.len() {
        1 => format!("{e} (line skipped)"),
        n => format!("{e} (skipped, and {} more)", n - 1),
    });
    Ok(c)
}

fn row(line: &str) -> Result<SyncRow, &'static str> {
    let (fields, comm) = line.split_once(" comm=").unwrap_or((line, ""));
    let mut r = SyncRow {
        comm: comm.to_owned(),
        ..SyncRow::default()
    };
    let mut tgid = None;
    for kv in fields.split_ascii_whitespace() {
        let (k, v) = kv.split_once('=').ok_or("a field without '='")?;
        let num = || v.parse::<u64>().map_err(|_| "not a number");
        match k {
            "tgid" => tgid = Some(u32::try_from(num()?).map_err(|_| "tgid out of range")?),
            "calls" => r.calls = num()?,
            "total_ns" => r.total_ns = num()?,
            "max_ns" => r.max_ns = num()?,
            "open_ns" => r.open_ns = num()?,
            _ => {}
        }
    }
    r.tgid = tgid.ok_or("no tgid")?;
    Ok(r)
}

/// The pseudo-file of a sample, when it carries one. One that cannot be read is an `error`
/// state saying why: the rest of the sample stands.
#[must_use]
pub fn from_sample(sample: &crate::sample::RawSample) -> Option<SyncCalls> {
    let text = sample.file(names::SYNC_CALLS)?;
    Some(parse(text).unwrap_or_else(|e| {
        SyncCalls::state(TraceState::Error, SyncSource::None, Some(e.to_string()))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let c = SyncCalls {
            clock: Some("mono".into()),
            why: Some("a\nb".into()),
            bytes: 4096,
            capped: true,
            events: 42,
            lost: 1,
            unpaired: 2,
            cpu_ns: Some(81_000),
            rows: vec![
                SyncRow {
                    tgid: 7,
                    comm: "python3 x".into(),
                    calls: 20,
                    total_ns: 160_000_000,
                    max_ns: 42_000_000,
                    open_ns: 0,
                },
                SyncRow {
                    tgid: 9,
                    comm: String::new(),
                    calls: 0,
                    total_ns: 0,
                    max_ns: 0,
                    open_ns: 5,
                },
            ],
            ..SyncCalls::state(TraceState::Armed, SyncSource::Syscalls, None)
        };
        let mut back = parse(&render(&c)).unwrap();
        assert_eq!(back.why.as_deref(), Some("a b"));
        back.why = c.why.clone();
        assert_eq!(back, c);
    }

    #[test]
    fn a_bad_row_is_skipped_and_named_and_no_state_is_an_error() {
        let c =
            parse("state no-event\nsource delayacct\ntgid=x calls=1\ntgid=3 calls=2\n").unwrap();
        assert_eq!(
            (c.state, c.source),
            (TraceState::NoEvent, SyncSource::Delayacct)
        );
        assert_eq!(c.rows.len(), 1);
        assert!(c.skipped.unwrap().contains(":3:"));
        assert!(parse("source syscalls\n").is_err());
        assert!(parse("state sideways\n").is_err());
    }
}
