//! The sync syscalls' latency per process ("the victim"): `fsync`, `fdatasync`,
//! `sync_file_range` and `msync(MS_SYNC)` timed from their `syscalls:sys_enter_*` and
//! `sys_exit_*` tracepoints in pagewatch's own tracefs instance `pagewatch-<pid>-sync`, armed
//! while the model wants it (`Wants::sync`).
//!
//! Owns: when to arm that instance (a small buffer, the `mono` clock, only those events),
//! the bounded non-blocking read of its pages each sample, pairing each call's entry with its
//! exit (`parse::trace_sync::Pairer`), mapping task ids to processes (`/proc/TID/status`
//! `Tgid`, `/proc/TGID/comm`, cached), and the pseudo-file `names::SYNC_CALLS`, reduced here
//! at the edge to one line per process. Must not touch: tracefs directly
//! (`source::trace_instance`), decoding (`parse::trace_raw`, `parse::trace_sync`).
//!
//! The clock: a task can enter on one CPU and leave on another, so the instance runs `mono`
//! (the same `CLOCK_MONOTONIC` on every CPU; `global` where a kernel refuses it), and the
//! calls still waiting at a read are aged against `CLOCK_MONOTONIC` read here.
//!
//! Not timed: writes to files opened `O_SYNC`/`O_DSYNC`. Their `sys_enter_write` cannot be
//! told from any other write without reading the file's flags, and tracing every write on the
//! machine would cost far more than the sync calls; their wait on writeback is block-IO
//! delay, in the IOWAIT column (delay accounting). Where the kernel has no syscall
//! tracepoints (`CONFIG_FTRACE_SYSCALLS` off), the pseudo-file says `source delayacct`:
//! IOWAIT is then the only sign of a sync wait.
//!
//! Cost: enabling any syscall tracepoint makes every task on the machine take the syscall
//! tracing slow path on every syscall (a check of the enabled set, tens of ns), which is why
//! the instance is armed only while the figures are shown.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::thread_cpu_ns;
use super::trace_instance::{Event, Instance, Refusal, Spec};
use super::tracer_life::{Life, Turn, with_clock};
use crate::parse::sync_calls::{self, SyncCalls, SyncSource};
use crate::parse::trace::TraceState;
use crate::parse::trace_raw::walk_page;
use crate::parse::trace_sync::{self, Call, Pairer, SyncLayout};
use crate::sample::names;

/// The most read from the per-CPU buffers per sample (128 pages, about 9,000 calls): the
/// read costs about 100 ns a call (release build), so this bounds it under 1 ms/s.
const READ_CAP: usize = 512 * 1024;

/// The instance's ring buffers, KiB in all: an entry or exit record takes 28 bytes, so a
/// buffer of 128 KiB holds a second of 2,300 calls on its CPU. More calls than that are lost
/// (the oldest pages are overwritten; the pseudo-file counts them, the figures say they
/// undercount: mean and max stand, from the calls read), which bounds the read: on this VM
/// two CPUs full of no-op fsyncs on tmpfs (1.8 million a second) cost the tracer 0.71 ms/s.
const BUFFER_TOTAL_KB: usize = 2048;
/// Each CPU's buffer is `BUFFER_TOTAL_KB` shared out, within these bounds (a task that syncs
/// fast stays on one CPU mostly, so a many-CPU machine needs no more per CPU).
const BUFFER_KB: (usize, usize) = (64, 128);

/// Samples a task's process stays cached after its last sync call.
const TASK_TTL_TICKS: u64 = 30;

/// The sync tracer: armed, or why not, and its pseudo-file for the sample.
pub struct SyncTracer {
    proc_root: PathBuf,
    guard_exe: PathBuf,
    life: Life<Armed>,
    /// The pseudo-file's content, once the sync latency was first wanted.
    calls: Option<SyncCalls>,
    text: String,
}

struct Armed {
    instance: Instance,
    layout: SyncLayout,
    pairer: Pairer,
    clock: &'static str,
    /// Task id → (process id, its comm, the tick it was last seen).
    tasks: HashMap<u32, (u32, String, u64)>,
    tick: u64,
}

impl SyncTracer {
    /// A tracer for the live system; `guard_exe` is pagewatch's own binary (the cleanup
    /// guard of the instance).
    #[must_use]
    pub fn new(proc_root: PathBuf, guard_exe: PathBuf) -> Self {
        Self {
            proc_root,
            guard_exe,
            life: Life::default(),
            calls: None,
            text: String::new(),
        }
    }

    /// Arms now, between samples, when `want`ed (`Life::arm_ahead`): the next sample reads
    /// a whole interval of events.
    pub fn arm_ahead(&mut self, want: bool) {
        let (proc_root, guard_exe) = (&self.proc_root, &self.guard_exe);
        self.life.arm_ahead(want, || arm(proc_root, guard_exe));
    }

    /// Arms, reads or disarms for one sample, then puts the pseudo-file in `files` and its
    /// name in `fresh`.
    pub fn sample(
        &mut self,
        want: bool,
        buf: &mut Vec<u8>,
        files: &mut BTreeMap<String, String>,
        fresh: &mut Vec<&str>,
    ) {
        let (proc_root, guard_exe) = (&self.proc_root, &self.guard_exe);
        match self.life.turn(want, || arm(proc_root, guard_exe)) {
            Turn::Silent => {}
            Turn::Off => {
                self.calls = Some(SyncCalls::state(TraceState::Off, SyncSource::None, None));
            }
            Turn::Armed(a) => {
                self.calls = Some(SyncCalls {
                    clock: Some(a.clock.to_owned()),
                    ..SyncCalls::state(TraceState::Armed, SyncSource::Syscalls, None)
                });
            }
            Turn::Refused((state, why)) => self.calls = Some(refusal(state, why)),
            Turn::Read(a) => {
                let t0 = thread_cpu_ns();
                let mut c = a.read(proc_root, buf);
                c.cpu_ns = Some(thread_cpu_ns().saturating_sub(t0));
                self.calls = Some(c);
            }
        }
        if let Some(c) = &self.calls {
            self.text = sync_calls::render(c);
            match files.get_mut(names::SYNC_CALLS) {
                Some(v) => {
                    v.clear();
                    v.push_str(&self.text);
                }
                None => {
                    files.insert(names::SYNC_CALLS.to_owned(), self.text.clone());
                }
            }
            fresh.push(names::SYNC_CALLS);
        }
    }
}

impl Armed {
    /// Reads what the per-CPU buffers hold, pairs the calls and reduces them by process.
    fn read(&mut self, proc_root: &Path, buf: &mut Vec<u8>) -> SyncCalls {
        let a = self;
        let mut calls: Vec<Call> = Vec::new();
        let (mut lost, mut err, mut other) = (0u64, None, 0u64);
        let (page, layout) = (a.instance.page_layout(), &a.layout);
        let (bytes, capped, read_err) = a.instance.read_pages(buf, READ_CAP, |cpu, bytes| {
            let r = walk_page(bytes, page, cpu, &mut lost, |ts, rec| {
                match layout.decode(rec, ts) {
                    Some(c) => calls.push(c),
                    None => other += 1,
                }
                Ok(())
            });
            if let Err(e) = r {
                err.get_or_insert(format!("decoding trace_pipe_raw: {e}"));
            }
        });
        let events = calls.len() as u64 + other;
        let now = (a.clock == "mono").then(mono_ns);
        let mut done = Vec::new();
        a.pairer.pair(calls, now, &mut done);
        // A task gone with a call open lost that call's exit (`Pairer::forget_gone`); one
        // existence check per call in progress, few at any read.
        a.pairer
            .forget_gone(|tid| !proc_root.join(tid.to_string()).exists());
        let open = a.pairer.open();
        a.tick += 1;
        let tick = a.tick;
        let tasks = &mut a.tasks;
        let rows = trace_sync::reduce(&done, &open, |tid| {
            let e = tasks
                .entry(tid)
                .or_insert_with(|| process_of(proc_root, tid));
            e.2 = tick;
            (!e.1.is_empty() || e.0 != tid).then(|| (e.0, e.1.clone()))
        });
        tasks.retain(|_, e| tick - e.2 <= TASK_TTL_TICKS);
        SyncCalls {
            clock: Some(a.clock.to_owned()),
            why: read_err.or(err),
            bytes: bytes as u64,
            capped,
            events,
            lost,
            unpaired: a.pairer.take_unpaired(),
            rows,
            ..SyncCalls::state(TraceState::Armed, SyncSource::Syscalls, None)
        }
    }
}

/// Creates and enables the instance (the `mono` clock, else `global`), or the state and why.
fn arm(proc_root: &Path, guard_exe: &Path) -> Result<Armed, Refusal> {
    let events: Vec<Event> = trace_sync::EVENTS
        .iter()
        .map(|dir| Event { dir, filter: None })
        .collect();
    let cpus = std::thread::available_parallelism().map_or(64, std::num::NonZero::get);
    let kb = (BUFFER_TOTAL_KB / cpus).clamp(BUFFER_KB.0, BUFFER_KB.1);
    let (armed, _) = with_clock(|clock| {
        let spec = Spec {
            name: "-sync",
            buffer_kb: u32::try_from(kb).unwrap_or(64),
            clock: Some(clock),
            events: &events,
            wake_on_any: false,
        };
        let instance = Instance::create(proc_root, guard_exe, &spec)?;
        let layout = (0..events.len())
            .map(|i| crate::parse::trace::parse_format(instance.format(i)))
            .collect::<crate::Result<Vec<_>>>()
            .map_err(|e| e.to_string())
            .and_then(|f| SyncLayout::new(&f))
            .map_err(|e| instance.setup_error(e))?;
        Ok(Armed {
            instance,
            layout,
            pairer: Pairer::default(),
            clock,
            tasks: HashMap::new(),
            tick: 0,
        })
    })?;
    Ok(armed)
}

/// The pseudo-file for a tracer that could not be armed: without syscall tracepoints, the
/// figures fall back to delay accounting.
fn refusal(state: &str, why: String) -> SyncCalls {
    let (state, source) = match state {
        "not-root" => (TraceState::NotRoot, SyncSource::None),
        "no-tracefs" => (TraceState::NoTracefs, SyncSource::None),
        "no-event" => (TraceState::NoEvent, SyncSource::Delayacct),
        _ => (TraceState::Error, SyncSource::None),
    };
    SyncCalls::state(state, source, Some(why))
}

/// `CLOCK_MONOTONIC`, ns: the trace clock `mono`.
pub(super) fn mono_ns() -> u64 {
    ns(rustix::time::ClockId::Monotonic)
}

fn ns(clock: rustix::time::ClockId) -> u64 {
    let t = rustix::time::clock_gettime(clock);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

/// A task's process id (`/proc/TID/status` `Tgid`) and that process's comm; the task id and
/// an empty name when it is gone.
pub(super) fn process_of(proc_root: &Path, tid: u32) -> (u32, String, u64) {
    let leader = std::fs::read_to_string(proc_root.join(tid.to_string()).join("status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Tgid:"))
                .and_then(|v| v.trim().parse::<u32>().ok())
        });
    let Some(leader) = leader else {
        return (tid, String::new(), 0);
    };
    let comm = std::fs::read_to_string(proc_root.join(leader.to_string()).join("comm"))
        .map(|c| c.trim_end().to_owned())
        .unwrap_or_default();
    (leader, comm, 0)
}

impl Drop for SyncTracer {
    fn drop(&mut self) {
        self.life.disarm();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_syscall_tracepoint_falls_back_to_delay_accounting() {
        let c = refusal("no-event", "no sys_enter_fsync".into());
        assert_eq!(
            (c.state, c.source),
            (TraceState::NoEvent, SyncSource::Delayacct)
        );
        let c = refusal("not-root", "euid 1000".into());
        assert_eq!((c.state, c.source), (TraceState::NotRoot, SyncSource::None));
    }

    #[test]
    fn a_task_maps_to_its_process_and_a_gone_one_to_itself() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("12")).unwrap();
        std::fs::create_dir_all(dir.path().join("10")).unwrap();
        std::fs::write(dir.path().join("12/status"), "Name:\tworker\nTgid:\t10\n").unwrap();
        std::fs::write(dir.path().join("10/comm"), "postgres\n").unwrap();
        assert_eq!(process_of(dir.path(), 12), (10, "postgres".into(), 0));
        assert_eq!(process_of(dir.path(), 99), (99, String::new(), 0));
    }
}
