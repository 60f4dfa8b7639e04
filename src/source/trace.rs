//! The `writeback:balance_dirty_pages` tracepoint (spec §7), armed in pagewatch's own tracefs
//! instance while the model wants it (`Wants::trace`).
//!
//! Owns: finding tracefs (mountinfo; never mounted here), the private instance
//! `instances/pagewatch-<pid>` (mkdir, a small buffer, only that one event enabled), the
//! bounded non-blocking read of its per-CPU `trace_pipe_raw` each sample, reduced to one
//! line per writer (`parse::trace_writers`), the status pseudo-file, the cleanup guard that
//! removes the instance if pagewatch is SIGKILLed (`source::trace_guard`), and removing stale
//! instances of dead pagewatch processes. Must not touch: anything in tracefs outside
//! `instances/pagewatch-*` (the top-level buffer and its events stay as they are), decoding
//! the pages (`parse::trace_raw`).
//!
//! Why binary: `trace_pipe` makes the kernel printf every event (16 fields), which was most
//! of pagewatch's cost under throttling; `trace_pipe_raw` hands over ring-buffer pages as
//! they are. Each read returns one page and consumes it; the reads are non-blocking and
//! capped at `TRACE_READ_CAP` a sample; what is left waits for the next sample, and if the
//! ring wraps first the page says how many events were lost. The events are reduced here, at
//! the edge, to one line per task (pure code in `parse::trace_writers`), so that samples and
//! recordings carry a few hundred bytes instead of ~15 KB a second.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};

use super::SLOW_REFRESH_TICKS;
use crate::parse::trace_raw::{PageLayout, RawEvents, RecordLayout, decode_page};
use crate::parse::trace_writers;
use crate::sample::names;

/// The most read from the per-CPU buffers per sample (64 pages, about 1,700 events).
pub const TRACE_READ_CAP: usize = 256 * 1024;

/// The instance's ring buffer, KiB per CPU (about 430 events each).
const BUFFER_KB: u32 = 64;

/// Samples between attempts to arm after it failed (or could not be done).
const RETRY_TICKS: u32 = 60;

/// The instance's event filter: only events that announce a sleep.
const FILTER: &str = "pause > 0\n";

/// The event, relative to tracefs or an instance.
const EVENT_DIR: &str = "events/writeback/balance_dirty_pages";

/// tracefs's `f_type` (`TRACEFS_MAGIC`).
const TRACEFS_MAGIC: u64 = 0x7472_6163;

/// The tracepoint's state in pagewatch: armed, or why not; and its texts for the sample.
pub struct Tracer {
    proc_root: PathBuf,
    guard_exe: PathBuf,
    armed: Option<Armed>,
    /// Texts for the sample: status (once the tracepoint was first wanted), the writers
    /// pseudo-file, format.
    status: Option<String>,
    writers: String,
    /// Samples left before the next attempt to arm.
    wait: u32,
}

struct Armed {
    dir: PathBuf,
    /// `per_cpu/cpuN/trace_pipe_raw`, opened non-blocking, with N.
    cpus: Vec<(u32, File)>,
    page: PageLayout,
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
    guard: Option<(Child, ChildStdin)>,
}

impl Tracer {
    /// A tracer for the live system; `guard_exe` is pagewatch's own binary (for
    /// `__guard --tracefs-instance`).
    #[must_use]
    pub fn new(proc_root: PathBuf, guard_exe: PathBuf) -> Self {
        Self {
            proc_root,
            guard_exe,
            armed: None,
            status: None,
            writers: String::new(),
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
        self.writers.clear();
        if !want {
            if self.armed.is_some() || self.status.is_some() {
                self.disarm();
                self.status = Some(status_text("off", None, 0, false, ""));
            }
            self.wait = 0;
        } else if self.armed.is_none() {
            if self.wait == 0 {
                self.status = Some(match self.arm() {
                    Ok(()) => {
                        let tasks = self.armed.as_ref().map_or("", |a| a.tasks.as_str());
                        status_text("armed", None, 0, false, tasks)
                    }
                    Err((state, why)) => {
                        self.wait = RETRY_TICKS;
                        status_text(state, Some(&why), 0, false, "")
                    }
                });
            } else {
                self.wait -= 1;
            }
        } else {
            let (bytes, capped, err) = self.read_events(buf);
            let slow = self
                .armed
                .as_ref()
                .is_some_and(|a| a.ticks + 1 == SLOW_REFRESH_TICKS);
            let tasks = slow.then(|| self.own_tasks());
            if let Some(a) = &mut self.armed {
                a.ticks = (a.ticks + 1) % SLOW_REFRESH_TICKS;
                if let Some(t) = tasks {
                    a.tasks = t;
                }
                self.status = Some(status_text(
                    "armed",
                    err.as_deref(),
                    bytes,
                    capped,
                    &a.tasks,
                ));
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
        if let Some(a) = &mut self.armed {
            // The format once per arming: a record of the kernel's fields (1.6 KB; nothing
            // derives from it since the source decodes the records itself).
            if !a.format_sent {
                a.format_sent = true;
                put(names::TRACE_FORMAT, &a.format);
            }
            put(names::TRACE_WRITERS, &self.writers);
        }
    }

    /// Reads the pages the per-CPU buffers hold, up to the cap, and reduces their events to
    /// the writers pseudo-file: (bytes, capped, error).
    fn read_events(&mut self, buf: &mut Vec<u8>) -> (usize, bool, Option<String>) {
        let proc_root = &self.proc_root;
        let Some(a) = &mut self.armed else {
            return (0, false, None);
        };
        let page = a.page.page_size;
        if buf.len() < page {
            buf.resize(page, 0);
        }
        let mut raw = RawEvents::default();
        let (mut n, mut err) = (0, None);
        'cpus: for (cpu, file) in &a.cpus {
            while n < TRACE_READ_CAP {
                match rustix::io::read(file, &mut buf[..page]) {
                    Ok(0) | Err(rustix::io::Errno::AGAIN) => break,
                    Ok(k) => {
                        n += k;
                        if let Err(e) = decode_page(&buf[..k], &a.page, &a.record, *cpu, &mut raw) {
                            err.get_or_insert(format!("decoding trace_pipe_raw: {e}"));
                        }
                    }
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e) => {
                        err = Some(format!("reading cpu{cpu}/trace_pipe_raw: {e}"));
                        break 'cpus;
                    }
                }
            }
        }
        let mut writers = trace_writers::reduce(&raw.events, raw.lost);
        a.comms
            .retain(|pid, _| writers.rows.iter().any(|r| r.pid == *pid));
        for r in &mut writers.rows {
            r.comm = a
                .comms
                .entry(r.pid)
                .or_insert_with(|| comm(proc_root, r.pid))
                .clone();
        }
        self.writers = trace_writers::render(&writers);
        (n, n >= TRACE_READ_CAP, err)
    }

    /// pagewatch's thread ids, to flag its own rows.
    fn own_tasks(&self) -> String {
        let Ok(dir) = std::fs::read_dir(self.proc_root.join("self/task")) else {
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
    fn arm(&mut self) -> Result<(), (&'static str, String)> {
        let euid = rustix::process::geteuid();
        if !euid.is_root() {
            return Err(("not-root", format!("euid {}", euid.as_raw())));
        }
        let Some(tracefs) = find_tracefs(&self.proc_root) else {
            return Err(("no-tracefs", "no tracefs mount in mountinfo".into()));
        };
        let format_path = tracefs.join(EVENT_DIR).join("format");
        if !format_path.exists() {
            return Err(("no-event", format!("{} is missing", format_path.display())));
        }
        remove_stale(&tracefs, &self.proc_root);
        let pid = std::process::id();
        let dir = tracefs.join("instances").join(format!("pagewatch-{pid}"));
        let err = |what: &str, e: &dyn std::fmt::Display| ("error", format!("{what}: {e}"));
        // Ours from an earlier arming that could not be removed: start afresh.
        if dir.exists() {
            remove_instance(&dir).map_err(|e| err("removing the old instance", &e))?;
        }
        std::fs::create_dir(&dir).map_err(|e| err("creating the instance", &e))?;
        let guard = match super::trace_guard::start(&self.guard_exe, &dir) {
            Ok(g) => g,
            Err(e) => {
                let _ = remove_instance(&dir);
                return Err(err("starting its cleanup guard", &format!("{e:#}")));
            }
        };
        let setup = || -> std::io::Result<Armed> {
            let invalid =
                |e: crate::Error| std::io::Error::new(ErrorKind::InvalidData, e.to_string());
            std::fs::write(dir.join("buffer_size_kb"), format!("{BUFFER_KB}\n"))?;
            let format = std::fs::read_to_string(dir.join(EVENT_DIR).join("format"))?;
            let record = crate::parse::trace::parse_format(&format)
                .and_then(|f| RecordLayout::new(&f))
                .map_err(invalid)?;
            let page = crate::parse::trace_raw::parse_header_page(&read_in_one(
                &tracefs.join("events/header_page"),
            )?)
            .map_err(invalid)?;
            // Only the events that sleep: ~1 in 5 under steady throttling here, and the
            // kernel's text formatting of each event read is most of the cost. An old kernel
            // that refuses the filter gets every event (the model ignores pause ≤ 0 anyway).
            let _ = std::fs::write(dir.join(EVENT_DIR).join("filter"), FILTER);
            let mut cpus = Vec::new();
            for e in std::fs::read_dir(dir.join("per_cpu"))? {
                let e = e?;
                let Some(cpu) = e
                    .file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix("cpu")?.parse::<u32>().ok())
                else {
                    continue;
                };
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(e.path().join("trace_pipe_raw"))?;
                cpus.push((cpu, file));
            }
            cpus.sort_by_key(|c| c.0);
            std::fs::write(dir.join(EVENT_DIR).join("enable"), "1\n")?;
            Ok(Armed {
                dir: dir.clone(),
                cpus,
                page,
                record,
                comms: HashMap::new(),
                format,
                format_sent: false,
                tasks: String::new(),
                ticks: 0,
                guard: None,
            })
        };
        match setup() {
            Ok(mut armed) => {
                armed.tasks = self.own_tasks();
                armed.guard = Some(guard);
                self.armed = Some(armed);
                Ok(())
            }
            Err(e) => {
                let why = format!("setting up {}: {e}", dir.display());
                let _ = remove_instance(&dir);
                release(guard);
                Err(("error", why))
            }
        }
    }

    /// Disables the event, removes the instance and lets its guard go.
    fn disarm(&mut self) {
        let Some(a) = self.armed.take() else { return };
        let Armed {
            dir, cpus, guard, ..
        } = a;
        drop(cpus);
        let _ = remove_instance(&dir);
        if let Some(g) = guard {
            release(g);
        }
    }
}

/// A small tracefs file read with one large read: `events/header_page` regenerates its text
/// on every read and answers a second, small read with end-of-file (6.18 gives 32 bytes to
/// `read_to_string`'s first probe and then nothing).
fn read_in_one(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut buf = vec![0u8; 64 * 1024];
    let n = File::open(path)?.read(&mut buf)?;
    buf.truncate(n);
    String::from_utf8(buf).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))
}

/// A task's command name, `/proc/PID/comm`; empty when it is gone.
fn comm(proc_root: &Path, pid: u32) -> String {
    std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm"))
        .map(|c| c.trim_end().to_owned())
        .unwrap_or_default()
}

/// Closes the guard's pipe (it finds the instance gone and exits) and reaps it.
fn release((mut child, stdin): (Child, ChildStdin)) {
    drop(stdin);
    let _ = child.wait();
}

impl Drop for Tracer {
    fn drop(&mut self) {
        self.disarm();
    }
}

fn status_text(state: &str, why: Option<&str>, bytes: usize, capped: bool, tasks: &str) -> String {
    use std::fmt::Write;
    let mut s = format!("state {state}\n");
    if let Some(w) = why {
        s.push_str("why ");
        s.push_str(&w.replace('\n', " "));
        s.push('\n');
    }
    let _ = writeln!(s, "pid {}", std::process::id());
    if !tasks.is_empty() {
        let _ = writeln!(s, "tasks {tasks}");
    }
    let _ = write!(s, "bytes {bytes}\ncapped {}\n", u8::from(capped));
    s
}

/// The tracefs mount point: `/sys/kernel/tracing` if mounted, else any tracefs mount (such
/// as `/sys/kernel/debug/tracing`), from `mountinfo` (field 5 the mount point, the type after
/// ` - `).
fn find_tracefs(proc_root: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(proc_root.join("self/mountinfo")).ok()?;
    let mut found: Vec<PathBuf> = super::mountinfo::mounts(&text)
        .filter(|m| m.fstype == "tracefs")
        .map(|m| m.point)
        .collect();
    found.sort_by_key(|p| p != Path::new("/sys/kernel/tracing"));
    found.into_iter().next()
}

/// Removes `instances/pagewatch-<pid>` of pids that no longer exist.
fn remove_stale(tracefs: &Path, proc_root: &Path) {
    let Ok(entries) = std::fs::read_dir(tracefs.join("instances")) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("pagewatch-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !proc_root.join(pid.to_string()).exists() {
            let _ = remove_instance(&e.path());
        }
    }
}

/// Disables the event in a pagewatch instance and removes it. Refuses anything that is not
/// `<tracefs>/instances/pagewatch-<digits>`. Retries a busy instance (a reader still closing)
/// for about two seconds. Gone already: fine.
pub fn remove_instance(dir: &Path) -> std::io::Result<()> {
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("pagewatch-"))
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let parent = dir.parent();
    let in_instances = parent
        .and_then(Path::file_name)
        .is_some_and(|n| n == "instances");
    let on_tracefs = parent
        .and_then(|p| rustix::fs::statfs(p).ok())
        .is_some_and(|s| s.f_type as u64 == TRACEFS_MAGIC);
    if !(named && in_instances && on_tracefs) {
        return Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            format!("{} is not a pagewatch tracefs instance", dir.display()),
        ));
    }
    match std::fs::write(dir.join(EVENT_DIR).join("enable"), "0\n") {
        Err(e) if e.kind() == ErrorKind::NotFound && !dir.exists() => return Ok(()),
        _ => {}
    }
    for _ in 0..20 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(e) => return Err(e),
        }
    }
    std::fs::remove_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tracefs_and_prefers_the_usual_place() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("self")).unwrap();
        let info = "22 1 0:5 / /proc rw - proc proc rw\n\
                    40 30 0:12 / /sys/kernel/debug/tracing rw - tracefs tracefs rw\n\
                    42 23 0:13 / /sys/kernel/tracing rw,relatime - tracefs nodev rw\n";
        std::fs::write(dir.path().join("self/mountinfo"), info).unwrap();
        assert_eq!(
            find_tracefs(dir.path()).unwrap(),
            Path::new("/sys/kernel/tracing")
        );
        let info = "40 30 0:12 / /sys/kernel/debug/tracing rw - tracefs tracefs rw\n";
        std::fs::write(dir.path().join("self/mountinfo"), info).unwrap();
        assert_eq!(
            find_tracefs(dir.path()).unwrap(),
            Path::new("/sys/kernel/debug/tracing")
        );
        std::fs::write(
            dir.path().join("self/mountinfo"),
            "22 1 0:5 / /proc rw - proc p rw\n",
        )
        .unwrap();
        assert_eq!(find_tracefs(dir.path()), None);
    }

    #[test]
    fn refuses_to_remove_anything_else() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("instances/pagewatch-1");
        std::fs::create_dir_all(&fake).unwrap();
        assert!(remove_instance(&fake).is_err(), "not on tracefs");
        assert!(fake.exists());
        for p in [
            "/sys/kernel/tracing/instances/other",
            "/sys/kernel/tracing/instances/pagewatch-",
        ] {
            assert!(remove_instance(Path::new(p)).is_err(), "{p}");
        }
    }

    #[test]
    fn status_lines() {
        let s = status_text("armed", Some("x\ny"), 12, true, "1 2");
        let st = crate::parse::trace::parse_status(&s).unwrap();
        assert_eq!(st.why.as_deref(), Some("x y"));
        assert_eq!((st.bytes, st.capped, st.tasks.len()), (12, true, 2));
        assert_eq!(st.pid, Some(std::process::id()));
    }
}
