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
use std::path::PathBuf;

use super::read::{
    DEFAULT_STEP, Records, is_absent, is_procfs, open_regular, read_from_start, read_optional,
    step_for, text,
};
use super::{Clock, Source, SystemClock};
use crate::sample::{RawSample, Wants, names};
use crate::{Error, Result};

/// Files read on every tick, relative to the proc root, with their sample names and how the
/// kernel cuts them into seq_file records (which decides when a short read is the end).
const PROC_FILES: [(&str, &str, Records); 8] = [
    ("meminfo", names::MEMINFO, Records::One),
    // One counter a line: a name of under 40 bytes, a space, a u64 and a newline.
    ("vmstat", names::VMSTAT, Records::UpTo(128)),
    ("stat", names::STAT, Records::One),
    ("uptime", names::UPTIME, Records::One),
    ("pressure/cpu", names::PSI_CPU, Records::One),
    ("pressure/memory", names::PSI_MEMORY, Records::One),
    ("pressure/io", names::PSI_IO, Records::One),
    // One node a record: a line per zone of about 100 bytes, up to 6 zones.
    ("buddyinfo", names::BUDDYINFO, Records::UpTo(1024)),
];

/// Files that change rarely (zoneinfo, the vm sysctls, the /sys/block listing and queue
/// settings) are re-read every this many samples, or sooner on `FsSource::refresh_soon`; in
/// between, the sample carries the last text read. Measured kernel cost here: zoneinfo
/// 46–64 µs, each vm sysctl 3–8 µs, listing /sys/block 45 µs.
pub const SLOW_REFRESH_TICKS: u32 = 15;

/// Queue settings are re-read on every this many slow refreshes (once a minute at 1 Hz), for
/// the disks that moved since (`source::moved`), and a new disk's when it shows.
const QUEUE_REFRESHES: u32 = 4;

/// Reads kernel files from a proc root and a sys root.
pub struct FsSource {
    sys_root: PathBuf,
    clock: Box<dyn Clock>,
    page_size: u64,
    buf: Vec<u8>,
    /// The per-tick files, in `PROC_FILES` order.
    tick_files: Vec<Held>,
    /// `/proc/diskstats`, read whole or only its moving devices' lines (`source::disk_lines`).
    diskstats: Held,
    disk_lines: super::disk_lines::Lines,
    /// The slow-refresh files (zoneinfo, then the vm sysctls), with their sample names.
    slow_files: Vec<(String, Held)>,
    /// Whole disks at the last refresh, and their `BLOCK_DEVICES` text.
    devices: Vec<String>,
    block_text: Option<String>,
    /// Each disk's line of that text as last read, and the disks' motion since
    /// (`source::moved`: idle disks' settings are not re-read every minute).
    block_lines: HashMap<String, String>,
    block_motion: super::moved::Motion,
    /// Counts slow refreshes: queue settings are re-read every `QUEUE_REFRESHES`th.
    slow_refreshes: u32,
    /// The slow-refresh files' text at the last refresh (absent files left out).
    slow_text: Vec<(String, String)>,
    ticks_since_refresh: u32,
    /// The files of a sample handed back (`Source::recycle`): the next sample is built in it,
    /// its keys and text buffers reused rather than allocated again.
    spare: BTreeMap<String, String>,
    /// The "who" data to collect (`Source::want`).
    wants: Wants,
    /// The process walk, done while `wants.procs` asks (spec §11).
    walker: super::procs::Walker,
    /// The proc root, for the tracer's mountinfo and own tasks.
    proc_root: PathBuf,
    /// The tracers (`source::tracers`), for the live system only (`with_tracing`).
    tracers: Option<super::tracers::Tracers>,
    /// The ext4 journals' `info` (`/proc/fs/jbd2/*/info`), listed on the slow refresh and
    /// opened and read every tick (2.6 µs of kernel time each here), with their sample names.
    /// Not held open: the kernel copies the journal's counts into the file when it is opened
    /// (`jbd2_seq_info_open`), so a held file would show the same counts for ever.
    journals: Vec<(String, PathBuf)>,
    /// The cgroup v2 tree, BDI limits and wb_stats (`source::cgroups`).
    cgroups: super::cgroups::Cgroups,
    /// The taskstats exit listener, for the live system only (`with_tracing`).
    exits: Option<super::taskstats::Listener>,
    /// The disks' calm baselines kept across runs (`with_baselines`).
    baselines: Option<super::baselines::Store>,
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
        let slow_files = std::iter::once(zoneinfo)
            .chain(sysctls)
            .chain(std::iter::once(reader))
            .collect();
        let sys_root: PathBuf = sys_root.into();
        // One device a line: up to 20 u64 fields and a name of up to 32 bytes.
        let diskstats = Held::new(proc_root.join("diskstats"), Records::UpTo(512));
        let disk_lines = super::disk_lines::Lines::new(&sys_root);
        let cgroups = super::cgroups::Cgroups::new(&proc_root, &sys_root);
        Self {
            sys_root,
            clock,
            page_size: rustix::param::page_size() as u64,
            buf: Vec::new(),
            tick_files,
            diskstats,
            disk_lines,
            slow_files,
            devices: Vec::new(),
            block_text: None,
            block_lines: HashMap::new(),
            block_motion: super::moved::Motion::default(),
            slow_text: Vec::new(),
            slow_refreshes: 0,
            ticks_since_refresh: 0,
            spare: BTreeMap::new(),
            wants: Wants::default(),
            walker,
            proc_root,
            tracers: None,
            journals: Vec::new(),
            cgroups,
            exits: None,
            baselines: None,
        }
    }

    /// Lets this source arm its tracers when the model wants them (`source::tracers`: the
    /// balance_dirty_pages tracepoint for `Wants::trace`, the sync syscalls for
    /// `Wants::sync`, the block requests of the devices in `Wants::latency`, the `-below`
    /// events for `Wants::below`; root, tracefs), with `guard_exe` (pagewatch's own binary)
    /// as the cleanup guard that removes each tracefs instance if pagewatch is killed. For the
    /// live system only: a captured tree has no tracefs. Also listens for taskstats exit
    /// notifications while the process walk is wanted (`source::taskstats`).
    #[must_use]
    pub fn with_tracing(mut self, guard_exe: PathBuf) -> Self {
        self.tracers = Some(super::tracers::Tracers::new(
            &self.proc_root,
            &self.sys_root,
            guard_exe,
        ));
        self.exits = Some(super::taskstats::Listener::new(self.sys_root.clone()));
        self
    }

    /// Carries `store`'s baselines in every sample (`names::BASELINES`) and keeps in it what
    /// the pipeline learned (`Source::keep_baselines`).
    #[must_use]
    pub fn with_baselines(mut self, store: super::baselines::Store) -> Self {
        self.baselines = Some(store);
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

    /// Reads every sampled file once.
    pub fn read(&mut self) -> Result<RawSample> {
        // Filled in place: a recycled sample's keys and buffers are reused, and whatever
        // file is not set again below (absent this time) is removed at the end.
        let mut files = std::mem::take(&mut self.spare);
        let mut fresh = Vec::with_capacity(files.len().max(PROC_FILES.len()));
        let mono_ns = self.clock.mono_ns();
        let wall_ms = self.clock.wall_ms();
        for ((_, name, _), held) in PROC_FILES.iter().zip(&mut self.tick_files) {
            if let Some(bytes) = held.read(&mut self.buf)? {
                put(&mut files, name, text(&self.buf[..bytes]));
                fresh.push(*name);
            }
        }
        let refresh = self.ticks_since_refresh == 0;
        self.read_diskstats(&mut files, &mut fresh, mono_ns, refresh)?;
        // This tick's diskstats: which disks moved (the settings refresh, `source::moved`).
        let diskstats = files
            .get(names::DISKSTATS)
            .filter(|_| fresh.contains(&names::DISKSTATS))
            .map(String::as_str);
        if refresh {
            self.slow_text.clear();
            for (name, held) in &mut self.slow_files {
                if let Some(bytes) = held.read(&mut self.buf)? {
                    self.slow_text
                        .push((name.clone(), text(&self.buf[..bytes]).into_owned()));
                }
            }
            let counters = super::moved::Counters::of(diskstats);
            self.block_text = self.read_block_devices(&counters)?;
            self.list_journals();
        }
        self.ticks_since_refresh = (self.ticks_since_refresh + 1) % SLOW_REFRESH_TICKS;
        let vmstat = files
            .get(names::VMSTAT)
            .filter(|_| fresh.contains(&names::VMSTAT));
        self.cgroups.read(
            refresh,
            self.wants.cgroups_every_tick,
            vmstat.map(String::as_str),
            diskstats,
        );
        if let Some(text) = self.cgroups.bdi_text() {
            put(&mut files, names::BDI_LIMITS, Cow::Borrowed(text));
            fresh.push(names::BDI_LIMITS);
        }
        for (name, text) in &self.cgroups.out {
            put(&mut files, name, Cow::Borrowed(text));
            fresh.push(name);
        }
        for (name, path) in &self.journals {
            // Unmounted since the listing (absent) or unreadable: left out this tick.
            if let Ok(Some(t)) = read_optional(path, &mut self.buf) {
                put(&mut files, name, Cow::Owned(t));
                fresh.push(name);
            }
        }
        for (name, text) in &self.slow_text {
            put(&mut files, name, Cow::Borrowed(text));
            fresh.push(name);
        }
        if let Some(text) = &self.block_text {
            put(&mut files, names::BLOCK_DEVICES, Cow::Borrowed(text));
            fresh.push(names::BLOCK_DEVICES);
        }
        if let Some(text) = self.baselines.as_ref().and_then(|b| b.text()) {
            put(&mut files, names::BASELINES, Cow::Borrowed(text));
            fresh.push(names::BASELINES);
        }
        // Drained before the walk: every exit a walk's parent could have reaped is in this
        // sample or an earlier one (`model::exits`).
        if let Some(l) = &mut self.exits {
            l.sample(self.wants.procs.is_some(), mono_ns);
            if !l.out.is_empty() {
                put(&mut files, names::EXITS, Cow::Borrowed(&l.out));
                fresh.push(names::EXITS);
            }
        }
        match &self.wants.procs {
            Some(scope) => {
                if let Some(text) = self.walker.maybe_walk(mono_ns, scope) {
                    put(&mut files, names::PROCS, Cow::Borrowed(text));
                    fresh.push(names::PROCS);
                }
            }
            None => self.walker.reset(),
        }
        if let Some(t) = &mut self.tracers {
            t.sample(
                &self.wants,
                &mut self.buf,
                &self.proc_root,
                &mut files,
                &mut fresh,
            );
        }
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

    /// `/proc/diskstats`, whole or its moving devices' lines (`source::disk_lines`), and the
    /// carried lines' read times when some were not read now.
    fn read_diskstats(
        &mut self,
        files: &mut BTreeMap<String, String>,
        fresh: &mut Vec<&str>,
        mono_ns: u64,
        refresh: bool,
    ) -> Result<()> {
        let live = self.diskstats.file.is_some();
        let held = &mut self.diskstats;
        if !self
            .disk_lines
            .read(|buf| held.read(buf), &mut self.buf, mono_ns, live, refresh)?
        {
            return Ok(());
        }
        put(
            files,
            names::DISKSTATS,
            Cow::Borrowed(self.disk_lines.text()),
        );
        fresh.push(names::DISKSTATS);
        if !self.disk_lines.carried().is_empty() {
            put(
                files,
                names::DISKSTATS_CARRIED,
                Cow::Borrowed(self.disk_lines.carried()),
            );
            fresh.push(names::DISKSTATS_CARRIED);
        }
        Ok(())
    }

    /// Lists `/proc/fs/jbd2` (on the slow refresh): a journal mounted or unmounted since is
    /// picked up or dropped.
    fn list_journals(&mut self) {
        let dir = self.proc_root.join("fs/jbd2");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        let now: Vec<String> = names
            .iter()
            .map(|n| crate::parse::jbd2::sample_name(n))
            .collect();
        if now.iter().eq(self.journals.iter().map(|(n, _)| n)) {
            return;
        }
        self.journals = names
            .iter()
            .zip(now)
            .map(|(j, name)| (name, dir.join(j).join("info")))
            .collect();
    }

    /// The `/sys/block` pseudo-file (see `names::BLOCK_DEVICES`). A disk's settings are
    /// read when it first shows, and re-read every `QUEUE_REFRESHES`th refresh when it moved
    /// since (`source::moved`; all of them every `moved::FULL_EVERY` such refreshes).
    fn read_block_devices(&mut self, now: &super::moved::Counters<'_>) -> Result<Option<String>> {
        let dir = self.sys_root.join("block");
        let mut devs: Vec<String> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().and_then(|e| e.file_name().into_string().ok()))
                .collect(),
            Err(e) if is_absent(&e) => return Ok(None),
            Err(source) => return Err(Error::Io { path: dir, source }),
        };
        devs.sort();
        self.slow_refreshes = (self.slow_refreshes + 1) % QUEUE_REFRESHES;
        let periodic = self.slow_refreshes == 0 || self.block_text.is_none();
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
                let line = self.block_device_line(dev)?;
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
    fn block_device_line(&mut self, dev: &str) -> Result<String> {
        let mut text = String::new();
        let base = self.sys_root.join("block").join(dev);
        text.push_str(&diskstats_name(dev));
        // The queue files relative to the queue directory (`read::Dir`).
        let queue = super::read::Dir::open(&base.join("queue"));
        for f in names::QUEUE_FILES {
            text.push('\t');
            if let Some(v) = queue.as_ref().and_then(|q| q.read(f, &mut self.buf)) {
                text.push_str(v.trim());
            }
        }
        // Only device-mapper disks (dm-N) have a dm/name; looking it up on every other
        // disk cost a failed path walk through sysfs each.
        text.push('\t');
        if dev.starts_with("dm-")
            && let Some(v) = read_optional(&base.join("dm/name"), &mut self.buf)?
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
        if let Some(v) = read_optional(&base.join("queue/wbt_lat_usec"), &mut self.buf)? {
            text.push_str(v.trim());
        }
        // What the device is, for the calm baselines kept across runs (`block_id`).
        super::block_id::push_identity(&mut text, dev, &base, &mut self.buf);
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
        if let Some(b) = &mut self.baselines {
            b.keep(learned, now_s);
        }
    }

    fn refresh_soon(&mut self) {
        FsSource::refresh_soon(self);
    }

    fn want(&mut self, wants: &Wants) {
        self.wants.clone_from(wants);
        // Armed at once, so that the next sample already carries the latency.
        if let Some(t) = &mut self.tracers {
            t.want_latency(&wants.latency);
        }
    }
}

/// Sets `files[name]` to `text`, reusing the entry's key and buffer when it is there.
pub(super) fn put(files: &mut BTreeMap<String, String>, name: &str, text: Cow<'_, str>) {
    match files.get_mut(name) {
        Some(v) => {
            v.clear();
            v.push_str(&text);
        }
        None => {
            files.insert(name.to_owned(), text.into_owned());
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
