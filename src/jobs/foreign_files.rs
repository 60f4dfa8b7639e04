//! Which files of a fio run pagewatch did not start are its data files: the files its workers
//! hold open, never fio's `--output` report nor its `--write_*_log` files; from the job
//! options (`--filename`, `--directory` and the job names) when no fd can be read.
//!
//! Owns: `FioOptions` (what a fio command line says about files), `data_files` (the choice,
//! pure: the caller gives the run's fds and its working directory). Must not touch: /proc, the
//! files themselves (the supervisor measures them).
//!
//! Why the workers: fio's main process opens `--output` (and nothing else at fd ≥ 3 once its
//! workers are forked); each worker opens the job's files. With `--thread` the workers are
//! threads sharing the main process's fds, so the main's files, less the report and logs, are
//! the data files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::foreign::ForeignFio;

/// Most data files measured and shown for one run.
pub const MAX_FILES: usize = 16;

/// What a fio command line says about the files it writes or reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FioOptions {
    /// `--output=FILE`: fio's report, not a data file.
    pub output: Option<PathBuf>,
    /// `--write_{bw,lat,iops,hist}_log=PREFIX`: logs named `PREFIX_*.log`.
    pub log_prefixes: Vec<PathBuf>,
    /// Every `--filename` (fio's `:`-separated lists split, `\:` kept).
    pub filenames: Vec<PathBuf>,
    /// The last `--directory`, if any.
    pub directory: Option<PathBuf>,
    /// Every `--name` (a job), in order.
    pub names: Vec<String>,
    /// `--numjobs` (1 when absent): fio names each clone's file `name.N.0`.
    pub numjobs: u32,
    /// `--nrfiles` (1 when absent): files per job, `name.0.N`.
    pub nrfiles: u32,
}

/// Options whose value may follow as the next word (`--output out.txt`).
const VALUED: [&str; 10] = [
    "output",
    "filename",
    "directory",
    "name",
    "numjobs",
    "nrfiles",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
];

impl FioOptions {
    /// Reads the options of `cmdline` (argv, program first); job files are not read.
    #[must_use]
    pub fn parse(cmdline: &[String]) -> Self {
        let mut o = FioOptions {
            numjobs: 1,
            nrfiles: 1,
            ..FioOptions::default()
        };
        let mut words = cmdline.iter().skip(1);
        while let Some(w) = words.next() {
            let Some(opt) = w.strip_prefix("--") else {
                continue;
            };
            let (key, value) = match opt.split_once('=') {
                Some((k, v)) => (k, v.to_owned()),
                None if VALUED.contains(&opt) => match words.next() {
                    Some(v) => (opt, v.clone()),
                    None => break,
                },
                None => continue,
            };
            match key {
                "output" => o.output = Some(PathBuf::from(value)),
                "filename" => o.filenames.extend(split_names(&value).map(PathBuf::from)),
                "directory" => o.directory = Some(PathBuf::from(value)),
                "name" => o.names.push(value),
                "numjobs" => o.numjobs = value.parse().unwrap_or(1).clamp(1, 64),
                "nrfiles" => o.nrfiles = value.parse().unwrap_or(1).clamp(1, 64),
                k if k.starts_with("write_") && k.ends_with("_log") => {
                    o.log_prefixes.push(PathBuf::from(value));
                }
                _ => {}
            }
        }
        o
    }

    /// Whether `path` (absolute, as /proc shows it) is fio's report or one of its logs, with
    /// relative option paths taken from `cwd`.
    #[must_use]
    pub fn is_report_or_log(&self, path: &Path, cwd: &Path) -> bool {
        if self.output.as_ref().is_some_and(|o| cwd.join(o) == path) {
            return true;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        self.log_prefixes.iter().any(|p| {
            let p = cwd.join(p);
            let stem = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            path.parent() == p.parent()
                && name.starts_with(stem)
                && path.extension().is_some_and(|e| e == "log")
        })
    }

    /// The data files the options name, absolute (relative ones under `--directory`, then
    /// `cwd`): each `--filename`, else fio's default `name.jobnum.filenum` of each job.
    #[must_use]
    pub fn named_files(&self, cwd: &Path) -> Vec<PathBuf> {
        let dir = cwd.join(self.directory.as_deref().unwrap_or(Path::new("")));
        if !self.filenames.is_empty() {
            return self.filenames.iter().map(|f| dir.join(f)).collect();
        }
        let mut out = Vec::new();
        for name in &self.names {
            for j in 0..self.numjobs {
                for f in 0..self.nrfiles {
                    out.push(dir.join(format!("{name}.{j}.{f}")));
                }
            }
        }
        out.truncate(MAX_FILES);
        out
    }
}

/// fio's `:`-separated file list, with `\:` standing for a colon in a name.
fn split_names(v: &str) -> impl Iterator<Item = String> + '_ {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().filter(|s| !s.is_empty())
}

/// A data file to measure: its path, and the fd link that opens it when one was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    /// The file (as the fd's link reads, or as the options name it).
    pub path: PathBuf,
    /// `PROC/PID/fd/N`, when the file came from an fd.
    pub via: Option<PathBuf>,
}

/// The run's data files, at most `MAX_FILES`: the workers' open files, less those the main
/// process holds too (a worker inherits the caller's fds through fio's main process: a shell's
/// `flock` lock or log, which the main holds as well) unless the options name them; else
/// (threads, or no worker yet) the main process's, only those the options name where any
/// is open; either way less fio's report and logs. With no fd read at all, the files the
/// options name (the caller keeps those that exist). Pure.
#[must_use]
pub fn data_files(run: &ForeignFio, cwd: &Path) -> Vec<DataFile> {
    let opts = FioOptions::parse(&run.cmdline);
    let named: BTreeSet<PathBuf> = opts.named_files(cwd).into_iter().collect();
    let mains = || run.procs.iter().filter(|p| p.pid == run.pid);
    let main_held: BTreeSet<&Path> = mains()
        .flat_map(|p| &p.files)
        .map(|f| f.path.as_path())
        .collect();
    let pick = |procs: &mut dyn Iterator<Item = &super::foreign::FioProc>,
                keep: &dyn Fn(&Path) -> bool| {
        let mut seen = BTreeSet::new();
        procs
            .flat_map(|p| &p.files)
            .filter(|f| !opts.is_report_or_log(&f.path, cwd) && keep(&f.path))
            .filter(|f| seen.insert(f.path.clone()))
            .map(|f| DataFile {
                path: f.path.clone(),
                via: Some(f.via.clone()),
            })
            .take(MAX_FILES)
            .collect::<Vec<_>>()
    };
    let workers = pick(&mut run.procs.iter().filter(|p| p.pid != run.pid), &|f| {
        named.contains(f) || !main_held.contains(f)
    });
    if !workers.is_empty() {
        return workers;
    }
    let main_named = pick(&mut mains(), &|f| named.contains(f));
    if !main_named.is_empty() {
        return main_named;
    }
    let main = pick(&mut mains(), &|_| true);
    if !main.is_empty() {
        return main;
    }
    opts.named_files(cwd)
        .into_iter()
        .filter(|p| !opts.is_report_or_log(p, cwd))
        .map(|path| DataFile { path, via: None })
        .collect()
}

#[cfg(test)]
#[path = "foreign_files_tests.rs"]
mod tests;
