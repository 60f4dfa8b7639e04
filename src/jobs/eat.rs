//! `pagewatch eat SIZE`: the memory eater, run as a child of pagewatch or on its own.
//!
//! Owns the eater process itself: it ties itself to its parent (PR_SET_PDEATHSIG SIGKILL, then
//! checks getppid() against `PAGEWATCH_PARENT_PID` when given), volunteers to the OOM killer
//! (oom_score_adj 1000), names itself `pagewatch-eat`, refuses targets above MemAvailable − margin
//! unless --force (rules in `eat_plan.rs`), then allocates and touches memory one step at a time,
//! re-reading MemAvailable before each step, and holds it until released.
//!
//! Release: SIGTERM, SIGINT or SIGHUP always; end of stdin too when stdin is a pipe, socket or
//! terminal (Ctrl-D). When stdin is /dev/null or a regular file it is ignored, and only a signal
//! releases. Output: when stdout is a terminal, one human line per step; otherwise one JSON
//! `EatLine` per step, which `eater.rs` parses. Errors (refusals) go to stderr with exit code 1.
//! Must not touch: files other than its own /proc/self entries and /proc/meminfo.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::FileTypeExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use rustix::process::{Pid, Signal, getppid, set_parent_process_death_signal};

use super::eat_plan::{
    EatLine, EatState, MAX_STEPS, check_step, check_target, effective_step, floor,
};
use super::size::parse_size;

/// Environment variable through which the parent passes its pid, so the eater can check it
/// was not orphaned before PR_SET_PDEATHSIG took effect.
pub use crate::child::PARENT_ENV as PARENT_PID_ENV;

/// Set in `why` when stdin reached its end (signals store their own number, all below 100).
const STDIN_CLOSED: usize = 1000;

/// Runs the eater until released. Errors (refusals) are printed as one line on stderr, without
/// a backtrace even when RUST_BACKTRACE is set, and exit with code 1: the parent shows that
/// last line as the reason.
pub fn run(size: &str, step: &str, force: bool) -> anyhow::Result<()> {
    if let Err(e) = eat(size, step, force) {
        eprintln!("pagewatch eat: {e:#}");
        std::process::exit(1);
    }
    Ok(())
}

fn eat(size: &str, step: &str, force: bool) -> anyhow::Result<()> {
    tie_to_parent()?;
    std::fs::write("/proc/self/oom_score_adj", "1000")
        .context("cannot set /proc/self/oom_score_adj to 1000; not eating without it")?;
    // Only cosmetic (ps, top): a failure changes nothing else.
    let _ = std::fs::write("/proc/self/comm", "pagewatch-eat");

    let (total, available) = mem()?;
    let target = parse_size(size, total).map_err(|e| anyhow::anyhow!("SIZE: {e}"))?;
    let asked = parse_size(step, total).map_err(|e| anyhow::anyhow!("--step: {e}"))?;
    let step = effective_step(asked, target);
    if step != asked {
        eprintln!(
            "pagewatch eat: step raised to {step} bytes (at most {MAX_STEPS} steps, whole pages)"
        );
    }
    check_target(target, total, available, force).map_err(anyhow::Error::msg)?;
    let floor = floor(total, force);

    let why = Arc::new(AtomicUsize::new(0));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register_usize(sig, Arc::clone(&why), sig as usize)
            .context("installing signal handlers")?;
    }
    if stdin_releases() {
        let why = Arc::clone(&why);
        std::thread::spawn(move || {
            // What is written is ignored; the end of input is the release.
            let mut buf = [0u8; 512];
            let mut stdin = std::io::stdin().lock();
            while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
            let _ = why.compare_exchange(0, STDIN_CLOSED, Ordering::SeqCst, Ordering::SeqCst);
        });
    }

    let mut out = Out::new();
    let mut held: Vec<Vec<u8>> = Vec::new();
    let mut touched = 0u64;
    let mut aborted = None;
    while touched < target && why.load(Ordering::SeqCst) == 0 {
        let n = step.min(target - touched);
        let (_, available) = mem()?;
        if let Err(reason) = check_step(n, available, floor, force) {
            aborted = Some(reason);
            break;
        }
        held.push(touch(n)?);
        touched += n;
        if touched < target {
            out.line(EatState::Ramping, touched, target, None);
        }
    }
    if why.load(Ordering::SeqCst) == 0 {
        match aborted {
            Some(r) => out.line(EatState::Aborted, touched, target, Some(r)),
            None => out.line(EatState::Holding, touched, target, None),
        }
    }
    while why.load(Ordering::SeqCst) == 0 {
        std::thread::sleep(Duration::from_millis(50));
    }
    let reason = match why.load(Ordering::SeqCst) {
        STDIN_CLOSED => "stdin closed".to_owned(),
        s => format!("signal {}", signal_name(s)),
    };
    out.line(EatState::Released, touched, target, Some(reason));
    drop(held);
    Ok(())
}

/// PR_SET_PDEATHSIG SIGKILL, then make sure the parent did not die before that took effect.
fn tie_to_parent() -> anyhow::Result<()> {
    set_parent_process_death_signal(Some(Signal::KILL))
        .context("setting the parent-death signal")?;
    let Ok(want) = std::env::var(PARENT_PID_ENV) else {
        return Ok(());
    };
    let want: i32 = want
        .parse()
        .with_context(|| format!("{PARENT_PID_ENV}={want:?} is not a pid"))?;
    let have = Pid::as_raw(getppid());
    if have != want {
        bail!("parent {want} is gone (parent is now {have}); not eating");
    }
    Ok(())
}

/// (MemTotal, MemAvailable) in bytes, from /proc/meminfo (`parse::meminfo`): the eater's
/// own check, and the playbook's preflight and phase table (`shell::preflight`, `headless`).
pub fn mem() -> anyhow::Result<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?;
    let m = crate::parse::meminfo::parse(&text)?;
    let avail = m
        .mem_available
        .context("/proc/meminfo has no MemAvailable (kernel older than 3.14)")?;
    Ok((m.mem_total * 1024, avail * 1024))
}

/// A non-zero pattern: a zero fill of fresh memory could be turned into calloc and leave the
/// pages unmapped.
static FILL: [u8; 64 << 10] = [0xa5; 64 << 10];

/// Allocates `n` bytes and writes a non-zero value into every one, so every page is resident.
/// memcpy from `FILL`: fast even in a debug build, and an allocation failure is an error here
/// rather than an abort.
fn touch(n: u64) -> anyhow::Result<Vec<u8>> {
    let n = usize::try_from(n).context("step larger than the address space")?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).with_context(|| {
        format!(
            "allocating {n} bytes failed (vm.overcommit_memory 2, or a cgroup memory.max reached?)"
        )
    })?;
    while v.len() < n {
        let k = FILL.len().min(n - v.len());
        v.extend_from_slice(&FILL[..k]);
    }
    std::hint::black_box(&mut v);
    Ok(v)
}

/// Whether the end of stdin should release: pipes, sockets and terminals, not /dev/null or files.
fn stdin_releases() -> bool {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return true;
    }
    let Ok(fd) = stdin.as_fd().try_clone_to_owned() else {
        return false;
    };
    File::from(fd).metadata().is_ok_and(|m| {
        let t = m.file_type();
        t.is_fifo() || t.is_socket()
    })
}

fn signal_name(s: usize) -> String {
    match i32::try_from(s) {
        Ok(signal_hook::consts::SIGTERM) => "SIGTERM".into(),
        Ok(signal_hook::consts::SIGINT) => "SIGINT".into(),
        Ok(signal_hook::consts::SIGHUP) => "SIGHUP".into(),
        _ => s.to_string(),
    }
}

/// Progress output: human lines for a terminal, JSON lines for a pipe.
struct Out {
    human: bool,
}

impl Out {
    fn new() -> Self {
        Out {
            human: std::io::stdout().is_terminal(),
        }
    }

    fn line(&mut self, state: EatState, touched: u64, target: u64, reason: Option<String>) {
        let l = EatLine {
            state,
            touched,
            target,
            reason,
        };
        let text = if self.human {
            l.human()
        } else {
            serde_json::to_string(&l).unwrap_or_default()
        };
        let mut o = std::io::stdout().lock();
        // A parent that stopped reading is not a reason to stop holding.
        let _ = writeln!(o, "{text}");
        let _ = o.flush();
    }
}
