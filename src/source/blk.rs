//! The block tracer: `block:block_rq_issue` and `block_rq_complete` (and `block_rq_insert`
//! when queue time is asked for, `Wants::latency_queue`) in pagewatch's own tracefs instance
//! `pagewatch-<pid>-blk`, armed while some device's latency is wanted (`Wants::latency`),
//! reduced to per-device histograms (`parse::blk_lat`).
//!
//! Owns: arming and disarming the instance for the wanted devices (their `dev` numbers from
//! `/sys/class/block/<name>/dev`, a tracefs filter on `dev` so the kernel drops the other
//! devices' events, the `mono` clock so that the CPUs' timestamps compare), the reader thread,
//! and the two pseudo-files of the sample (status, latency). Must not touch: tracefs
//! directly (`source::trace_instance`), decoding and pairing (`parse::blk_pair`), the text
//! formats (`parse::blk_lat`).
//!
//! Why a thread: at 10k IOPS the three events fill ~2 MB/s of ring buffer (each record
//! ~70 bytes); with samples 1 s apart the buffer would have to hold a whole second per CPU.
//! The measurements: 256 KiB per CPU lost pages at 60k events/s, 1 MiB per CPU read
//! every 100 ms lost almost none at 110k. So while armed a thread reads the per-CPU buffers
//! (1 MiB per CPU, read in full), pairs the events and adds them to the interval's
//! histograms; the sample takes the histograms. Nothing runs while not armed.
//!
//! When it reads (issue 52: wake only when a page is full or a tick is due): each sample
//! asks for a read of what the buffers hold at its tick (a byte on the thread's pipe) and
//! takes what it added up, so an interval's events are those up to its tick (issue 51).
//! Between ticks the thread blocks in `poll` on the per-CPU readers, which the kernel answers
//! when a CPU's buffer is half full (`buffer_percent`'s default, 50), or `IDLE_POLL` at most.
//! After such a wake it reads, then waits `READ_EVERY` on the pipe alone, so that a kernel
//! whose `poll` answers on any data (before 4.20) cannot make it spin.
//!
//! Sampling (issue 52: a cost bounded at any rate): the kernel's filter keeps a request only
//! when its sector has bits `SECTOR_BIT`.. clear, one request in 2^shift, a property of where
//! it lands and not of how long it takes. The shift follows the events a second the reader
//! kept (`next_shift`, every `ADAPT_EVERY`), so that about `KEEP_PER_S` events a second are
//! read whatever the rate; the rate is stated in every output (`DevLat::sample_every`).

use std::collections::BTreeMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use super::trace_instance::{Event, Instance, Refusal, Spec, Wait};
use super::tracer_life::{Life, Turn};
use crate::parse::blk_lat::{self, BlkStatus, DevLat, Latency};
use crate::parse::blk_pair::{BlkEvent, BlkLayout, Pairer};
use crate::parse::trace_raw::walk_page;
use crate::sample::names;

/// The ring buffer, KiB per CPU.
pub const BUFFER_KB: u32 = 1024;

/// After a wake by a CPU's buffer, the wait (on the pipe alone) before polling the buffers
/// again.
pub const READ_EVERY: Duration = Duration::from_millis(100);

/// The longest the thread blocks in `poll` between reads: ticks and half-full buffers end the
/// wait; the bound covers samples further apart (`--interval 10`).
pub const IDLE_POLL: Duration = Duration::from_secs(2);

/// The events a second the reader keeps before sampling more sparsely (a request is two
/// events, three with a scheduler): 500–1,000 requests a second timed, so that an interval's
/// p99 rests on its 5–10 slowest timed requests (against fio on vda at 20k and 50k IOPS the
/// p50 and p99 stayed within the accepted [¼, 2]). Issue 52: at 8,000 the reader cost 0.48
/// ms/s of CPU at 20k IOPS on vda (one request in 8, 5,000 events a second, ~97 ns each
/// with the reads), a quarter of the screen's 2 ms/s budget.
pub const KEEP_PER_S: f64 = 2_000.0;

/// The events whose room the pairer keeps from one read to the next (a second's `KEEP_PER_S`
/// at 1 Hz, with room); a flood's larger read gives it back. The read's own events follow
/// `malloc::fit`.
const KEEP_EVENTS: usize = 16_384;

/// The sparsest sampling: one request in 2^MAX_SHIFT (`KEEP_PER_S` holds up to about a
/// million requests a second).
pub const MAX_SHIFT: u32 = 10;

/// The lowest sector bit the sampling looks at: 4 KiB requests start on multiples of 8.
pub const SECTOR_BIT: u32 = 3;

/// How often the sampling is reconsidered...
const ADAPT_EVERY: Duration = Duration::from_secs(1);

/// ...and how soon when the events come at more than 4 × `KEEP_PER_S`: a flood that starts
/// unsampled overflows a buffer within the second (fio at depth 32 on a loop device, from
/// idle: 8,509 events lost in its first interval when it waited the second).
const ADAPT_SOON: Duration = Duration::from_millis(100);

/// What the reader does before its next read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Wait this long on the pipe alone.
    Sleep(Duration),
    /// Block until a tick, or a CPU's buffer is half full, `IDLE_POLL` at most.
    Poll,
}

/// The wait before the next read, from how the wait before the last read ended: after the
/// buffers woke it, `READ_EVERY` first, so that a kernel whose `poll` answers on any data
/// (or at once) cannot make the thread spin; else back to `poll`.
fn next(woke: Wait) -> Next {
    if woke == Wait::Ready {
        Next::Sleep(READ_EVERY)
    } else {
        Next::Poll
    }
}

/// The sampling shift to use next, from the one in force and the events a second the reader
/// kept under it: the least that keeps the unsampled rate's share under `KEEP_PER_S`, at
/// most `MAX_SHIFT`; down only when one step finer would stay under half of it (no flapping).
fn next_shift(shift: u32, kept_per_s: f64) -> u32 {
    let full = kept_per_s * f64::from(1u32 << shift);
    let share = |s: u32| full / f64::from(1u32 << s);
    let want = (0..MAX_SHIFT)
        .find(|&s| share(s) <= KEEP_PER_S)
        .unwrap_or(MAX_SHIFT);
    if want < shift && share(shift - 1) > KEEP_PER_S / 2.0 {
        shift
    } else {
        want
    }
}

/// The events' filter: the wanted devices, and with `shift` > 0 the requests whose sector
/// has bits `SECTOR_BIT`..`SECTOR_BIT + shift` clear.
fn filter(devs: &[u32], shift: u32) -> String {
    let devs = devs
        .iter()
        .map(|d| format!("dev == {d}"))
        .collect::<Vec<_>>()
        .join(" || ");
    if shift == 0 {
        return devs;
    }
    let mask = ((1u64 << shift) - 1) << SECTOR_BIT;
    format!("({devs}) && !(sector & {mask})")
}

/// The longest a sample waits for the reader's read of the tick (`BlkTracer::sample`).
const TICK_WAIT: Duration = Duration::from_millis(100);

/// The events, relative to `events/`, in `BlkLayout::new`'s order.
const EVENTS: [&str; 3] = [
    "block/block_rq_insert",
    "block/block_rq_issue",
    "block/block_rq_complete",
];

/// The events to arm: the insert event only when queue time is asked for (issue 52: a
/// request is two events without it, not three, and the insert fires on the submitting
/// CPU in the application's own time).
fn armed_events(queue: bool) -> &'static [&'static str] {
    if queue { &EVENTS } else { &EVENTS[1..] }
}

/// The tracer: armed for some devices, or why not.
pub struct BlkTracer {
    sys_root: PathBuf,
    proc_root: PathBuf,
    guard_exe: PathBuf,
    /// The devices wanted (names, sorted).
    wanted: Vec<String>,
    /// Queue time is asked for (`--queue-time`): the insert event is armed.
    queue: bool,
    life: Life<Armed>,
    /// The status of the last arming (present once latency was first wanted).
    status: Option<BlkStatus>,
}

/// What the thread adds up for the sample.
#[derive(Default)]
struct Shared {
    devices: BTreeMap<u32, DevLat>,
    lost: u64,
    bytes: u64,
    reads: u64,
    err: Option<String>,
    /// Ticks the thread has read for (kept across the samples' takes).
    ticks_read: u64,
    /// One request in this many is timed, at the last read.
    sample_every: u64,
}

/// `Shared`, and the signal of a tick read.
type Handoff = (Mutex<Shared>, Condvar);

struct Armed {
    /// dev → name.
    names: BTreeMap<u32, String>,
    /// The insert event is armed: queue time is measured.
    queue: bool,
    /// The names wanted that are no block device (timed without them).
    unresolved: Vec<String>,
    /// Samples taken since armed (`BlkStatus::ticks`).
    ticks: u64,
    shared: Arc<Handoff>,
    /// The write end of the thread's pipe: a byte asks for a read now (a tick), dropping it
    /// stops the thread (it wakes at once).
    stop: Option<OwnedFd>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BlkTracer {
    /// A tracer for the live system; `guard_exe` is pagewatch's own binary.
    #[must_use]
    pub fn new(proc_root: PathBuf, sys_root: PathBuf, guard_exe: PathBuf) -> Self {
        Self {
            sys_root,
            proc_root,
            guard_exe,
            wanted: Vec::new(),
            queue: false,
            life: Life::default(),
            status: None,
        }
    }

    /// Arms for `devices` now (or disarms for none) when they, or whether queue time is
    /// asked for (`queue`), differ from those in force.
    pub fn want(&mut self, devices: &[String], queue: bool) {
        if devices == self.wanted.as_slice() && queue == self.queue {
            return;
        }
        self.wanted = devices.to_vec();
        self.queue = queue;
        self.life.restart();
        self.turn();
    }

    /// One turn of the lifecycle: arms for the devices wanted (or says "off" for none), and
    /// keeps the status.
    fn turn(&mut self) {
        let (wanted, queue) = (&self.wanted, self.queue);
        let paths = (
            self.proc_root.as_path(),
            self.sys_root.as_path(),
            self.guard_exe.as_path(),
        );
        match self
            .life
            .turn(!wanted.is_empty(), || arm(paths, wanted, queue))
        {
            Turn::Silent | Turn::Read(_) => {}
            Turn::Off => self.status = Some(status("off", None, wanted)),
            Turn::Armed(a) => {
                let mut s = status("armed", None, wanted);
                s.unresolved.clone_from(&a.unresolved);
                self.status = Some(s);
            }
            Turn::Refused((state, why)) => self.status = Some(status(state, Some(why), wanted)),
        }
    }

    /// Puts the status and, while armed, the interval's latency in `files`.
    pub fn sample(&mut self, files: &mut BTreeMap<String, String>, fresh: &mut Vec<&str>) {
        self.turn();
        let mut put = |name: &'static str, text: String| {
            files.insert(name.to_owned(), text);
            fresh.push(name);
        };
        if let Some(a) = self.life.armed_mut() {
            let mut taken = a.tick();
            let latency = Latency {
                lost: taken.lost,
                devices: a
                    .names
                    .iter()
                    .map(|(dev, name)| {
                        let mut d = taken.devices.get(dev).cloned().unwrap_or_default();
                        d.dev = *dev;
                        d.sample_every = taken.sample_every.max(1);
                        d.queue_off = !a.queue;
                        d.name.clone_from(name);
                        d
                    })
                    .collect(),
            };
            if a.thread
                .as_ref()
                .is_none_or(std::thread::JoinHandle::is_finished)
            {
                taken
                    .err
                    .get_or_insert_with(|| "its reader thread ended".into());
            }
            if let Some(s) = &mut self.status {
                s.why = taken.err;
                s.bytes = taken.bytes;
                s.reads = taken.reads;
                s.ticks = a.ticks;
            }
            a.ticks += 1;
            put(names::BLK_LATENCY, blk_lat::render(&latency));
        }
        if let Some(s) = &self.status {
            put(names::BLK_STATUS, blk_lat::render_status(s));
        }
    }
}

/// Arms for the devices `wanted` (names) that resolve, with queue time when `queue`.
fn arm(
    (proc_root, sys_root, guard_exe): (&Path, &Path, &Path),
    wanted: &[String],
    queue: bool,
) -> Result<Armed, Refusal> {
    // The names that resolve are timed; one that does not is named in the status, and
    // stops nothing unless none resolves (`--latency vda --latency nosuch` timed nothing).
    let mut devs = BTreeMap::new();
    let mut unresolved = Vec::new();
    for name in wanted {
        match dev_of(sys_root, name) {
            Some(dev) => _ = devs.insert(dev, name.clone()),
            None => unresolved.push(name.clone()),
        }
    }
    if devs.is_empty() {
        let paths: Vec<String> = (unresolved.iter())
            .map(|n| format!("/sys/class/block/{n}/dev"))
            .collect();
        return Err(("no-device", format!("no {}", paths.join(", no "))));
    }
    let numbers: Vec<u32> = devs.keys().copied().collect();
    let filter = filter(&numbers, 0);
    let events: Vec<Event> = armed_events(queue)
        .iter()
        .map(|dir| Event {
            dir,
            filter: Some(&filter),
        })
        .collect();
    let spec = Spec {
        name: "-blk",
        buffer_kb: BUFFER_KB,
        clock: Some("mono"),
        events: &events,
        wake_on_any: false,
    };
    let instance = Instance::create(proc_root, guard_exe, &spec)?;
    let layout = if queue {
        BlkLayout::new(instance.format(0), instance.format(1), instance.format(2))
    } else {
        BlkLayout::device_only(instance.format(0), instance.format(1))
    };
    let layout = layout.map_err(|e| ("error", format!("{}: {e}", instance.dir().display())))?;
    let shared: Arc<Handoff> = Arc::default();
    let (stopped, stop) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| ("error", format!("a pipe for the reader: {e}")))?;
    let s = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("pagewatch-blk".into())
        .spawn(move || read_loop(&instance, &layout, &numbers, &s, stopped.as_fd()))
        .map_err(|e| ("error", format!("starting the reader: {e}")))?;
    Ok(Armed {
        names: devs,
        queue,
        unresolved,
        ticks: 0,
        shared,
        stop: Some(stop),
        thread: Some(thread),
    })
}

impl Armed {
    /// Asks the thread to read what the buffers hold now, waits up to `TICK_WAIT` for it, and
    /// takes what it added up: the interval's events, up to the tick (issue 51: read on the
    /// thread's own cadence, an interval's last 100 ms fell in the next one, 10 % at 400
    /// writes/s).
    fn tick(&self) -> Shared {
        let (lock, read) = &*self.shared;
        let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let want = s.ticks_read + 1;
        if let Some(fd) = &self.stop
            && rustix::io::write(fd, b"t").is_ok()
        {
            s = read
                .wait_timeout_while(s, TICK_WAIT, |s| s.ticks_read < want)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let (ticks_read, sample_every) = (s.ticks_read, s.sample_every);
        let taken = std::mem::take(&mut *s);
        s.ticks_read = ticks_read;
        s.sample_every = sample_every;
        taken
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The reader: until `stopped` (a pipe's read end) closes, reads every page the per-CPU
/// buffers hold, on the cadence `next` gives (blocking on the readers while there is nothing)
/// and whenever a byte on `stopped` asks for a tick's read, pairs their events and adds them
/// to `shared`. Drops (removes) the instance at the end.
fn read_loop(
    instance: &Instance,
    layout: &BlkLayout,
    devs: &[u32],
    shared: &Handoff,
    stopped: BorrowedFd<'_>,
) {
    let mut pairer = Pairer::default();
    let mut sampling = Sampling::new();
    let mut buf = Vec::new();
    let mut events: Vec<BlkEvent> = Vec::new();
    let page = *instance.page_layout();
    // The whole buffer of every CPU, at most.
    let cap = (BUFFER_KB as usize * 1024).saturating_mul(64);
    let mut wait = Next::Poll;
    loop {
        let woke = match wait {
            Next::Sleep(d) => instance.wait(stopped, d, false),
            Next::Poll => instance.wait(stopped, IDLE_POLL, true),
        };
        let mut ticks = 0;
        if woke == Wait::Stopped {
            let mut b = [0u8; 64];
            match rustix::io::read(stopped, &mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => ticks = n as u64,
            }
        }
        let (mut lost, mut err) = (0, None);
        let (bytes, _, read_err) = instance.read_pages(&mut buf, cap, |cpu, bytes| {
            let r = walk_page(bytes, &page, cpu, &mut lost, |ts, rec| {
                if let Some(e) = layout.decode(rec, ts) {
                    events.push(e);
                }
                Ok(())
            });
            if let Err(e) = r {
                err.get_or_insert(format!("decoding trace_pipe_raw: {e}"));
            }
        });
        // The filter first, before the pairing's work: in a flood every millisecond fills
        // the buffers.
        let resample = sampling.after_read(events.len(), std::time::Instant::now());
        if let Some(shift) = resample {
            let f = filter(devs, shift);
            for i in 0..armed_events(layout.queue_time()).len() {
                if let Err(e) = instance.set_filter(i, &f) {
                    err.get_or_insert(format!("setting the sampling filter: {e}"));
                }
            }
        }
        // A flood's read, or the half-full buffer that the first reads after arming find, is
        // not kept for every later read (issue 52: RSS with the tracer armed, 11–12.5 MB at
        // 20k IOPS, VmHWM 14 MB; after that, at 2,000 IOPS, the room of a first read's
        // events stayed while each tick's read held a few hundred).
        crate::malloc::fit(&mut events);
        pairer.feed(&mut events);
        if resample.is_some() {
            pairer.restart();
        }
        pairer.trim(KEEP_EVENTS, crate::malloc::fit);
        {
            let mut s = shared.0.lock().unwrap_or_else(PoisonError::into_inner);
            for d in pairer.take() {
                s.devices.entry(d.dev).or_default().merge(&d);
            }
            s.lost = s.lost.saturating_add(lost);
            s.bytes = s.bytes.saturating_add(bytes as u64);
            s.reads += 1;
            s.sample_every = 1 << sampling.shift;
            if let Some(e) = read_err.or(err) {
                s.err.get_or_insert(e);
            }
            if ticks > 0 {
                s.ticks_read += ticks;
                shared.1.notify_all();
            }
        }
        wait = next(woke);
    }
}

/// The sampling in force and the events kept since it was last reconsidered.
struct Sampling {
    shift: u32,
    kept: usize,
    since: std::time::Instant,
}

impl Sampling {
    fn new() -> Self {
        Self {
            shift: 0,
            kept: 0,
            since: std::time::Instant::now(),
        }
    }

    /// Counts a read's events; every `ADAPT_EVERY` (`ADAPT_SOON` in a flood), the new shift
    /// when it changes.
    fn after_read(&mut self, kept: usize, now: std::time::Instant) -> Option<u32> {
        self.kept += kept;
        let dt = now.duration_since(self.since);
        let rate = self.kept as f64 / dt.as_secs_f64().max(1e-3);
        if dt < ADAPT_EVERY && (dt < ADAPT_SOON || rate <= 4.0 * KEEP_PER_S) {
            return None;
        }
        let shift = next_shift(self.shift, rate);
        (self.kept, self.since) = (0, now);
        (shift != self.shift).then(|| {
            self.shift = shift;
            shift
        })
    }
}

/// The `dev_t` of a block device as the block events carry it (`major << 20 | minor`), from
/// `/sys/class/block/<name>/dev`; a partition's requests carry its disk's number, so a
/// partition gives its disk's.
fn dev_of(sys_root: &Path, name: &str) -> Option<u32> {
    let sysfs = name.replace('/', "!");
    if sysfs.is_empty() || sysfs.starts_with('.') || sysfs.contains('/') {
        return None;
    }
    let dir = sys_root.join("class/block").join(&sysfs);
    let dir = if dir.join("partition").exists() {
        std::fs::canonicalize(&dir).ok()?.parent()?.to_path_buf()
    } else {
        dir
    };
    let text = std::fs::read_to_string(dir.join("dev")).ok()?;
    let (maj, min) = text.trim().split_once(':')?;
    let (maj, min): (u32, u32) = (maj.parse().ok()?, min.parse().ok()?);
    (maj < 1 << 12 && min < 1 << 20).then_some(maj << 20 | min)
}

/// The one line to say on stderr when some of the `--latency` names are no block device under
/// `sys_root` (`None` when all are): which, and which are timed.
#[must_use]
pub fn unresolved_note(sys_root: &Path, names: &[String]) -> Option<String> {
    let (found, missing): (Vec<&String>, Vec<&String>) =
        names.iter().partition(|n| dev_of(sys_root, n).is_some());
    if missing.is_empty() {
        return None;
    }
    let list = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    Some(format!(
        "--latency {}: no such block device (not in {}/class/block); {}",
        list(&missing),
        sys_root.display(),
        if found.is_empty() {
            "nothing is timed".to_owned()
        } else {
            format!("timing {}", list(&found))
        }
    ))
}

fn status(state: &str, why: Option<String>, devices: &[String]) -> BlkStatus {
    BlkStatus {
        state: state.to_owned(),
        why,
        devices: devices.to_vec(),
        unresolved: Vec::new(),
        buffer_kb: BUFFER_KB,
        bytes: 0,
        reads: 0,
        ticks: 0,
    }
}

#[cfg(test)]
#[path = "blk_tests.rs"]
mod tests;
