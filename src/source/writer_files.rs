//! The writers' open files (spec §15.4): at a process walk, the regular files held open for
//! writing by the processes whose `write_bytes` rose since the previous walk (or, born since,
//! or at a first walk started within the last 10 s, is not 0), by path, as the `names::WRITER_FILES` pseudo-file. The dirty-files scan
//! (`source::dirty_files`) reads it from the same sample and measures those paths, then keeps
//! measuring them for as long as they hold dirty or writeback pages, after their writer
//! exited too: a `dd` of 2 GiB lives 1–2 s, seen by one walk, gone before a scan of its fds.
//!
//! The text, one line a file: `PID<TAB>COMM<TAB>PATH` (a tab or newline in a comm or path
//! as `?`). Written only by walks that found some.
//!
//! Owns: which writers' fds are looked at, the writable test (fdinfo's access mode) and the
//! pseudo-file's text. Must not touch: measuring files (`source::dirty_files`), rates.
//!
//! Cost: nothing for a process whose `write_bytes` did not move. For at most `MAX_WRITERS`
//! writers a walk (the largest growth first), a listing of `/proc/PID/fd`, one readlink a
//! fd and one fdinfo read for each path-named fd (at most `MAX_FDS` a writer), and at most
//! `MAX_PATHS` paths written. A writer's fds are listed again at most every `RELIST_NS`
//! (`Listed`): in between its walk repeats what the last listing found. A writer that holds
//! many fds and writes at every walk (another monitor holding a thousand `/proc` files and
//! recording, a database) was listed whole at every walk: with three such beside it, a
//! walk at the 1 s pace cost 3.5–4.5 ms (2026-11-29, the machine busy). Nor is a writer
//! whose `write_bytes` rose by less than `MIN_WRITTEN` since the previous walk listed: under
//! half a MiB a second at the fastest walk pace, too little to matter among the dirty pages
//! the table is for, and what loggers and other monitors write. Eight `pagewatch` beside it,
//! each holding some 450 `/proc` fds and recording at `--interval 0.1`, were listed every
//! 5 s: 83 % of the walk's samples, 2.7 ms a second, were their fds' `readlink`s (`perf
//! record` of the default screen, 2026-11-29, the machine busy).

use std::collections::HashMap;
use std::path::Path;

/// At most this many writers' fds are looked at a walk.
pub(super) const MAX_WRITERS: usize = 8;
/// At most this many paths a walk (the dirty-files scan measures at most as many files).
pub(super) const MAX_PATHS: usize = 20;
/// At most this many fds of one writer are looked at.
const MAX_FDS: usize = 4096;
/// A writer whose `write_bytes` rose by less than this since the previous walk (2–10 s
/// before) is not listed.
pub(super) const MIN_WRITTEN: u64 = 1 << 20;
/// A writer's fds are listed again at most this often (the dirty-files scan's own pace): a
/// file it opens in between is found up to this late.
pub(super) const RELIST_NS: u64 = 5_000_000_000;

/// What each writer's last listing found: when (the walk's monotonic ns) and its lines.
#[derive(Debug, Default)]
pub(super) struct Listed {
    by_pid: HashMap<u32, (u64, Vec<String>)>,
}

/// The `write_bytes` of an io text, when it has one.
pub(super) fn write_bytes(io: &str) -> Option<u64> {
    io.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The pseudo-file's text for `writers` (`(growth of write_bytes, pid)`), largest growth
/// first; empty when none holds a regular file open for writing. A writer listed within
/// `RELIST_NS` of `now_ns` gives the lines its last listing found; one that wrote less than
/// `MIN_WRITTEN` is left out.
pub(super) fn write(
    proc_root: &Path,
    writers: &mut [(u64, u32)],
    out: &mut String,
    now_ns: u64,
    listed: &mut Listed,
) {
    out.clear();
    writers.sort_unstable_by(|a, b| b.cmp(a));
    listed
        .by_pid
        .retain(|_, (at, _)| now_ns < at.saturating_add(RELIST_NS));
    let mut paths = 0;
    let enough = writers.iter().take_while(|(grew, _)| *grew >= MIN_WRITTEN);
    for &(_, pid) in enough.take(MAX_WRITERS) {
        let (_, lines) = listed
            .by_pid
            .entry(pid)
            .or_insert_with(|| (now_ns, list(proc_root, pid)));
        for l in lines.iter() {
            if paths >= MAX_PATHS {
                return;
            }
            out.push_str(l);
            paths += 1;
        }
    }
}

/// The lines of the regular files `pid` holds open for writing, at most `MAX_PATHS`.
fn list(proc_root: &Path, pid: u32) -> Vec<String> {
    let mut lines = Vec::new();
    let dir = proc_root.join(pid.to_string());
    let Ok(entries) = std::fs::read_dir(dir.join("fd")) else {
        return lines;
    };
    let mut comm = None;
    for e in entries.flatten().take(MAX_FDS) {
        if lines.len() >= MAX_PATHS {
            break;
        }
        let Ok(target) = std::fs::read_link(e.path()) else {
            continue;
        };
        let target = target.to_string_lossy();
        if !worth_opening(&target) {
            continue;
        }
        let info = std::fs::read_to_string(dir.join("fdinfo").join(e.file_name()));
        if !info.is_ok_and(|i| open_for_writing(&i)) {
            continue;
        }
        let comm = comm.get_or_insert_with(|| comm_of(proc_root, pid));
        lines.push(format!("{pid}\t{}\t{}\n", clean(comm), clean(&target)));
    }
    lines
}

/// Whether an fdinfo text's `flags:` (octal) open the file for writing.
pub(super) fn open_for_writing(fdinfo: &str) -> bool {
    fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|f| f & libc::O_ACCMODE as u32 != libc::O_RDONLY as u32)
}

/// Regular files only: paths, not `socket:[…]`, `pipe:[…]`, `anon_inode:…`, nor devices,
/// pseudo filesystems or memfds.
pub(super) fn worth_opening(target: &str) -> bool {
    target.starts_with('/')
        && !["/dev/", "/proc/", "/sys/", "/memfd:"]
            .iter()
            .any(|p| target.starts_with(p))
}

pub(super) fn comm_of(proc_root: &Path, pid: u32) -> String {
    std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm"))
        .map_or_else(|_| "?".to_owned(), |c| c.trim_end().to_owned())
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n'], "?")
}

/// One line of the pseudo-file.
pub(super) struct Writer<'t> {
    pub pid: u32,
    pub comm: &'t str,
    pub path: &'t str,
}

/// The pseudo-file's lines; a malformed one is skipped (the text is this program's own).
pub(super) fn parse(text: &str) -> Vec<Writer<'_>> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            Some(Writer {
                pid: f.next()?.parse().ok()?,
                comm: f.next()?,
                path: f.next()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn write_bytes_and_the_access_mode() {
        let io = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 4096\n";
        assert_eq!(write_bytes(io), Some(4096));
        assert_eq!(write_bytes("rchar: 1\n"), None);
        assert!(open_for_writing("pos:\t0\nflags:\t0100001\nmnt_id:\t2\n"));
        assert!(open_for_writing("pos:\t0\nflags:\t0100002\n"));
        assert!(!open_for_writing("pos:\t0\nflags:\t0100000\n"));
        assert!(!open_for_writing("pos:\t0\n"));
    }

    /// This process holds one file open for writing and one for reading: only the first is
    /// written, with this process's pid and comm, and parsed back.
    #[test]
    fn a_writers_writable_files_only() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let w = dir.path().join("written.bin");
        let mut f = std::fs::File::create(&w).unwrap();
        f.write_all(b"x").unwrap();
        let r = dir.path().join("read.bin");
        std::fs::write(&r, b"y").unwrap();
        let _reader = std::fs::File::open(&r).unwrap();
        let me = std::process::id();
        let mut out = String::new();
        let mut listed = Listed::default();
        write(
            Path::new("/proc"),
            &mut [(MIN_WRITTEN, me)],
            &mut out,
            0,
            &mut listed,
        );
        let found = parse(&out);
        let w = w.to_string_lossy();
        assert!(found.iter().any(|x| x.path == w && x.pid == me), "{out}");
        assert!(!out.contains("read.bin"), "{out}");
        // No writer: nothing.
        write(Path::new("/proc"), &mut [], &mut out, 0, &mut listed);
        assert!(out.is_empty());
    }

    /// A tree's writer with one file open for writing; the next listing within `RELIST_NS`
    /// repeats it without looking (a file opened since is not seen), the one after looks
    /// again, and a writer first seen is listed at once.
    #[test]
    fn a_writers_fds_are_listed_again_only_after_relist_ns() {
        let root = tempfile::tempdir().unwrap();
        let add = |pid: u32, fd: u32, path: &str, flags: &str| {
            let p = root.path().join(pid.to_string());
            std::fs::create_dir_all(p.join("fd")).unwrap();
            std::fs::create_dir_all(p.join("fdinfo")).unwrap();
            std::fs::write(p.join("comm"), "dd\n").unwrap();
            std::os::unix::fs::symlink(path, p.join("fd").join(fd.to_string())).unwrap();
            std::fs::write(
                p.join("fdinfo").join(fd.to_string()),
                format!("flags:\t{flags}\n"),
            )
            .unwrap();
        };
        add(7, 1, "/data/a", "0100001");
        add(7, 2, "/data/read-only", "0100000");
        let mut listed = Listed::default();
        let mut out = String::new();
        let t0 = 1_000_000_000;
        write(
            root.path(),
            &mut [(9 * MIN_WRITTEN, 7)],
            &mut out,
            t0,
            &mut listed,
        );
        assert_eq!(out, "7\tdd\t/data/a\n");
        add(7, 3, "/data/b", "0100002");
        write(
            root.path(),
            &mut [(9 * MIN_WRITTEN, 7)],
            &mut out,
            t0 + RELIST_NS - 1,
            &mut listed,
        );
        assert_eq!(out, "7\tdd\t/data/a\n", "repeated, not looked at");
        add(8, 1, "/data/c", "0100001");
        write(
            root.path(),
            &mut [(9 * MIN_WRITTEN, 7), (5 * MIN_WRITTEN, 8)],
            &mut out,
            t0 + RELIST_NS - 1,
            &mut listed,
        );
        assert_eq!(
            out, "7\tdd\t/data/a\n8\tdd\t/data/c\n",
            "a new writer at once"
        );
        write(
            root.path(),
            &mut [(9 * MIN_WRITTEN, 7)],
            &mut out,
            t0 + RELIST_NS,
            &mut listed,
        );
        let mut lines: Vec<&str> = out.lines().collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            ["7\tdd\t/data/a", "7\tdd\t/data/b"],
            "looked at again"
        );
    }

    /// A writer that wrote less than `MIN_WRITTEN` since the previous walk is not listed,
    /// however many fds it holds; one that wrote that much is, beside it.
    #[test]
    fn a_writer_of_less_than_min_written_is_not_listed() {
        let root = tempfile::tempdir().unwrap();
        for (pid, path) in [(7, "/data/log"), (8, "/data/big")] {
            let p = root.path().join(pid.to_string());
            std::fs::create_dir_all(p.join("fd")).unwrap();
            std::fs::create_dir_all(p.join("fdinfo")).unwrap();
            std::fs::write(p.join("comm"), "w\n").unwrap();
            std::os::unix::fs::symlink(path, p.join("fd/3")).unwrap();
            std::fs::write(p.join("fdinfo/3"), "flags:\t0100001\n").unwrap();
        }
        let mut listed = Listed::default();
        let mut out = String::new();
        let mut writers = [(MIN_WRITTEN - 1, 7)];
        write(root.path(), &mut writers, &mut out, 1, &mut listed);
        assert_eq!(out, "", "a small writer");
        let mut writers = [(MIN_WRITTEN - 1, 7), (MIN_WRITTEN, 8)];
        write(root.path(), &mut writers, &mut out, 2, &mut listed);
        assert_eq!(out, "8\tw\t/data/big\n");
    }
}
