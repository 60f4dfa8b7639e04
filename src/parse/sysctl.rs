//! `/proc/sys/vm/*` knobs → `VmSysctl`.
//!
//! Owns: the numeric vm sysctls the figures depend on. Must not touch: derivation.

use serde::Serialize;

use crate::sample::{RawSample, names};
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

/// Reads every knob present in the sample.
pub fn parse(sample: &RawSample) -> Result<VmSysctl> {
    let get = |knob: &str| -> Result<Option<u64>> {
        let name = names::vm_sysctl(knob);
        match sample.file(&name) {
            None => Ok(None),
            Some(text) => text.trim().parse::<u64>().map(Some).map_err(|_| {
                Error::parse(
                    &name,
                    1,
                    format!("expected a number, got {:?}", text.trim()),
                )
            }),
        }
    };
    Ok(VmSysctl {
        dirty_ratio: get("dirty_ratio")?,
        dirty_background_ratio: get("dirty_background_ratio")?,
        dirty_bytes: get("dirty_bytes")?,
        dirty_background_bytes: get("dirty_background_bytes")?,
        dirty_expire_centisecs: get("dirty_expire_centisecs")?,
        dirty_writeback_centisecs: get("dirty_writeback_centisecs")?,
        min_free_kbytes: get("min_free_kbytes")?,
        watermark_scale_factor: get("watermark_scale_factor")?,
        swappiness: get("swappiness")?,
    })
}
