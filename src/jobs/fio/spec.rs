//! What a fio job is: a preset plus the form's overrides, and the exact fio command line built
//! from them.
//!
//! Owns: `PRESET[,key=value...]` parsing and validation of the form's keys, and building fio's
//! argv from pagewatch's own template (never from a user's job file). Must not touch: files,
//! processes or the output stream.

use std::fmt;
use std::path::Path;

use super::preset::PRESETS;
pub use super::preset::{Preset, presets};
use super::value::{parse_bool, parse_int, parse_runtime, pick};
pub use super::value::{parse_size, size_text};

/// Largest accepted file size: 16 TiB.
const MAX_SIZE: u64 = 16 << 40;

/// fio's `rw` values the form accepts.
pub const RW_VALUES: &[&str] = &["read", "write", "randread", "randwrite", "rw", "randrw"];
/// fio's `ioengine` values the form accepts.
pub const IOENGINES: &[&str] = &[
    "sync", "psync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap",
];
/// The keys `FioSpec::parse` and `FioSpec::set` accept.
pub const KEYS: &[&str] = &[
    "rw",
    "bs",
    "size",
    "ioengine",
    "iodepth",
    "direct",
    "runtime",
    "numjobs",
    "norandommap",
    "invalidate",
    "fsync",
];

/// A fio job as the form holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FioSpec {
    /// The preset it started from (used as fio's `--name` and the job label).
    pub preset: String,
    /// fio's `rw`.
    pub rw: String,
    /// Block size, bytes.
    pub bs: u64,
    /// File size, bytes.
    pub size: u64,
    /// fio's `ioengine`.
    pub ioengine: String,
    /// fio's `iodepth`.
    pub iodepth: u32,
    /// O_DIRECT.
    pub direct: bool,
    /// Run for this many seconds, looping over the file (`time_based`); `None` = one pass.
    pub runtime_s: Option<u32>,
    /// fio's `numjobs` (all jobs share the file).
    pub numjobs: u32,
    /// fio's `norandommap`.
    pub norandommap: bool,
    /// fio's `invalidate` (drop the file's cache before the job).
    pub invalidate: bool,
    /// fio's `fsync`: fsync after this many writes; 0 = never.
    pub fsync: u32,
}

/// Why a spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// No such preset.
    #[error("unknown fio preset {0:?} (presets: {list})", list = preset_names())]
    UnknownPreset(String),
    /// No such key.
    #[error("unknown fio key {0:?} (keys: {list})", list = KEYS.join(", "))]
    UnknownKey(String),
    /// `key` without `=value`.
    #[error("fio option {0:?} needs a value: key=value")]
    MissingValue(String),
    /// A value that does not fit the key.
    #[error("bad value {value:?} for fio {key}: {why}")]
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What is expected.
        why: String,
    },
}

fn one_of(values: &[&str]) -> String {
    format!("one of {}", values.join(", "))
}

fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl FioSpec {
    /// The spec of a named preset.
    pub fn preset(name: &str) -> Result<FioSpec, SpecError> {
        PRESETS
            .iter()
            .find(|p| p.name == name)
            .map(Preset::spec)
            .ok_or_else(|| SpecError::UnknownPreset(name.to_string()))
    }

    /// Parses `PRESET[,key=value...]`, as given to `--fio`.
    pub fn parse(text: &str) -> Result<FioSpec, SpecError> {
        let mut parts = text.split(',').map(str::trim);
        let mut spec = FioSpec::preset(parts.next().unwrap_or_default())?;
        for part in parts.filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| SpecError::MissingValue(part.to_string()))?;
            spec.set(key.trim(), value.trim())?;
        }
        Ok(spec)
    }

    /// Sets one form field from text, validating it; on error the spec is unchanged.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SpecError> {
        let bad = |why: &str| SpecError::BadValue {
            key: key.to_string(),
            value: value.to_string(),
            why: why.to_string(),
        };
        let flag = || parse_bool(value).ok_or_else(|| bad("0 or 1"));
        let mut next = self.clone();
        match key {
            "rw" => next.rw = pick(RW_VALUES, value).ok_or_else(|| bad(&one_of(RW_VALUES)))?,
            "ioengine" => {
                next.ioengine = pick(IOENGINES, value).ok_or_else(|| bad(&one_of(IOENGINES)))?;
            }
            "bs" => {
                let bs = parse_size(value).filter(|b| (512..=(64 << 20)).contains(b));
                next.bs = bs.ok_or_else(|| bad("a size from 512 to 64M, such as 8k"))?;
            }
            "size" => {
                let size = parse_size(value).filter(|s| (1..=MAX_SIZE).contains(s));
                next.size = size.ok_or_else(|| bad("a size such as 64M or 2G"))?;
            }
            "iodepth" => {
                next.iodepth = parse_int(value, 1, 1024).ok_or_else(|| bad("1 to 1024"))?;
            }
            "numjobs" => next.numjobs = parse_int(value, 1, 64).ok_or_else(|| bad("1 to 64"))?,
            "runtime" => {
                let why = "seconds from 1 to 86400, or 0/none for one pass";
                next.runtime_s = parse_runtime(value).map_err(|()| bad(why))?;
            }
            "direct" => next.direct = flag()?,
            "norandommap" => next.norandommap = flag()?,
            "invalidate" => next.invalidate = flag()?,
            "fsync" => {
                next.fsync = parse_int(value, 0, 1 << 20)
                    .ok_or_else(|| bad("0 (never) or writes per fsync"))?;
            }
            _ => return Err(SpecError::UnknownKey(key.to_string())),
        }
        if next.bs > next.size {
            let (bs, size) = (size_text(next.bs), size_text(next.size));
            return Err(bad(&format!("bs {bs} is larger than size {size}")));
        }
        *self = next;
        Ok(())
    }

    /// True when the job only reads (fio then runs with `--readonly`).
    #[must_use]
    pub fn read_only(&self) -> bool {
        matches!(self.rw.as_str(), "read" | "randread")
    }

    /// A short label, such as `fio randread 2G`.
    #[must_use]
    pub fn label(&self) -> String {
        format!("fio {} {}", self.preset, size_text(self.size))
    }

    /// fio's arguments (without the program) for this job on `file`.
    #[must_use]
    pub fn args(&self, file: &Path) -> Vec<String> {
        let mut a = vec![
            format!("--name={}", self.preset),
            format!("--filename={}", file.display()),
            format!("--rw={}", self.rw),
            format!("--bs={}", self.bs),
            format!("--size={}", self.size),
            format!("--ioengine={}", self.ioengine),
            format!("--iodepth={}", self.iodepth),
            format!("--direct={}", u8::from(self.direct)),
            format!("--invalidate={}", u8::from(self.invalidate)),
        ];
        if self.norandommap {
            a.push("--norandommap=1".to_string());
        }
        if let Some(s) = self.runtime_s {
            a.push(format!("--runtime={s}"));
            a.push("--time_based=1".to_string());
        }
        if self.numjobs > 1 {
            a.push(format!("--numjobs={}", self.numjobs));
        }
        if self.fsync > 0 {
            a.push(format!("--fsync={}", self.fsync));
        }
        if self.read_only() {
            a.push("--readonly".to_string());
        }
        a.extend(
            [
                "--output-format=json+",
                "--status-interval=1",
                "--eta=never",
            ]
            .map(String::from),
        );
        a
    }

    /// fio's arguments for laying out `file` at this spec's size, without running the job.
    /// A *read* layout: fio writes every block of a file a read job will use, while a write
    /// job's `create_only` only fallocates it, and reads of those unwritten extents (ext4,
    /// xfs) return zeros without touching the disk: no read would ever come from the disk.
    #[must_use]
    pub fn prepare_args(&self, file: &Path) -> Vec<String> {
        vec![
            "--name=prepare".to_string(),
            format!("--filename={}", file.display()),
            "--rw=read".to_string(),
            format!("--size={}", self.size),
            "--ioengine=sync".to_string(),
            "--create_only=1".to_string(),
            "--output-format=json".to_string(),
            "--eta=never".to_string(),
        ]
    }
}

impl fmt::Display for FioSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{},rw={},bs={},size={}",
            self.preset,
            self.rw,
            size_text(self.bs),
            size_text(self.size)
        )?;
        write!(
            f,
            ",ioengine={},iodepth={},direct={}",
            self.ioengine,
            self.iodepth,
            u8::from(self.direct)
        )?;
        write!(f, ",runtime={}", self.runtime_s.unwrap_or(0))?;
        write!(
            f,
            ",numjobs={},norandommap={}",
            self.numjobs,
            u8::from(self.norandommap)
        )?;
        write!(f, ",invalidate={}", u8::from(self.invalidate))?;
        write!(f, ",fsync={}", self.fsync)
    }
}

impl Preset {
    /// The spec this preset starts from.
    #[must_use]
    pub fn spec(&self) -> FioSpec {
        FioSpec {
            preset: self.name.to_string(),
            rw: self.rw.to_string(),
            bs: self.bs,
            size: self.size,
            ioengine: "sync".to_string(),
            iodepth: 1,
            direct: false,
            runtime_s: None,
            numjobs: 1,
            norandommap: self.norandommap,
            invalidate: false,
            fsync: 0,
        }
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
