//! `/proc/sys/vm/*` knobs → `VmSysctl`.
//!
//! Owns: the numeric vm sysctls the figures depend on. Must not touch: derivation.

use std::ops::Bound;

use serde::Serialize;

use crate::sample::RawSample;
use crate::{Error, Result};

/// The vm sysctls behind the dirty thresholds and watermarks. `None`: not on this kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub struct VmSysctl {
    pub dirty_ratio: Option<u64>,
    pub dirty_background_ratio: Option<u64>,
    pub dirty_bytes: Option<u64>,
    pub dirty_background_bytes: Option<u64>,
    pub dirty_expire_centisecs: Option<u64>,
    pub dirty_writeback_centisecs: Option<u64>,
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: Option<u64>,
    pub swappiness: Option<u64>,
}

/// `names::vm_sysctl(knob)` for each of `names::VM_SYSCTLS`, in that order, spelled out so
/// that looking the files up needs no allocation.
const FILES: [&str; 9] = [
    "proc/sys/vm/dirty_ratio",
    "proc/sys/vm/dirty_background_ratio",
    "proc/sys/vm/dirty_bytes",
    "proc/sys/vm/dirty_background_bytes",
    "proc/sys/vm/dirty_expire_centisecs",
    "proc/sys/vm/dirty_writeback_centisecs",
    "proc/sys/vm/min_free_kbytes",
    "proc/sys/vm/watermark_scale_factor",
    "proc/sys/vm/swappiness",
];

/// The directory part every name in `FILES` starts with.
const DIR: &str = "proc/sys/vm/";

/// The text of each knob in the sample (`FILES` order); `None` where the file is absent.
/// Sample files are sorted by name, so the knobs are found in one walk from `DIR` on rather
/// than by nine lookups.
#[must_use]
pub fn texts(sample: &RawSample) -> [Option<&str>; 9] {
    let mut out = [None; 9];
    let from = (Bound::Included(DIR), Bound::Unbounded);
    for (name, text) in sample.files.range::<str, _>(from) {
        if !name.starts_with(DIR) {
            break;
        }
        if let Some(i) = FILES.iter().position(|f| f == name) {
            out[i] = Some(text.as_str());
        }
    }
    out
}

/// Reads every knob present in the sample.
pub fn parse(sample: &RawSample) -> Result<VmSysctl> {
    parse_texts(texts(sample))
}

/// Parses the knobs' texts, as `texts` gives them.
pub fn parse_texts(texts: [Option<&str>; 9]) -> Result<VmSysctl> {
    let mut v = [None; 9];
    for ((slot, text), name) in v.iter_mut().zip(texts).zip(FILES) {
        let Some(text) = text else { continue };
        *slot = Some(text.trim().parse::<u64>().map_err(|_| {
            Error::parse(name, 1, format!("expected a number, got {:?}", text.trim()))
        })?);
    }
    let [
        dirty_ratio,
        dirty_background_ratio,
        dirty_bytes,
        dirty_background_bytes,
        dirty_expire_centisecs,
        dirty_writeback_centisecs,
        min_free_kbytes,
        watermark_scale_factor,
        swappiness,
    ] = v;
    Ok(VmSysctl {
        dirty_ratio,
        dirty_background_ratio,
        dirty_bytes,
        dirty_background_bytes,
        dirty_expire_centisecs,
        dirty_writeback_centisecs,
        min_free_kbytes,
        watermark_scale_factor,
        swappiness,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::names;

    #[test]
    fn texts_finds_each_knob_among_other_files() {
        let mut s = RawSample::default();
        for (i, f) in FILES.iter().enumerate().filter(|(i, _)| i % 3 != 1) {
            s.files.insert((*f).to_owned(), i.to_string());
        }
        for other in [
            "proc/sys/vm/dirty_ratio_x",
            "proc/sys/vm",
            "proc/sys/vm0",
            "proc/stat",
            "sys/block/",
            "proc/sys/vm/a",
        ] {
            s.files.insert(other.to_owned(), "x".to_owned());
        }
        let want: Vec<Option<String>> = (0..9)
            .map(|i| (i % 3 != 1).then(|| i.to_string()))
            .collect();
        let got: Vec<Option<String>> = texts(&s).iter().map(|t| t.map(str::to_owned)).collect();
        assert_eq!(got, want);
        assert_eq!(texts(&RawSample::default()), [None; 9]);
    }

    #[test]
    fn file_names_are_the_sample_names_in_order() {
        let expected: Vec<String> = names::VM_SYSCTLS
            .iter()
            .map(|k| names::vm_sysctl(k))
            .collect();
        assert_eq!(FILES.to_vec(), expected);
        assert!(FILES.iter().all(|f| f.starts_with(DIR)));
    }

    #[test]
    fn knobs_land_in_their_fields_and_garbage_names_the_file() {
        let mut s = RawSample::default();
        for (i, f) in FILES.iter().enumerate() {
            if i != 2 {
                s.files.insert((*f).to_owned(), format!("{}\n", 10 + i));
            }
        }
        let v = parse(&s).unwrap();
        assert_eq!(v.dirty_ratio, Some(10));
        assert_eq!(v.dirty_background_ratio, Some(11));
        assert_eq!(v.dirty_bytes, None);
        assert_eq!(v.dirty_background_bytes, Some(13));
        assert_eq!(v.dirty_expire_centisecs, Some(14));
        assert_eq!(v.dirty_writeback_centisecs, Some(15));
        assert_eq!(v.min_free_kbytes, Some(16));
        assert_eq!(v.watermark_scale_factor, Some(17));
        assert_eq!(v.swappiness, Some(18));
        s.files.insert(FILES[4].to_owned(), " 5x \n".to_owned());
        s.files.insert(FILES[6].to_owned(), "bad".to_owned());
        let e = parse(&s).unwrap_err().to_string();
        assert!(
            e.starts_with("proc/sys/vm/dirty_expire_centisecs:1:"),
            "{e}"
        );
        assert!(e.contains("\"5x\""), "{e}");
        assert_eq!(parse(&RawSample::default()).unwrap(), VmSysctl::default());
    }
}
