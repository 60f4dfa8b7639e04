//! One private tracefs instance of pagewatch's, `instances/pagewatch-<pid>[-<name>]`: created
//! with a small buffer and only the events asked for enabled, read without blocking from its
//! per-CPU `trace_pipe_raw`, and removed (its events disabled first) when dropped, or by its
//! cleanup guard if pagewatch is SIGKILLed (`source::trace_guard`).
//!
//! While it lives, its maker holds an exclusive `flock` on the instance's directory, and
//! nothing removes a held instance. A pid in the name says nothing across pid namespaces:
//! tracefs has one superblock, so a pagewatch in a container sees the host's instances with
//! pids it does not have, and took them for stale. Removing one disables its events first,
//! and the owner, whose open readers keep the directory, stayed `armed` reading nothing
//! (issue 51: 0 events in every interval, nothing lost, no error; reproduced by a pagewatch
//! run under `unshare -pf --mount-proc` beside one timing a loop device).
//!
//! Owns: finding tracefs (its mount in mountinfo; where there is none, a detached mount of
//! pagewatch's own, attached nowhere: `detached`), creating, arming and removing an
//! instance (and starting its guard, `start_guard`), the per-CPU raw readers, removing stale instances of dead pagewatch processes,
//! and refusing to remove anything that is not a pagewatch instance on tracefs. Must not
//! touch: anything in tracefs outside `instances/pagewatch-*` (the top-level buffer and its
//! events stay as they are; `saved_cmdlines` is only read), what the events mean (each tracer: `source::trace` for
//! `balance_dirty_pages`), decoding pages (`parse::trace_raw`).

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use anyhow::Context as _;

use crate::parse::trace_raw::{PageLayout, parse_header_page};

/// tracefs's `f_type` (`TRACEFS_MAGIC`).
const TRACEFS_MAGIC: u64 = 0x7472_6163;

/// One event to enable: its directory under `events/` (`writeback/balance_dirty_pages`) and
/// an optional filter (an old kernel that refuses it gets every event).
pub struct Event<'a> {
    /// Under `events/`: `subsystem/event`.
    pub dir: &'a str,
    /// The event's `filter` text, if any.
    pub filter: Option<&'a str>,
}

/// What to create: the name after `pagewatch-<pid>` (empty, or `-` and lowercase letters),
/// the ring buffer per CPU, the trace clock (`None` keeps the default `local`), the events.
pub struct Spec<'a> {
    /// Appended to `pagewatch-<pid>`: empty, or `-` and lowercase letters (`-blk`).
    pub name: &'a str,
    /// `buffer_size_kb`: the ring buffer per CPU.
    pub buffer_kb: u32,
    /// `trace_clock` (`mono` to compare timestamps across CPUs); `None` keeps `local`.
    pub clock: Option<&'a str>,
    /// The events to enable, in the order `Instance::format` numbers them.
    pub events: &'a [Event<'a>],
    /// Sets `buffer_percent` to 0, so that `Instance::wait` on the readers answers as soon as
    /// a CPU's buffer holds any event rather than at the kernel's default mark (half full).
    /// Kernels without the file, or whose `poll` predates the mark, answer on any data anyway.
    pub wake_on_any: bool,
}

/// How `Instance::wait` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The stop pipe was closed (or written to).
    Stopped,
    /// A CPU's reader has data (only when waiting on the readers).
    Ready,
    /// The time ran out (or the wait was interrupted).
    TimedOut,
}

/// A created, armed instance. Dropping it disables its events, removes it and lets its
/// guard go.
pub struct Instance {
    dir: PathBuf,
    /// `per_cpu/cpuN/trace_pipe_raw`, opened non-blocking, with N, in CPU order.
    cpus: Vec<(u32, File)>,
    page: PageLayout,
    /// Each event's `format` text, in the order of the spec.
    formats: Vec<String>,
    /// Each event's directory under `events/`, in the order of the spec.
    events: Vec<PathBuf>,
    guard: Option<(Child, ChildStdin)>,
    /// The directory, open and `flock`ed (`LOCK_EX`) while the instance is ours.
    held: Option<File>,
}

/// Why an instance could not be made: the state for the status pseudo-file (`not-root`,
/// `no-tracefs`, `no-event`, `error`) and a sentence.
pub type Refusal = (&'static str, String);

impl Instance {
    /// Creates the instance, starts its guard (`guard_exe __guard --tracefs-instance DIR`),
    /// sets its buffer, clock and filters, opens the per-CPU readers and enables the events.
    /// Any failure removes what was made.
    pub fn create(proc_root: &Path, guard_exe: &Path, spec: &Spec) -> Result<Self, Refusal> {
        let tracefs = reachable(proc_root)?;
        for e in spec.events {
            let format = tracefs.join("events").join(e.dir).join("format");
            if !format.exists() {
                return Err(("no-event", format!("{} is missing", format.display())));
            }
        }
        remove_stale(&tracefs, proc_root);
        let dir = tracefs.join("instances").join(format!(
            "pagewatch-{}{}",
            std::process::id(),
            spec.name
        ));
        let err = |what: &str, e: &dyn std::fmt::Display| ("error", format!("{what}: {e}"));
        // Ours from an earlier arming that could not be removed: start afresh.
        if dir.exists() {
            remove_instance(&dir).map_err(|e| err("removing the old instance", &e))?;
        }
        // The guard first: a SIGKILL between making the directory and starting its guard
        // left the instance behind for good (tests/below_guard.rs kills as soon as the
        // directory shows; strace caught the kill 0.5 ms after the mkdir, before the guard's
        // exec). A guard whose pagewatch dies before the directory is made finds nothing to
        // remove, which `remove_instance` takes as done.
        let (mut child, stdin) = start_guard(guard_exe, &dir)
            .map_err(|e| err("starting its cleanup guard", &format!("{e:#}")))?;
        if let Err(e) = std::fs::create_dir(&dir) {
            // Closing the guard's pipe ends it, with nothing to remove.
            drop(stdin);
            let _ = child.wait();
            return Err(err("creating the instance", &e));
        }
        let guard = (child, stdin);
        let mut made = Self {
            held: None,
            dir,
            cpus: Vec::new(),
            page: PageLayout::default(),
            formats: Vec::new(),
            events: Vec::new(),
            guard: Some(guard),
        };
        // Held before anything else is set: from here on no other pagewatch removes it.
        match hold(&made.dir) {
            Ok(f) => made.held = Some(f),
            Err(e) => return Err(err("locking the instance", &e)),
        }
        match made.setup(&tracefs, spec) {
            Ok(()) => Ok(made),
            Err(e) => Err(("error", format!("setting up {}: {e}", made.dir.display()))),
        }
    }

    fn setup(&mut self, tracefs: &Path, spec: &Spec) -> std::io::Result<()> {
        let dir = &self.dir;
        std::fs::write(dir.join("buffer_size_kb"), format!("{}\n", spec.buffer_kb))?;
        if let Some(clock) = spec.clock {
            std::fs::write(dir.join("trace_clock"), format!("{clock}\n"))?;
        }
        if spec.wake_on_any {
            // Absent before 4.20 (where any data wakes a poller); a refusal leaves the
            // default mark, which the caller's timeout bounds.
            let _ = std::fs::write(dir.join("buffer_percent"), "0\n");
        }
        self.page = parse_header_page(&read_in_one(&tracefs.join("events/header_page"))?)
            .map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e.to_string()))?;
        for e in spec.events {
            let event = dir.join("events").join(e.dir);
            self.formats
                .push(std::fs::read_to_string(event.join("format"))?);
            if let Some(f) = e.filter {
                let _ = std::fs::write(event.join("filter"), f);
            }
            self.events.push(event);
        }
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
            self.cpus.push((cpu, file));
        }
        self.cpus.sort_by_key(|c| c.0);
        for e in spec.events {
            std::fs::write(dir.join("events").join(e.dir).join("enable"), "1\n")?;
        }
        Ok(())
    }

    /// The instance's directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// tracefs's `saved_cmdlines` (`PID COMM` a line): the names the kernel keeps of tasks
    /// it traced, also after they exit (read only; empty when unreadable).
    #[must_use]
    pub fn saved_cmdlines(&self) -> String {
        let top = self.dir.parent().and_then(Path::parent);
        top.and_then(|t| std::fs::read_to_string(t.join("saved_cmdlines")).ok())
            .unwrap_or_default()
    }

    /// The ring buffer's page layout (`events/header_page`).
    #[must_use]
    pub fn page_layout(&self) -> &PageLayout {
        &self.page
    }

    /// Replaces the filter of the spec's `i`th event while it is enabled (the kernel swaps
    /// it in whole).
    pub fn set_filter(&self, i: usize, filter: &str) -> std::io::Result<()> {
        let event = self.events.get(i).ok_or(ErrorKind::NotFound)?;
        std::fs::write(event.join("filter"), filter)
    }

    /// The `format` text of the spec's `i`th event.
    #[must_use]
    pub fn format(&self, i: usize) -> &str {
        self.formats.get(i).map_or("", String::as_str)
    }

    /// Each of `dirs` (the spec's events, in its order) with its `format` text.
    #[must_use]
    pub fn named_formats<'a>(&'a self, dirs: &[&'a str]) -> Vec<(&'a str, &'a str)> {
        dirs.iter()
            .enumerate()
            .map(|(i, d)| (*d, self.format(i)))
            .collect()
    }

    /// The refusal for events whose formats this instance could not decode (`error`).
    #[must_use]
    pub fn setup_error(&self, e: impl std::fmt::Display) -> Refusal {
        ("error", format!("setting up {}: {e}", self.dir().display()))
    }

    /// Waits up to `timeout` for `stop` to become readable or closed, and with `on_data` also
    /// for any CPU's reader to hold data (`Spec::wake_on_any`), without reading either. A
    /// `poll` that fails (not for a signal) sleeps `timeout` instead and answers as if the
    /// readers were ready, so that a caller's loop keeps its pace rather than spinning.
    #[must_use]
    pub fn wait(
        &self,
        stop: std::os::fd::BorrowedFd<'_>,
        timeout: std::time::Duration,
        on_data: bool,
    ) -> Wait {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        use std::os::fd::AsFd;
        let mut fds = vec![PollFd::from_borrowed_fd(stop, PollFlags::IN)];
        if on_data {
            let readers = self.cpus.iter().map(|(_, f)| f.as_fd());
            fds.extend(readers.map(|fd| PollFd::from_borrowed_fd(fd, PollFlags::IN)));
        }
        let t = Timespec::try_from(timeout).unwrap_or(Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        });
        match poll(&mut fds, Some(&t)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => Wait::TimedOut,
            Err(_) => {
                std::thread::sleep(timeout);
                Wait::Ready
            }
            Ok(_) if !fds[0].revents().is_empty() => Wait::Stopped,
            Ok(_) => Wait::Ready,
        }
    }

    /// Reads the pages the per-CPU buffers hold, up to `cap` bytes in all, handing each page
    /// to `each(cpu, page)`: (bytes read, whether the cap was reached, the first read error).
    pub fn read_pages(
        &self,
        buf: &mut Vec<u8>,
        cap: usize,
        mut each: impl FnMut(u32, &[u8]),
    ) -> (usize, bool, Option<String>) {
        let page = self.page.page_size;
        if buf.len() < page {
            buf.resize(page, 0);
        }
        let (mut n, mut err) = (0, None);
        'cpus: for (cpu, file) in &self.cpus {
            while n < cap {
                match rustix::io::read(file, &mut buf[..page]) {
                    Ok(0) | Err(rustix::io::Errno::AGAIN) => break,
                    Ok(k) => {
                        n += k;
                        each(*cpu, &buf[..k]);
                    }
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e) => {
                        err = Some(format!("reading cpu{cpu}/trace_pipe_raw: {e}"));
                        break 'cpus;
                    }
                }
            }
        }
        (n, n >= cap, err)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.cpus.clear();
        self.held = None;
        let _ = remove_instance(&self.dir);
        if let Some((mut child, stdin)) = self.guard.take() {
            // Closing the pipe tells the guard; it finds the instance gone and exits.
            drop(stdin);
            let _ = child.wait();
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

/// Where tracefs is: its mount point (`mounted`); where it is mounted nowhere and `proc_root`
/// is the live `/proc`, pagewatch's own detached mount (`detached`: root only).
fn find_tracefs(proc_root: &Path) -> Option<PathBuf> {
    mounted(proc_root).or_else(|| {
        (proc_root == Path::new("/proc"))
            .then(|| detached().ok())
            .flatten()
    })
}

/// tracefs, where this process may make an instance on it: refused first for not being root
/// (`not-root`), then for no tracefs (`no-tracefs`). A tracer checks this before it asks for
/// its events (`has_event`), so that it blames the cause and not the events it cannot see.
pub fn reachable(proc_root: &Path) -> Result<PathBuf, Refusal> {
    let euid = rustix::process::geteuid();
    if !euid.is_root() {
        return Err(("not-root", format!("euid {}", euid.as_raw())));
    }
    find_tracefs(proc_root).ok_or_else(|| ("no-tracefs", why_no_tracefs(proc_root)))
}

/// Why `find_tracefs` found nothing, for the status (`no-tracefs`).
fn why_no_tracefs(proc_root: &Path) -> String {
    let own = (proc_root == Path::new("/proc")).then(detached);
    match own {
        Some(Err(e)) => {
            format!("no tracefs mount in mountinfo, and no mount of pagewatch's own: {e}")
        }
        _ => "no tracefs mount in mountinfo".into(),
    }
}

/// The tracefs mount point: `/sys/kernel/tracing` if mounted, else any tracefs mount (such
/// as `/sys/kernel/debug/tracing`), from `mountinfo` (field 5 the mount point, the type after
/// ` - `).
fn mounted(proc_root: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(proc_root.join("self/mountinfo")).ok()?;
    let mut found: Vec<PathBuf> = super::mountinfo::mounts(&text)
        .filter(|m| m.fstype == "tracefs")
        .map(|m| m.point)
        .collect();
    found.sort_by_key(|p| p != Path::new("/sys/kernel/tracing"));
    found.into_iter().next()
}

/// A tracefs mount of pagewatch's own where tracefs is mounted nowhere (containers, minimal
/// VMs: the tracers found nothing there before): made with `fsopen`/`fsmount` (Linux 5.2)
/// and attached to no directory, so it is in no mount table, no other process can reach it
/// (but through this process's fds, as root), and the kernel drops it with the fd when
/// pagewatch exits, however it ends. tracefs has one superblock: its `instances/` are the
/// machine's, so an instance made here is seen, and removed, like one made under
/// `/sys/kernel/tracing` (a guard reaches it through a mount of its own:
/// `source::trace_guard`). Made once, on first need; reached as `/proc/<pid>/fd/<fd>`, the
/// link to its root. The error (not root: `EPERM`; no tracefs: `ENODEV`) is kept too.
fn detached() -> Result<PathBuf, String> {
    static MOUNT: Detached = std::sync::OnceLock::new();
    detached_mount(&MOUNT, "tracefs", rustix::mount::MountAttrFlags::empty())
}

/// Where a detached mount of pagewatch's own is kept: made once, its fd or why not.
pub type Detached = std::sync::OnceLock<Result<std::os::fd::OwnedFd, String>>;

/// A mount of `fstype` (nosuid, nodev, noexec, and `extra`) attached to no directory, made
/// once into `cell` on first need and dropped with the process (`detached` says why); reached
/// as `/proc/<pid>/fd/<fd>`. Also debugfs for wbt's state (`jobs::wbt`).
pub fn detached_mount(
    cell: &'static Detached,
    fstype: &str,
    extra: rustix::mount::MountAttrFlags,
) -> Result<PathBuf, String> {
    use rustix::mount::{
        FsMountFlags, FsOpenFlags, MountAttrFlags, fsconfig_create, fsmount, fsopen,
    };
    use std::os::fd::AsRawFd;
    let made = cell.get_or_init(|| {
        let fs = fsopen(fstype, FsOpenFlags::FSOPEN_CLOEXEC)
            .map_err(|e| format!("fsopen({fstype}): {e}"))?;
        fsconfig_create(&fs).map_err(|e| format!("fsconfig({fstype}): {e}"))?;
        let attrs = MountAttrFlags::MOUNT_ATTR_NOSUID
            | MountAttrFlags::MOUNT_ATTR_NODEV
            | MountAttrFlags::MOUNT_ATTR_NOEXEC
            | extra;
        fsmount(&fs, FsMountFlags::FSMOUNT_CLOEXEC, attrs)
            .map_err(|e| format!("fsmount({fstype}): {e}"))
    });
    match made {
        Ok(fd) => Ok(PathBuf::from(format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            fd.as_raw_fd()
        ))),
        Err(e) => Err(e.clone()),
    }
}

/// Where an instance of tracefs's is now: `dir` while its `instances/` is there (tracefs is
/// mounted there, or the detached mount that made it is still held), else the same name
/// under tracefs as this process finds it (a guard whose pagewatch died with its detached
/// mount: `source::trace_guard`). `None` when tracefs is nowhere.
#[must_use]
pub fn locate(dir: &Path) -> Option<PathBuf> {
    if dir.parent().is_some_and(Path::exists) {
        return Some(dir.to_path_buf());
    }
    let name = dir.file_name()?;
    Some(
        find_tracefs(Path::new("/proc"))?
            .join("instances")
            .join(name),
    )
}

/// Whether this kernel has the event `dir` (`subsystem/event` under `events/`): for tracers
/// whose events differ between kernels (`mm_vmscan_write_folio` was `mm_vmscan_writepage`).
#[must_use]
pub fn has_event(proc_root: &Path, dir: &str) -> bool {
    find_tracefs(proc_root).is_some_and(|t| t.join("events").join(dir).join("format").exists())
}

/// The pid in an instance's name, `pagewatch-<pid>` or `pagewatch-<pid>-<lowercase letters>`.
#[must_use]
pub fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("pagewatch-")?;
    let (pid, suffix) = match rest.split_once('-') {
        Some((p, s)) => (p, Some(s)),
        None => (rest, None),
    };
    let suffix_ok =
        suffix.is_none_or(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase()));
    let pid_ok = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    (suffix_ok && pid_ok).then(|| pid.parse().ok()).flatten()
}

/// Removes the instances of pagewatch pids that no longer exist.
fn remove_stale(tracefs: &Path, proc_root: &Path) {
    let Ok(entries) = std::fs::read_dir(tracefs.join("instances")) else {
        return;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(owner_pid) else {
            continue;
        };
        // Held: its pagewatch lives, in another pid namespace (a container).
        let held = || hold(&e.path()).is_err();
        if pid != std::process::id() && !proc_root.join(pid.to_string()).exists() && !held() {
            let _ = remove_instance(&e.path());
        }
    }
}

/// The directory opened and locked (`LOCK_EX`); `ResourceBusy` when a live pagewatch holds it
/// (the lock goes when the returned file is dropped).
fn hold(dir: &Path) -> std::io::Result<File> {
    use rustix::fs::{FlockOperation, flock};
    let f = File::open(dir)?;
    flock(&f, FlockOperation::NonBlockingLockExclusive).map_err(|_| {
        let why = format!("{} is held by a live pagewatch", dir.display());
        std::io::Error::new(ErrorKind::ResourceBusy, why)
    })?;
    Ok(f)
}

/// Disables every event in a pagewatch instance and removes it. Refuses anything that is not
/// `<tracefs>/instances/pagewatch-<digits>[-<letters>]`, and an instance a live pagewatch
/// holds (`hold`). Retries a busy instance (a reader still closing) for about two seconds.
/// Gone already: fine.
pub fn remove_instance(dir: &Path) -> std::io::Result<()> {
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(owner_pid)
        .is_some();
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
    // Held while removing, so that two removers do not race; the lock goes with the fd. A
    // SIGKILLed owner's fds close one by one: its guard, woken by the first, may find the
    // lock still there, so it is tried for as long as a busy directory (then `EBUSY`, which
    // the guard tries again).
    let mut tries = 0;
    let _held = loop {
        match hold(dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(_) if tries < 20 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(_) => return Err(std::io::Error::from_raw_os_error(libc::EBUSY)),
            Ok(f) => break f,
        }
    };
    match std::fs::write(dir.join("events/enable"), "0\n") {
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

/// Starts `exe __guard --tracefs-instance DIR`; pagewatch keeps the pipe to its stdin until it
/// has removed the instance itself (or dies).
pub fn start_guard(exe: &Path, instance: &Path) -> anyhow::Result<(Child, ChildStdin)> {
    let mut child = Command::new(exe)
        .arg("__guard")
        .arg("--tracefs-instance")
        .arg(instance)
        .env(crate::child::PARENT_ENV, std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {} __guard", exe.display()))?;
    let stdin = child.stdin.take().context("tracefs guard without a pipe")?;
    Ok((child, stdin))
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
            mounted(dir.path()).unwrap(),
            Path::new("/sys/kernel/tracing")
        );
        let info = "40 30 0:12 / /sys/kernel/debug/tracing rw - tracefs tracefs rw\n";
        std::fs::write(dir.path().join("self/mountinfo"), info).unwrap();
        assert_eq!(
            mounted(dir.path()).unwrap(),
            Path::new("/sys/kernel/debug/tracing")
        );
        std::fs::write(
            dir.path().join("self/mountinfo"),
            "22 1 0:5 / /proc rw - proc p rw\n",
        )
        .unwrap();
        assert_eq!(mounted(dir.path()), None);
    }

    #[test]
    fn instance_names() {
        assert_eq!(owner_pid("pagewatch-42"), Some(42));
        assert_eq!(owner_pid("pagewatch-42-blk"), Some(42));
        for n in [
            "pagewatch-",
            "pagewatch-42-",
            "pagewatch--blk",
            "pagewatch-42-Blk",
            "pagewatch-42-b/k",
            "pagewatch-4x",
            "other-42",
        ] {
            assert_eq!(owner_pid(n), None, "{n}");
        }
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
            "/sys/kernel/tracing/instances/pagewatch-1-",
        ] {
            assert!(remove_instance(Path::new(p)).is_err(), "{p}");
        }
    }
}
