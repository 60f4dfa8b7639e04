use super::*;
use std::io::Write;

#[test]
fn only_paths_of_regular_looking_files_are_opened() {
    assert!(worth_opening("/home/u/big.iso"));
    assert!(worth_opening("/mnt/x/f (deleted)"));
    for t in [
        "socket:[123]",
        "pipe:[9]",
        "anon_inode:[eventfd]",
        "/dev/null",
        "/proc/1/stat",
        "/memfd:x (deleted)",
    ] {
        assert!(!worth_opening(t), "{t}");
    }
    assert_eq!(clean("a\tb\nc"), "a?b?c");
}

/// This process's own open file, just written: listed with its dirty pages (root or not:
/// the caller owns it). Skips, saying why, on a kernel without cachestat.
#[test]
fn own_open_file_with_dirty_pages_is_listed_then_remembered_by_path() {
    // On the disk, not on a tmpfs /tmp (shmem is skipped).
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let p = dir.path().join("dirty.bin");
    let mut f = File::create(&p).unwrap();
    f.write_all(&vec![1u8; 8 << 20]).unwrap();
    let mut d = DirtyFiles::new(Path::new("/proc"));
    d.scan(&[std::process::id()], 1);
    if d.no_cachestat {
        eprintln!("skipped: no cachestat(2) on this kernel (ENOSYS)");
        return;
    }
    let text = d.text.clone().unwrap();
    let path = p.to_string_lossy();
    let line = text
        .lines()
        .find(|l| l.ends_with(&*path))
        .unwrap_or_else(|| panic!("{path} not in {text}"));
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[0], "f");
    assert_eq!(cols[1], std::process::id().to_string());
    let dirty: u64 = cols[5].parse::<u64>().unwrap() + cols[6].parse::<u64>().unwrap();
    let pages = (8u64 << 20) / rustix::param::page_size() as u64;
    // Written just now: dirty or under writeback, unless the flusher already wrote some.
    assert!(dirty > 0 && dirty <= pages, "{line}");
    // Closed (its writer gone): measured again by its path, as `x`.
    drop(f);
    d.scan(&[], 2);
    let text = d.text.clone().unwrap();
    if let Some(l) = text.lines().find(|l| l.ends_with(&*path)) {
        assert!(l.starts_with("x "), "{l}");
    }
    // Forgotten a minute after it last held dirty pages.
    d.scan(&[], 2 + REMEMBER_NS);
    assert!(!d.text.unwrap().contains(&*path));
}
