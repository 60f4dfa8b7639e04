//! Changing kernel settings and always putting them back: the `Tuner`, the tuning lock and
//! the restore guard.
//!
//! Owns: the ledger of originals (first change of a setting wins: for a dirty threshold both
//! forms are one setting, `tune::slot`, so the state from before the first change of either
//! form is what comes back, whatever the order of the changes), the tuning lock
//! (`pagewatch-tune.lock` in `/run`, `lockfile.rs`) that every tuner holds while it has a
//! setting changed (a headless `pagewatch play`, the screen's playbooks and its `T` key: a
//! second refuses, naming the holder's pid), and the restore guard: `pagewatch __guard
//! --restore` (named `pagewatch-guard`) holds the originals pagewatch sends it on a pipe and
//! writes them back when the pipe closes with any still held (pagewatch was SIGKILLed). The
//! guard inherits the locked descriptor as its stdout, so the lock is free only once both
//! pagewatch and its guard are gone, that is after the settings are back. Must not touch:
//! files off the allowlist (`tune::allowed_path`, checked by the guard too).

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use anyhow::{Context, Result, bail};

use super::tune::{Knob, allowed_path, name_of, original, read, slot, write};

/// One change: the setting, its value before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The knob's name.
    pub setting: String,
    /// Before.
    pub old: String,
    /// After.
    pub new: String,
    /// True when this restored the original.
    pub restore: bool,
    /// What it leaves behind beyond its value (wbt set by hand: `wbt::restore_note`).
    pub note: Option<String>,
}

/// The originals held, in the order first changed: (file to write back, value). One entry
/// per setting (`tune::slot`); a later original for the same setting is ignored.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ledger(Vec<(PathBuf, String)>);

impl Ledger {
    /// True when the setting `path` belongs to is held.
    #[must_use]
    pub fn holds(&self, path: &Path) -> bool {
        let s = slot(path);
        self.0.iter().any(|(f, _)| slot(f) == s)
    }

    /// Holds `value` as the original of `file`'s setting, unless that setting is held
    /// already (the first original wins); true when held now.
    pub fn hold(&mut self, file: &Path, value: &str) -> bool {
        if self.holds(file) {
            return false;
        }
        self.0.push((file.to_path_buf(), value.to_owned()));
        true
    }

    /// Takes out the original of `path`'s setting.
    pub fn take(&mut self, path: &Path) -> Option<(PathBuf, String)> {
        let s = slot(path);
        let i = self.0.iter().position(|(f, _)| slot(f) == s)?;
        Some(self.0.remove(i))
    }

    /// Takes out the newest original.
    pub fn pop(&mut self) -> Option<(PathBuf, String)> {
        self.0.pop()
    }

    /// True when nothing is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The tuning lock and the restore guard, held while any setting is changed.
struct Claim {
    lock: File,
    guard: Option<(Child, ChildStdin)>,
}

/// Changes settings and puts them back: at `restore`/`restore_all`, on drop, and through the
/// guard process when pagewatch is killed. Holds the tuning lock while any setting is changed
/// (or while `claim`ed for a playbook).
pub struct Tuner {
    exe: Option<PathBuf>,
    lock_path: Option<PathBuf>,
    held: Ledger,
    claim: Option<Claim>,
    pinned: bool,
    /// `wbt_lat_usec` files a write of this tuner changed: the kernel holds their wbt as set
    /// by hand since (`wbt.rs`).
    wbt_written: std::collections::BTreeSet<PathBuf>,
}

impl Tuner {
    /// A tuner whose restore guard is `exe __guard --restore` (none when `exe` is `None`,
    /// for tests of the in-process path only), locking `/run/pagewatch-tune.lock`.
    #[must_use]
    pub fn new(exe: Option<PathBuf>) -> Tuner {
        Tuner {
            exe,
            lock_path: None,
            held: Ledger::default(),
            claim: None,
            pinned: false,
            wbt_written: std::collections::BTreeSet::new(),
        }
    }

    /// The same with another lock file (tests).
    #[must_use]
    pub fn with_lock(exe: Option<PathBuf>, lock: PathBuf) -> Tuner {
        let mut t = Tuner::new(exe);
        t.lock_path = Some(lock);
        t
    }

    /// The knob's current value.
    pub fn current(knob: &Knob) -> Result<String> {
        read(&knob.path)
    }

    /// Takes the tuning lock (and starts the guard) for a playbook that tunes, before it
    /// starts: kept until `unpin` or `restore_all`, even while nothing is changed.
    pub fn claim(&mut self) -> Result<()> {
        self.ensure_claim()?;
        self.pinned = true;
        Ok(())
    }

    /// Ends a `claim`: the lock is given back once nothing is changed.
    pub fn unpin(&mut self) {
        self.pinned = false;
        self.release_if_idle();
    }

    /// Writes `value` (already checked by `Setting::value`) to `knob`; the first change of a
    /// setting remembers its original, with the guard before anything is written.
    pub fn set(&mut self, knob: &Knob, value: &str) -> Result<Change> {
        if !rustix::process::geteuid().is_root() {
            bail!("tuning {} needs root", knob.name);
        }
        if !allowed_path(&knob.path) {
            bail!("{} is not on the tuning allowlist", knob.path.display());
        }
        self.ensure_claim()?;
        let r = self.set_claimed(knob, value);
        self.release_if_idle();
        r
    }

    fn set_claimed(&mut self, knob: &Knob, value: &str) -> Result<Change> {
        let old = read(&knob.path)?;
        if !self.held.holds(&knob.path) {
            let (file, orig) = original(&knob.path)?;
            self.tell_guard(&format!("hold\t{}\t{orig}\n", file.display()))?;
            self.held.hold(&file, &orig);
        }
        write(&knob.path, value)?;
        let new = read(&knob.path)?;
        if new != old && super::wbt::device_of(&knob.path).is_some() {
            self.wbt_written.insert(knob.path.clone());
        }
        Ok(Change {
            setting: knob.name.clone(),
            old,
            new,
            restore: false,
            note: None,
        })
    }

    /// Puts one setting back (for a dirty threshold, whichever form was in force before the
    /// first change of either); `None` when it was never changed.
    pub fn restore(&mut self, knob: &Knob) -> Option<Result<Change>> {
        let (file, orig) = self.held.take(&knob.path)?;
        let r = self.put_back(&file, &orig);
        self.release_if_idle();
        Some(r)
    }

    /// Puts every changed setting back, newest first, and gives back the lock.
    pub fn restore_all(&mut self) -> Vec<Result<Change>> {
        let mut out = Vec::new();
        while let Some((file, orig)) = self.held.pop() {
            out.push(self.put_back(&file, &orig));
        }
        self.unpin();
        out
    }

    /// The settings changed and not yet restored (by the file each is restored through).
    #[must_use]
    pub fn changed(&self) -> Vec<String> {
        self.held.0.iter().map(|(f, _)| name_of(f)).collect()
    }

    fn put_back(&mut self, file: &Path, orig: &str) -> Result<Change> {
        let old = read(file)?;
        write(file, orig)?;
        let _ = self.tell_guard(&format!("drop\t{}\n", file.display()));
        let new = read(file)?;
        let note = super::wbt::device_of(file).and_then(|dev| {
            let written = self.wbt_written.contains(file) || new != old;
            super::wbt::restore_note(dev, &super::wbt::state(dev), written)
        });
        Ok(Change {
            setting: name_of(file),
            old,
            new,
            restore: true,
            note,
        })
    }

    /// Takes the tuning lock and starts the guard, unless held already.
    fn ensure_claim(&mut self) -> Result<()> {
        if self.claim.is_some() {
            return Ok(());
        }
        let path = match &self.lock_path {
            Some(p) => p.clone(),
            None => super::lockfile::state_dir(|| super::fio::FioDir::check(None))?
                .join("pagewatch-tune.lock"),
        };
        let lock = super::lockfile::take(&path, |who| {
            format!(
                "another pagewatch, {who}, is tuning kernel settings ({}): one tuner at a \
                 time; it puts its settings back when it ends",
                path.display()
            )
        })?;
        let guard = match &self.exe {
            Some(exe) => Some(start_guard(exe, &lock)?),
            None => None,
        };
        if let Some((child, _)) = &guard {
            use std::os::unix::fs::FileExt;
            let who = format!(
                "pid {} (restore guard {})\n",
                std::process::id(),
                child.id()
            );
            let _ = lock
                .set_len(0)
                .and_then(|()| lock.write_all_at(who.as_bytes(), 0));
        }
        self.claim = Some(Claim { lock, guard });
        Ok(())
    }

    /// Gives back the lock and ends the guard when nothing is changed and no playbook holds
    /// the claim. Waits for the guard, whose copy of the lock ends with it.
    fn release_if_idle(&mut self) {
        if !self.held.is_empty() || self.pinned {
            return;
        }
        if let Some(c) = self.claim.take()
            && let Some((mut child, stdin)) = c.guard
        {
            drop(stdin);
            let _ = child.wait();
        }
    }

    /// Sends a line to the guard. A guard that is gone (killed by hand) is replaced, and told
    /// every original still held first.
    fn tell_guard(&mut self, line: &str) -> Result<()> {
        let Some(exe) = self.exe.clone() else {
            return Ok(());
        };
        let claim = self.claim.as_mut().context("tuning without the lock")?;
        if let Some((_, stdin)) = &mut claim.guard
            && stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.flush())
                .is_ok()
        {
            return Ok(());
        }
        if let Some((mut dead, _)) = claim.guard.take() {
            // Only a write to a guard that is gone fails; make sure, so no old guard restores.
            let _ = dead.kill();
            let _ = dead.wait();
        }
        let (child, mut stdin) = start_guard(&exe, &claim.lock)?;
        let mut text = String::new();
        for (f, v) in &self.held.0 {
            let _ = writeln!(text, "hold\t{}\t{v}", f.display());
        }
        text.push_str(line);
        let sent = stdin
            .write_all(text.as_bytes())
            .and_then(|()| stdin.flush())
            .context("telling the restore guard");
        claim.guard = Some((child, stdin));
        sent
    }
}

/// Starts `exe __guard --restore` in its own process group (terminal signals do not reach
/// it), with `lock` as its stdout: the guard writes nothing there, it only keeps the lock
/// until it exits.
fn start_guard(exe: &Path, lock: &File) -> Result<(Child, ChildStdin)> {
    let mut child = Command::new(exe)
        .args(["__guard", "--restore"])
        .stdin(Stdio::piped())
        .stdout(Stdio::from(
            lock.try_clone().context("sharing the tuning lock")?,
        ))
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .context("starting the restore guard")?;
    let stdin = child.stdin.take().context("restore guard without a pipe")?;
    Ok((child, stdin))
}

impl Drop for Tuner {
    fn drop(&mut self) {
        let _ = self.restore_all();
    }
}

/// `pagewatch __guard --restore`: reads `hold\tPATH\tVALUE` and `drop\tPATH` lines until the
/// pipe closes, then writes back every value still held, newest first. Only allowlisted
/// paths are accepted, and only the first original of a setting is kept (`Ledger`). Terminal
/// signals do not stop it before that. Its stdout is the tuning lock, never written.
pub fn run_restore_guard() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    use std::io::BufRead;
    for sig in [SIGHUP, SIGINT, SIGQUIT, SIGTERM] {
        signal_hook::flag::register(sig, std::sync::Arc::default())?;
    }
    let mut held = Ledger::default();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        guard_line(&mut held, &line);
    }
    while let Some((p, v)) = held.pop() {
        let _ = write(&p, &v);
    }
    Ok(())
}

/// One line of the guard's protocol applied to what it holds.
fn guard_line(held: &mut Ledger, line: &str) {
    let mut f = line.split('\t');
    match (f.next(), f.next(), f.next(), f.next()) {
        (Some("hold"), Some(p), Some(v), None) if allowed_path(Path::new(p)) => {
            held.hold(Path::new(p), v);
        }
        (Some("drop"), Some(p), None, None) => {
            held.take(Path::new(p));
        }
        _ => {}
    }
}

/// The event of a setting change.
#[must_use]
pub fn tune_event(c: &Change) -> crate::event::EventKind {
    crate::event::EventKind::Tune {
        setting: c.setting.clone(),
        old: c.old.clone(),
        new: c.new.clone(),
        restore: c.restore,
        note: c.note.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATIO: &str = "/proc/sys/vm/dirty_ratio";
    const BYTES: &str = "/proc/sys/vm/dirty_bytes";
    const BG_RATIO: &str = "/proc/sys/vm/dirty_background_ratio";
    const BG_BYTES: &str = "/proc/sys/vm/dirty_background_bytes";

    /// What the guard writes back, in order, after these lines.
    fn guard_restores(lines: &[&str]) -> Vec<(PathBuf, String)> {
        let mut held = Ledger::default();
        for l in lines {
            guard_line(&mut held, l);
        }
        std::iter::from_fn(|| held.pop()).collect()
    }

    #[test]
    fn the_guard_keeps_the_first_original_of_a_dirty_pair_in_any_order() {
        // ratio 20 in force; `tune ratio 5` holds (ratio, 20); `tune bytes 64M` then reads the
        // form now in force, (ratio, 5): that must not replace the first.
        let r = guard_restores(&[&format!("hold\t{RATIO}\t20"), &format!("hold\t{RATIO}\t5")]);
        assert_eq!(r, vec![(PathBuf::from(RATIO), "20".to_owned())]);
        // bytes in force first, then the ratio form: the bytes value comes back.
        let r = guard_restores(&[
            &format!("hold\t{BYTES}\t100000000"),
            &format!("hold\t{RATIO}\t5"),
        ]);
        assert_eq!(r, vec![(PathBuf::from(BYTES), "100000000".to_owned())]);
        // The background pair is its own setting.
        let r = guard_restores(&[
            &format!("hold\t{BG_RATIO}\t10"),
            &format!("hold\t{RATIO}\t20"),
            &format!("hold\t{BG_BYTES}\t3"),
            &format!("hold\t{BYTES}\t7"),
        ]);
        assert_eq!(
            r,
            vec![
                (PathBuf::from(RATIO), "20".to_owned()),
                (PathBuf::from(BG_RATIO), "10".to_owned())
            ]
        );
    }

    #[test]
    fn a_drop_of_either_form_ends_the_pair_and_refused_lines_do_nothing() {
        let r = guard_restores(&[
            &format!("hold\t{RATIO}\t20"),
            &format!("drop\t{BYTES}"),
            &format!("hold\t{RATIO}\t5"),
        ]);
        assert_eq!(r, vec![(PathBuf::from(RATIO), "5".to_owned())]);
        let r = guard_restores(&[
            "hold\t/proc/sys/vm/drop_caches\t3",
            "hold\t/etc/passwd\tx",
            &format!("hold\t{RATIO}\t20\textra"),
            &format!("hold\t{RATIO}"),
            "queue/scheduler",
        ]);
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn the_ledger_takes_a_pair_through_either_form() {
        let mut l = Ledger::default();
        assert!(l.hold(Path::new(RATIO), "20"));
        assert!(!l.hold(Path::new(BYTES), "0"));
        assert!(l.holds(Path::new(BYTES)));
        assert!(!l.holds(Path::new(BG_BYTES)));
        assert_eq!(
            l.take(Path::new(BYTES)),
            Some((PathBuf::from(RATIO), "20".to_owned()))
        );
        assert!(l.is_empty());
    }

    #[test]
    fn a_second_tuner_is_refused_naming_the_first_until_it_lets_go() {
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join("tune.lock");
        let mut a = Tuner::with_lock(None, lock.clone());
        let mut b = Tuner::with_lock(None, lock.clone());
        a.claim().unwrap();
        let e = format!("{:#}", b.claim().unwrap_err());
        assert!(
            e.contains("is tuning kernel settings")
                && e.contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        // Nothing changed and no playbook: `unpin` gives the lock back.
        a.unpin();
        claim_soon(&mut b);
        assert!(a.claim().is_err());
        drop(b);
        claim_soon(&mut a);
    }

    /// Claims, waiting up to 2 s: a child another test forks in between holds the lock's
    /// open file description (and so the `flock`) until it execs, which closes it (CLOEXEC).
    /// Under load the lib tests failed here 2 runs in 6 (2026-11-29).
    fn claim_soon(t: &mut Tuner) {
        for _ in 0..200 {
            if t.claim().is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        t.claim().unwrap();
    }
}
