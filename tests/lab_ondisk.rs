//! Issue 53's acceptance in the kernel lab on trixie (6.12, cachestat, debugfs `stats`
//! summed over the wbs): `common/lab_ondisk.rs` says what is checked. One boot for the
//! binary (about 30 s under TCG); skips, saying why, where the lab cannot run. Hold
//! `flock -o /tmp/pw-lab.lock`.
//!
//! The ETA was `BdiWriteBandwidth`'s (2.03-2.07 s at 64.9-66.0 MB/s: the sum of the wbs'
//! `avg_write_bandwidth`, the new `/box` wb starting at the kernel's 100 MB/s guess) while
//! sync took 6.2-6.3 s at the 20 MB/s cap: while the device writes back, the drain is now its
//! measured rate (spec §15.5). A dd that lived 4.7 s could fall between two 5 s process walks
//! and was then never listed (1 boot of 2): a first walk now names the writers started
//! within the last 10 s and is followed by another a second later; and the file's bytes were
//! the scan's, every 5 s (140 MB while vda's fell from 147 to 50 MB), kept after sync: the
//! listed files are now measured again at every sample, read right after meminfo, vmstat
//! and the debugfs figures (the device completes writeback 8 MiB at a time: a file read
//! later was one completion off, 20 % of 40 MB). 3 boots of 3 passed since the last.
#![allow(clippy::unwrap_used)]

#[path = "common/lab_ondisk.rs"]
mod lab_ondisk;

#[test]
fn trixie_device_figures_are_meminfos() {
    if let Some(run) = lab_ondisk::run("trixie") {
        assert!(run.kernel.starts_with("6.12."), "{}", run.kernel);
        lab_ondisk::device_figures_hold(run);
    }
}

#[test]
fn trixie_dds_file_is_listed_until_sync_returns() {
    if let Some(run) = lab_ondisk::run("trixie") {
        lab_ondisk::file_listed_until_sync(run);
    }
}

#[test]
fn trixie_sync_takes_the_printed_eta() {
    if let Some(run) = lab_ondisk::run("trixie") {
        lab_ondisk::sync_takes_the_printed_eta(run);
    }
}

#[test]
fn trixie_file_bytes_follow_the_device() {
    if let Some(run) = lab_ondisk::run("trixie") {
        lab_ondisk::file_bytes_follow_the_device(run);
    }
}
