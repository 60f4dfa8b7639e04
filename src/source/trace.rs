//! The `writeback:balance_dirty_pages` tracepoint (spec §7), armed in pagewatch's own tracefs
//! instance while the model wants it (`Wants::trace`).
//!
//! Owns: when to arm the private instance `instances/pagewatch-<pid>` (a small buffer, only
//! that one event enabled, made by `source::trace_instance`), the bounded non-blocking read
//! of its pages each sample, reduced to one line per writer (`parse::trace_writers`), and the
//! status pseudo-file. Must not touch: tracefs directly (`source::trace_instance` creates,
//! reads and removes instances), decoding the pages (`parse::trace_raw`).
//!
//! Why binary: `trace_pipe` makes the kernel printf every event (16 fields), which was most
//! of pagewatch's cost under throttling; `trace_pipe_raw` hands over ring-buffer pages as
//! they are. Each read returns one page and consumes it; the reads are non-blocking and
//! capped at `TRACE_READ_CAP` a sample; what is left waits for the next sample, and if the
//! ring wraps first the page says how many events were lost. The events are reduced here, at
//! the edge, to one line per task (pure code in `parse::trace_writers`), so that samples and
//! recordings carry a few hundred bytes instead of ~15 KB a second.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::SLOW_REFRESH_TICKS;
use super::trace_instance::{Event, Instance, Refusal, Spec};
use super::tracer_life::{Life, Turn, status_text};
use crate::parse::trace_raw::{RawEvents, RecordLayout, decode_page};
use crate::parse::trace_writers;
use crate::sample::names;

/// The most read from the per-CPU buffers per sample (64 pages, about 1,700 events).
pub const TRACE_READ_CAP: usize = 256 * 1024;

/// The instance's ring buffer, KiB per CPU (about 430 events each).
const BUFFER_KB: u32 = 64;

/// The instance's event filter: only events that announce a sleep.
const FILTER: &str = "pause > 0\n";

/// The event, relative to `events/`.
const EVENT_DIR: &str = "writeback/balance_dirty_pages";

/// The tracepoint's state in pagewatch: armed, or why not; and its texts for the sample.
pub struct Tracer {
    proc_root: PathBuf,
    guard_exe: PathBuf,
    life: Life<Armed>,
    /// Texts for the sample: status (once the tracepoint was first wanted), the writers
    /// pseudo-file, format.
    status: Option<String>,
    writers: String,
}

struct Armed {
    instance: Instance,
    record: RecordLayout,
    /// Command names of the writers seen in the last samples (`/proc/PID/comm`).
    comms: HashMap<u32, String>,
    format: String,
    /// The format went into a sample since arming.
    format_sent: bool,
    /// pagewatch's thread ids (`status`'s `tasks`), re-listed on the slow refresh.
    tasks: String,
    /// Samples since arming, modulo `SLOW_REFRESH_TICKS`: the task list is re-read on each
    /// slow refresh.
    ticks: u32,
}

impl Tracer {
    /// A tracer for the live system; `guard_exe` is pagewatch's own binary (for
    /// `__guard --tracefs-instance`).
    #[must_use]
    pub fn new(proc_root: PathBuf, guard_exe: PathBuf) -> Self {
        Self {
            proc_root,
            guard_exe,
            life: Life::default(),
            status: None,
            writers: String::new(),
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
        self.writers.clear();
        let (proc_root, guard_exe) = (&self.proc_root, &self.guard_exe);
        match self.life.turn(want, || arm(proc_root, guard_exe)) {
            Turn::Silent => {}
            Turn::Off => self.status = Some(status_text("off", None, 0, false, "")),
            Turn::Armed(a) => self.status = Some(status_text("armed", None, 0, false, &a.tasks)),
            Turn::Refused((state, why)) => {
                self.status = Some(status_text(state, Some(&why), 0, false, ""));
            }
            Turn::Read(a) => {
                let (bytes, capped, err) = a.read_events(proc_root, buf, &mut self.writers);
                if a.ticks + 1 == SLOW_REFRESH_TICKS {
                    a.tasks = own_tasks(proc_root);
                }
                a.ticks = (a.ticks + 1) % SLOW_REFRESH_TICKS;
                let why = err.as_deref();
                self.status = Some(status_text("armed", why, bytes, capped, &a.tasks));
            }
        }
        let mut put = |name: &'static str, text: &str| {
            match files.get_mut(name) {
                Some(v) => {
                    v.clear();
                    v.push_str(text);
                }
                None => {
                    files.insert(name.to_owned(), text.to_owned());
                }
            }
            fresh.push(name);
        };
        if let Some(s) = &self.status {
            put(names::TRACE_STATUS, s);
        }
        if let Some(a) = self.life.armed_mut() {
            // The format once per arming: a record of the kernel's fields (1.6 KB; nothing
            // derives from it since the source decodes the records itself).
            if !a.format_sent {
                a.format_sent = true;
                put(names::TRACE_FORMAT, &a.format);
            }
            put(names::TRACE_WRITERS, &self.writers);
        }
    }
}

impl Armed {
    /// Reads the pages the per-CPU buffers hold, up to the cap, and reduces their events to
    /// the writers pseudo-file: (bytes, capped, error).
    fn read_events(
        &mut self,
        proc_root: &Path,
        buf: &mut Vec<u8>,
        out: &mut String,
    ) -> (usize, bool, Option<String>) {
        let a = self;
        let mut raw = RawEvents::default();
        let mut err = None;
        let (page, record) = (a.instance.page_layout(), &a.record);
        let (n, capped, read_err) = a.instance.read_pages(buf, TRACE_READ_CAP, |cpu, bytes| {
            if let Err(e) = decode_page(bytes, page, record, cpu, &mut raw) {
                err.get_or_insert(format!("decoding trace_pipe_raw: {e}"));
            }
        });
        let err = read_err.or(err);
        let mut writers = trace_writers::reduce(&raw.events, raw.lost);
        a.comms
            .retain(|pid, _| writers.rows.iter().any(|r| r.pid == *pid));
        let mut saved: Option<String> = None;
        for r in &mut writers.rows {
            if let Some(c) = a.comms.get(&r.pid) {
                r.comm.clone_from(c);
                continue;
            }
            let mut c = comm(proc_root, r.pid);
            if c.is_empty() {
                // Gone before this read (a short dd): the kernel's own record of the names
                // of traced tasks, which outlives them.
                let text = saved.get_or_insert_with(|| a.instance.saved_cmdlines());
                crate::parse::trace::saved_comm(text, r.pid)
                    .unwrap_or_default()
                    .clone_into(&mut c);
            }
            if !c.is_empty() {
                a.comms.insert(r.pid, c.clone());
            }
            r.comm = c;
        }
        *out = trace_writers::render(&writers);
        (n, capped, err)
    }
}

/// pagewatch's thread ids, to flag its own rows.
fn own_tasks(proc_root: &Path) -> String {
    let Ok(dir) = std::fs::read_dir(proc_root.join("self/task")) else {
        return String::new();
    };
    let mut ids: Vec<u32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

/// Creates and enables the instance; on failure, the state and why.
fn arm(proc_root: &Path, guard_exe: &Path) -> Result<Armed, Refusal> {
    // Only the events that sleep: ~1 in 5 under steady throttling here, and the
    // kernel's text formatting of each event read is most of the cost. An old kernel
    // that refuses the filter gets every event (the model ignores pause ≤ 0 anyway).
    let spec = Spec {
        name: "",
        buffer_kb: BUFFER_KB,
        clock: None,
        events: &[Event {
            dir: EVENT_DIR,
            filter: Some(FILTER),
        }],
        wake_on_any: false,
    };
    let instance = Instance::create(proc_root, guard_exe, &spec)?;
    let format = instance.format(0).to_owned();
    let record = crate::parse::trace::parse_format(&format)
        .and_then(|f| RecordLayout::new(&f))
        .map_err(|e| instance.setup_error(e))?;
    Ok(Armed {
        instance,
        record,
        comms: HashMap::new(),
        format,
        format_sent: false,
        tasks: own_tasks(proc_root),
        ticks: 0,
    })
}

/// A task's command name, `/proc/PID/comm`; empty when it is gone.
fn comm(proc_root: &Path, pid: u32) -> String {
    std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm"))
        .map(|c| c.trim_end().to_owned())
        .unwrap_or_default()
}

impl Drop for Tracer {
    fn drop(&mut self) {
        self.life.disarm();
    }
}
