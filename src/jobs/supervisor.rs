//! The edge that carries out the app's experiment effects: it starts and stops memory eaters
//! and fio, drops caches, and looks for fio processes pagewatch did not start, reporting
//! everything back as messages.
//!
//! Owns: the job handles (children die with pagewatch: eaters by their parent-death signal,
//! fio through its `__guard`), and the threads for slow work (sync + drop, /proc scans).
//! Must not touch: app state (it only sends `JobReport`s, as whatever message type the channel
//! carries), the terminal.
//! Start it on the main thread: a child's parent-death signal fires when the thread that
//! spawned it exits.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use crate::jobs::eat_plan::EatState;
use crate::jobs::eater::{EatUpdate, Eater};
use crate::jobs::file_pace::Pacer;
use crate::jobs::fio::FioFigures;
use crate::jobs::fio::{FioDir, FioJob, FioLive, FioSpec, FioUpdate};
use crate::jobs::foreign::FioPairing;
use crate::jobs::protocol::{JobCmd, JobMsg, JobReport};

/// Where fio's test files go.
#[derive(Debug, Clone, Default)]
pub struct FioSettings {
    /// `--fio-dir`; `None`: a pagewatch directory under $TMPDIR.
    pub dir: Option<PathBuf>,
    /// `--keep-fio-files`.
    pub keep: bool,
}

/// Performs job commands; reports go out on a channel of `M`s (the app's `Msg`, or
/// `JobReport` itself).
pub struct Supervisor<M: From<JobReport> + Send + 'static> {
    exe: PathBuf,
    tx: Sender<M>,
    eaters: BTreeMap<u32, Eater>,
    fio: BTreeMap<u32, FioJob>,
    fio_dir: Option<FioDir>,
    fio_settings: FioSettings,
    /// Pids of fio runs pagewatch started (their guards), hidden from the foreign scan.
    own_pids: Arc<Mutex<BTreeSet<u32>>>,
    pairing: Arc<Mutex<FioPairing>>,
    scanning: Arc<AtomicBool>,
    /// The data files' last page-cache measurements, shared by the scan thread and the detail
    /// view's measurements (`file_pace`).
    files: Arc<Mutex<Pacer>>,
}

impl<M: From<JobReport> + Send + 'static> Supervisor<M> {
    /// A supervisor that starts children from `exe` (pagewatch's own binary) and reports on `tx`.
    #[must_use]
    pub fn new(exe: PathBuf, tx: Sender<M>, fio: FioSettings) -> Self {
        Self {
            exe,
            tx,
            eaters: BTreeMap::new(),
            fio: BTreeMap::new(),
            fio_dir: None,
            fio_settings: fio,
            own_pids: Arc::default(),
            pairing: Arc::default(),
            scanning: Arc::default(),
            files: Arc::default(),
        }
    }

    /// Carries out one job command (`Tune` is the tuner's: ignored here).
    pub fn perform(&mut self, e: &JobCmd) {
        match e {
            JobCmd::StartEat { id, size, force } => self.eat(*id, size, *force),
            JobCmd::StartFio { id, spec } => self.fio(*id, spec),
            JobCmd::StopJob(id) => self.stop(*id),
            JobCmd::DropCaches(level) => self.drop_caches(*level),
            JobCmd::ScanFio(walked) => self.scan_foreign(walked.as_deref()),
            JobCmd::ReadStack(pid) => {
                let text = match crate::source::procs::kernel_stack(Path::new("/proc"), *pid) {
                    Ok(t) if t.trim().is_empty() => {
                        "empty: the task is running, not waiting".into()
                    }
                    Ok(t) => t,
                    Err(why) => why,
                };
                let _ = self.tx.send(JobReport::Stack { pid: *pid, text }.into());
            }
            JobCmd::ReadCmdlines(pids) => {
                let root = Path::new("/proc");
                let lines = pids
                    .iter()
                    .filter_map(|&p| Some((p, crate::source::procs::cmdline(root, p)?)))
                    .collect();
                let _ = self.tx.send(JobReport::Cmdlines(lines).into());
            }
            JobCmd::MeasureFiles { id, paths } => {
                let files = crate::jobs::job_files::measure_paths(paths, &self.files);
                let _ = self.tx.send(JobReport::Files { id: *id, files }.into());
            }
            JobCmd::Tune { .. } => {}
        }
    }

    fn send(&self, m: JobMsg) {
        let _ = self.tx.send(JobReport::Job(m).into());
    }

    fn eat(&mut self, id: u32, size: &str, force: bool) {
        let tx = self.tx.clone();
        let notify = Arc::new(move |u: EatUpdate| {
            for m in eat_msgs(id, u) {
                let _ = tx.send(JobReport::Job(m).into());
            }
        });
        match Eater::spawn(&self.exe, size, force, notify) {
            Ok(eater) => {
                let mut argv = vec![self.exe.display().to_string(), "eat".into(), size.into()];
                if force {
                    argv.push("--force".into());
                }
                self.send(JobMsg::Started {
                    id,
                    pid: eater.pid(),
                    argv,
                });
                self.eaters.insert(id, eater);
            }
            Err(e) => self.send(JobMsg::Ended {
                id,
                how: format!("failed: {e:#}"),
                failed: true,
                result: None,
            }),
        }
    }

    fn stop(&mut self, id: u32) {
        if let Some(e) = self.eaters.remove(&id) {
            e.release();
        }
        if let Some(f) = self.fio.get(&id) {
            f.stop();
        }
    }

    fn fail(&self, id: u32, how: String) {
        self.send(JobMsg::Ended {
            id,
            how,
            failed: true,
            result: None,
        });
    }

    fn fio(&mut self, id: u32, spec: &str) {
        let spec = match FioSpec::parse(spec) {
            Ok(s) => s,
            Err(e) => return self.fail(id, format!("bad fio spec: {e}")),
        };
        if self.fio_dir.is_none() {
            match FioDir::open(self.fio_settings.dir.as_deref(), self.fio_settings.keep) {
                Ok(mut d) => {
                    if let Err(e) = d.start_cleanup_guard(&self.exe) {
                        let _ = self.tx.send(JobReport::Notice(format!("{e:#}")).into());
                    }
                    if let Some(w) = d.warning() {
                        let _ = self.tx.send(JobReport::Notice(w.to_owned()).into());
                    }
                    self.fio_dir = Some(d);
                }
                Err(e) => return self.fail(id, format!("fio directory: {e:#}")),
            }
        }
        let Some(dir) = self.fio_dir.as_mut() else {
            return;
        };
        let argv_cell: Arc<Mutex<Vec<String>>> = Arc::default();
        let (tx, cell, own) = (
            self.tx.clone(),
            Arc::clone(&argv_cell),
            Arc::clone(&self.own_pids),
        );
        let notify = Arc::new(move |u: FioUpdate| {
            if let FioUpdate::Started { pid } | FioUpdate::LayoutStarted { pid } = &u
                && let Ok(mut o) = own.lock()
            {
                o.insert(*pid);
            }
            let argv = || {
                // start() fills the cell as soon as it returns, before fio can have started.
                for _ in 0..100 {
                    if let Ok(a) = cell.lock()
                        && !a.is_empty()
                    {
                        return a.clone();
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Vec::new()
            };
            for m in fio_msgs(id, u, argv) {
                let _ = tx.send(JobReport::Job(m).into());
            }
        });
        match FioJob::start(&self.exe, &spec, dir, notify) {
            Ok(job) => {
                if let Ok(mut a) = argv_cell.lock() {
                    *a = job.argv().to_vec();
                }
                self.fio.insert(id, job);
            }
            Err(e) => self.fail(id, format!("{e:#}")),
        }
    }

    fn drop_caches(&self, level: u8) {
        let tx = self.tx.clone();
        std::thread::spawn(move || {
            let msg = match crate::jobs::dropcache::drop_caches(level) {
                Ok(took) => JobReport::Dropped {
                    level,
                    took_ms: took.as_millis() as u64,
                },
                Err(e) => JobReport::Notice(format!("drop caches failed: {e}")),
            };
            let _ = tx.send(msg.into());
        });
    }

    /// Scans /proc for fio processes pagewatch did not start, on a thread; one scan at a time.
    /// `walked`: the fio pids of a recent walk over every process (only they are read); an
    /// empty list needs no read and no thread.
    fn scan_foreign(&self, walked: Option<&[u32]>) {
        if self.scanning.swap(true, Ordering::AcqRel) {
            return;
        }
        if walked.is_some_and(<[u32]>::is_empty) {
            if let Ok(mut p) = self.pairing.lock() {
                p.update(&[], 0);
            }
            let _ = self.tx.send(JobReport::Foreign(Vec::new()).into());
            self.scanning.store(false, Ordering::Release);
            return;
        }
        let walked = walked.map(<[u32]>::to_vec);
        let (tx, own, pairing, busy, pacer) = (
            self.tx.clone(),
            Arc::clone(&self.own_pids),
            Arc::clone(&self.pairing),
            Arc::clone(&self.scanning),
            Arc::clone(&self.files),
        );
        std::thread::spawn(move || {
            let exclude = own.lock().map(|s| s.clone()).unwrap_or_default();
            let proc_root = std::path::Path::new("/proc");
            let found = match walked {
                Some(pids) => crate::jobs::foreign::scan_pids(proc_root, pids, &exclude),
                None => crate::jobs::foreign::scan(proc_root, &exclude),
            };
            let now = crate::source::SystemClock;
            let mono = crate::source::Clock::mono_ns(&now);
            let rates = pairing
                .lock()
                .map(|mut p| p.update(&found, mono))
                .unwrap_or_default();
            let views = found
                .iter()
                .map(|f| {
                    let r = rates.iter().find(|r| r.pid == f.pid).and_then(|r| r.total);
                    crate::jobs::job_files::foreign_view(f, r, &pacer)
                })
                .collect();
            let _ = tx.send(JobReport::Foreign(views).into());
            busy.store(false, Ordering::Release);
        });
    }

    /// Releases every eater (and stops fio); called when pagewatch quits.
    pub fn shutdown(&mut self) {
        for (_, e) in std::mem::take(&mut self.eaters) {
            e.release();
        }
        // Dropping a job kills fio and its workers; dropping the directory removes the test
        // files unless --keep-fio-files.
        self.fio.clear();
        drop(self.fio_dir.take());
    }
}

impl<M: From<JobReport> + Send + 'static> Drop for Supervisor<M> {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// An eater's report as job messages.
fn eat_msgs(id: u32, u: EatUpdate) -> Vec<JobMsg> {
    match u {
        EatUpdate::Progress {
            touched,
            target,
            state,
            reason,
        } => {
            let mut out = vec![JobMsg::Eat {
                id,
                touched,
                target,
                holding: matches!(state, EatState::Holding | EatState::Aborted),
            }];
            if let (EatState::Aborted, Some(r)) = (state, reason) {
                out.push(JobMsg::Note {
                    id,
                    text: format!("stopped growing: {r}"),
                });
            }
            out
        }
        EatUpdate::Exited { code, reason, .. } => vec![JobMsg::Ended {
            id,
            failed: code.is_some_and(|c| c != 0),
            how: reason,
            result: None,
        }],
    }
}

/// A fio job's report as job messages; `argv` gives the job's exact command line.
fn fio_msgs(id: u32, u: FioUpdate, argv: impl Fn() -> Vec<String>) -> Vec<JobMsg> {
    match u {
        FioUpdate::Preparing { file, .. } => vec![
            JobMsg::Preparing { id },
            JobMsg::Note {
                id,
                text: format!("laying out {}", file.display()),
            },
        ],
        FioUpdate::LayoutStarted { .. } => Vec::new(),
        FioUpdate::Started { pid } => vec![JobMsg::Started {
            id,
            pid,
            argv: argv(),
        }],
        FioUpdate::Message(text) => vec![JobMsg::Note { id, text }],
        FioUpdate::Live(live) => vec![JobMsg::Fio {
            id,
            figures: figures(&live),
        }],
        FioUpdate::Finished { summary, exit, .. } => vec![JobMsg::Ended {
            id,
            how: match exit {
                0 => "finished".to_owned(),
                128 => "stopped".to_owned(),
                e => format!("ended (exit {e})"),
            },
            failed: false,
            result: Some(summary),
        }],
        FioUpdate::Failed {
            reason,
            stderr_tail,
            summary,
        } => {
            let last = stderr_tail.lines().last().unwrap_or_default();
            let how = if last.is_empty() || reason.contains(last) {
                format!("failed: {reason}")
            } else {
                format!("failed: {reason} ({last})")
            };
            vec![JobMsg::Ended {
                id,
                how,
                failed: true,
                result: summary,
            }]
        }
    }
}

/// fio's interval figures summed over its jobs: rates add up, mean latency is weighted by
/// IOPS, p99 is the worst job's.
#[must_use]
pub fn figures(live: &FioLive) -> FioFigures {
    let mut f = FioFigures::default();
    let (mut rw, mut ww, mut sw) = (0.0, 0.0, 0.0);
    for j in &live.jobs {
        f.s_iops += j.sync.iops;
        if let Some(m) = j.sync.clat_mean_us {
            f.s_mean_us += m * j.sync.iops;
            sw += j.sync.iops;
        }
        f.s_p99_us = f.s_p99_us.max(j.sync.clat_p99_us.unwrap_or(0.0));
        f.r_iops += j.read.iops;
        f.r_bw += j.read.bw_bytes_s;
        f.w_iops += j.write.iops;
        f.w_bw += j.write.bw_bytes_s;
        if let Some(m) = j.read.clat_mean_us {
            f.r_clat_us += m * j.read.iops;
            rw += j.read.iops;
        }
        if let Some(m) = j.write.clat_mean_us {
            f.w_clat_us += m * j.write.iops;
            ww += j.write.iops;
        }
        f.r_p99_us = f.r_p99_us.max(j.read.clat_p99_us.unwrap_or(0.0));
        f.w_p99_us = f.w_p99_us.max(j.write.clat_p99_us.unwrap_or(0.0));
    }
    f.r_clat_us = if rw > 0.0 { f.r_clat_us / rw } else { 0.0 };
    f.w_clat_us = if ww > 0.0 { f.w_clat_us / ww } else { 0.0 };
    f.s_mean_us = if sw > 0.0 { f.s_mean_us / sw } else { 0.0 };
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::fio::{DirLive, JobLive};

    #[test]
    fn figures_sum_rates_and_weight_latency() {
        let dir = |iops: f64, clat: f64, p99: f64| DirLive {
            iops,
            bw_bytes_s: iops * 8192.0,
            clat_mean_us: Some(clat),
            clat_p99_us: Some(p99),
            p99_cumulative: false,
        };
        let live = FioLive {
            timestamp_ms: 0,
            interval_ms: 1000,
            jobs: vec![
                JobLive {
                    name: "a".into(),
                    since_start: false,
                    read: dir(100.0, 10.0, 50.0),
                    write: DirLive::default(),
                    sync: DirLive::default(),
                },
                JobLive {
                    name: "b".into(),
                    since_start: false,
                    read: dir(300.0, 30.0, 40.0),
                    write: DirLive::default(),
                    sync: DirLive::default(),
                },
            ],
        };
        let f = figures(&live);
        assert!((f.r_iops - 400.0).abs() < 1e-9);
        assert!((f.r_bw - 400.0 * 8192.0).abs() < 1e-6);
        // (100*10 + 300*30) / 400 = 25
        assert!((f.r_clat_us - 25.0).abs() < 1e-9);
        assert!((f.r_p99_us - 50.0).abs() < 1e-9);
        assert!(f.w_iops.abs() < 1e-12 && f.w_clat_us.abs() < 1e-12);
        assert!(f.s_iops.abs() < 1e-12 && f.s_mean_us.abs() < 1e-12);
    }

    #[test]
    fn sync_calls_sum_their_rates_and_weight_their_latency() {
        // Two fsync=1 writers: 1,000 calls/s at 200 µs (p99 900) and 3,000 at 100 µs (p99
        // 2,900). Mean (1000*200 + 3000*100) / 4000 = 125 µs; p99 the worse job's.
        let sync = |iops: f64, mean: f64, p99: f64| DirLive {
            iops,
            bw_bytes_s: 0.0,
            clat_mean_us: Some(mean),
            clat_p99_us: Some(p99),
            p99_cumulative: false,
        };
        let job = |name: &str, s: DirLive| JobLive {
            name: name.into(),
            since_start: false,
            read: DirLive::default(),
            write: DirLive {
                iops: s.iops,
                bw_bytes_s: s.iops * 16384.0,
                clat_mean_us: Some(4.0),
                clat_p99_us: Some(9.0),
                p99_cumulative: false,
            },
            sync: s,
        };
        let live = FioLive {
            timestamp_ms: 0,
            interval_ms: 1000,
            jobs: vec![
                job("a", sync(1000.0, 200.0, 900.0)),
                job("b", sync(3000.0, 100.0, 2900.0)),
            ],
        };
        let f = figures(&live);
        assert!((f.s_iops - 4000.0).abs() < 1e-9);
        assert!((f.s_mean_us - 125.0).abs() < 1e-9, "{}", f.s_mean_us);
        assert!((f.s_p99_us - 2900.0).abs() < 1e-9);
        assert!(
            (f.w_clat_us - 4.0).abs() < 1e-9,
            "the writes' own latency stays"
        );
    }
}
