//! The binary form of the `writeback:balance_dirty_pages` tracepoint (spec §7): the ring
//! buffer pages read from `per_cpu/cpuN/trace_pipe_raw`, decoded with the layouts tracefs
//! publishes (`events/header_page` for the page, `format` for the record).
//!
//! Owns: walking one page's records (timestamps, lost-event counts; `walk_page`, for any
//! event), integer fields by name (`Field`), and decoding `balance_dirty_pages` records into
//! `BdpEvent`s. Must not touch: tracefs itself (the source reads the pages), the
//! per-writer sums (`parse::trace_writers`).
//!
//! Why binary: the kernel formats every event of `trace_pipe` as text (printf of 16 fields),
//! which was most of pagewatch's cost under throttling; a raw page is a copy.
//!
//! A page (`header_page`): `u64 timestamp` (the trace clock, ns), `local_t commit` (the bytes
//! of data used; bit 31 set when events were lost before this page, bit 30 when their count
//! is stored as a `long` right after the data), then the data. Each entry starts with a
//! 32-bit word: `type_len` (5 bits) and `time_delta` (27 bits), then `array[0]`:
//! - `type_len` 1–28: a record of `type_len · 4` bytes follows the word;
//! - 0: `array[0]` is the record's length + 4, the record follows it;
//! - 29 (padding): a discarded record of `array[0]` bytes; with `time_delta` 0, the page's end;
//! - 30 (time extend): `array[0] << 27 | time_delta` is added to the clock;
//! - 31 (time stamp): `array[0] << 27 | time_delta` is the absolute clock.
//!
//! Each entry's `time_delta` is added to the clock before it is read (kernel
//! `ring_buffer.c`; libtraceevent `kbuffer-parse.c`). The record starts with the common
//! header (`common_type`, the event id; `common_pid`), then the fields at the offsets of the
//! `format` file, in the host's byte order.

use super::trace::{BdpEvent, TraceFormat};
use crate::sample::names;
use crate::{Error, Result};

/// Where a page keeps its fields (`events/header_page`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// Size of `commit` (`local_t`: 8 on 64-bit kernels, 4 on 32-bit).
    pub commit_size: usize,
    /// Offset of the data (16 on 64-bit kernels).
    pub data_offset: usize,
    /// The page's size: data offset + data size (4096 unless the sub-buffer size was changed).
    pub page_size: usize,
}

impl Default for PageLayout {
    /// The 64-bit layout with 4 KiB pages.
    fn default() -> Self {
        Self {
            commit_size: 8,
            data_offset: 16,
            page_size: 4096,
        }
    }
}

/// Parses `events/header_page`.
pub fn parse_header_page(text: &str) -> Result<PageLayout> {
    let file = names::TRACE_HEADER_PAGE;
    let fmt = super::trace::parse_fields(text);
    let get = |name: &str| fmt.iter().find(|f| f.name == name);
    let (Some(commit), Some(data)) = (get("commit"), get("data")) else {
        return Err(Error::parse(file, 0, "no commit or data field"));
    };
    let layout = PageLayout {
        commit_size: commit.size as usize,
        data_offset: data.offset as usize,
        page_size: (data.offset + data.size) as usize,
    };
    let sane = matches!(layout.commit_size, 4 | 8)
        && commit.offset == 8
        && layout.data_offset >= 8 + layout.commit_size
        && (64..=1 << 20).contains(&layout.page_size);
    if !sane {
        return Err(Error::parse(file, 0, "unexpected page layout"));
    }
    Ok(layout)
}

/// The record's layout: the event id and where each field is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordLayout {
    id: Option<u16>,
    pid: Slot,
    bdi: (usize, usize),
    limit: Slot,
    setpoint: Slot,
    dirty: Slot,
    task_ratelimit: Slot,
    pause: Slot,
    wb_setpoint: Option<Slot>,
    wb_dirty: Option<Slot>,
    dirty_ratelimit: Option<Slot>,
    dirtied: Option<Slot>,
    dirtied_pause: Option<Slot>,
    paused: Option<Slot>,
    period: Option<Slot>,
    think: Option<Slot>,
    cgroup_ino: Option<Slot>,
}

/// One integer field: offset, size (1, 2, 4 or 8), signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot(usize, usize, bool);

impl RecordLayout {
    /// The layout of `fmt`; fails when a field the model needs is missing or is not an
    /// integer of 1–8 bytes.
    pub fn new(fmt: &TraceFormat) -> Result<Self> {
        let file = names::TRACE_FORMAT;
        let find = |names: &[&str]| {
            fmt.fields
                .iter()
                .chain(fmt.common.iter())
                .find(|f| names.contains(&f.name.as_str()))
        };
        let slot = |names: &[&str]| -> Option<Slot> {
            let f = find(names)?;
            matches!(f.size, 1 | 2 | 4 | 8).then_some(Slot(
                f.offset as usize,
                f.size as usize,
                f.signed,
            ))
        };
        let need = |name: &str| {
            slot(&[name]).ok_or_else(|| Error::parse(file, 0, format!("no integer {name}")))
        };
        let bdi = find(&["bdi"])
            .filter(|f| f.size > 0)
            .ok_or_else(|| Error::parse(file, 0, "no bdi"))?;
        Ok(Self {
            id: fmt.id.and_then(|i| u16::try_from(i).ok()),
            pid: need("common_pid")?,
            bdi: (bdi.offset as usize, bdi.size as usize),
            limit: need("limit")?,
            setpoint: need("setpoint")?,
            dirty: need("dirty")?,
            task_ratelimit: need("task_ratelimit")?,
            pause: need("pause")?,
            wb_setpoint: slot(&["wb_setpoint", "bdi_setpoint"]),
            wb_dirty: slot(&["wb_dirty", "bdi_dirty"]),
            dirty_ratelimit: slot(&["dirty_ratelimit"]),
            dirtied: slot(&["dirtied"]),
            dirtied_pause: slot(&["dirtied_pause"]),
            paused: slot(&["paused"]),
            period: slot(&["period"]),
            think: slot(&["think"]),
            cgroup_ino: slot(&["cgroup_ino"]),
        })
    }

    /// One record (the bytes after the entry header) as an event; `None` for another event's
    /// record. Errors when the record is shorter than the layout.
    fn decode(
        &self,
        rec: &[u8],
        cpu: u32,
        ts_ns: u64,
    ) -> std::result::Result<Option<BdpEvent>, &'static str> {
        let short = "a record shorter than its format";
        if let Some(id) = self.id {
            let ty = rec.get(..2).ok_or(short)?;
            if u16::from_ne_bytes([ty[0], ty[1]]) != id {
                return Ok(None);
            }
        }
        let int = |s: Slot| int_at(rec, s);
        let u = |s: Slot| int(s).map(|v| u64::try_from(v).unwrap_or(0));
        let i = |s: Slot| int(s).map(|v| i64::try_from(v).unwrap_or(0));
        let opt_u = |s: Option<Slot>| s.map(u).transpose();
        let opt_i = |s: Option<Slot>| s.map(i).transpose();
        let bdi = rec.get(self.bdi.0..self.bdi.0 + self.bdi.1).ok_or(short)?;
        let bdi = &bdi[..bdi.iter().position(|&b| b == 0).unwrap_or(bdi.len())];
        Ok(Some(BdpEvent {
            pid: u32::try_from(i(self.pid)?).unwrap_or(0),
            comm: String::new(),
            cpu,
            ts_s: ts_ns as f64 / 1e9,
            bdi: String::from_utf8_lossy(bdi).into_owned(),
            limit: u(self.limit)?,
            setpoint: u(self.setpoint)?,
            dirty: u(self.dirty)?,
            wb_setpoint: opt_u(self.wb_setpoint)?,
            wb_dirty: opt_u(self.wb_dirty)?,
            dirty_ratelimit: opt_u(self.dirty_ratelimit)?,
            task_ratelimit: u(self.task_ratelimit)?,
            dirtied: opt_u(self.dirtied)?,
            dirtied_pause: opt_u(self.dirtied_pause)?,
            paused: opt_u(self.paused)?,
            pause: i(self.pause)?,
            period: opt_u(self.period)?,
            think: opt_i(self.think)?,
            cgroup_ino: opt_u(self.cgroup_ino)?,
        }))
    }
}

/// What the pages of one read held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawEvents {
    /// This event's records, in the order read (per CPU, oldest first).
    pub events: Vec<BdpEvent>,
    /// Events the kernel dropped before a page (its stored count; 1 when it only flags a loss).
    pub lost: u64,
    /// Records of other events (none expected: only this event is enabled in the instance).
    pub other: u64,
}

const PADDING: u32 = 29;
const TIME_EXTEND: u32 = 30;
const TIME_STAMP: u32 = 31;
const COMMIT_MASK: u64 = (1 << 27) - 1;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn uint_at(b: &[u8], at: usize, size: usize) -> Option<u64> {
    match size {
        4 => u32_at(b, at).map(u64::from),
        8 => Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?)),
        _ => None,
    }
}

/// Decodes one page read from `per_cpu/cpu<cpu>/trace_pipe_raw` into `out`. A page that
/// does not hold together (a length past its end) is an error naming the offset; the events
/// before it are kept.
pub fn decode_page(
    page: &[u8],
    layout: &PageLayout,
    record: &RecordLayout,
    cpu: u32,
    out: &mut RawEvents,
) -> std::result::Result<(), String> {
    let mut lost = 0;
    let r = walk_page(page, layout, cpu, &mut lost, |ts, rec| {
        match record.decode(rec, cpu, ts)? {
            Some(ev) => out.events.push(ev),
            None => out.other += 1,
        }
        Ok(())
    });
    out.lost = out.lost.saturating_add(lost);
    r
}

/// Walks the records of one ring-buffer page in order, calling `each(timestamp_ns, record)`
/// for every data record (the bytes after the entry header: the common header, then the
/// event's fields), and adds to `lost` the events the kernel dropped before the page. Any
/// event's records: `event_id` tells them apart. An error from `each` or a page that does not
/// hold together stops the walk with an error naming the offset; the records before it were
/// handed over.
pub fn walk_page(
    page: &[u8],
    layout: &PageLayout,
    cpu: u32,
    lost: &mut u64,
    mut each: impl FnMut(u64, &[u8]) -> std::result::Result<(), &'static str>,
) -> std::result::Result<(), String> {
    let bad = |at: usize, what: &str| format!("cpu{cpu} page offset {at}: {what}");
    let mut ts = uint_at(page, 0, 8).ok_or_else(|| bad(0, "shorter than its header"))?;
    let commit = uint_at(page, 8, layout.commit_size).ok_or_else(|| bad(8, "no commit"))?;
    let start = layout.data_offset;
    let end = start + (commit & COMMIT_MASK) as usize;
    if end > page.len() {
        return Err(bad(8, "commit past the page's end"));
    }
    if commit & MISSED_STORED != 0 {
        let n = uint_at(page, end, layout.commit_size).unwrap_or(1);
        *lost = lost.saturating_add(n.max(1));
    } else if commit & MISSED_EVENTS != 0 {
        *lost = lost.saturating_add(1);
    }
    let mut at = start;
    while at + 4 <= end {
        let word = u32_at(page, at).ok_or_else(|| bad(at, "cut entry"))?;
        let (type_len, delta) = (word & 31, u64::from(word >> 5));
        let array = || u32_at(page, at + 4).ok_or_else(|| bad(at, "cut entry"));
        let (len, data) = match type_len {
            PADDING if delta == 0 => break,
            PADDING => {
                ts = ts.wrapping_add(delta);
                (4 + array()? as usize, None)
            }
            TIME_EXTEND => {
                ts = ts.wrapping_add((u64::from(array()?) << 27) | delta);
                (8, None)
            }
            TIME_STAMP => {
                ts = (u64::from(array()?) << 27) | delta;
                (8, None)
            }
            0 => {
                ts = ts.wrapping_add(delta);
                let n = array()? as usize;
                if n < 4 {
                    return Err(bad(at, "record length under 4"));
                }
                (4 + ((n + 3) & !3), Some(at + 8..at + 4 + n))
            }
            n => {
                ts = ts.wrapping_add(delta);
                (4 + 4 * n as usize, Some(at + 4..at + 4 + 4 * n as usize))
            }
        };
        if at + len > end {
            return Err(bad(at, "entry past the committed data"));
        }
        if let Some(range) = data {
            each(ts, &page[range]).map_err(|what| bad(at, what))?;
        }
        at += len;
    }
    Ok(())
}

/// A record's event id (`common_type`, the first two bytes); `None` for a record too short.
#[must_use]
pub fn event_id(rec: &[u8]) -> Option<u16> {
    Some(u16::from_ne_bytes(rec.get(..2)?.try_into().ok()?))
}

/// One integer field of a record, found by name in a `format` (the event's fields, then the
/// common ones): its offset, size (1, 2, 4 or 8) and sign. For events other than
/// `balance_dirty_pages`, whose layout is `RecordLayout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    offset: usize,
    size: usize,
    signed: bool,
}

impl Field {
    /// The integer field named `name` in `fmt`, if it is one of 1–8 bytes.
    #[must_use]
    pub fn find(fmt: &TraceFormat, name: &str) -> Option<Self> {
        let f = fmt
            .fields
            .iter()
            .chain(fmt.common.iter())
            .find(|f| f.name == name)?;
        matches!(f.size, 1 | 2 | 4 | 8).then_some(Self {
            offset: f.offset as usize,
            size: f.size as usize,
            signed: f.signed,
        })
    }

    /// The field's value in `rec`, sign-extended when signed; `None` when the record is
    /// shorter than the field's end.
    #[must_use]
    pub fn get(self, rec: &[u8]) -> Option<i128> {
        int_at(rec, Slot(self.offset, self.size, self.signed)).ok()
    }

    /// The value as a `u64` (0 for a negative value).
    #[must_use]
    pub fn get_u64(self, rec: &[u8]) -> Option<u64> {
        self.get(rec).map(|v| u64::try_from(v).unwrap_or(0))
    }
}

/// An integer of 1–8 bytes at `s` in `rec`, in the host's byte order.
fn int_at(rec: &[u8], s: Slot) -> std::result::Result<i128, &'static str> {
    let b = rec
        .get(s.0..s.0 + s.1)
        .ok_or("a record shorter than its format")?;
    let mut raw = [0u8; 8];
    if cfg!(target_endian = "little") {
        raw[..s.1].copy_from_slice(b);
    } else {
        raw[8 - s.1..].copy_from_slice(b);
    }
    let u = u64::from_ne_bytes(raw);
    Ok(if s.2 {
        let shift = 64 - 8 * s.1 as u32;
        i128::from(i64::from_ne_bytes((u << shift).to_ne_bytes()) >> shift)
    } else {
        i128::from(u)
    })
}

#[cfg(test)]
#[path = "trace_raw_tests.rs"]
mod tests;
