//! Tests of presets, `--fio` parsing and the argv built from a spec.

use super::*;
use std::path::Path;

const COMMON_TAIL: [&str; 3] = [
    "--output-format=json+",
    "--status-interval=1",
    "--eta=never",
];

fn argv(spec: &str) -> Vec<String> {
    FioSpec::parse(spec).unwrap().args(Path::new("/d/f.fio"))
}

fn with_tail(head: &[&str]) -> Vec<String> {
    head.iter()
        .chain(COMMON_TAIL.iter())
        .map(|s| (*s).to_string())
        .collect()
}

const BASE: [&str; 9] = [
    "--name=randread",
    "--filename=/d/f.fio",
    "--rw=randread",
    "--bs=8192",
    "--size=2147483648",
    "--ioengine=sync",
    "--iodepth=1",
    "--direct=0",
    "--invalidate=0",
];

#[test]
fn randread_is_the_classic_experiment() {
    let mut want = BASE.to_vec();
    want.push("--readonly");
    assert_eq!(argv("randread"), with_tail(&want));
}

#[test]
fn randread_norandommap_adds_the_flag() {
    let mut want = BASE.to_vec();
    want[0] = "--name=randread-norandommap";
    want.extend(["--norandommap=1", "--readonly"]);
    assert_eq!(argv("randread-norandommap"), with_tail(&want));
}

#[test]
fn randwrite_is_not_readonly() {
    let mut want = BASE.to_vec();
    want[0] = "--name=randwrite";
    want[2] = "--rw=randwrite";
    assert_eq!(argv("randwrite"), with_tail(&want));
}

#[test]
fn sequential_read_and_write_presets() {
    let read = argv("read");
    assert!(read.contains(&"--rw=read".to_string()));
    assert!(read.contains(&"--bs=1048576".to_string()));
    assert!(read.contains(&"--readonly".to_string()));
    let write = argv("write");
    assert!(write.contains(&"--rw=write".to_string()));
    assert!(write.contains(&"--size=524288000".to_string()));
    assert!(!write.contains(&"--readonly".to_string()));
}

#[test]
fn overrides_reach_the_argv() {
    let a = argv(
        "randread,size=64M,bs=4k,ioengine=libaio,iodepth=16,direct=1,runtime=3,numjobs=2,invalidate=1",
    );
    for want in [
        "--size=67108864",
        "--bs=4096",
        "--ioengine=libaio",
        "--iodepth=16",
        "--direct=1",
        "--invalidate=1",
        "--runtime=3",
        "--time_based=1",
        "--numjobs=2",
    ] {
        assert!(a.contains(&want.to_string()), "{want} missing from {a:?}");
    }
}

#[test]
fn rw_override_changes_readonly() {
    assert!(!argv("randread,rw=randrw").contains(&"--readonly".to_string()));
    assert!(argv("write,rw=read").contains(&"--readonly".to_string()));
}

#[test]
fn prepare_only_lays_out() {
    let spec = FioSpec::parse("randread,size=32M").unwrap();
    let a = spec.prepare_args(Path::new("/d/f.fio"));
    assert!(a.contains(&"--create_only=1".to_string()));
    assert!(a.contains(&"--size=33554432".to_string()));
    // A read layout writes the blocks; a write layout only fallocates (unwritten extents).
    assert!(a.contains(&"--rw=read".to_string()));
}

#[test]
fn errors_are_clear() {
    let e = FioSpec::parse("randwhat").unwrap_err().to_string();
    assert!(
        e.contains("unknown fio preset") && e.contains("randread"),
        "{e}"
    );
    let e = FioSpec::parse("randread,colour=red")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown fio key \"colour\""), "{e}");
    let e = FioSpec::parse("randread,size").unwrap_err().to_string();
    assert!(e.contains("needs a value"), "{e}");
    let e = FioSpec::parse("randread,size=lots")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad value \"lots\" for fio size"), "{e}");
    assert!(FioSpec::parse("randread,rw=trim").is_err());
    assert!(FioSpec::parse("randread,ioengine=sg").is_err());
    assert!(FioSpec::parse("randread,iodepth=0").is_err());
    assert!(FioSpec::parse("randread,direct=2").is_err());
    assert!(
        FioSpec::parse("randread,size=4k").is_err(),
        "bs 8k > size 4k"
    );
    assert!(FioSpec::parse("").is_err());
}

#[test]
fn runtime_zero_means_one_pass() {
    assert_eq!(
        FioSpec::parse("randread,runtime=0").unwrap().runtime_s,
        None
    );
    assert_eq!(
        FioSpec::parse("randread,runtime=30s").unwrap().runtime_s,
        Some(30)
    );
}

#[test]
fn sizes_parse_and_print() {
    assert_eq!(parse_size("8k"), Some(8192));
    assert_eq!(parse_size("64MiB"), Some(64 << 20));
    assert_eq!(parse_size("2G"), Some(2 << 30));
    assert_eq!(parse_size("4096"), Some(4096));
    assert_eq!(parse_size("1.5G"), None);
    assert_eq!(parse_size("G"), None);
    assert_eq!(size_text(500 << 20), "500M");
    assert_eq!(size_text(2 << 30), "2G");
    assert_eq!(size_text(1000), "1000");
}

#[test]
fn display_round_trips() {
    let spec = FioSpec::parse("randread-norandommap,size=64M,runtime=5,numjobs=2").unwrap();
    assert_eq!(FioSpec::parse(&spec.to_string()).unwrap(), spec);
    assert_eq!(spec.label(), "fio randread-norandommap 64M");
}

#[test]
fn every_preset_parses() {
    for p in presets() {
        assert_eq!(FioSpec::parse(p.name).unwrap().preset, p.name);
    }
}
