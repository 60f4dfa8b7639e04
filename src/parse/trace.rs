//! The `writeback:balance_dirty_pages` tracepoint (spec §7): its `format` file, the text
//! events read from pagewatch's tracefs instance, and the source's status pseudo-file.
//!
//! Owns: turning that text into `Trace` (typed events, field list, tracer state). Must not
//! touch: tracefs itself (the source reads it), per-task sums (`model::throttled`).
//!
//! An event line is the kernel's text output: `comm-pid [cpu] flags timestamp:
//! balance_dirty_pages: bdi 8:0: limit=… setpoint=… …` (the flags column is absent without
//! the `irq-info` option; a comm may hold spaces and dashes). Field names changed over time
//! (`bdi_setpoint`/`bdi_dirty` became `wb_setpoint`/`wb_dirty`, `cgroup_ino` appeared with
//! cgroup writeback), so fields are taken by name and the old names read as the new ones.
//! `CPU:N [LOST M EVENTS]` lines count lost events. A last line without its newline is cut
//! short (the read stopped at its cap) and is skipped.

use serde::Serialize;

pub use super::trace_writers::BdpEvent;
use crate::sample::names;
use crate::{Error, Result};

/// One field of the event's binary record, from the `format` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatField {
    /// Field name (`limit`, `wb_dirty`, `bdi`).
    pub name: String,
    /// Its C declaration without the name (`unsigned long`, `char[32]`).
    pub c_type: String,
    /// Byte offset in the record.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Whether the field is signed.
    pub signed: bool,
}

/// The event's `format` file: its name, id and the fields after the common ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFormat {
    /// `name:` line.
    pub name: String,
    /// `ID:` line.
    pub id: Option<u32>,
    /// The event's own fields, in record order (the `common_*` header left out).
    pub fields: Vec<FormatField>,
    /// The common header's fields (`common_type`, `common_pid`, …).
    pub common: Vec<FormatField>,
}

impl TraceFormat {
    /// Whether the event has a field of this name.
    #[must_use]
    pub fn has(&self, name: &str) -> bool {
        self.fields.iter().any(|f| f.name == name)
    }
}

/// Parses the `format` file.
pub fn parse_format(text: &str) -> Result<TraceFormat> {
    let file = names::TRACE_FORMAT;
    let mut fmt = TraceFormat::default();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            v.trim().clone_into(&mut fmt.name);
        } else if let Some(v) = t.strip_prefix("ID:") {
            let id = v
                .trim()
                .parse()
                .map_err(|_| bad(file, n, "ID is not a number"))?;
            fmt.id = Some(id);
        } else if t.starts_with("field:") {
            let f = parse_field(t).ok_or_else(|| bad(file, n, "malformed field line"))?;
            if f.name.starts_with("common_") {
                fmt.common.push(f);
            } else {
                fmt.fields.push(f);
            }
        }
    }
    if fmt.fields.is_empty() {
        return Err(Error::parse(file, 0, "no fields"));
    }
    Ok(fmt)
}

/// Every well-formed `field:` line of a tracefs layout file (`format`, `header_page`), in order.
#[must_use]
pub fn parse_fields(text: &str) -> Vec<FormatField> {
    text.lines()
        .map(str::trim)
        .filter(|t| t.starts_with("field:"))
        .filter_map(parse_field)
        .collect()
}

fn bad(file: &str, line: usize, msg: &str) -> Error {
    Error::parse(file, line, msg)
}

/// `field:unsigned long limit;\toffset:40;\tsize:8;\tsigned:0;`
fn parse_field(t: &str) -> Option<FormatField> {
    let mut parts = t.split(';').map(str::trim);
    let decl = parts.next()?.strip_prefix("field:")?.trim();
    let (mut offset, mut size, mut signed) = (None, None, None);
    for p in parts {
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.parse().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.parse().ok();
        } else if let Some(v) = p.strip_prefix("signed:") {
            signed = Some(v == "1");
        }
    }
    // The name is the last word of the declaration, before any array suffix.
    let (head, last) = decl.rsplit_once(' ')?;
    let (name, array) = match last.find('[') {
        Some(at) => (&last[..at], &last[at..]),
        None => (last, ""),
    };
    if name.is_empty() {
        return None;
    }
    Some(FormatField {
        name: name.to_owned(),
        c_type: format!("{}{array}", head.trim()),
        offset: offset?,
        size: size?,
        signed: signed.unwrap_or(false),
    })
}

/// The events of one read of the trace pipe.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Events {
    /// The events, in the order read.
    pub events: Vec<BdpEvent>,
    /// Events the kernel reports lost (`[LOST N EVENTS]`: the buffer wrapped).
    pub lost: u64,
    /// A last line cut short (no newline) was skipped.
    pub cut: bool,
}

/// Parses the text read from the trace pipe. A line that is not this event's (another
/// event, a comment) is ignored; a `balance_dirty_pages` line that cannot be read is an
/// error naming its line.
pub fn parse_events(text: &str) -> Result<Events> {
    let file = names::TRACE_EVENTS;
    let mut out = Events::default();
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    out.cut = complete < text.len();
    for (i, line) in text[..complete].lines().enumerate() {
        let n = i + 1;
        if let Some(lost) = lost_events(line) {
            out.lost = out.lost.saturating_add(lost);
            continue;
        }
        let Some(at) = line.find(": balance_dirty_pages: ") else {
            continue;
        };
        let head = &line[..at];
        let body = &line[at + ": balance_dirty_pages: ".len()..];
        let mut ev = parse_head(head).ok_or_else(|| bad(file, n, "malformed task/cpu/time"))?;
        parse_body(body, &mut ev).map_err(|m| bad(file, n, m))?;
        out.events.push(ev);
    }
    Ok(out)
}

/// `CPU:1 [LOST 123 EVENTS]`.
fn lost_events(line: &str) -> Option<u64> {
    let rest = line.trim().strip_prefix("CPU:")?;
    let (_, rest) = rest.split_once("[LOST ")?;
    rest.strip_suffix(" EVENTS]")?.trim().parse().ok()
}

/// `           fio-16919   [000] .....   537.179522` → pid, comm, cpu, timestamp.
fn parse_head(head: &str) -> Option<BdpEvent> {
    let mut words = head.trim_end().rsplitn(2, ' ');
    let ts = words.next()?.trim_end_matches(':');
    let mut rest = words.next()?.trim_end();
    let ts_s: f64 = ts.parse().ok().filter(|t: &f64| t.is_finite())?;
    // The cpu column is the last ` [digits]` before the timestamp (the flags may follow it).
    let mut search = rest;
    let (cpu, before) = loop {
        let open = search.rfind(" [")?;
        let after = &rest[open + 2..];
        if let Some(close) = after.find(']') {
            let digits = &after[..close];
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                break (digits.parse().ok()?, &rest[..open]);
            }
        }
        search = &search[..open];
    };
    rest = before.trim();
    // With record-tgid the task is followed by `(  tgid)`.
    if let Some(open) = rest.rfind(" (")
        && rest.ends_with(')')
    {
        rest = rest[..open].trim_end();
    }
    let (comm, pid) = rest.rsplit_once('-')?;
    Some(BdpEvent {
        pid: pid.parse().ok()?,
        comm: comm.trim_start().to_owned(),
        cpu,
        ts_s,
        ..BdpEvent::default()
    })
}

/// `bdi 8:0: limit=… setpoint=… …` into `ev`.
fn parse_body(body: &str, ev: &mut BdpEvent) -> std::result::Result<(), &'static str> {
    let rest = body.strip_prefix("bdi ").ok_or("no bdi")?;
    let (bdi, fields) = rest.split_once(": ").ok_or("no bdi")?;
    bdi.clone_into(&mut ev.bdi);
    let (mut limit, mut setpoint, mut dirty, mut rate, mut pause) = (None, None, None, None, None);
    for kv in fields.split_ascii_whitespace() {
        let Some((k, v)) = kv.split_once('=') else {
            return Err("a field without '='");
        };
        let u = || v.parse::<u64>().map_err(|_| "not a number");
        let i = || v.parse::<i64>().map_err(|_| "not a number");
        match k {
            "limit" => limit = Some(u()?),
            "setpoint" => setpoint = Some(u()?),
            "dirty" => dirty = Some(u()?),
            "wb_setpoint" | "bdi_setpoint" => ev.wb_setpoint = Some(u()?),
            "wb_dirty" | "bdi_dirty" => ev.wb_dirty = Some(u()?),
            "dirty_ratelimit" => ev.dirty_ratelimit = Some(u()?),
            "task_ratelimit" => rate = Some(u()?),
            "dirtied" => ev.dirtied = Some(u()?),
            "dirtied_pause" => ev.dirtied_pause = Some(u()?),
            "paused" => ev.paused = Some(u()?),
            "pause" => pause = Some(i()?),
            "period" => ev.period = Some(u()?),
            "think" => ev.think = Some(i()?),
            "cgroup_ino" => ev.cgroup_ino = Some(u()?),
            _ => {}
        }
    }
    ev.limit = limit.ok_or("no limit")?;
    ev.setpoint = setpoint.ok_or("no setpoint")?;
    ev.dirty = dirty.ok_or("no dirty")?;
    ev.task_ratelimit = rate.ok_or("no task_ratelimit")?;
    ev.pause = pause.ok_or("no pause")?;
    Ok(())
}

/// Whether the tracepoint is armed, or why not (the source's status pseudo-file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceState {
    /// The event is enabled in pagewatch's instance and being read.
    Armed,
    /// Not wanted now (nothing close to throttling).
    Off,
    /// pagewatch is not root.
    NotRoot,
    /// No tracefs mount found.
    NoTracefs,
    /// This kernel has no `writeback:balance_dirty_pages` event.
    NoEvent,
    /// Arming or reading failed (`why` says how).
    Error,
}

/// The status pseudo-file (`names::TRACE_STATUS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceStatus {
    /// Armed, or why not.
    pub state: TraceState,
    /// Free text for `Error` (and any other state), when given.
    pub why: Option<String>,
    /// pagewatch's own pid.
    pub pid: Option<u32>,
    /// pagewatch's thread ids (when events were read).
    pub tasks: Vec<u32>,
    /// Bytes read from the pipe this sample.
    pub bytes: u64,
    /// The read stopped at its cap: more events wait in the buffer.
    pub capped: bool,
}

/// The name tracefs's `saved_cmdlines` (`PID COMM` a line) keeps for `pid`, the last one
/// listed.
#[must_use]
pub fn saved_comm(text: &str, pid: u32) -> Option<&str> {
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(p, _)| p.parse() == Ok(pid))
        .map(|(_, c)| c.trim_end())
        .rfind(|c| !c.is_empty() && *c != "<...>")
}

/// Parses the status pseudo-file.
pub fn parse_status(text: &str) -> Result<TraceStatus> {
    let file = names::TRACE_STATUS;
    let mut st = TraceStatus {
        state: TraceState::Error,
        why: None,
        pid: None,
        tasks: Vec::new(),
        bytes: 0,
        capped: false,
    };
    let mut seen_state = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let (k, v) = line.split_once(' ').unwrap_or((line, ""));
        let num = || {
            v.trim()
                .parse::<u64>()
                .map_err(|_| bad(file, n, "not a number"))
        };
        match k {
            "state" => {
                seen_state = true;
                st.state = match v.trim() {
                    "armed" => TraceState::Armed,
                    "off" => TraceState::Off,
                    "not-root" => TraceState::NotRoot,
                    "no-tracefs" => TraceState::NoTracefs,
                    "no-event" => TraceState::NoEvent,
                    "error" => TraceState::Error,
                    _ => return Err(bad(file, n, "unknown state")),
                };
            }
            "why" => st.why = Some(v.trim().to_owned()),
            "pid" => st.pid = Some(u32::try_from(num()?).map_err(|_| bad(file, n, "bad pid"))?),
            "tasks" => {
                st.tasks = v
                    .split_ascii_whitespace()
                    .map(|t| t.parse().map_err(|_| bad(file, n, "bad task id")))
                    .collect::<Result<_>>()?;
            }
            "bytes" => st.bytes = num()?,
            "capped" => st.capped = num()? != 0,
            _ => {}
        }
    }
    if !seen_state {
        return Err(Error::parse(file, 0, "no state line"));
    }
    Ok(st)
}

/// Everything the sample says about the tracepoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The tracer's state.
    pub status: TraceStatus,
    /// The event's fields, when the format was carried and parsed.
    pub format: Option<TraceFormat>,
    /// The writers of this sample, one row per task (empty when none or unreadable).
    pub writers: super::trace_writers::Writers,
    /// Why the events or the format could not be parsed (`file:line: problem`); the rest of
    /// the sample stands.
    pub error: Option<String>,
}

/// The tracepoint part of a sample; `None` when the sample has no status (the tracepoint was
/// never wanted, a captured tree, an older recording). Errors in the status file fail the
/// sample; errors in the events or format are kept in `Trace::error`.
pub fn parse(sample: &crate::sample::RawSample) -> Result<Option<Trace>> {
    let Some(status) = sample.file(names::TRACE_STATUS) else {
        return Ok(None);
    };
    let status = parse_status(status)?;
    let mut error = None;
    let format = match sample.file(names::TRACE_FORMAT).map(parse_format) {
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => {
            error = Some(e.to_string());
            None
        }
        None => None,
    };
    // Live samples carry the writers; recordings made before the binary read, the text.
    let writers = match sample.file(names::TRACE_WRITERS) {
        Some(text) => Ok(super::trace_writers::parse(text)),
        None => sample.file(names::TRACE_EVENTS).map_or_else(
            || Ok(super::trace_writers::Writers::default()),
            |text| parse_events(text).map(|ev| super::trace_writers::reduce(&ev.events, ev.lost)),
        ),
    };
    let writers = writers.unwrap_or_else(|e| {
        error.get_or_insert_with(|| e.to_string());
        super::trace_writers::Writers::default()
    });
    if let Some(bad) = &writers.skipped {
        error.get_or_insert_with(|| bad.clone());
    }
    Ok(Some(Trace {
        status,
        format,
        writers,
        error,
    }))
}

#[cfg(test)]
#[path = "trace_tests.rs"]
pub(crate) mod tests;
