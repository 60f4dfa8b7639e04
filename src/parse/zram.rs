//! `/sys/block/zramN/mm_stat` and `bd_stat` → `Zram` (spec §14.2): what each zram device
//! holds, what it costs in memory, its limit, and its backing device's pages.
//!
//! Owns: the sample names of those files and their parsing, by position (5.10 prints 8
//! `mm_stat` fields, later kernels 9; a field a kernel lacks is absent, not zero).
//! Must not touch: rates or judgements (model/ does that).

use serde::Serialize;

use crate::sample::RawSample;
use crate::{Error, Result};

/// Where the zram devices' files start among a sample's names.
pub const PREFIX: &str = "sys/block/zram";

/// The sample name of a zram device's `file` (`mm_stat`, `bd_stat`).
#[must_use]
pub fn sample_name(device: &str, file: &str) -> String {
    format!("sys/block/{device}/{file}")
}

/// One zram device's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Zram {
    /// Kernel name (`zram0`).
    pub name: String,
    /// Uncompressed bytes stored (same-filled pages left out).
    pub orig_bytes: u64,
    /// Those bytes compressed.
    pub compr_bytes: u64,
    /// Memory the device uses: compressed data, fragmentation and metadata.
    pub mem_used_bytes: u64,
    /// The user's `mem_limit`; `None`: no limit (the kernel prints 0).
    pub limit_bytes: Option<u64>,
    /// Highest `mem_used_bytes` since reset.
    pub mem_used_max_bytes: u64,
    /// Same-element-filled pages (no memory used).
    pub same_pages: u64,
    /// Incompressible pages stored whole (8th field, 4.20+).
    pub huge_pages: Option<u64>,
    /// `bd_stat` (`CONFIG_ZRAM_WRITEBACK`): pages on the backing device, and pages read from
    /// and written to it (cumulative), each in 4 KiB units. `None` without the file.
    pub backing: Option<Backing>,
}

/// `bd_stat`: the backing device's figures, in 4 KiB units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub struct Backing {
    pub count: u64,
    pub reads: u64,
    pub writes: u64,
}

/// The numbers of one line, or the error naming `file`.
fn numbers(file: &str, text: &str, least: usize) -> Result<Vec<u64>> {
    let fields: Vec<u64> = text
        .split_ascii_whitespace()
        .map(|w| {
            // A signed value (an old kernel's `%8ld` for mem_limit) below 0 reads as 0.
            w.parse::<u64>()
                .ok()
                .or_else(|| w.parse::<i64>().ok().map(|v| v.max(0).unsigned_abs()))
                .ok_or_else(|| Error::parse(file, 1, format!("{w:?} is not a number")))
        })
        .collect::<Result<_>>()?;
    if fields.len() < least {
        return Err(Error::parse(
            file,
            1,
            format!(
                "{} fields, the kernel prints at least {least}",
                fields.len()
            ),
        ));
    }
    Ok(fields)
}

/// Parses device `name`'s `mm_stat` text, and its `bd_stat` text when there is one.
pub fn parse(name: &str, mm_stat: &str, bd_stat: Option<&str>) -> Result<Zram> {
    let f = numbers(&sample_name(name, "mm_stat"), mm_stat, 7)?;
    let backing = match bd_stat {
        None => None,
        Some(t) => {
            let b = numbers(&sample_name(name, "bd_stat"), t, 3)?;
            Some(Backing {
                count: b[0],
                reads: b[1],
                writes: b[2],
            })
        }
    };
    Ok(Zram {
        name: name.to_owned(),
        orig_bytes: f[0],
        compr_bytes: f[1],
        mem_used_bytes: f[2],
        limit_bytes: (f[3] > 0).then_some(f[3]),
        mem_used_max_bytes: f[4],
        same_pages: f[5],
        huge_pages: f.get(7).copied(),
        backing,
    })
}

/// The zram devices a sample carries, in name order, and the first error among them (that
/// device is left out, the others stand).
#[must_use]
pub fn from_sample(sample: &RawSample) -> (Vec<Zram>, Option<String>) {
    let mut error = None;
    let list = sample
        .files
        .range::<String, _>(PREFIX.to_owned()..)
        .take_while(|(k, _)| k.starts_with(PREFIX))
        .filter_map(|(k, text)| {
            let device = k.strip_prefix("sys/block/")?.strip_suffix("/mm_stat")?;
            let bd = sample.file(&sample_name(device, "bd_stat"));
            parse(device, text, bd)
                .map_err(|e| {
                    error.get_or_insert_with(|| e.to_string());
                })
                .ok()
        })
        .collect();
    (list, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_fields_of_today_eight_of_5_10_and_the_backing_device() {
        // Today's kernels: orig 1 GiB, compr 256 MiB, used 260 MiB, limit 512 MiB, max 300 MiB,
        // 100 same pages, 5 compacted, 7 huge, 9 huge since set-up.
        let text = "1073741824 268435456 272629760 536870912 314572800      100        5        7        9\n";
        let z = parse("zram0", text, Some("      12        3       40\n")).unwrap();
        assert_eq!(z.orig_bytes, 1 << 30);
        assert_eq!(z.compr_bytes, 256 << 20);
        assert_eq!(z.mem_used_bytes, 260 << 20);
        assert_eq!(z.limit_bytes, Some(512 << 20));
        assert_eq!(z.mem_used_max_bytes, 300 << 20);
        assert_eq!((z.same_pages, z.huge_pages), (100, Some(7)));
        assert_eq!(
            z.backing,
            Some(Backing {
                count: 12,
                reads: 3,
                writes: 40
            })
        );
        // 5.10's 8 fields without a limit; no bd_stat (no CONFIG_ZRAM_WRITEBACK).
        let z = parse("zram1", "4096 100 8192 0 8192 0 0 1\n", None).unwrap();
        assert_eq!(
            (z.limit_bytes, z.huge_pages, z.backing),
            (None, Some(1), None)
        );
        // Before 4.20: 7 fields, no huge_pages.
        let z = parse("zram1", "4096 100 8192 0 8192 0 0\n", None).unwrap();
        assert_eq!(z.huge_pages, None);
    }

    #[test]
    fn a_bad_file_names_itself_and_leaves_the_others() {
        let err = parse("zram0", "1 2 3\n", None).unwrap_err().to_string();
        assert!(err.contains("sys/block/zram0/mm_stat:1"), "{err}");
        let err = parse("zram0", "1 2 x 4 5 6 7\n", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"x\" is not a number"), "{err}");
        let mut s = RawSample::default();
        for (k, v) in [
            ("sys/block/", "sda\t0\n"),
            ("sys/block/zram0/mm_stat", "1 2 3\n"),
            ("sys/block/zram1/mm_stat", "4096 100 8192 0 8192 0 0 1 0\n"),
            ("sys/block/zram1/bd_stat", "1 2 3\n"),
        ] {
            s.files.insert(k.to_owned(), v.to_owned());
        }
        let (list, error) = from_sample(&s);
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].name, "zram1");
        assert_eq!(list[0].backing.map(|b| b.writes), Some(3));
        assert!(error.unwrap().contains("zram0/mm_stat"));
    }
}
