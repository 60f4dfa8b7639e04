//! One live read as an ordered list of collectors (as bottom's `DataCollector` harvests what
//! its widgets want): `FsSource::read` hands each the pipeline's wants, the sample's time and
//! whether this is a slow refresh, and each writes its raw text into the sample.
//!
//! Owns: the `Collect` trait, the `Pass` a read hands its collectors, and the collectors that
//! wrap another module's reader (the ext4 journals, the cgroup tree, the taskstats exits, the
//! process walker, the tracers). Must not touch: how each reads (its own module), the held
//! files, the diskstats lines and the slow files (`source::fs`), parsing.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;

use super::read::read_optional;
use crate::Result;
use crate::sample::{Wants, names};

/// What one read hands its collectors, and what they give back: the sample's files and the
/// names set this time (`fresh`; a file left unset is absent from the sample).
pub(super) struct Pass<'a, 'f> {
    /// The sample's files, reused from a recycled sample.
    pub files: &'f mut BTreeMap<String, String>,
    /// The names set in this read.
    pub fresh: Vec<&'a str>,
    /// The read buffer the collectors share.
    pub buf: &'f mut Vec<u8>,
    /// The sample's monotonic time, and its wall time (ms since the epoch).
    pub mono_ns: u64,
    pub wall_ms: i64,
    /// This read re-reads the slow set (`FsSource::refresh_soon`, `SLOW_REFRESH_TICKS`).
    pub refresh: bool,
    /// What the pipeline wants collected (`Source::want`).
    pub wants: &'f Wants,
}

impl<'a> Pass<'a, '_> {
    /// Sets file `name` to `text` for this sample.
    pub fn put(&mut self, name: &'a str, text: Cow<'_, str>) {
        super::put(self.files, name, text);
        self.fresh.push(name);
    }

    /// This read's text of `name`, when a collector before set it.
    pub fn fresh(&self, name: &str) -> Option<&str> {
        fresh_text(self.files, &self.fresh, name)
    }
}

/// `files[name]` when `fresh` says it was set in this read.
pub(super) fn fresh_text<'f>(
    files: &'f BTreeMap<String, String>,
    fresh: &[&str],
    name: &str,
) -> Option<&'f str> {
    files
        .get(name)
        .filter(|_| fresh.contains(&name))
        .map(String::as_str)
}

/// Reads each `(sample name, path)` of `files` into `pass`; a file absent (removed since it
/// was listed, or not on this kernel) or unreadable is left out this tick. The per-tick half of
/// the collectors that list their files on the slow refresh (`source::zram`, `source::nodes`).
pub(super) fn put_listed<'a>(files: &'a [(String, PathBuf)], pass: &mut Pass<'a, '_>) {
    for (name, path) in files {
        if let Ok(Some(t)) = read_optional(path, pass.buf) {
            pass.put(name, Cow::Owned(t));
        }
    }
}

/// This read's text of `name` when this is a slow refresh, owned (the listing half of
/// `put_listed`'s collectors).
pub(super) fn refresh_text(pass: &Pass<'_, '_>, name: &str) -> Option<String> {
    pass.refresh
        .then(|| pass.fresh(name).map(str::to_owned))
        .flatten()
}

/// One step of a live read.
pub(super) trait Collect<'a> {
    /// Reads what this collector owns into `pass` (names borrowed from `self` live as long as
    /// the pass). An error fails the whole sample.
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()>;
}

/// The ext4 journals' `info` (`/proc/fs/jbd2/*/info`), listed on the slow refresh and opened
/// and read every tick (2.6 µs of kernel time each here), with their sample names. Not held
/// open: the kernel copies the journal's counts into the file when it is opened
/// (`jbd2_seq_info_open`), so a held file would show the same counts for ever.
pub(super) struct Journals {
    dir: PathBuf,
    list: Vec<(String, PathBuf)>,
}

impl Journals {
    pub fn new(proc_root: &std::path::Path) -> Self {
        Self {
            dir: proc_root.join("fs/jbd2"),
            list: Vec::new(),
        }
    }

    /// Lists `/proc/fs/jbd2` (on the slow refresh): a journal mounted or unmounted since is
    /// picked up or dropped.
    fn list(&mut self) {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
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
        if now.iter().eq(self.list.iter().map(|(n, _)| n)) {
            return;
        }
        self.list = names
            .iter()
            .zip(now)
            .map(|(j, name)| (name, self.dir.join(j).join("info")))
            .collect();
    }
}

impl<'a> Collect<'a> for Journals {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if pass.refresh {
            self.list();
        }
        for (name, path) in &self.list {
            // Unmounted since the listing (absent) or unreadable: left out this tick.
            if let Ok(Some(t)) = read_optional(path, pass.buf) {
                pass.put(name, Cow::Owned(t));
            }
        }
        Ok(())
    }
}

/// The cgroup v2 tree, BDI limits and wb_stats (`source::cgroups`), from this read's vmstat
/// and diskstats.
impl<'a> Collect<'a> for super::cgroups::Cgroups {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        let vmstat = pass.fresh(names::VMSTAT);
        let diskstats = pass.fresh(names::DISKSTATS);
        self.read(
            pass.refresh,
            pass.wants.cgroups_every_tick,
            vmstat,
            diskstats,
        );
        let this: &'a Self = self;
        if let Some(text) = this.bdi_text() {
            pass.put(names::BDI_LIMITS, Cow::Borrowed(text));
        }
        for (name, text) in &this.out {
            pass.put(name, Cow::Borrowed(text));
        }
        Ok(())
    }
}

/// The taskstats exit listener, for the live system only (`FsSource::with_tracing`).
/// Drained before the walk: every exit a walk's parent could have reaped is in this sample or
/// an earlier one (`model::exits`). Listening at every sample, walk or not: the walk starts
/// a sample after the load that asks for it, and a burst of short writers on a quiet machine
/// (20 dd of 0.1 s each) is over by then (issue 50).
pub(super) struct Exits(pub Option<super::taskstats::Listener>);

impl<'a> Collect<'a> for Exits {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if let Some(l) = &mut self.0 {
            l.sample(true, pass.mono_ns);
            if !l.out.is_empty() {
                pass.put(names::EXITS, Cow::Borrowed(&l.out));
            }
        }
        Ok(())
    }
}

/// Delay accounting of the processes `Wants::delays` names (`source::task_delays`, spec
/// §13.1), for the live system only (`FsSource::with_tracing`).
pub(super) struct TaskDelays(pub Option<super::task_delays::Querier>);

impl<'a> Collect<'a> for TaskDelays {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if let Some(q) = &mut self.0 {
            q.sample(&pass.wants.delays, pass.mono_ns);
            if !q.out.is_empty() {
                pass.put(names::TASK_DELAYS, Cow::Borrowed(&q.out));
            }
        }
        Ok(())
    }
}

/// The disks' calm baselines kept across runs (`source::baselines`): their stored text in
/// every sample (`names::BASELINES`), read again when another instance wrote it, so a
/// recording judges as the live run did.
pub(super) struct Baselines(pub Option<super::baselines::Store>);

impl<'a> Collect<'a> for Baselines {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if let Some(b) = self.0.as_mut() {
            b.refresh();
        }
        if let Some(text) = self.0.as_ref().and_then(|b| b.text()) {
            pass.put(names::BASELINES, Cow::Borrowed(text));
        }
        Ok(())
    }
}

/// The process walk, done while `Wants::procs` asks (spec §11).
impl<'a> Collect<'a> for super::procs::Walker {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        match &pass.wants.procs {
            Some(scope) => {
                if self
                    .maybe_walk_at(pass.mono_ns, pass.wall_ms, scope)
                    .is_some()
                {
                    let this: &'a Self = self;
                    pass.put(names::PROCS, Cow::Borrowed(this.walked()));
                    if let Some(w) = this.writer_files() {
                        pass.put(names::WRITER_FILES, Cow::Borrowed(w));
                    }
                }
            }
            None => self.reset(),
        }
        Ok(())
    }
}

/// The tracers (`source::tracers`), for the live system only (`FsSource::with_tracing`).
pub(super) struct Tracing {
    pub tracers: Option<super::tracers::Tracers>,
    /// The proc root, for the tracers' mountinfo and own tasks.
    pub proc_root: PathBuf,
}

impl<'a> Collect<'a> for Tracing {
    fn collect(&'a mut self, pass: &mut Pass<'a, '_>) -> Result<()> {
        if let Some(t) = &mut self.tracers {
            t.sample(
                pass.wants,
                pass.buf,
                &self.proc_root,
                pass.files,
                &mut pass.fresh,
            );
        }
        Ok(())
    }
}
