//! The throttles below the page cache: wbt's depth changes and latency windows
//! (`wbt:wbt_step`, `wbt_stat`, `wbt_lat`, 4.10+) and reclaim sleeping or writing on
//! writeback (`vmscan:mm_vmscan_throttled`, 5.16+; `mm_vmscan_write_folio`, before 5.19
//! `mm_vmscan_writepage`), in pagewatch's instance `pagewatch-<pid>-below`, armed while the
//! model wants it (`Wants::below`).
//!
//! Owns: when to arm that instance (the events this kernel has; none missing is an error
//! unless every wbt event or both vmscan ones are), the bounded non-blocking read of its
//! pages each sample, reduced at the edge to the `parse::below` pseudo-file by
//! `parse::below_reduce` (pure), and the status pseudo-file. Must not touch: tracefs
//! directly (`source::trace_instance`), what the lines mean (`model::below`).
//!
//! Cost: these events fire per wbt window (100 ms at most per busy device with wbt on, and
//! only while it is exceeded or scaled), per reclaim sleep and per page reclaim writes: tens a
//! second where something is wrong, none at idle. The instance has a 64 KiB buffer per CPU.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::trace::TRACE_READ_CAP;
use super::trace_instance::{Event, Instance, Spec, has_event, reachable};
use crate::parse::below::{BELOW, STATUS, render};
use crate::parse::below_reduce::{EVENTS, Layouts, Reducer};
use crate::parse::trace_raw::walk_page;

/// The instance's ring buffer, KiB per CPU.
const BUFFER_KB: u32 = 64;

/// Samples between attempts to arm after it failed.
const RETRY_TICKS: u32 = 60;

/// The `-below` tracer: armed, or why not; its texts for the sample.
pub struct BelowTracer {
    proc_root: PathBuf,
    guard_exe: PathBuf,
    armed: Option<(Instance, Reducer)>,
    status: Option<String>,
    wait: u32,
}

impl BelowTracer {
    /// A tracer for the live system; `guard_exe` is pagewatch's own binary.
    #[must_use]
    pub fn new(proc_root: PathBuf, guard_exe: PathBuf) -> Self {
        Self {
            proc_root,
            guard_exe,
            armed: None,
            status: None,
            wait: 0,
        }
    }

    /// Arms, reads or disarms for one sample, then puts its texts in `files` and their names
    /// in `fresh`.
    pub fn sample(
        &mut self,
        want: bool,
        buf: &mut Vec<u8>,
        files: &mut BTreeMap<String, String>,
        fresh: &mut Vec<&str>,
    ) {
        let mut below = None;
        if !want {
            if self.armed.is_some() || self.status.is_some() {
                self.armed = None;
                self.status = Some(status_text("off", None, 0, false));
            }
            self.wait = 0;
        } else if self.armed.is_none() {
            if self.wait == 0 {
                self.status = Some(match self.arm() {
                    Ok(()) => status_text("armed", None, 0, false),
                    Err((state, why)) => {
                        self.wait = RETRY_TICKS;
                        status_text(state, Some(&why), 0, false)
                    }
                });
            } else {
                self.wait -= 1;
            }
        } else if let Some((instance, reducer)) = &mut self.armed {
            let page = *instance.page_layout();
            let mut err = None;
            let (n, capped, read_err) = instance.read_pages(buf, TRACE_READ_CAP, |cpu, bytes| {
                let mut lost = 0;
                let r = walk_page(bytes, &page, cpu, &mut lost, |_, rec| {
                    reducer.record(rec);
                    Ok(())
                });
                reducer.lost(lost);
                if let Err(e) = r {
                    err.get_or_insert(format!("decoding trace_pipe_raw: {e}"));
                }
            });
            let err = read_err.or(err);
            below = Some(render(&reducer.take()));
            self.status = Some(status_text("armed", err.as_deref(), n, capped));
        }
        if let Some(s) = &self.status {
            put(files, STATUS, s);
            fresh.push(STATUS);
        }
        if let Some(b) = &below {
            put(files, BELOW, b);
            fresh.push(BELOW);
        }
    }

    /// Creates the instance with the events this kernel has.
    fn arm(&mut self) -> Result<(), (&'static str, String)> {
        // Not root, or no tracefs: say so, not that the events are missing.
        reachable(&self.proc_root)?;
        let have: Vec<&str> = EVENTS
            .iter()
            .copied()
            .filter(|e| has_event(&self.proc_root, e))
            .collect();
        // One write_folio event: the newer where both exist.
        let have: Vec<&str> = have
            .iter()
            .copied()
            .filter(|e| {
                !(e.ends_with("mm_vmscan_writepage")
                    && have.contains(&"vmscan/mm_vmscan_write_folio"))
            })
            .collect();
        if have.is_empty() {
            return Err(("no-event", "no wbt or vmscan throttling events".into()));
        }
        let events: Vec<Event> = have.iter().map(|dir| Event { dir, filter: None }).collect();
        let spec = Spec {
            name: "-below",
            buffer_kb: BUFFER_KB,
            clock: None,
            events: &events,
            wake_on_any: false,
        };
        let instance = Instance::create(&self.proc_root, &self.guard_exe, &spec)?;
        let formats: Vec<(&str, &str)> = have
            .iter()
            .enumerate()
            .map(|(i, d)| (*d, instance.format(i)))
            .collect();
        let layouts = Layouts::new(&formats).map_err(|e| {
            let why = format!("setting up {}: {e}", instance.dir().display());
            ("error", why)
        })?;
        self.armed = Some((instance, Reducer::new(layouts)));
        Ok(())
    }
}

fn put(files: &mut BTreeMap<String, String>, name: &str, text: &str) {
    match files.get_mut(name) {
        Some(v) => {
            v.clear();
            v.push_str(text);
        }
        None => {
            files.insert(name.to_owned(), text.to_owned());
        }
    }
}

/// The status pseudo-file of a tracer (the keys `parse::trace::parse_status` reads); the
/// reclaim tracer's too.
pub(super) fn status_text(state: &str, why: Option<&str>, bytes: usize, capped: bool) -> String {
    use std::fmt::Write;
    let mut s = format!("state {state}\n");
    if let Some(w) = why {
        let _ = writeln!(s, "why {}", w.replace('\n', " "));
    }
    let _ = write!(
        s,
        "pid {}\nbytes {bytes}\ncapped {}\n",
        std::process::id(),
        u8::from(capped)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_reads_back() {
        let s = status_text("no-event", Some("a\nb"), 4096, true);
        let st = crate::parse::trace::parse_status(&s).unwrap();
        assert_eq!(st.state, crate::parse::trace::TraceState::NoEvent);
        assert_eq!(st.why.as_deref(), Some("a b"));
        assert_eq!((st.bytes, st.capped), (4096, true));
    }

    #[test]
    fn without_tracefs_or_root_it_blames_those_and_not_the_events() {
        // A root with no tracefs mount in its mountinfo (and not the live /proc, so no
        // detached mount of pagewatch's own either).
        let mut t = BelowTracer::new("/nonexistent".into(), "/bin/false".into());
        let (mut files, mut fresh) = (BTreeMap::new(), Vec::new());
        t.sample(true, &mut Vec::new(), &mut files, &mut fresh);
        let st = crate::parse::trace::parse_status(&files[STATUS]).unwrap();
        let want = if rustix::process::geteuid().is_root() {
            crate::parse::trace::TraceState::NoTracefs
        } else {
            crate::parse::trace::TraceState::NotRoot
        };
        assert_eq!(st.state, want, "{}", files[STATUS]);
        assert!(
            !files[STATUS].contains("no wbt or vmscan"),
            "{}",
            files[STATUS]
        );
    }

    #[test]
    fn unwanted_and_never_armed_says_nothing() {
        let mut t = BelowTracer::new("/nonexistent".into(), "/bin/false".into());
        let (mut files, mut fresh) = (BTreeMap::new(), Vec::new());
        t.sample(false, &mut Vec::new(), &mut files, &mut fresh);
        assert!(files.is_empty() && fresh.is_empty());
    }
}
