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
use std::path::{Path, PathBuf};

use super::sync_trace::{mono_ns, process_of};
use super::trace::TRACE_READ_CAP;
use super::trace_instance::{Event, Instance, Refusal, Spec};
use super::tracer_life::{Life, Turn, events_here, status_text, with_clock};
use crate::parse::reclaim_trace::{
    EVENTS, Layouts, RECORDS, Record, Records, STATUS, Task, render, still_open,
};
use crate::parse::trace_raw::walk_page;

/// The instance's ring buffer, KiB per CPU.
const BUFFER_KB: u32 = 64;

/// Samples a task's process stays cached after it last reclaimed.
const TASK_TTL_TICKS: u64 = 30;

/// At most this many entries are carried open (one per task at most).
const OPEN_MAX: usize = 4096;

/// The reclaim tracer: armed, or why not; its texts for the sample.
pub struct ReclaimTracer {
    proc_root: PathBuf,
    guard_exe: PathBuf,
    life: Life<Armed>,
    status: Option<String>,
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
            life: Life::default(),
            status: None,
        }
    }

    /// Arms now, between samples, when `want`ed (`Life::arm_ahead`): the next sample reads
    /// a whole interval of events.
    pub fn arm_ahead(&mut self, want: bool) {
        let (proc_root, guard_exe) = (&self.proc_root, &self.guard_exe);
        self.life.arm_ahead(want, || arm(proc_root, guard_exe));
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
        let (proc_root, guard_exe) = (&self.proc_root, &self.guard_exe);
        match self.life.turn(want, || arm(proc_root, guard_exe)) {
            Turn::Silent => {}
            Turn::Off => self.status = Some(status_text("off", None, 0, false, "")),
            Turn::Armed(a) => {
                let clock = format!("clock {}", a.clock);
                self.status = Some(status_text("armed", Some(&clock), 0, false, ""));
            }
            Turn::Refused((state, why)) => {
                self.status = Some(status_text(state, Some(&why), 0, false, ""));
            }
            Turn::Read(a) => {
                let t0 = super::thread_cpu_ns();
                let (text, mut status) = a.read(proc_root, buf);
                // The read's own cost, this thread's CPU time (`cpu_ns`, ignored by the parser).
                let cpu = super::thread_cpu_ns().saturating_sub(t0);
                let _ = writeln!(status, "cpu_ns {cpu}");
                records = Some(text);
                self.status = Some(status);
            }
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
}

impl Armed {
    /// Reads what the buffers hold: the pseudo-file's text and the status.
    fn read(&mut self, proc_root: &Path, buf: &mut Vec<u8>) -> (String, String) {
        let a = self;
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
        (
            render(&r),
            status_text("armed", why.as_deref(), n, capped, ""),
        )
    }
}

/// Creates the instance with the events this kernel has (direct reclaim's pair at least).
fn arm(proc_root: &Path, guard_exe: &Path) -> Result<Armed, Refusal> {
    let have = events_here(proc_root, &EVENTS)?;
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
    let (armed, _) = with_clock(|clock| {
        let spec = Spec {
            name: "-reclaim",
            buffer_kb: BUFFER_KB,
            clock: Some(clock),
            events: &events,
            wake_on_any: false,
        };
        let instance = Instance::create(proc_root, guard_exe, &spec)?;
        let layouts =
            Layouts::new(&instance.named_formats(&have)).map_err(|e| instance.setup_error(e))?;
        Ok(Armed {
            instance,
            layouts,
            clock,
            since_ns: if clock == "mono" { mono_ns() } else { 0 },
            fresh: true,
            open: Vec::new(),
            tasks: HashMap::new(),
            tick: 0,
        })
    })?;
    Ok(armed)
}

impl Drop for ReclaimTracer {
    fn drop(&mut self) {
        self.life.disarm();
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
