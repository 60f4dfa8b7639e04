//! Reads the sampled files from a root that plays /proc and one that plays /sys.
//!
//! Owns: `FsSource`, which reads live `/proc` and `/sys` (or any directories given in their
//! place) once per call, stamps the sample with its `Clock`, and caches what changes rarely
//! (zoneinfo, the vm sysctls, per-device queue settings). Must not touch: parsing, derivation,
//! UI.
//!
//! The /proc files (per tick and slow refresh alike) are kept open when on procfs and re-read
//! from offset 0 with `pread` (seq_file and proc_sys regenerate their text at offset 0): an
//! open + close per file per tick cost as much as the read itself. A held file whose read
//! fails is dropped and opened afresh, so a vanished file reads as absent, exactly like a
//! first open. Files outside procfs (captured trees given as `--proc-root`) are opened on
//! every read, so replacing or deleting them between ticks behaves as before. On procfs a
//! short read is the end of the file when the way the kernel cuts that file into records says
//! so (`Records`), which saves the read that would only see EOF (and, for a seq_file, make
//! the kernel generate the text a second time to find its place).
//!
//! `/proc/zoneinfo` is the most expensive file (46–64 µs of kernel time per read here: the
//! kernel formats every zone and its per-cpu pagesets), and pagewatch only needs its
//! slow-changing part: the watermarks, `managed` and `protection`, for the reserves and the
//! reclaim pane (free memory itself comes from meminfo's MemFree every tick). So it is read on
//! the slow refresh with the sysctls and the `/sys/block` listing (about 140 µs together);
//! spec §1.3 asks for a periodic re-read because those figures do change at runtime (sysctl
//! writes to `min_free_kbytes`, `watermark_scale_factor`, `lowmem_reserve_ratio`, memory
//! hotplug). The period is `SLOW_REFRESH_TICKS` samples, and `refresh_soon` brings the next
//! refresh forward: the app asks for it as soon as what it derives from these files stops
//! matching what the kernel reports each tick (the dirty thresholds, MemAvailable, the disks
//! in diskstats), which is how a sysctl write, a watermark change or a new disk shows. In
//! between, zoneinfo's `pages free` and counters are stale, which no figure uses.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

use super::collect::{Baselines, Collect, Exits, Journals, Pass, TaskDelays, Tracing, fresh_text};
use super::read::{
    DEFAULT_STEP, Records, is_absent, is_procfs, open_regular, read_from_start, read_optional,
    step_for, text,
};
use super::{Clock, SLOW_REFRESH_TICKS, Source, SystemClock, put};
use crate::sample::{RawSample, Wants, names};
use crate::{Error, Result};

/// Files read on every tick, relative to the proc root, with their sample names and how the
/// kernel cuts them into seq_file records (which decides when a short read is the end).
const PROC_FILES: [(&str, &str, Records); 8] = [
    ("meminfo", names::MEMINFO, Records::One),
    // One counter a line: a name of under 40 bytes (30 the longest on this VM's 6.18), a
    // space, a u64 and a newline, at most 61 bytes. With a bound of 128, this VM's 4,006
    // bytes took a second read, a system call, to see EOF.
    ("vmstat", names::VMSTAT, Records::UpTo(64)),
    ("stat", names::STAT, Records::One),
    ("uptime", names::UPTIME, Records::One),
    ("pressure/cpu", names::PSI_CPU, Records::One),
    ("pressure/memory", names::PSI_MEMORY, Records::One),
    ("pressure/io", names::PSI_IO, Records::One),
    // One node a record: a line per zone of about 100 bytes, up to 6 zones.
    ("buddyinfo", names::BUDDYINFO, Records::UpTo(1024)),
];

/// Queue settings are re-read on every this many slow refreshes (once a minute at 1 Hz), for
/// the disks that moved since (`source::moved`), and a new disk's when it shows.
const QUEUE_REFRESHES: u32 = 4;

/// Reads kernel files from a proc root and a sys root.
pub struct FsSource {
    clock: Box<dyn Clock>,
    page_size: u64,
    buf: Vec<u8>,
    /// The per-tick files, in `PROC_FILES` order.
    tick_files: TickFiles,
    /// `/proc/diskstats`, read whole or only its moving devices' lines (`source::disk_lines`).
    disks: Disks,
    /// The slow-refresh files and the `/sys/block` pseudo-file.
    slow: Slow,
    ticks_since_refresh: u32,
    /// The files of a sample handed back (`Source::recycle`): the next sample is built in it,
    /// its keys and text buffers reused rather than allocated again.
    spare: BTreeMap<String, String>,
    /// The "who" data to collect (`Source::want`).
    wants: Wants,
    /// The ext4 journals (`collect::Journals`).
    journals: Journals,
    /// The cgroup v2 tree, BDI limits and wb_stats (`source::cgroups`).
    cgroups: super::cgroups::Cgroups,
    /// The block BDIs' debugfs `stats` (`source::bdi_stats`).
    bdi_stats: super::bdi_stats::BdiStats,
    /// The dirty-files scan (`source::dirty_files`), for the live system only.
    dirty_files: Option<super::dirty_files::DirtyFiles>,
    /// The taskstats exit listener, for the live system only (`with_tracing`).
    exits: Exits,
    /// The live processes' delay accounting (`source::task_delays`), live only.
    task_delays: TaskDelays,
    /// The process walk, done while `wants.procs` asks (spec §11).
    walker: super::procs::Walker,
    /// The tracers (`source::tracers`), for the live system only (`with_tracing`).
    tracing: Tracing,
    /// The disks' calm baselines kept across runs (`with_baselines`).
    baselines: Baselines,
    /// The zram devices' `mm_stat` and `bd_stat` (`source::zram`).
    zram: super::zram::Zram,
    /// The NUMA nodes' files on a machine with more than one (`source::nodes`).
    nodes: super::nodes::Nodes,
}

impl FsSource {
    /// The live system: `/proc` and `/sys` with the system clock.
    #[must_use]
    pub fn live() -> Self {
        Self::new("/proc", "/sys", Box::new(SystemClock))
    }

    /// Reads from the given roots, stamping samples with `clock`.
    #[must_use]
    pub fn new(
        proc_root: impl Into<PathBuf>,
        sys_root: impl Into<PathBuf>,
        clock: Box<dyn Clock>,
    ) -> Self {
        let proc_root: PathBuf = proc_root.into();
        let walker = super::procs::Walker::new(&proc_root);
        let tick_files = PROC_FILES
            .iter()
            .map(|(rel, _, records)| Held::new(proc_root.join(rel), *records))
            .collect();
        let sys_root: PathBuf = sys_root.into();
        let cgroups = super::cgroups::Cgroups::new(&proc_root, &sys_root);
        let zram = super::zram::Zram::new(&sys_root);
        let nodes = super::nodes::Nodes::new(&sys_root);
        let bdi_stats = super::bdi_stats::BdiStats::new(&sys_root);
        Self {
            clock,
            page_size: rustix::param::page_size() as u64,
            buf: Vec::new(),
            tick_files: TickFiles(tick_files),
            disks: Disks::new(&proc_root, &sys_root),
            slow: Slow::new(&proc_root, sys_root),
            ticks_since_refresh: 0,
            spare: BTreeMap::new(),
            wants: Wants::default(),
            walker,
            journals: Journals::new(&proc_root),
            bdi_stats,
            dirty_files: None,
            cgroups,
            exits: Exits(None),
            task_delays: TaskDelays(None),
            tracing: Tracing {
                tracers: None,
                proc_root,
            },
            baselines: Baselines(None),
            zram,
            nodes,
        }
    }

    /// Lets this source arm its tracers when the model wants them (`source::tracers`: the
    /// balance_dirty_pages tracepoint for `Wants::trace`, the sync syscalls for
    /// `Wants::sync`, the block requests of the devices in `Wants::latency`, the `-below`
    /// events for `Wants::below`; root, tracefs), with `guard_exe` (pagewatch's own binary)
    /// as the cleanup guard that removes each tracefs instance if pagewatch is killed. For the
    /// live system only: a captured tree has no tracefs. Also listens for taskstats exit
    /// notifications at every sample (`source::taskstats`).
    #[must_use]
    pub fn with_tracing(mut self, guard_exe: PathBuf) -> Self {
        self.tracing.tracers = Some(super::tracers::Tracers::new(
            &self.tracing.proc_root,
            &self.slow.sys_root,
            guard_exe,
        ));
        self.dirty_files = Some(super::dirty_files::DirtyFiles::new(&self.tracing.proc_root));
        self.exits = Exits(Some(super::taskstats::Listener::new(
            self.slow.sys_root.clone(),
        )));
        self.task_delays = TaskDelays(Some(super::task_delays::Querier::default()));
        self
    }

    /// Never arms the tracers `off` names (`--no-trace`); after `with_tracing`.
    #[must_use]
    pub fn without_tracers(mut self, off: super::NoTrace) -> Self {
        if let Some(t) = &mut self.tracing.tracers {
            t.turn_off(off);
        }
        self
    }

    /// Carries `store`'s baselines in every sample (`names::BASELINES`) and keeps in it what
    /// the pipeline learned (`Source::keep_baselines`).
    #[must_use]
    pub fn with_baselines(mut self, store: super::baselines::Store) -> Self {
        self.baselines = Baselines(Some(store));
        self
    }

    /// Shows `choice`'s scope (`--cgroup PATH`, `--host`; else found, `parse::scope`).
    #[must_use]
    pub fn with_scope(mut self, choice: crate::parse::scope::Choice) -> Self {
        self.cgroups.set_choice(choice);
        self
    }

    /// Overrides the page size recorded in samples (captured trees from other machines).
    #[must_use]
    pub fn with_page_size(mut self, page_size: u64) -> Self {
        self.page_size = page_size;
        self
    }

    /// Makes the next read refresh the slow set (zoneinfo, the vm sysctls, /sys/block), as
    /// when the figures derived from them stop matching the kernel's.
    pub fn refresh_soon(&mut self) {
        self.ticks_since_refresh = 0;
    }

    /// Reads every sampled file once: each collector in turn, in this order (a later one
    /// may use what an earlier one read this time: the cgroups and the block settings this
    /// tick's diskstats, the throttled writers' lineage the tracepoint's writers). First
    /// meminfo and vmstat, the devices' debugfs figures and the files the dirty-files table
    /// lists, back to back; the dirty-files scan (which takes the walk's writers) last.
    pub fn read(&mut self) -> Result<RawSample> {
        // Filled in place: a recycled sample's keys and buffers are reused, and whatever
        // file is not set again below (absent this time) is removed at the end.
        let mut files = std::mem::take(&mut self.spare);
        let mono_ns = self.clock.mono_ns();
        let wall_ms = self.clock.wall_ms();
        let mut pass = Pass {
            fresh: Vec::with_capacity(files.len().max(PROC_FILES.len())),
            files: &mut files,
            buf: &mut self.buf,
            mono_ns,
            wall_ms,
            refresh: self.ticks_since_refresh == 0,
            wants: &self.wants,
        };
        // The machine's dirty and writeback pages, the devices' (debugfs) and the files the
        // dirty-files table lists, read back to back: the lab's device completes writeback 8
        // MiB at a time, and a walk, or even the other per-tick files, read in between under
        // TCG left the file 8 MiB short of its device (20 % of 40 MB). The device figures go
        // first, beside meminfo's: the files' cachestat takes long under TCG.
        self.tick_files.read_part(&mut pass, 0..MEMORY_FILES)?;
        self.bdi_stats.collect(&mut pass)?;
        if let Some(d) = &mut self.dirty_files {
            d.refresh_listed(mono_ns);
        }
        self.tick_files
            .read_part(&mut pass, MEMORY_FILES..PROC_FILES.len())?;
        let collectors: [&mut dyn Collect<'_>; 11] = [
            &mut self.disks,
            &mut self.slow,
            &mut self.zram,
            &mut self.nodes,
            &mut self.cgroups,
            &mut self.journals,
            &mut self.baselines,
            &mut self.exits,
            &mut self.task_delays,
            &mut self.walker,
            &mut self.tracing,
        ];
        for c in collectors {
            c.collect(&mut pass)?;
        }
        if let Some(d) = &mut self.dirty_files {
            d.collect(&mut pass)?;
        }
        let mut fresh = pass.fresh;
        self.ticks_since_refresh = (self.ticks_since_refresh + 1) % SLOW_REFRESH_TICKS;
        if files.len() != fresh.len() {
            fresh.sort_unstable();
            files.retain(|k, _| fresh.binary_search(&k.as_str()).is_ok());
        }
        Ok(RawSample {
            mono_ns,
            wall_ms,
            page_size: self.page_size,
            files,
        })
    }
}

/// The files read on every tick, in `PROC_FILES` order.
struct TickFiles(Vec<Held>);

impl std::ops::Deref for TickFiles {
    type Target = Vec<Held>;
    fn deref(&self) -> &Vec<Held> {
        &self.0
    }
}

impl TickFiles {
    /// Reads `PROC_FILES[range]`.
    fn read_part(&mut self, pass: &mut Pass<'_, '_>, range: std::ops::Range<usize>) -> Result<()> {
        for ((_, name, _), held) in PROC_FILES[range.clone()].iter().zip(&mut self.0[range]) {
            if let Some(bytes) = held.read(pass.buf)? {
                put(pass.files, name, text(&pass.buf[..bytes]));
                pass.fresh.push(name);
            }
        }
        Ok(())
    }
}

/// `PROC_FILES[..MEMORY_FILES]`: meminfo and vmstat, the machine's dirty and writeback pages.
const MEMORY_FILES: usize = 2;

impl<'a> Collect<'a> for TickFiles {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        self.read_part(pass, 0..PROC_FILES.len())
    }
}

/// `/proc/diskstats`, whole or its moving devices' lines (`source::disk_lines`), and the
/// carried lines' read times when some were not read now.
struct Disks {
    held: Held,
    lines: super::disk_lines::Lines,
}

impl Disks {
    fn new(proc_root: &Path, sys_root: &Path) -> Self {
        Self {
            // One device a line: up to 20 u64 fields and a name of up to 32 bytes.
            held: Held::new(proc_root.join("diskstats"), Records::UpTo(512)),
            lines: super::disk_lines::Lines::new(sys_root),
        }
    }
}

impl<'a> Collect<'a> for Disks {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        let live = self.held.file.is_some();
        let held = &mut self.held;
        let (buf, mono_ns, refresh) = (&mut *pass.buf, pass.mono_ns, pass.refresh);
        if !self
            .lines
            .read(|buf| held.read(buf), buf, mono_ns, live, refresh)?
        {
            return Ok(());
        }
        pass.put(names::DISKSTATS, Cow::Borrowed(self.lines.text()));
        if !self.lines.carried().is_empty() {
            pass.put(
                names::DISKSTATS_CARRIED,
                Cow::Borrowed(self.lines.carried()),
            );
        }
        Ok(())
    }
}

/// The slow set: zoneinfo, the vm sysctls and the reader's own stat, read on the slow
/// refresh and carried in between, and the `/sys/block` pseudo-file.
struct Slow {
    sys_root: PathBuf,
    /// The slow-refresh files (zoneinfo, then the vm sysctls), with their sample names.
    files: Vec<(String, Held)>,
    /// Whole disks at the last refresh, and their `BLOCK_DEVICES` text.
    devices: Vec<String>,
    block_text: Option<String>,
    /// Each disk's line of that text as last read, and the disks' motion since
    /// (`source::moved`: idle disks' settings are not re-read every minute).
    block_lines: HashMap<String, String>,
    block_motion: super::moved::Motion,
    /// Counts slow refreshes: queue settings are re-read every `QUEUE_REFRESHES`th.
    refreshes: u32,
    /// The slow-refresh files' text at the last refresh (absent files left out).
    text_at_refresh: Vec<(String, String)>,
}

impl Slow {
    fn new(proc_root: &Path, sys_root: PathBuf) -> Self {
        let zoneinfo = (
            names::ZONEINFO.to_owned(),
            Held::new(proc_root.join("zoneinfo"), Records::Unknown),
        );
        let sysctls = names::VM_SYSCTLS.iter().map(|knob| {
            (
                names::vm_sysctl(knob),
                Held::new(proc_root.join("sys/vm").join(knob), Records::One),
            )
        });
        let reader = (
            names::READER_STAT.to_owned(),
            Held::new(proc_root.join("thread-self/stat"), Records::One),
        );
        let files = std::iter::once(zoneinfo)
            .chain(sysctls)
            .chain(std::iter::once(reader))
            .collect();
        Self {
            sys_root,
            files,
            devices: Vec::new(),
            block_text: None,
            block_lines: HashMap::new(),
            block_motion: super::moved::Motion::default(),
            refreshes: 0,
            text_at_refresh: Vec::new(),
        }
    }
}

impl<'a> Collect<'a> for Slow {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if pass.refresh {
            self.text_at_refresh.clear();
            for (name, held) in &mut self.files {
                if let Some(bytes) = held.read(pass.buf)? {
                    self.text_at_refresh
                        .push((name.clone(), text(&pass.buf[..bytes]).into_owned()));
                }
            }
            // This tick's diskstats: which disks moved (the settings refresh,
            // `source::moved`).
            let diskstats = fresh_text(pass.files, &pass.fresh, names::DISKSTATS);
            let counters = super::moved::Counters::of(diskstats);
            self.block_text = self.read_block_devices(&counters, pass.buf)?;
        }
        let this: &'a Self = self;
        for (name, text) in &this.text_at_refresh {
            pass.put(name, Cow::Borrowed(text));
        }
        if let Some(text) = &this.block_text {
            pass.put(names::BLOCK_DEVICES, Cow::Borrowed(text));
        }
        Ok(())
    }
}

impl Slow {
    /// The `/sys/block` pseudo-file (see `names::BLOCK_DEVICES`). A disk's settings are
    /// read when it first shows, and re-read every `QUEUE_REFRESHES`th refresh when it moved
    /// since (`source::moved`; all of them every `moved::FULL_EVERY` such refreshes).
    fn read_block_devices(
        &mut self,
        now: &super::moved::Counters<'_>,
        buf: &mut Vec<u8>,
    ) -> Result<Option<String>> {
        let dir = self.sys_root.join("block");
        let mut devs: Vec<String> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().and_then(|e| e.file_name().into_string().ok()))
                .collect(),
            Err(e) if is_absent(&e) => return Ok(None),
            Err(source) => return Err(Error::Io { path: dir, source }),
        };
        devs.sort();
        self.refreshes = (self.refreshes + 1) % QUEUE_REFRESHES;
        let periodic = self.refreshes == 0 || self.block_text.is_none();
        if devs == self.devices && !periodic {
            return Ok(self.block_text.clone());
        }
        let full = periodic && self.block_motion.start();
        let mut text = String::new();
        for dev in &devs {
            let key = diskstats_name(dev);
            let cached = self.block_lines.contains_key(dev);
            // A disk already known is re-read only on the periodic refresh, and then only
            // when it moved.
            if !cached || (periodic && self.block_motion.due(&key, now, full, cached)) {
                let line = self.block_device_line(dev, buf)?;
                self.block_lines.insert(dev.clone(), line);
                self.block_motion.read(&key, now);
            }
            text.push_str(&self.block_lines[dev]);
        }
        self.block_lines
            .retain(|d, _| devs.binary_search(d).is_ok());
        // The inverse of `diskstats_name`.
        self.block_motion
            .retain(|k| devs.binary_search(&k.replace('/', "!")).is_ok());
        self.devices = devs;
        self.block_text = Some(text.clone());
        Ok(Some(text))
    }

    /// One disk's line of the `/sys/block` pseudo-file.
    fn block_device_line(&self, dev: &str, buf: &mut Vec<u8>) -> Result<String> {
        let mut text = String::new();
        let base = self.sys_root.join("block").join(dev);
        text.push_str(&diskstats_name(dev));
        // The queue files relative to the queue directory (`read::Dir`).
        let queue = super::read::Dir::open(&base.join("queue"));
        for f in names::QUEUE_FILES {
            text.push('\t');
            if let Some(v) = queue.as_ref().and_then(|q| q.read(f, buf)) {
                text.push_str(v.trim());
            }
        }
        // Only device-mapper disks (dm-N) have a dm/name; looking it up on every other
        // disk cost a failed path walk through sysfs each.
        text.push('\t');
        if dev.starts_with("dm-")
            && let Some(v) = read_optional(&base.join("dm/name"), buf)?
        {
            text.push_str(v.trim());
        }
        // Hardware queues of a multi-queue device: one entry each under mq/.
        text.push('\t');
        if let Ok(queues) = std::fs::read_dir(base.join("mq")) {
            text.push_str(&queues.count().to_string());
        }
        // wbt's read-latency target (4.10+; absent without CONFIG_BLK_WBT).
        text.push('\t');
        if let Some(v) = read_optional(&base.join("queue/wbt_lat_usec"), buf)? {
            text.push_str(v.trim());
        }
        // What the device is, for the calm baselines kept across runs (`block_id`).
        super::block_id::push_identity(&mut text, dev, &base, buf);
        text.push('\n');
        Ok(text)
    }
}

impl Source for FsSource {
    fn next_sample(&mut self) -> Result<Option<RawSample>> {
        self.read().map(Some)
    }

    fn recycle(&mut self, used: RawSample) {
        self.spare = used.files;
    }

    fn keep_baselines(&mut self, learned: &crate::parse::baselines::Stored) {
        let now_s = self.clock.wall_ms() / 1000;
        if let Some(b) = &mut self.baselines.0 {
            b.keep(learned, now_s);
        }
    }

    fn refresh_soon(&mut self) {
        FsSource::refresh_soon(self);
    }

    fn want(&mut self, wants: &Wants) {
        self.wants.clone_from(wants);
        // Armed at once, so that the next sample already carries the interval's events.
        if let Some(t) = &mut self.tracing.tracers {
            t.want(wants);
        }
    }
}

/// A file read on every sample, kept open between reads when it lives on procfs.
struct Held {
    path: PathBuf,
    file: Option<File>,
    /// How much to ask for per read: the file's last length rounded up (see `read_from_start`).
    step: usize,
    /// How the kernel cuts the file into records, when it is on procfs.
    records: Records,
}

impl Held {
    fn new(path: PathBuf, records: Records) -> Self {
        Self {
            path,
            file: None,
            step: DEFAULT_STEP,
            records,
        }
    }

    /// Reads the whole file into `buf`; its length, or `None` when it does not exist (any
    /// more).
    fn read(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>> {
        if let Some(f) = &self.file {
            if let Ok(n) = read_from_start(f, buf, self.step, Some(self.records)) {
                self.step = step_for(n);
                return Ok(Some(n));
            }
            // Stale or failing descriptor: fall through to a fresh open, which decides.
            self.file = None;
        }
        // A first read goes to EOF: whether the file is on procfs is not known yet.
        let res = open_regular(&self.path)
            .and_then(|f| read_from_start(&f, buf, DEFAULT_STEP, None).map(|n| (f, n)));
        match res {
            Ok((f, n)) => {
                self.step = step_for(n);
                if is_procfs(&f) {
                    self.file = Some(f);
                }
                Ok(Some(n))
            }
            Err(e) if is_absent(&e) => Ok(None),
            Err(source) => Err(Error::Io {
                path: self.path.clone(),
                source,
            }),
        }
    }
}

/// A /sys/block entry's name as /proc/diskstats spells it: the kernel writes a `/` in a
/// device name as `!` in sysfs (`cciss!c0d0` is `cciss/c0d0`; any driver whose names hold a
/// slash), and the disk table matches the two by name.
#[must_use]
pub fn diskstats_name(sysfs: &str) -> String {
    sysfs.replace('!', "/")
}

#[cfg(test)]
#[path = "fs_tests.rs"]
mod tests;
