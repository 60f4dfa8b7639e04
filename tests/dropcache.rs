//! Dropping caches for real (root only; skipped with a printed reason otherwise): a freshly
//! written and synced 32 MiB file is mostly in the page cache, and after `drop_caches(1)`
//! almost none of it is, by cachestat and by mincore alike.
#![allow(clippy::unwrap_used)]

use std::io::Write;

use pagewatch::jobs::cachestat::{cached_pages, cached_pages_mincore};
use pagewatch::jobs::dropcache::{availability, drop_caches};

#[test]
fn dropping_level_1_empties_a_files_cache() {
    if let Err(why) = availability() {
        println!("skipped: {why}");
        return;
    }
    // On disk (the target dir), not tmpfs: tmpfs pages cannot be dropped.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let p = dir.path().join("f");
    let mut f = std::fs::File::create(&p).unwrap();
    let block = vec![0x5au8; 1 << 20];
    for _ in 0..32 {
        f.write_all(&block).unwrap();
    }
    f.sync_all().unwrap();
    drop(f);
    let before = cached_pages(&p).unwrap();
    assert_eq!(
        before.pages_total,
        (32 << 20) / rustix::param::page_size() as u64
    );
    assert!(
        before.pages_cached * 10 >= before.pages_total * 9,
        "before: {before:?}"
    );
    let took = drop_caches(1).unwrap();
    let after = cached_pages(&p).unwrap();
    let after_mincore = cached_pages_mincore(&p).unwrap();
    println!(
        "{:?}: {}/{} pages cached before, {} after ({} by mincore); sync + drop took {took:?}",
        before.method, before.pages_cached, before.pages_total, after.pages_cached, after_mincore
    );
    assert!(
        after.pages_cached * 20 <= after.pages_total,
        "after: {after:?}"
    );
    assert!(after_mincore * 20 <= after.pages_total);
    // Synced before the drop: nothing of it is dirty (cachestat only reports this).
    if let Some(d) = after.dirty {
        assert_eq!(d, 0);
    }
}
