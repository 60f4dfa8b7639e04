//! A fio job started from pagewatch: lay out the test file if needed, run the job, report live
//! figures and the final (or partial) result through a callback, stop it on request.
//!
//! Owns: the job's controller thread, its phases (prepare, run) and the verdict on how the run
//! ended (exit code, `jobs[].error`, "Aborting" messages, partial results). Must not touch: the
//! terminal or app state (it only calls `notify`), files other than through `FioDir`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Result;

use super::child::{self, Control};
use super::dir::{FioDir, OwnedFiles};
use super::live::{live, worth_rating};
use super::spec::{FioSpec, size_text};
use super::status::FioStatus;
use super::update::FioUpdate;
use super::verdict::{failed, problem, verdict};

/// How long fio gets to stop after SIGINT before its group is SIGKILLed.
pub const STOP_GRACE: Duration = Duration::from_secs(10);
/// How long the guard gets to kill fio's processes before pagewatch SIGKILLs its group.
const KILL_GRACE: Duration = Duration::from_secs(3);

/// Callback receiving a job's updates (called from the job's threads).
pub type Notify = Arc<dyn Fn(FioUpdate) + Send + Sync>;

/// A running (or finished) fio job. Dropping it kills fio's process group.
pub struct FioJob {
    argv: Vec<String>,
    prepare_argv: Option<Vec<String>>,
    file: PathBuf,
    control: Arc<Control>,
    thread: Option<JoinHandle<()>>,
}

impl FioJob {
    /// Starts `spec` in `dir` (its test file is created there if missing). `exe` is the
    /// pagewatch binary, run as `exe __guard -- fio ...`. Returns at once; the layout and the
    /// run happen on a thread that reports through `notify`.
    pub fn start(exe: &Path, spec: &FioSpec, dir: &mut FioDir, notify: Notify) -> Result<FioJob> {
        let fio = child::find_fio()?;
        let file = dir.file_for(spec.size)?;
        let owned = dir.owned_files();
        let have = owned.verify(&file)?;
        let with_fio = |args: Vec<String>| {
            std::iter::once(fio.display().to_string())
                .chain(args)
                .collect::<Vec<_>>()
        };
        let argv = with_fio(spec.args(&file));
        let prepare_argv = (have < spec.size).then(|| with_fio(spec.prepare_args(&file)));
        let control = Arc::new(Control::default());
        let plan = Plan {
            exe: exe.to_path_buf(),
            name: spec.preset.clone(),
            size: spec.size,
            file: file.clone(),
            owned,
            argv: argv.clone(),
            prepare_argv: prepare_argv.clone(),
        };
        let ctl = Arc::clone(&control);
        let thread = std::thread::Builder::new()
            .name(format!("fio-{}", spec.preset))
            .spawn(move || {
                let update = plan.execute(&ctl, &notify);
                ctl.set_done();
                notify(update);
            })?;
        Ok(FioJob {
            argv,
            prepare_argv,
            file,
            control,
            thread: Some(thread),
        })
    }

    /// The process group id of the fio running now (the guard's pid), if any.
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        self.control.pgid().and_then(|p| u32::try_from(p).ok())
    }

    /// The exact fio command line of the job (for the recording).
    #[must_use]
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// The layout command line, when the file had to be laid out first.
    #[must_use]
    pub fn prepare_argv(&self) -> Option<&[String]> {
        self.prepare_argv.as_deref()
    }

    /// The test file.
    #[must_use]
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// True once the final `Finished` or `Failed` was sent.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.control.is_done()
    }

    /// Stops the job: SIGINT to fio's group now (fio then prints its final result); after
    /// `STOP_GRACE` without an exit, the guard SIGKILLs fio and its workers (partial result).
    /// Does not block.
    pub fn stop(&self) {
        self.control.interrupt();
        let ctl = Arc::clone(&self.control);
        let _ = std::thread::Builder::new()
            .name("fio-stop".into())
            .spawn(move || {
                if !ctl.wait_done(STOP_GRACE) {
                    terminate(&ctl);
                }
            });
    }

    /// SIGKILLs fio and its workers now (the result will be partial). Does not block.
    pub fn kill_now(&self) {
        let ctl = Arc::clone(&self.control);
        let _ = std::thread::Builder::new()
            .name("fio-kill".into())
            .spawn(move || terminate(&ctl));
    }
}

/// Has the guard kill everything, then SIGKILLs the group itself if the guard did not finish.
fn terminate(ctl: &Control) {
    ctl.terminate();
    if !ctl.wait_done(KILL_GRACE) {
        ctl.kill_group();
    }
}

impl Drop for FioJob {
    fn drop(&mut self) {
        if !self.control.is_done() {
            self.control.terminate();
            if !self.control.wait_done(KILL_GRACE) {
                self.control.kill_group();
            }
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Plan {
    exe: PathBuf,
    name: String,
    size: u64,
    file: PathBuf,
    owned: OwnedFiles,
    argv: Vec<String>,
    prepare_argv: Option<Vec<String>>,
}

impl Plan {
    /// The test file's length while it is still the file pagewatch created (checked without
    /// following a symlink), or why not.
    fn check_file(&self) -> Result<u64, String> {
        self.owned
            .verify(&self.file)
            .map_err(|e| format!("{e:#}: stopped"))
    }

    fn execute(&self, control: &Control, notify: &Notify) -> FioUpdate {
        let message = |m: &str| notify(FioUpdate::Message(m.to_string()));
        if let Err(why) = self.check_file() {
            return failed(why, &[], None);
        }
        if let Some(prep) = &self.prepare_argv {
            notify(FioUpdate::Preparing {
                file: self.file.clone(),
                argv: prep.clone(),
            });
            let started = |pid| notify(FioUpdate::LayoutStarted { pid });
            let out = match child::run(&self.exe, prep, control, &started, &mut |_| {}, &message) {
                Ok(out) => out,
                Err(e) => return failed(format!("{e:#}"), &[], None),
            };
            if control.stopping() {
                return failed(
                    format!("stopped while laying out {}", self.file.display()),
                    &out.stderr,
                    None,
                );
            }
            // fio's layout unlinks the empty file and creates it anew.
            let len = match self.owned.adopt(&self.file).map_err(|e| format!("{e:#}")) {
                Ok(len) => len,
                Err(why) => return failed(why, &out.stderr, None),
            };
            if let Some(why) = problem(&out).or_else(|| {
                (len < self.size).then(|| format!("the file is {} long", size_text(len)))
            }) {
                return failed(
                    format!("laying out {} failed: {why}", self.file.display()),
                    &out.stderr,
                    None,
                );
            }
        }
        let mut prev: Option<FioStatus> = None;
        let mut on_status = |s: &FioStatus| {
            if worth_rating(prev.as_ref(), s) {
                notify(FioUpdate::Live(live(prev.as_ref(), s)));
                prev = Some(s.clone());
            }
        };
        let started = |pid| notify(FioUpdate::Started { pid });
        let out = match child::run(
            &self.exe,
            &self.argv,
            control,
            &started,
            &mut on_status,
            &message,
        ) {
            Ok(out) => out,
            Err(e) => return failed(format!("{e:#}"), &[], None),
        };
        if let Err(why) = self.check_file() {
            return failed(why, &out.stderr, None);
        }
        verdict(&self.name, &out, control.stopping(), control.killed())
    }
}
