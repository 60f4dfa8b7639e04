//! Who a throttled writer belongs to: for each task the tracepoint reported this sample, its
//! thread group and its parents, as the `names::THROTTLED_LINEAGE` pseudo-file. This is what
//! links a fio worker (a thread or a child of fio) to the fio the jobs pane shows.
//!
//! Owns: `Lineage`, the reads of `/proc/TID/status` (`Tgid:`, `PPid:`) and of the parents'
//! `/proc/PID/stat` (their ppid), and a cache by task id (a task's group and parents do not
//! change, except a reparenting when a parent exits, which only unlinks a row from a job that
//! is gone anyway). Must not touch: parsing beyond picking those numbers out, the tracer.
//!
//! The pseudo-file: one line per task, `tid tgid ppid gppid ...`, space-separated, at most
//! `DEPTH` parents, ending at pid 1 or the first unreadable one. Costs nothing while no task is
//! throttled; at most `MAX_TASKS` tasks are read in one sample.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Parents followed above the task's thread group (worker → fio → pagewatch's guard).
pub const DEPTH: usize = 3;
/// Most tasks read in one sample.
pub const MAX_TASKS: usize = 64;

/// The reader, with its cache of lines by task id.
#[derive(Debug, Default)]
pub struct Lineage {
    cache: BTreeMap<u32, String>,
}

impl Lineage {
    /// The pseudo-file for the tasks of the tracepoint's writers text (`names::TRACE_WRITERS`,
    /// its `pid=` lines); `None` when there are none. Forgets tasks no longer reported.
    pub fn read(&mut self, proc_root: &Path, writers: Option<&str>) -> Option<String> {
        let tids: Vec<u32> = writers
            .into_iter()
            .flat_map(str::lines)
            .filter_map(|l| l.strip_prefix("pid=")?.split(' ').next()?.parse().ok())
            .take(MAX_TASKS)
            .collect();
        self.cache.retain(|tid, _| tids.contains(tid));
        if tids.is_empty() {
            return None;
        }
        let mut out = String::new();
        for tid in tids {
            if !self.cache.contains_key(&tid)
                && let Some(line) = task_line(proc_root, tid)
            {
                self.cache.insert(tid, line);
            }
            if let Some(line) = self.cache.get(&tid) {
                out.push_str(line);
                out.push('\n');
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

/// `tid tgid ppid gppid …` for one task; `None` when it is gone.
fn task_line(proc_root: &Path, tid: u32) -> Option<String> {
    let status = std::fs::read_to_string(proc_root.join(tid.to_string()).join("status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u32>().ok())
    };
    let (group, mut parent) = (field("Tgid:")?, field("PPid:")?);
    let mut line = format!("{tid} {group}");
    for _ in 0..DEPTH {
        if parent == 0 {
            break;
        }
        let _ = write!(line, " {parent}");
        if parent == 1 {
            break;
        }
        match ppid_of(proc_root, parent) {
            Some(p) => parent = p,
            None => break,
        }
    }
    Some(line)
}

/// The ppid in `/proc/PID/stat` (the field after the state, after the comm's last `)`).
fn ppid_of(proc_root: &Path, pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split(' ').nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_group_and_parents_and_forgets_the_gone() {
        let root = tempfile::tempdir().unwrap();
        let mk = |pid: u32, tgid: u32, ppid: u32| {
            let d = root.path().join(pid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            let status = format!("Name:\tfio\nTgid:\t{tgid}\nPid:\t{pid}\nPPid:\t{ppid}\n");
            std::fs::write(d.join("status"), status).unwrap();
            let stat = format!("{pid} (f) o) S {ppid} 1 1 0\n");
            std::fs::write(d.join("stat"), stat).unwrap();
        };
        // A thread 12 of worker 11, child of fio 10, child of the guard 5, child of init.
        mk(12, 11, 10);
        mk(11, 11, 10);
        mk(10, 10, 5);
        mk(5, 5, 1);
        let writers =
            "events 3\nlost 0\npid=12 events=2 pause_ms=9 comm=fio\npid=99 events=1 comm=dd\n";
        let mut l = Lineage::default();
        assert_eq!(
            l.read(root.path(), Some(writers)).as_deref(),
            Some("12 11 10 5 1\n"),
            "99 is gone: left out"
        );
        // Cached: the files may go, the line stays while the task is reported.
        std::fs::remove_dir_all(root.path().join("12")).unwrap();
        assert_eq!(
            l.read(root.path(), Some(writers)).as_deref(),
            Some("12 11 10 5 1\n")
        );
        assert_eq!(l.read(root.path(), None), None);
        assert_eq!(l.read(root.path(), Some(writers)), None, "forgotten");
    }

    /// On the live /proc: a thread (not listed in /proc, but readable at /proc/TID) reads as
    /// this process's thread, under this process's parent.
    #[test]
    fn a_live_thread_reads_as_its_process() {
        // `/proc/thread-self` links to `PID/task/TID`.
        let gettid = || -> u32 {
            let link = std::fs::read_link("/proc/thread-self").unwrap();
            link.file_name().unwrap().to_str().unwrap().parse().unwrap()
        };
        let main = std::process::id();
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(gettid()).unwrap();
            let _ = done_rx.recv();
        });
        let tid = rx.recv().unwrap();
        assert_ne!(tid, main, "a thread of its own");
        let writers = format!("events 1\nlost 0\npid={tid} events=1 comm=t\n");
        let line = Lineage::default()
            .read(Path::new("/proc"), Some(&writers))
            .unwrap();
        let parent = std::os::unix::process::parent_id();
        assert!(
            line.starts_with(&format!("{tid} {main} {parent}")),
            "{line} (main {main}, parent {parent})"
        );
        done_tx.send(()).unwrap();
        t.join().unwrap();
    }
}
