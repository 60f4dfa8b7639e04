//! The process walk (spec §11): at the pace `Wants::procs` asks for (every 5 or 10 s:
//! `WALK_PERIOD_NS`, `QUIET_WALK_PERIOD_NS`; 1 s after a first walk,
//! `AFTER_FIRST_WALK_NS`, whose processes have no previous reading) while it asks, read
//! each process's `stat` and `io` and write the active ones into the sample as the
//! `names::PROCS` pseudo-file. Also `kernel_stack`, a task's kernel stack read on demand.
//!
//! Walks fall on the wall clock's multiples of their period (`slot`), as the ticks fall on
//! the interval's: every pagewatch on the machine at one pace walks in the same second, so
//! their rates are over the same interval and they name the same culprits at the same rates
//! whenever each was started. Counted from each instance's own last walk, a screen started
//! before a flood and a batch started in it walked seconds apart: in the same second one said
//! `dd ×6 dirtying 398M/s`, the other `dd ×4 dirtying 1.6G/s`, and their culprits differed
//! in 22 of 45 seconds, against only the first 7 on the grid (`tests/agree_live.rs`).
//!
//! Owns: `Walker` (the fds it keeps open, what it saw at the last walk) and the pseudo-file's
//! text. Must not touch: rates or any figure (`model::procs`); it parses only what decides
//! what to read and write (the stat fields comm, state, start time, threads, CPU time, major
//! faults, field 42).
//!
//! # Which processes a walk writes
//!
//! To keep recordings small (~2 MB/h), a walk writes only the processes that were *active*:
//! whose io text (any counter) or stat field 42 changed since the previous walk, or that are
//! in D state. A process whose io is not readable (another user's, not root: `io denied`)
//! never shows either move, so it is active when its stat's CPU time (utime + stime) or major
//! faults moved; the model marks it no permission (`procs_visit::moved`). A process written
//! at walk N whose reading at walk N−1 was not written (it was
//! idle then) gets that reading carried too, as a `p` record, so a replay finds both ends of
//! every interval: either in the previous walk's file or in this one. A process first seen
//! at this walk has no previous reading. When it started after the previous walk (its start
//! time, field 22, is at or after the previous walk on the boot clock, `boot`), its counters
//! are all it did: it is written when any counter is not 0 (or its CPU time, when its io is
//! denied), and the model rates it against zero since it started. Otherwise (it was there but
//! not seen: another scope, unreadable) it is written only when in D state, with no rate. A
//! process left out is idle: its rates over the interval are zero.
//!
//! # The text
//!
//! ```text
//! walk 8123000000000        the walk's (the sample's) monotonic time, ns
//! prev 8121000000000        the previous walk's, or - on a first walk (then: no rates)
//! period 2000000000         the pace the walk ran at, ns: the next is due this long after
//!                           (1 s after a first walk)
//! clk_tck 100               sysconf(_SC_CLK_TCK), for field 42
//! task_delayacct 0          /proc/sys/kernel/task_delayacct (- when absent)
//! hidepid 2                 /proc's hidepid= mount option, when set and the walk is not
//!                           root's: other users' processes are hidden from it (only then)
//! self 4200                 pagewatch's own pid (not in a captured tree's walk): what it does
//!                           itself (a recording's fsyncs) makes it no victim
//! scope /system.slice/x     the cgroup walked (- for all processes)
//! page_size 4096            the page size of stat's rss and statm
//! boot 8125000000000        CLOCK_BOOTTIME at the walk, ns (the clock of stat field 22)
//! scope_error TEXT          (only when the scope could not be listed: no process then)
//! fio 5150 5152             the pids whose comm is fio, active or not (only when there are)
//! P 4242 987654             a process of this walk: pid, start time (stat field 22)
//! stat 4242 (dd) D 1 …      its /proc/PID/stat line
//! rchar: 123                its /proc/PID/io lines, verbatim; or `io denied` (no permission:
//! …                         unknown, never 0) or `io absent` (kernel without io accounting)
//! wchan balance_dirty_pages its /proc/PID/wchan (the main thread's; `0` when running)
//! cgroup /user.slice        the `0::` line of /proc/PID/cgroup, when there is one
//! statm 1000 900 100 …      its /proc/PID/statm (resident − shared: its anon pages)
//! blkio_tasks 12            field 42 summed over task/*/stat (multi-threaded, delayacct on)
//! cmdline dd if=/dev/zero   /proc/PID/cmdline, NULs as spaces, capped at CMDLINE_MAX bytes
//!                           (none for kernel threads); read once per process instance, at
//!                           its first record, and again only when its comm changes (exec);
//!                           left out when the previous walk wrote the process with the same
//!                           one (the model carries it from there)
//! p 4243 987655             its reading at the previous walk: stat and io lines only
//! M 4242 987654             a memory record (after every P and p; `procs_memory`)
//! ```
//!
//! A newline inside a value (a comm or a cgroup name can hold one) is written as `?`.
//!
//! # Cost
//!
//! On procfs the `schedstat`, `stat` and `io` fds of each process stay open between walks and
//! are re-read with `pread` at offset 0 (proc's single_open files regenerate their text
//! there), which saves an open and a close per file. It is sound against pid reuse: an fd
//! names the task's `struct pid`, so once the process is gone the read fails (ESRCH) and the
//! path is opened afresh; the start time (stat field 22) is checked as well, and a new one
//! starts a new process with no rate. Only what can have changed is re-read
//! (`procs_visit`: an unchanged `schedstat` means the main thread has not run). The table of
//! what was seen lives across walks and is updated in place. An unscoped walk lists `/proc`
//! only when a task was created since its last listing, or that listing has served
//! `pid_list::RELIST_WALKS` walks (`pid_list`).
//!
//! The fds held are budgeted by count (`fd_budget`): the soft RLIMIT_NOFILE (raised towards
//! the hard one, up to 65,536, at the first walk), less `RESERVE_FDS` (1,024, or half a limit
//! under 2,048) left to the sampler's own opens, less the fds open at the first walk. A
//! process holds up to three (stat, schedstat, io), and one that is written or ranked by
//! memory up to five more (its `procs_visit::Extra` files); past the budget its files are
//! opened, read and closed at each walk, so every process is seen whatever the limit. Should
//! an open fail for want of fds all the same, the walker holds no more. A walk that cannot
//! list the processes (`scope_error`) is no walk: it keeps what is held and seen, and the next
//! walk's `prev` is the last walk that listed. `wchan`, `statm` and `cgroup` are read only for
//! the processes written (a process can move between cgroups, so the cgroup is read again at
//! each, through its kept fd); the threads only for multi-threaded written ones with delay
//! accounting on.
//! As non-root, another user's io is `denied` (its open is retried every `IO_RETRY_WALKS`
//! walks: a setuid process may become readable).
//!
//! Measured (CPU time of the walking thread, 2 vCPU VM, kernel 6.18, `walk_cost` in
//! tests/processes.rs): 2.3 µs a process at ~90 processes, 2.8 µs at 1,100 (1,000 of them
//! `sleep`): 3.1 ms a walk, 1.5 ms/s at one walk per 2 s. Reading stat and io of every process
//! every walk cost 6.7 and 8.7 µs a process (4.7 ms/s at 1,100): the bound when every
//! process's main thread runs between walks. With `boot`, the born-process rule and
//! `cmdline` (issue #24): 2.2 µs a process at 1,079, 2.4 ms a walk, 1.2 ms/s (same test,
//! `PW_SLEEPERS=1000`). They add no read per walk for a process already seen: a process first
//! seen has its io text parsed once, and `cmdline` is read once per process instance that is
//! written.

use std::collections::HashMap;
use std::fmt::Write;
use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::procs_visit::{Table, Visit};
use super::read::{clean, denied, is_procfs, own_pid, read_optional};
use crate::sample::{Pace, ProcScope};

/// The walk period (`Pace::Attribute`; spec §11: every 2–5 s) whenever something is
/// attributed, in every mode and view: samples in between carry no walk. Under sustained
/// throttling the walk was two thirds of what the "who" data added to a recording at 2 s.
/// The processes pane walked every 2 s until its rates had to be the other instances' too.
pub const WALK_PERIOD_NS: u64 = 5_000_000_000;
/// The walk period while the pane is shown on a quiet machine (`Pace::Quiet`). At ~125
/// processes a walk costs the sampler 0.6–1.2 ms (most of it the kernel answering one
/// `schedstat` read a process); every 5 s that was 0.16 ms/s of the pane's 1.0 (issue 27,
/// docs/PERFORMANCE.md twentieth round).
pub const QUIET_WALK_PERIOD_NS: u64 = 10_000_000_000;
/// A sample this much before a multiple of the period counts as on it (a tick falls on the
/// wall clock's second, and is read a little before or after it).
const WALK_SLACK_MS: i64 = 300;
/// A first walk (no previous reading: no rates, no writers named) is followed by the next
/// this soon, at any pace: a writer it saw is named one sample later (issue 53: the lab's
/// `dd` of 4.7 s was first seen by a first walk and gone by the next, 5 s on, never listed).
const AFTER_FIRST_WALK_NS: u64 = 1_000_000_000;
/// A first walk names as writers the processes started within this long (10 s) whose
/// `write_bytes` is not 0 (`procs_visit::Visit::recent_after`): all they wrote is that recent.
pub(super) const FIRST_WALK_WRITERS_NS: u64 = 10_000_000_000;
/// Walks the processes at the pace `ProcScope::pace` asks for; see the module doc.
pub struct Walker {
    proc_root: PathBuf,
    /// The proc root is procfs: fds can be kept and re-read at offset 0.
    procfs: Option<bool>,
    /// The scope of the walks since the last reset.
    scope: Option<ProcScope>,
    /// The last walk that listed the processes (its time is the next walk's `prev`).
    last_ns: Option<u64>,
    /// The last walk, listed or not, by the monotonic and the wall clock (ms): the next is due
    /// in the next `slot` of the period.
    tried_ns: Option<u64>,
    tried_wall_ms: Option<i64>,
    /// The last walk was a first walk that listed: the next is due `AFTER_FIRST_WALK_NS` on.
    after_first: bool,
    walk: u64,
    seen: Table,
    /// How many fds the walker may keep open (`fd_budget`), and how many it does.
    max_held: Option<usize>,
    held: usize,
    buf: Vec<u8>,
    out: String,
    /// The processes of the last walk (`pid_list`: the next may visit them again unlisted).
    pids: Vec<u32>,
    lister: super::pid_list::Lister,
    fio: Vec<u32>,
    /// The last walk's writers (`procs_visit::Visit::writers`) and their open files' text
    /// (`writer_files`, the `names::WRITER_FILES` pseudo-file; empty: none).
    writers: Vec<(u64, u32)>,
    writer_text: String,
    /// What the writers' last fd listings found (`writer_files::Listed`).
    writers_listed: super::writer_files::Listed,
    /// `CLOCK_BOOTTIME` less `CLOCK_MONOTONIC` (`clock::boot_minus_mono_ns`; tests fix it).
    boot_minus_mono: fn() -> u64,
}

impl Walker {
    /// A walker over `proc_root` (normally `/proc`).
    #[must_use]
    pub fn new(proc_root: impl Into<PathBuf>) -> Self {
        Self {
            proc_root: proc_root.into(),
            procfs: None,
            scope: None,
            last_ns: None,
            tried_ns: None,
            tried_wall_ms: None,
            after_first: false,
            walk: 0,
            seen: HashMap::new(),
            max_held: None,
            held: 0,
            buf: Vec::new(),
            out: String::new(),
            pids: Vec::new(),
            lister: super::pid_list::Lister::default(),
            fio: Vec::new(),
            writers: Vec::new(),
            writer_text: String::new(),
            writers_listed: super::writer_files::Listed::default(),
            boot_minus_mono: super::clock::boot_minus_mono_ns,
        }
    }

    /// Forgets everything (walks are off): the next walk is a first walk, with no rates.
    pub fn reset(&mut self) {
        if self.scope.is_some() {
            self.seen.clear();
            self.held = 0;
            self.last_ns = None;
            self.tried_ns = None;
            self.tried_wall_ms = None;
            self.after_first = false;
            self.scope = None;
            self.lister.forget();
        }
    }

    /// `maybe_walk_at` on a clock whose wall time is its monotonic time (tests, benchmarks).
    pub fn maybe_walk(&mut self, mono_ns: u64, scope: &ProcScope) -> Option<&str> {
        let wall_ms = i64::try_from(mono_ns / 1_000_000).unwrap_or(i64::MAX);
        self.maybe_walk_at(mono_ns, wall_ms, scope)
    }

    /// Walks when the wall clock (`wall_ms`) has reached the next multiple of the period
    /// since the last walk (`slot`); the pseudo-file's text, or `None` when this sample carries
    /// no walk. Two periods by the monotonic clock walk in any case (the wall clock stepped).
    pub fn maybe_walk_at(&mut self, mono_ns: u64, wall_ms: i64, scope: &ProcScope) -> Option<&str> {
        // A new cgroup scope starts afresh; a new pace keeps what was seen.
        if self.scope.as_ref().map(|s| &s.cgroup) != Some(&scope.cgroup) {
            self.reset();
        }
        if self.scope.as_ref() != Some(scope) {
            // A new pace walks at this sample: its walk says when the next one is due
            // (`period`), and the model keeps its rows until then.
            self.tried_ns = None;
            self.scope = Some(scope.clone());
        }
        let pace_period = match scope.pace {
            Pace::Attribute => WALK_PERIOD_NS,
            Pace::Quiet => QUIET_WALK_PERIOD_NS,
        };
        let wait = if self.after_first {
            AFTER_FIRST_WALK_NS
        } else {
            pace_period
        };
        if let (Some(last), Some(last_wall)) = (self.tried_ns, self.tried_wall_ms)
            && slot(wall_ms, wait) == slot(last_wall, wait)
            && mono_ns < last.saturating_add(2 * wait)
        {
            return None;
        }
        self.tried_wall_ms = Some(wall_ms);
        let first = self.last_ns.is_none();
        let period = if first {
            AFTER_FIRST_WALK_NS
        } else {
            pace_period
        };
        self.walk_now(mono_ns, period);
        self.after_first = first && self.last_ns.is_some();
        Some(&self.out)
    }

    fn walk_now(&mut self, mono_ns: u64, period: u64) {
        let procfs = *self
            .procfs
            .get_or_insert_with(|| File::open(&self.proc_root).is_ok_and(|f| is_procfs(&f)));
        let root = &self.proc_root;
        self.lister.open(root, procfs);
        self.tried_ns = Some(mono_ns);
        self.out.clear();
        self.writer_text.clear();
        let delayacct = read_optional(
            &self.proc_root.join("sys/kernel/task_delayacct"),
            &mut self.buf,
        )
        .ok()
        .flatten();
        let delayacct_on = delayacct.as_deref().is_some_and(|t| t.trim() == "1");
        let scope = self.scope.as_ref().and_then(|s| s.cgroup.clone());
        let boot_ns = self.write_head(mono_ns, period, delayacct.as_deref(), scope.as_deref());
        // The start time (stat field 22, boot-clock ticks) from which a process started
        // after the previous walk.
        let tck = rustix::param::clock_ticks_per_second();
        let new_after = self.last_ns.map(|last| {
            let prev_boot = boot_ns.saturating_sub(mono_ns.saturating_sub(last));
            (u128::from(prev_boot) * u128::from(tck) / 1_000_000_000) as u64
        });
        let listed = match &scope {
            None => self
                .lister
                .list(&self.proc_root, procfs, &mut self.pids, &mut self.buf),
            Some(cg) => {
                self.pids.clear();
                self.lister.forget();
                super::cgroup_scope::list(&self.proc_root, cg, &mut self.pids)
            }
        };
        if let Err(e) = listed {
            // Not a walk: what is held (fds, readings) stays for the next one, whose `prev`
            // is the last walk that listed.
            let _ = writeln!(self.out, "scope_error {}", clean(&e));
            return;
        }
        self.walk += 1;
        self.pids.sort_unstable();
        self.pids.dedup();
        let pids = std::mem::take(&mut self.pids);
        let fio_at = self.out.len();
        self.fio.clear();
        self.writers.clear();
        let root = &self.proc_root;
        let max_held = self
            .max_held
            .get_or_insert_with(|| if procfs { fd_budget(root) } else { 0 });
        let mut ctx = Visit {
            root: &self.proc_root,
            walk: self.walk,
            procfs,
            delayacct_on,
            new_after,
            recent_after: new_after.is_none().then(|| {
                let since = boot_ns.saturating_sub(FIRST_WALK_WRITERS_NS);
                (u128::from(since) * u128::from(tck) / 1_000_000_000) as u64
            }),
            buf: &mut self.buf,
            out: &mut self.out,
            held: &mut self.held,
            max_held,
            fio: &mut self.fio,
            writers: &mut self.writers,
        };
        for &pid in &pids {
            ctx.visit(pid, &mut self.seen);
        }
        super::procs_memory::write(&mut ctx, &mut self.seen, self.walk);
        super::writer_files::write(
            &self.proc_root,
            &mut self.writers,
            &mut self.writer_text,
            mono_ns,
            &mut self.writers_listed,
        );
        self.pids = pids;
        self.write_fio(fio_at);
        self.forget_gone();
        self.last_ns = Some(mono_ns);
        // After a burst of processes, not its room for good (issue 52: RSS).
        crate::malloc::fit_string(&mut self.out);
    }

    /// The walk's `fio PID…` line, at `at` in its text, when it found fio processes.
    fn write_fio(&mut self, at: usize) {
        if self.fio.is_empty() {
            return;
        }
        let mut line = String::from("fio");
        for pid in &self.fio {
            let _ = write!(line, " {pid}");
        }
        line.push('\n');
        self.out.insert_str(at, &line);
    }

    /// Forgets the processes this walk did not see, with their held fds; the list a next
    /// walk may reuse (`pid_list`) without them.
    fn forget_gone(&mut self) {
        let walk = self.walk;
        let held = &mut self.held;
        self.seen.retain(|_, s| {
            let keep = s.walk == walk;
            if !keep && let Some(f) = &s.fds {
                *held -= f.count();
            }
            keep
        });
        self.pids.retain(|p| self.seen.contains_key(p));
    }

    /// The walk's head: its time, the last walk's, its pace, the clock tick, delay
    /// accounting, `hidepid`, the scope, the page size and the boot clock. Returns the boot
    /// clock's ns at `mono_ns`.
    fn write_head(
        &mut self,
        mono_ns: u64,
        period: u64,
        delayacct: Option<&str>,
        scope: Option<&str>,
    ) -> u64 {
        let _ = writeln!(self.out, "walk {mono_ns}");
        match self.last_ns {
            Some(p) => drop(writeln!(self.out, "prev {p}")),
            None => self.out.push_str("prev -\n"),
        }
        let _ = writeln!(self.out, "period {period}");
        let _ = writeln!(
            self.out,
            "clk_tck {}",
            rustix::param::clock_ticks_per_second()
        );
        let _ = writeln!(
            self.out,
            "task_delayacct {}",
            delayacct.map_or("-", str::trim)
        );
        if let Some(h) = hidden_by(&self.proc_root) {
            let _ = writeln!(self.out, "hidepid {}", clean(&h));
        }
        if let Some(pid) = own_pid(&self.proc_root) {
            let _ = writeln!(self.out, "self {pid}");
        }
        let _ = writeln!(self.out, "scope {}", clean(scope.unwrap_or("-")));
        let _ = writeln!(self.out, "page_size {}", rustix::param::page_size());
        let boot_ns = mono_ns.saturating_add((self.boot_minus_mono)());
        let _ = writeln!(self.out, "boot {boot_ns}");
        boot_ns
    }

    /// The last walk's pseudo-file text (`names::PROCS`).
    #[must_use]
    pub fn walked(&self) -> &str {
        &self.out
    }

    /// The open files of the last walk's writers (`writer_files`), when it found some.
    #[must_use]
    pub fn writer_files(&self) -> Option<&str> {
        (!self.writer_text.is_empty()).then_some(self.writer_text.as_str())
    }

    /// How many fds the walker holds and may hold (for tests).
    #[cfg(test)]
    fn fds_held(&self) -> (usize, Option<usize>) {
        (self.held, self.max_held)
    }
}

/// Fds left to everything else in pagewatch (the sampler's own opens of /proc and /sys, the
/// tracepoint, the terminal, `--listen`'s connections, recordings, fio and its pipes): 1,024,
/// or half the limit when that is under 2,048.
pub const RESERVE_FDS: u64 = 1024;

/// How many fds the walker may keep open: the soft RLIMIT_NOFILE (raised towards the hard
/// limit, up to 65,536), less the reserve, less the fds open now (counted in
/// `PROC/self/fd`). Each held process holds up to three (stat, schedstat, io), and up to five
/// `procs_visit::Extra` more once written or ranked by memory; past the budget the walker
/// reads without holding.
fn fd_budget(proc_root: &Path) -> usize {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let lim = getrlimit(Resource::Nofile);
    let hard = lim.maximum.unwrap_or(u64::MAX);
    let mut soft = lim.current.unwrap_or(u64::MAX);
    let want = hard.min(65_536);
    if soft < want
        && setrlimit(
            Resource::Nofile,
            rustix::process::Rlimit {
                current: Some(want),
                maximum: lim.maximum,
            },
        )
        .is_ok()
    {
        soft = want;
    }
    let limit = soft.min(1 << 20);
    let reserve = RESERVE_FDS.min(limit / 2);
    // The read_dir's own fd is among those counted: a slight over-count, on the safe side.
    let open_now = std::fs::read_dir(proc_root.join("self/fd")).map_or(limit, |d| d.count() as u64);
    limit.saturating_sub(reserve).saturating_sub(open_now) as usize
}

/// The command line of process `pid` (`/proc/PID/cmdline`, its NULs as spaces), read on
/// demand for the rows shown; `None` when it has none (a kernel thread, a zombie) or is gone.
#[must_use]
pub fn cmdline(proc_root: &Path, pid: u32) -> Option<String> {
    let raw = std::fs::read(proc_root.join(pid.to_string()).join("cmdline")).ok()?;
    let text: String = String::from_utf8_lossy(&raw)
        .trim_end_matches('\0')
        .chars()
        .map(|c| if c == '\0' || c.is_control() { ' ' } else { c })
        .collect();
    (!text.trim().is_empty()).then_some(text)
}

/// The kernel stack of task `pid` (`/proc/PID/stack`, root only), read on demand; the error
/// says why not in words fit for the screen.
pub fn kernel_stack(proc_root: &Path, pid: u32) -> std::result::Result<String, String> {
    let dir = proc_root.join(pid.to_string());
    match std::fs::read_to_string(dir.join("stack")) {
        Ok(t) => Ok(t),
        Err(e) if denied(&e) => Err(format!(
            "cannot read the kernel stack of {pid}: it needs root (CAP_SYS_ADMIN)"
        )),
        Err(e) if e.kind() == ErrorKind::NotFound && dir.exists() => Err(format!(
            "this kernel has no /proc/{pid}/stack (CONFIG_STACKTRACE off)"
        )),
        Err(e) if e.kind() == ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH) => {
            Err(format!("process {pid} is gone"))
        }
        Err(e) => Err(format!("cannot read /proc/{pid}/stack: {e}")),
    }
}

/// `/proc`'s `hidepid=` (`2`, `invisible`, `1`, `noaccess`, `4`, `ptraceable`) when it hides
/// other users' processes from this walk: set (not `0`/`off`) and the walk is not root's
/// (root sees every process; a member of the mount's `gid=` group does too, which is not
/// checked).
fn hidden_by(proc_root: &std::path::Path) -> Option<String> {
    if rustix::process::geteuid().is_root() {
        return None;
    }
    let text = std::fs::read_to_string(proc_root.join("self/mountinfo")).ok()?;
    super::mountinfo::hidepid(&text, proc_root)
}

/// Which multiple of `period_ns` the wall time `wall_ms` falls in, a tick read up to
/// `WALK_SLACK_MS` early counting as on it: walks are due when it changes.
fn slot(wall_ms: i64, period_ns: u64) -> i64 {
    let step = i64::try_from(period_ns / 1_000_000)
        .unwrap_or(i64::MAX)
        .max(1);
    wall_ms.saturating_add(WALK_SLACK_MS).div_euclid(step)
}

#[cfg(test)]
#[path = "procs_tests.rs"]
mod tests;
