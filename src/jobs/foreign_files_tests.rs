//! Tests for `foreign_files.rs`: the report and logs are never data files, workers' files
//! first, the options when no fd was read.

use super::*;
use crate::jobs::foreign::{FioProc, OpenFile};

fn argv(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_owned).collect()
}

fn proc_(pid: u32, parent: u32, files: &[&str]) -> FioProc {
    FioProc {
        pid,
        ppid: parent,
        state: 'S',
        io: None,
        reaped_marks: 0,
        files: files
            .iter()
            .enumerate()
            .map(|(i, f)| OpenFile {
                path: PathBuf::from(f),
                via: PathBuf::from(format!("/proc/{pid}/fd/{}", i + 3)),
            })
            .collect(),
    }
}

fn run(cmd: &str, procs: Vec<FioProc>) -> ForeignFio {
    ForeignFio {
        pid: 10,
        ppid: 1,
        cmdline: argv(cmd),
        procs,
        cwd: None,
    }
}

fn paths(v: &[DataFile]) -> Vec<&str> {
    v.iter().map(|f| f.path.to_str().unwrap()).collect()
}

#[test]
fn options_name_the_report_logs_and_files() {
    let o = FioOptions::parse(&argv(
        "fio --name=a --filename=x\\:1:y --output out.txt --write_bw_log=bw --numjobs=2 --name b --directory=/d",
    ));
    assert_eq!(o.output, Some(PathBuf::from("out.txt")));
    assert_eq!(o.filenames, vec![PathBuf::from("x:1"), PathBuf::from("y")]);
    assert_eq!(o.names, vec!["a", "b"]);
    assert_eq!(
        (o.numjobs, o.directory.as_deref()),
        (2, Some(Path::new("/d")))
    );
    let cwd = Path::new("/w");
    assert!(o.is_report_or_log(Path::new("/w/out.txt"), cwd));
    assert!(o.is_report_or_log(Path::new("/w/bw_bw.1.log"), cwd));
    assert!(!o.is_report_or_log(Path::new("/w/bw_data"), cwd));
    assert!(!o.is_report_or_log(Path::new("/d/out.txt"), cwd));
    assert_eq!(
        o.named_files(cwd),
        vec![PathBuf::from("/d/x:1"), PathBuf::from("/d/y")]
    );
    // Without --filename: fio's own names, name.jobnum.filenum, in the directory or cwd.
    let d = FioOptions::parse(&argv("fio --name=seq --numjobs=2 --nrfiles=2"));
    assert_eq!(
        d.named_files(cwd),
        ["seq.0.0", "seq.0.1", "seq.1.0", "seq.1.1"]
            .iter()
            .map(|f| cwd.join(f))
            .collect::<Vec<_>>()
    );
}

/// The old way took the first file of the main process: fio's `--output` report.
#[test]
fn workers_files_are_the_data_files_never_the_report() {
    let cwd = Path::new("/w");
    let r = run(
        "fio --name=x --filename=/t/f --output=/t/out.txt",
        vec![
            proc_(10, 1, &["/t/out.txt"]),
            proc_(11, 10, &["/t/f", "/t/out.txt"]),
            proc_(12, 10, &["/t/f", "/t/g"]),
        ],
    );
    let got = data_files(&r, cwd);
    assert_eq!(paths(&got), vec!["/t/f", "/t/g"]);
    assert_eq!(got[0].via.as_deref(), Some(Path::new("/proc/11/fd/3")));
    // Threads (--thread): only the main process, whose fds hold report and data alike.
    let t = run(
        "fio --thread --name=x --output out.txt --write_lat_log=lat",
        vec![proc_(
            10,
            1,
            &["/w/out.txt", "/w/lat_lat.1.log", "/w/x.0.0"],
        )],
    );
    assert_eq!(paths(&data_files(&t, cwd)), vec!["/w/x.0.0"]);
}

/// A fio started from a shell that holds a file open (`flock LOCK fio ...`, a log): the main
/// process and every worker inherit it. It was measured as a data file ("+1 files").
#[test]
fn a_file_inherited_from_the_caller_is_not_a_data_file() {
    let cwd = Path::new("/w");
    let r = run(
        "fio --name=x --filename=/t/f --output=/t/out.txt",
        vec![
            proc_(10, 1, &["/tmp/lock", "/t/out.txt"]),
            proc_(11, 10, &["/tmp/lock", "/t/f"]),
        ],
    );
    assert_eq!(paths(&data_files(&r, cwd)), vec!["/t/f"]);
    // Named by the options and held by the main too: still a data file.
    let n = run(
        "fio --name=x --filename=/t/f",
        vec![
            proc_(10, 1, &["/tmp/lock", "/t/f"]),
            proc_(11, 10, &["/t/f"]),
        ],
    );
    assert_eq!(paths(&data_files(&n, cwd)), vec!["/t/f"]);
    // Threads: the main's fds hold the lock and the data alike; the options name the data.
    let t = run(
        "fio --thread --name=x --output out.txt",
        vec![proc_(10, 1, &["/tmp/lock", "/w/out.txt", "/w/x.0.0"])],
    );
    assert_eq!(paths(&data_files(&t, cwd)), vec!["/w/x.0.0"]);
}

#[test]
fn without_fds_the_options_name_the_files() {
    let cwd = Path::new("/w");
    let r = run(
        "fio --name=x --directory=/t --output=/t/out.txt",
        vec![proc_(10, 1, &[]), proc_(11, 10, &[])],
    );
    let got = data_files(&r, cwd);
    assert_eq!(paths(&got), vec!["/t/x.0.0"]);
    assert_eq!(got[0].via, None);
    // A --filename naming the report itself is still not a data file.
    let same = run("fio --name=x --filename=o --output=o", vec![]);
    assert!(data_files(&same, cwd).is_empty());
}
