//! Who stalls in direct reclaim (spec §3.3): `vmscan:mm_vmscan_direct_reclaim_begin`/`_end`
//! and, where the kernel has them, `mm_vmscan_memcg_reclaim_begin`/`_end`, in pagewatch's
//! instance `pagewatch-<pid>-reclaim`, armed while the model wants it (`Wants::reclaim`:
//! direct or memcg reclaim ran).
//!
//! Owns: when to arm that instance (the `mono` clock, `global` where refused), the bounded
//! non-blocking read of its pages each sample, the records of the read (decoded by
//! `parse::reclaim_trace::Layouts`) with the entries the previous read left open
//! (`still_open`) and the processes of their tasks (`/proc/TID/status` `Tgid`, cached), put
//! in the sample as the pseudo-file `RECORDS`, and the status pseudo-file. Must not touch:
//! tracefs directly (`source::trace_instance`), pairing (`model::reclaim_tasks`, so that a
//! replay pairs the same records the same way).
//!
//! Cost: two events per direct reclaim, which runs at most a few thousand times a second
//! under heavy pressure (allocstall), none while memory is plentiful; each record is 16–24
//! bytes and one text line. The instance has a 64 KiB buffer per CPU (about 2,700 records);
//! a read takes at most `TRACE_READ_CAP`. Measured (`cpu_ns` of the status, this thread's CPU
//! clock, debug build, shared 2-core VM): 0.82 ms/s while armed over 53 s of an eater beside
//! a dd writer and others' builds (3,000 records, 43 ms in all, 3.3 ms the longest read),
//! most of it resolving new task ids in /proc.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use super::below::status_text;
use super::sync_trace::{mono_ns, process_of};
use super::trace::TRACE_READ_CAP;
use super::trace_instance::{Event, Instance, Spec, has_event, reachable};
use crate::parse::reclaim_trace::{
    EVENTS, Layouts, RECORDS, Record, Records, STATUS, Task, render, still_open,
};
use crate::parse::trace_raw::walk_page;

/// The instance's ring buffer, KiB per CPU.
const BUFFER_KB: u32 = 64;

/// Samples between attempts to arm after it failed.
const RETRY_TICKS: u32 = 60;

/// Samples a task's process stays cached after it last reclaimed.
const TASK_TTL_TICKS: u64 = 30;

/// At most this many entries are carried open (one per task at most).
const OPEN_MAX: usize = 4096;

/// The reclaim tracer: armed, or why not; its texts for the sample.
pub struct ReclaimTracer {
    proc_root: PathBuf,
    guard_exe: PathBuf,
    armed: Option<Armed>,
    status: Option<String>,
    wait: u32,
}

struct Armed {
    instance: Instance,
    layouts: Layouts,
    clock: &'static str,
    /// The end of the last read (or the arming), trace clock ns.
    since_ns: u64,
    fresh: bool,
    /// Entries the last read left open.
    open: Vec<Record>,
    /// Task id → (its process, the tick it was last seen).
    tasks: HashMap<u32, (Task, u64)>,
    tick: u64,
}

impl ReclaimTracer {
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
        let mut records = None;
        if !want {
            if self.armed.is_some() || self.status.is_some() {
                self.armed = None;
                self.status = Some(status_text("off", None, 0, false));
            }
            self.wait = 0;
        } else if self.armed.is_none() {
            if self.wait == 0 {
                self.status = Some(match self.arm() {
                    Ok(clock) => status_text("armed", Some(&format!("clock {clock}")), 0, false),
                    Err((state, why)) => {
                        self.wait = RETRY_TICKS;
                        status_text(state, Some(&why), 0, false)
                    }
                });
            } else {
                self.wait -= 1;
            }
        } else {
            let t0 = super::thread_cpu_ns();
            let (text, mut status) = self.read(buf);
            // The read's own cost, this thread's CPU time (`cpu_ns`, ignored by the parser).
            let cpu = super::thread_cpu_ns().saturating_sub(t0);
            let _ = writeln!(status, "cpu_ns {cpu}");
            records = Some(text);
            self.status = Some(status);
        }
        if let Some(s) = &self.status {
            super::put(files, STATUS, s.into());
            fresh.push(STATUS);
        }
        if let Some(r) = records {
            super::put(files, RECORDS, r.into());
            fresh.push(RECORDS);
        }
    }

    /// Reads what the buffers hold: the pseudo-file's text and the status.
    fn read(&mut self, buf: &mut Vec<u8>) -> (String, String) {
        let proc_root = &self.proc_root;
        let Some(a) = &mut self.armed else {
            return (String::new(), status_text("off", None, 0, false));
        };
        let mut r = Records {
            since_ns: a.since_ns,
            fresh: a.fresh,
            records: std::mem::take(&mut a.open),
            ..Records::default()
        };
        let (mut err, mut lost) = (None, 0u64);
        let (layouts, page) = (&a.layouts, *a.instance.page_layout());
        let (n, capped, read_err) = a.instance.read_pages(buf, TRACE_READ_CAP, |cpu, bytes| {
            let res = walk_page(bytes, &page, cpu, &mut lost, |ts, rec| {
                if let Some(x) = layouts.decode(rec, ts) {
                    r.records.push(x);
                }
                Ok(())
            });
            if let Err(e) = res {
                err.get_or_insert(format!("decoding trace_pipe_raw: {e}"));
            }
        });
        r.now_ns = if a.clock == "mono" {
            mono_ns()
        } else {
            r.records.iter().map(|x| x.ts).max().unwrap_or(r.since_ns)
        }
        .max(r.since_ns);
        r.lost = lost;
        r.records.sort_by_key(|x| x.ts);
        a.tick += 1;
        let mut saved: Option<String> = None;
        for x in &r.records {
            let instance = &a.instance;
            let e = a.tasks.entry(x.tid).or_insert_with(|| {
                let (tgid, mut comm, _) = process_of(proc_root, x.tid);
                if comm.is_empty() {
                    // Gone before this read (a short compiler job): the kernel's own record of
                    // traced tasks' names, which outlives them (the thread's name).
                    let text = saved.get_or_insert_with(|| instance.saved_cmdlines());
                    crate::parse::trace::saved_comm(text, x.tid)
                        .unwrap_or_default()
                        .clone_into(&mut comm);
                }
                (Task { tgid, comm }, 0)
            });
            e.1 = a.tick;
            r.tasks.insert(x.tid, e.0.clone());
        }
        let tick = a.tick;
        a.tasks.retain(|_, e| tick - e.1 <= TASK_TTL_TICKS);
        // A task gone with an entry open lost its exit: not carried.
        a.open = still_open(&r.records)
            .into_iter()
            .filter(|x| proc_root.join(x.tid.to_string()).exists())
            .take(OPEN_MAX)
            .collect();
        a.since_ns = r.now_ns;
        a.fresh = false;
        let why = read_err.or(err);
        (render(&r), status_text("armed", why.as_deref(), n, capped))
    }

    /// Creates the instance with the events this kernel has (direct reclaim's pair at least).
    fn arm(&mut self) -> Result<&'static str, (&'static str, String)> {
        reachable(&self.proc_root)?;
        let have: Vec<&str> = EVENTS
            .iter()
            .copied()
            .filter(|e| has_event(&self.proc_root, e))
            .collect();
        if !have.contains(&EVENTS[0]) || !have.contains(&EVENTS[1]) {
            return Err(("no-event", format!("no {} and {}", EVENTS[0], EVENTS[1])));
        }
        // A memcg begin without its end (or the reverse) would never pair.
        let have: Vec<&str> = if have.len() == 4 {
            have
        } else {
            have[..2].to_vec()
        };
        let events: Vec<Event> = have.iter().map(|dir| Event { dir, filter: None }).collect();
        let mut last = None;
        for clock in ["mono", "global"] {
            let spec = Spec {
                name: "-reclaim",
                buffer_kb: BUFFER_KB,
                clock: Some(clock),
                events: &events,
                wake_on_any: false,
            };
            let instance = match Instance::create(&self.proc_root, &self.guard_exe, &spec) {
                Ok(i) => i,
                Err(e) if e.0 == "error" => {
                    last = Some(e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let formats: Vec<(&str, &str)> = have
                .iter()
                .enumerate()
                .map(|(i, d)| (*d, instance.format(i)))
                .collect();
            let layouts = Layouts::new(&formats).map_err(|e| {
                let why = format!("setting up {}: {e}", instance.dir().display());
                ("error", why)
            })?;
            let since_ns = if clock == "mono" { mono_ns() } else { 0 };
            self.armed = Some(Armed {
                instance,
                layouts,
                clock,
                since_ns,
                fresh: true,
                open: Vec::new(),
                tasks: HashMap::new(),
                tick: 0,
            });
            return Ok(clock);
        }
        Err(last.unwrap_or(("error", "no clock".into())))
    }
}

impl Drop for ReclaimTracer {
    fn drop(&mut self) {
        self.armed = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_tracefs_or_root_it_says_so_and_puts_no_records() {
        let mut t = ReclaimTracer::new("/nonexistent".into(), "/bin/false".into());
        let (mut files, mut fresh) = (BTreeMap::new(), Vec::new());
        t.sample(true, &mut Vec::new(), &mut files, &mut fresh);
        let st = crate::parse::trace::parse_status(&files[STATUS]).unwrap();
        let want = if rustix::process::geteuid().is_root() {
            crate::parse::trace::TraceState::NoTracefs
        } else {
            crate::parse::trace::TraceState::NotRoot
        };
        assert_eq!(st.state, want, "{}", files[STATUS]);
        assert!(!files.contains_key(RECORDS));
        // Not wanted after: off.
        t.sample(false, &mut Vec::new(), &mut files, &mut fresh);
        let st = crate::parse::trace::parse_status(&files[STATUS]).unwrap();
        assert_eq!(st.state, crate::parse::trace::TraceState::Off);
    }
}
