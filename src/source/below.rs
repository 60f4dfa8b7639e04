//! The throttles below the page cache: wbt's depth changes and latency windows
//! (`wbt:wbt_step`, `wbt_stat`, `wbt_lat`, 4.10+) and reclaim sleeping or writing on
//! writeback (`vmscan:mm_vmscan_throttled`, 5.16+; `mm_vmscan_write_folio`, before 5.19
//! `mm_vmscan_writepage`), in pagewatch's instance `pagewatch-<pid>-below`, armed while the
//! model wants it (`Wants::below`), through the tracers' one lifecycle (`source::tracer_life`).
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
use std::path::{Path, PathBuf};

use super::trace::TRACE_READ_CAP;
use super::trace_instance::{Event, Instance, Refusal, Spec};
use super::tracer_life::{Life, Turn, events_here, status_text};
use crate::parse::below::{BELOW, STATUS, render};
use crate::parse::below_reduce::{EVENTS, Layouts, Reducer};
use crate::parse::trace_raw::walk_page;

/// The instance's ring buffer, KiB per CPU.
const BUFFER_KB: u32 = 64;

/// The `-below` tracer: armed, or why not; its texts for the sample.
pub struct BelowTracer {
    proc_root: PathBuf,
    guard_exe: PathBuf,
    life: Life<(Instance, Reducer)>,
    status: Option<String>,
}

impl BelowTracer {
    /// A tracer for the live system; `guard_exe` is pagewatch's own binary.
    #[must_use]
    pub fn new(proc_root: PathBuf, guard_exe: PathBuf) -> Self {
        Self {
            proc_root,
            guard_exe,
            life: Life::default(),
            status: None,
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
        let (proc_root, guard_exe) = (&self.proc_root, &self.guard_exe);
        match self.life.turn(want, || arm(proc_root, guard_exe)) {
            Turn::Silent => {}
            Turn::Off => self.status = Some(status_text("off", None, 0, false, "")),
            Turn::Armed(_) => self.status = Some(status_text("armed", None, 0, false, "")),
            Turn::Refused((state, why)) => {
                self.status = Some(status_text(state, Some(&why), 0, false, ""));
            }
            Turn::Read((instance, reducer)) => {
                let page = *instance.page_layout();
                let mut err = None;
                let (n, capped, read_err) =
                    instance.read_pages(buf, TRACE_READ_CAP, |cpu, bytes| {
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
                self.status = Some(status_text("armed", err.as_deref(), n, capped, ""));
            }
        }
        if let Some(s) = &self.status {
            super::put(files, STATUS, s.into());
            fresh.push(STATUS);
        }
        if let Some(b) = below {
            super::put(files, BELOW, b.into());
            fresh.push(BELOW);
        }
    }
}

/// Creates the instance with the events this kernel has.
fn arm(proc_root: &Path, guard_exe: &Path) -> Result<(Instance, Reducer), Refusal> {
    // Not root, or no tracefs: say so, not that the events are missing.
    let have = events_here(proc_root, &EVENTS)?;
    // One write_folio event: the newer where both exist.
    let have: Vec<&str> = have
        .iter()
        .copied()
        .filter(|e| {
            !(e.ends_with("mm_vmscan_writepage") && have.contains(&"vmscan/mm_vmscan_write_folio"))
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
    let instance = Instance::create(proc_root, guard_exe, &spec)?;
    let layouts =
        Layouts::new(&instance.named_formats(&have)).map_err(|e| instance.setup_error(e))?;
    Ok((instance, Reducer::new(layouts)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
