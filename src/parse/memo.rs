//! `Parser`: `Snapshot::parse` that skips re-parsing a file whose text is the same as in the
//! previous sample.
//!
//! Owns: the memo of the last (text, parsed) pair for the files that often repeat: zoneinfo
//! (re-read by the live source only every few ticks, so carried unchanged in between), the
//! `/sys/block` queue text and the BDI limits (re-read once a minute; 100 loop devices make
//! the latter 4 KB, parsed every tick before) and the nine vm sysctls (carried like
//! zoneinfo); and, line by line, diskstats (an idle device's line is byte-identical from one
//! second to the next) and the PSI files (a resource with no stall repeats its line).
//! Comparing a few kB costs well under a microsecond; parsing them costs 1–20 µs each.
//! Must not touch: parsing rules (`Snapshot::parse` stays the reference, and `Parser::parse`
//! equals it on every sample) or I/O.

use std::convert::Infallible;
use std::sync::Arc;

use super::fast::lines;
use super::{
    BlockDevices, DiskCounters, PSI_FILES, Psi, Repeats, Snapshot, VmSysctl, Zone, diskstats,
    pressure, queue, sysctl, zoneinfo,
};
use crate::Result;
use crate::sample::RawSample;

/// The last text of one file and what it parsed to.
#[derive(Debug, Default)]
struct Memo<T> {
    last: Option<(String, T)>,
}

impl<T: Clone> Memo<T> {
    /// `parse(text)`, or the previous result when `text` is unchanged. Errors are not kept:
    /// a bad text is parsed (and reported) again every time it comes.
    fn get<E>(
        &mut self,
        text: &str,
        parse: impl FnOnce(&str) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        if let Some((t, v)) = &self.last
            && t == text
        {
            return Ok(v.clone());
        }
        let v = parse(text)?;
        match &mut self.last {
            // Reuse the stored text's buffer.
            Some((t, old)) => {
                t.clear();
                t.push_str(text);
                old.clone_from(&v);
            }
            None => self.last = Some((text.to_owned(), v.clone())),
        }
        Ok(v)
    }
}

/// The last texts of the vm sysctls (`sysctl::texts` order) and what they parsed to. The
/// live source re-reads them only every few samples and carries the text in between. The
/// texts are kept end to end in one buffer (a few cache lines, not nine allocations).
#[derive(Debug, Default)]
struct SysctlMemo {
    /// The texts, one after another.
    joined: String,
    /// Each text's length in `joined`; `None` for an absent file.
    lens: [Option<usize>; 9],
    /// What they parsed to; `None` until a set parses.
    parsed: Option<VmSysctl>,
}

impl SysctlMemo {
    /// `sysctl::parse_texts(texts)`, or the previous result when every text is unchanged.
    /// Errors are not kept.
    fn get(&mut self, texts: [Option<&str>; 9]) -> Result<VmSysctl> {
        if let Some(v) = self.parsed
            && self.same(texts)
        {
            return Ok(v);
        }
        self.parsed = None;
        let v = sysctl::parse_texts(texts)?;
        self.joined.clear();
        for (len, t) in self.lens.iter_mut().zip(texts) {
            *len = t.map(str::len);
            self.joined.push_str(t.unwrap_or(""));
        }
        self.parsed = Some(v);
        Ok(v)
    }

    /// Whether `texts` are the kept ones, present and absent alike.
    fn same(&self, texts: [Option<&str>; 9]) -> bool {
        let mut at = 0;
        for (len, t) in self.lens.iter().zip(texts) {
            if *len != t.map(str::len) {
                return false;
            }
            let t = t.unwrap_or("");
            if self.joined.get(at..at + t.len()) != Some(t) {
                return false;
            }
            at += t.len();
        }
        true
    }
}

/// A file parsed line by line, where a line's result depends only on its text and number
/// (diskstats, the PSI files): the last text and what each of its lines parsed to. On a
/// machine doing a little IO only the busy devices' diskstats lines change; of the PSI lines,
/// those with no stall (`full` on cpu, all of memory when idle) stay the same.
#[derive(Debug)]
struct LineMemo<T> {
    text: String,
    /// `parse_line` of each line of `text`, in order.
    parsed: Vec<T>,
}

impl<T> Default for LineMemo<T> {
    fn default() -> Self {
        Self {
            text: String::new(),
            parsed: Vec::new(),
        }
    }
}

impl<T> LineMemo<T> {
    /// Each line's `parse_line(line, number)`, calling it only for the lines that differ from
    /// the line with the same number last time; so the results, and the first error, are those
    /// of parsing every line. Errors are not kept.
    fn get<E>(
        &mut self,
        text: &str,
        mut parse_line: impl FnMut(&str, usize) -> std::result::Result<T, E>,
    ) -> std::result::Result<&[T], E> {
        let mut old = lines(&self.text);
        let mut n = 0;
        for line in lines(text) {
            let same = old.next() == Some(line);
            if !same {
                match parse_line(line, n + 1) {
                    Ok(v) if n < self.parsed.len() => self.parsed[n] = v,
                    Ok(v) => self.parsed.push(v),
                    Err(e) => {
                        // Lines before this one were updated but the text was not: forget both.
                        self.text.clear();
                        self.parsed.clear();
                        return Err(e);
                    }
                }
            }
            n += 1;
        }
        self.parsed.truncate(n);
        self.text.clear();
        self.text.push_str(text);
        Ok(&self.parsed)
    }
}

/// Parses successive samples of one source, remembering the files that repeat.
#[derive(Debug, Default)]
pub struct Parser {
    zones: Memo<Arc<[Zone]>>,
    disks: LineMemo<std::result::Result<Option<Arc<DiskCounters>>, diskstats::Skipped>>,
    block: Memo<Arc<BlockDevices>>,
    carried: Memo<Arc<[(String, u64)]>>,
    bdis: Memo<Arc<[super::bdi::BdiLimits]>>,
    /// In `PSI_FILES` order.
    psi: [LineMemo<Option<Psi>>; 3],
    sysctl: SysctlMemo,
}

impl Parser {
    /// A parser with nothing remembered.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The same as `Snapshot::parse(raw)`, faster when files repeat.
    pub fn parse(&mut self, raw: &RawSample) -> Result<Snapshot> {
        Snapshot::parse_with(raw, self)
    }
}

impl Repeats for Parser {
    fn zoneinfo(&mut self, text: &str) -> Result<Arc<[Zone]>> {
        self.zones.get(text, |t| zoneinfo::parse(t).map(Arc::from))
    }
    fn diskstats(&mut self, text: &str) -> super::DiskLines {
        let lines = self
            .disks
            .get(text, |line, n| {
                Ok::<_, Infallible>(diskstats::parse_line(line, n).map(|d| d.map(Arc::new)))
            })
            .unwrap_or_else(|e| match e {});
        let mut out = (Vec::with_capacity(lines.len()), Vec::new());
        for l in lines {
            match l {
                Ok(Some(d)) => out.0.push(Arc::clone(d)),
                Ok(None) => {}
                Err(s) => out.1.push(s.clone()),
            }
        }
        out
    }
    fn carried(&mut self, text: &str) -> Arc<[(String, u64)]> {
        self.carried
            .get(text, |t| {
                Ok::<_, Infallible>(super::diskstats::carried(t).into())
            })
            .unwrap_or_else(|e| match e {})
    }
    fn block(&mut self, text: &str) -> Arc<BlockDevices> {
        self.block
            .get(text, |t| Ok::<_, Infallible>(Arc::new(queue::parse(t))))
            .unwrap_or_else(|e| match e {})
    }
    fn pressure(&mut self, i: usize, text: &str) -> Result<Psi> {
        let lines = self.psi[i].get(text, |line, n| pressure::parse_line(PSI_FILES[i], line, n))?;
        Ok(lines.iter().fold(Psi::default(), |psi, l| psi.then(*l)))
    }
    fn sysctl(&mut self, texts: [Option<&str>; 9]) -> Result<VmSysctl> {
        self.sysctl.get(texts)
    }
    fn bdis(&mut self, text: &str) -> Result<Arc<[super::bdi::BdiLimits]>> {
        self.bdis
            .get(text, |t| super::bdi::parse_limits(t).map(Arc::from))
    }
}

#[cfg(test)]
#[path = "memo_tests.rs"]
mod tests;
