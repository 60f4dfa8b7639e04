//! What a whole disk is, read from sysfs beside its queue settings, so that a calm baseline
//! kept across runs is used only for the same device (`model::saturation::Judge`,
//! `source::baselines`). `maj:min` and the name are not enough: a loop device or a
//! hot-plugged disk gets the name of one gone before it.
//!
//! The identity columns end each line of the `sys/block/` pseudo-file (`names::BLOCK_DEVICES`),
//! raw trimmed text, empty when the kernel does not give it: `wwid` (`wwid`, else
//! `device/wwid`: NVMe namespaces, SCSI with VPD page 0x83), `serial` (`serial`, else
//! `device/serial`: virtio-blk, NVMe), `device/model`, device-mapper's `dm/uuid`, md's
//! `md/uuid`, a loop device's `loop/backing_file`, that file's `dev:inode` (one `stat`, so a
//! file deleted and created again under the same name is another device) and
//! `loop/offset`, then `size` (sectors) and `queue/logical_block_size`. A disk is read when it
//! first shows and on the periodic settings refresh (`source::fs`, at most once a minute),
//! only the files of its kind: a dm, md or loop device has no wwid or serial, and a failed
//! sysfs lookup costs a path walk.
//!
//! Owns: reading those files. Must not touch: what makes two identities the same
//! (`parse::queue::identity`).

use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::read::read_optional;

/// Appends the identity columns of `dev` (a `/sys/block` entry at `base`) to its line, each
/// after a tab.
pub(super) fn push_identity(text: &mut String, dev: &str, base: &Path, buf: &mut Vec<u8>) {
    let mut read = |rel: &str| -> Option<String> {
        let v = read_optional(&base.join(rel), buf).ok().flatten()?;
        // One line of printable text: the pseudo-file is tab- and line-separated.
        let v: String = v
            .trim()
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        (!v.is_empty()).then_some(v)
    };
    let plain = !["dm-", "md", "loop", "zram", "nbd"]
        .iter()
        .any(|p| dev.starts_with(p));
    let (wwid, serial, model) = if plain {
        (
            read("wwid").or_else(|| read("device/wwid")),
            read("serial").or_else(|| read("device/serial")),
            read("device/model"),
        )
    } else {
        (None, None, None)
    };
    let dm_uuid = dev.starts_with("dm-").then(|| read("dm/uuid")).flatten();
    let md_uuid = dev.starts_with("md").then(|| read("md/uuid")).flatten();
    let (backing, inode, offset) = if dev.starts_with("loop") {
        let backing = read("loop/backing_file");
        let inode = backing
            .as_deref()
            .and_then(|b| std::fs::metadata(b).ok())
            .map(|m| format!("{}:{}", m.dev(), m.ino()));
        (backing, inode, read("loop/offset"))
    } else {
        (None, None, None)
    };
    let size = read("size");
    let lbs = read("queue/logical_block_size");
    for v in [
        wwid, serial, model, dm_uuid, md_uuid, backing, inode, offset, size, lbs,
    ] {
        let _ = write!(text, "\t{}", v.unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_devices_identity_names_its_backing_file_and_inode() {
        let dir = tempfile::tempdir().unwrap();
        let backing = dir.path().join("img");
        std::fs::write(&backing, b"x").unwrap();
        let base = dir.path().join("loop3");
        std::fs::create_dir_all(base.join("loop")).unwrap();
        std::fs::create_dir_all(base.join("queue")).unwrap();
        std::fs::write(
            base.join("loop/backing_file"),
            format!("{}\n", backing.display()),
        )
        .unwrap();
        std::fs::write(base.join("loop/offset"), "0\n").unwrap();
        std::fs::write(base.join("size"), "1024\n").unwrap();
        std::fs::write(base.join("queue/logical_block_size"), "512\n").unwrap();
        // A serial a loop device does not have is not looked up.
        std::fs::write(base.join("serial"), "nope\n").unwrap();
        let mut text = String::new();
        push_identity(&mut text, "loop3", &base, &mut Vec::new());
        let m = std::fs::metadata(&backing).unwrap();
        let want = format!(
            "\t\t\t\t\t\t{}\t{}:{}\t0\t1024\t512",
            backing.display(),
            m.dev(),
            m.ino()
        );
        assert_eq!(text, want);
        // A disk's serial, with a stray newline inside made a space.
        let base = dir.path().join("vda");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("serial"), "ab\ncd\n").unwrap();
        let mut text = String::new();
        push_identity(&mut text, "vda", &base, &mut Vec::new());
        assert_eq!(text, "\t\tab cd\t\t\t\t\t\t\t\t");
    }
}
