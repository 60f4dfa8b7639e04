//! The `sys/block/` pseudo-file (whole disks and their queue settings) → `BlockDevices`.
//!
//! Owns: parsing the settings the disk table and recordings show. Must not touch: I/O.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

/// A whole disk's queue settings; each field is `None` when the file was not readable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QueueSettings {
    /// `rotational`: true for spinning disks.
    pub rotational: Option<bool>,
    /// The active scheduler (the bracketed entry of `scheduler`).
    pub scheduler: Option<String>,
    /// `nr_requests`.
    pub nr_requests: Option<u64>,
    /// `write_cache`: `write back` or `write through`.
    pub write_cache: Option<String>,
    /// Device-mapper name (`vg0-root`) for dm-N devices.
    pub dm_name: Option<String>,
    /// Hardware queues (entries of `mq/`); `None` when not read (older recordings, trees).
    pub hw_queues: Option<u32>,
    /// `wbt_lat_usec`: writeback throttling's read-latency target, µs; 0 is off. `None`
    /// when not read (no wbt in the kernel, older recordings, trees).
    pub wbt_lat_usec: Option<u64>,
    /// What the device is (`identity`), the key of its calm baselines kept across runs;
    /// `None` when the line has no identity columns (older recordings, trees) or the device
    /// has no medium (size 0: an unbound loop device).
    #[serde(skip)]
    pub identity: Option<String>,
}

/// Whole-disk names and each one's settings, shared by every disk derived from them: a
/// device's settings are the same from one tick to the next (they are re-read only at the
/// slow refresh), so each tick's `Disk` holds them by reference, not as a copy of their
/// strings (three allocations a device a tick; with 100 loop devices the saving was under
/// the noise of `cargo bench --bench sample -- tick_cold_idle_160x48_loops100`). Hashed:
/// every device of every tick looks its name up here, and a sorted map compared about ten
/// names a lookup (issue 52).
pub type BlockDevices = HashMap<String, Arc<QueueSettings>>;

/// Parses the pseudo-file.
#[must_use]
pub fn parse(text: &str) -> BlockDevices {
    let mut out = HashMap::new();
    for line in text.lines() {
        let mut f = line.split('\t');
        let Some(name) = f.next().filter(|n| !n.is_empty()) else {
            continue;
        };
        let mut next = || f.next().map(str::trim).filter(|s| !s.is_empty());
        let settings = QueueSettings {
            rotational: next().and_then(|s| match s {
                "0" => Some(false),
                "1" => Some(true),
                _ => None,
            }),
            scheduler: next().and_then(active_scheduler),
            nr_requests: next().and_then(|s| s.parse().ok()),
            write_cache: next().map(str::to_owned),
            dm_name: next().map(str::to_owned),
            hw_queues: next().and_then(|s| s.parse().ok()),
            wbt_lat_usec: next().and_then(|s| s.parse().ok()),
            identity: None,
        };
        let ids: Vec<Option<&str>> = (0..IDENTITY_COLUMNS).map(|_| next()).collect();
        let settings = QueueSettings {
            identity: identity(name, settings.rotational, &ids),
            ..settings
        };
        out.insert(name.to_owned(), Arc::new(settings));
    }
    out
}

/// The identity columns at the end of a line (`source::block_id`): wwid, serial, model,
/// dm uuid, md uuid, loop backing file, its `dev:inode`, loop offset, size, logical block size.
const IDENTITY_COLUMNS: usize = 10;

/// What a device is, from its identity columns (`ids`, in `IDENTITY_COLUMNS` order), as one
/// line of text without tabs: the first the kernel gives of device-mapper's uuid, md's uuid,
/// a loop device's backing file with its inode and offset (whatever loop number it is bound
/// to), the wwid, the serial with the model; else, with neither, the name (a weak identity:
/// the same name, size and block size). Each ends with the size in sectors, the logical
/// block size and the rotational flag, so a resized or re-formatted device is another. `None`
/// without a size, or with size 0 (no medium).
fn identity(name: &str, rotational: Option<bool>, ids: &[Option<&str>]) -> Option<String> {
    let [
        wwid,
        serial,
        model,
        dm,
        md,
        backing,
        inode,
        offset,
        size,
        lbs,
    ] = ids
    else {
        return None;
    };
    let size = size.filter(|s| *s != "0")?;
    let what = if let Some(u) = dm {
        format!("dm-uuid={u}")
    } else if let Some(u) = md {
        format!("md-uuid={u}")
    } else if let Some(b) = backing {
        format!(
            "loop={b};ino={};offset={}",
            inode.unwrap_or("?"),
            offset.unwrap_or("0")
        )
    } else if let Some(w) = wwid {
        format!("wwid={w}")
    } else if let Some(s) = serial {
        format!("serial={s};model={}", model.unwrap_or(""))
    } else {
        format!("name={name}")
    };
    let rot = rotational.map_or("?", |r| if r { "1" } else { "0" });
    let id = format!("{what};size={size};lbs={};rot={rot}", lbs.unwrap_or("?"));
    Some(id.replace(['\t', '\n'], " "))
}

/// `none [mq-deadline] kyber` → `mq-deadline`; a lone `none` → `none`.
fn active_scheduler(s: &str) -> Option<String> {
    if let Some(open) = s.find('[') {
        let rest = &s[open + 1..];
        return rest.find(']').map(|close| rest[..close].to_owned());
    }
    s.split_whitespace().next().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        let q =
            parse("dm-0\t0\tnone\t128\twrite through\tvg0-root\nsda\t1\tnoop [cfq]\t\t\t\nsr0\n");
        assert_eq!(q["dm-0"].dm_name.as_deref(), Some("vg0-root"));
        assert_eq!(q["dm-0"].rotational, Some(false));
        assert_eq!(q["sda"].scheduler.as_deref(), Some("cfq"));
        assert_eq!(q["sda"].nr_requests, None);
        assert_eq!(*q["sr0"], QueueSettings::default());
        // The columns of a VM's virtio disk and a loop device here (6.18).
        let q = parse(
            "vda\t1\tnone [mq-deadline] kyber bfq\t256\twrite back\t\t2\t75000\nloop0\t0\t[none] mq-deadline\t128\twrite through\t\t1\t0\n",
        );
        assert_eq!(q["vda"].wbt_lat_usec, Some(75_000));
        assert_eq!(q["vda"].hw_queues, Some(2));
        assert_eq!(q["loop0"].wbt_lat_usec, Some(0));
    }

    #[test]
    fn identity_from_the_kernels_strongest_id() {
        let line = |ids: &str| format!("dev\t0\tnone\t64\t\t\t1\t0\t{ids}\n");
        let id = |name: &str, ids: &str| {
            parse(&line(ids).replacen("dev", name, 1))[name]
                .identity
                .clone()
        };
        // vda here: a virtio serial, no model.
        assert_eq!(
            id("vda", "\toverlayblk\t\t\t\t\t\t\t536870912\t512").as_deref(),
            Some("serial=overlayblk;model=;size=536870912;lbs=512;rot=0")
        );
        // The wwid wins over the serial; dm's uuid over everything.
        assert_eq!(
            id("nvme0n1", "eui.01\tS3X\tSamsung\t\t\t\t\t\t100\t4096").as_deref(),
            Some("wwid=eui.01;size=100;lbs=4096;rot=0")
        );
        assert_eq!(
            id("dm-0", "\t\t\tLVM-abc\t\t\t\t\t100\t512").as_deref(),
            Some("dm-uuid=LVM-abc;size=100;lbs=512;rot=0")
        );
        // A loop device is its backing file, whatever its number.
        let backed = "\t\t\t\t\t/dev/shm/img\t20:7\t0\t100\t512";
        assert_eq!(id("loop3", backed), id("loop5", backed));
        assert_eq!(
            id("loop3", backed).as_deref(),
            Some("loop=/dev/shm/img;ino=20:7;offset=0;size=100;lbs=512;rot=0")
        );
        // No id at all: the name, weakly.
        assert_eq!(
            id("sdz", "\t\t\t\t\t\t\t\t100\t512").as_deref(),
            Some("name=sdz;size=100;lbs=512;rot=0")
        );
        // An unbound loop device (size 0), and a line without the columns: none.
        assert_eq!(id("loop0", "\t\t\t\t\t\t\t\t0\t512"), None);
        assert_eq!(parse("vda\t1\tnone\t64\t\t\t1\t0\n")["vda"].identity, None);
    }

    #[test]
    fn scheduler() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
    }
}
