//! The captured and synthetic trees under `assets/trees/`, walked with `TreeSource` and derived
//! tick by tick exactly as the live monitor would: the synthetic kernel trees (4.4 pre-zone
//! vmstat names, 4.14 14-field and 5.4 18-field diskstats) must reproduce every value their
//! README documents by hand (totalreserve, dirtyable memory, both thresholds, MemAvailable,
//! reclaim and disk rates) — they check formats and arithmetic, not what those kernels
//! compute; the trees captured on real 5.10, 6.1 and 6.12 kernels in the kernel lab must give
//! the kernel's own thresholds and MemAvailable on every root; the live captures must show
//! what happened while they were taken (fio writes, eaten memory), and corrupted, truncated or empty files must give an error that
//! names `proc/<file>:<line>` instead of a panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use pagewatch::model::dirty::{Mode, State};
use pagewatch::model::disk::Columns;
use pagewatch::model::{Disk, Model, Options};
use pagewatch::parse::Snapshot;
use pagewatch::source::{Source, TreeSource};

fn tree_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/trees")
        .join(name)
}

/// Every sample of a tree, parsed, with the model derived against the previous sample.
fn walk_with(dir: &Path, opts: Options) -> Vec<(Snapshot, Model)> {
    let mut src = TreeSource::open(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut out: Vec<(Snapshot, Model)> = Vec::new();
    while let Some(raw) = src
        .next_sample()
        .unwrap_or_else(|e| panic!("{}: sample {}: {e}", dir.display(), out.len()))
    {
        let snap = Snapshot::parse(&raw)
            .unwrap_or_else(|e| panic!("{}: root {:03}: {e}", dir.display(), out.len()));
        let model = Model::derive(out.last().map(|(s, _)| s), &snap, opts);
        out.push((snap, model));
    }
    out
}

fn walk(name: &str) -> Vec<Model> {
    let dir = tree_dir(name);
    let samples = walk_with(&dir, Options::default());
    let roots = std::fs::read_dir(&dir)
        .expect("read tree dir")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir() && e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .count();
    assert_eq!(samples.len(), roots, "{name}: one sample per numbered root");
    samples.into_iter().map(|(_, m)| m).collect()
}

fn readme(name: &str) -> String {
    std::fs::read_to_string(tree_dir(name).join("README.md"))
        .unwrap_or_else(|e| panic!("{name}/README.md: {e}"))
}

/// `1234567` as the READMEs print it: `1 234 567`.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The expected values below are copied from the README; make sure the README still says so.
fn documented(readme: &str, tree: &str, n: u64) {
    let g = grouped(n);
    assert!(
        readme.contains(&g) || readme.contains(&n.to_string()),
        "{tree}/README.md no longer documents {g}: update this test with the README"
    );
}

fn disk<'a>(m: &'a Model, name: &str) -> &'a Disk {
    m.disks.iter().find(|d| d.name == name).unwrap_or_else(|| {
        panic!(
            "no disk {name} in {:?}",
            m.disks.iter().map(|d| &d.name).collect::<Vec<_>>()
        )
    })
}

/// A figure as iostat prints it.
fn f2(v: Option<f64>) -> String {
    format!("{:.2}", v.expect("figure is None"))
}

// ---------------------------------------------------------------------------------------------
// synthetic trees: README values exactly

/// One root's row of the README's "Expected values per root" table.
struct Row {
    avail: u64,
    thresh: u64,
    bg: u64,
    freerun: u64,
    dirty_wb: u64,
    mem_available_kb: u64,
}

struct Synthetic {
    tree: &'static str,
    totalreserve: u64,
    sum_low: u64,
    modes: (Mode, Mode),
    rows: [Row; 3],
}

const fn row(avail: u64, thresh: u64, bg: u64, freerun: u64, dirty_wb: u64, ma: u64) -> Row {
    Row {
        avail,
        thresh,
        bg,
        freerun,
        dirty_wb,
        mem_available_kb: ma,
    }
}

const SYNTHETIC: [Synthetic; 3] = [
    Synthetic {
        tree: "kernel-4.14-diskstats14",
        totalreserve: 42_334,
        sum_low: 21_117,
        modes: (Mode::Ratio, Mode::Ratio),
        rows: [
            row(3_610_930, 722_009, 360_564, 541_286, 40_522, 14_660_428),
            row(3_611_562, 722_136, 360_627, 541_381, 56_101, 14_635_416),
            row(3_614_388, 722_701, 360_909, 541_805, 65_120, 14_631_464),
        ],
    },
    Synthetic {
        tree: "kernel-5.4-diskstats18",
        totalreserve: 70_588,
        sum_low: 30_491,
        modes: (Mode::Ratio, Mode::Bytes),
        rows: [
            row(6_851_970, 1_370_059, 65_536, 717_797, 12_880, 27_581_720),
            row(6_849_751, 1_369_615, 65_536, 717_575, 14_830, 27_572_912),
            row(6_848_228, 1_369_311, 65_536, 717_423, 12_036, 27_566_796),
        ],
    },
    Synthetic {
        tree: "kernel-4.4-vmstat-prezone",
        totalreserve: 25_855,
        sum_low: 14_077,
        modes: (Mode::Ratio, Mode::Ratio),
        rows: [
            row(287_366, 86_153, 14_312, 50_232, 1_250, 1_157_728),
            row(266_533, 79_907, 13_274, 46_590, 1_212, 1_030_016),
            row(260_376, 78_061, 12_967, 45_514, 1_277, 1_002_472),
        ],
    },
];

#[test]
fn synthetic_trees_match_readme_exactly() {
    for t in &SYNTHETIC {
        let text = readme(t.tree);
        assert!(
            text.contains("**Synthetic.**"),
            "{}: README does not say synthetic",
            t.tree
        );
        documented(&text, t.tree, t.totalreserve);
        documented(&text, t.tree, t.sum_low);
        let models = walk(t.tree);
        assert_eq!(models.len(), t.rows.len(), "{}", t.tree);
        for (i, (m, r)) in models.iter().zip(&t.rows).enumerate() {
            let at = format!("{}/{i:03}", t.tree);
            for n in [
                r.avail,
                r.thresh,
                r.bg,
                r.freerun,
                r.dirty_wb,
                r.mem_available_kb,
            ] {
                documented(&text, t.tree, n);
            }
            let d = &m.dirty;
            assert_eq!(
                d.totalreserve_pages,
                Some(t.totalreserve),
                "{at} totalreserve"
            );
            assert_eq!(d.dirtyable_pages, Some(r.avail), "{at} dirtyable");
            assert_eq!(
                d.derived_thresh_pages,
                Some(r.thresh),
                "{at} derived thresh"
            );
            assert_eq!(d.derived_bg_thresh_pages, Some(r.bg), "{at} derived bg");
            // The kernel's own figures (written into vmstat) equal ours.
            assert_eq!(
                d.thresh_pages, d.derived_thresh_pages,
                "{at} kernel vs derived thresh"
            );
            assert_eq!(
                d.bg_thresh_pages, d.derived_bg_thresh_pages,
                "{at} kernel vs derived bg"
            );
            assert_eq!(d.freerun_pages, Some(r.freerun), "{at} freerun");
            assert_eq!(
                d.dirty_writeback_pages,
                Some(r.dirty_wb),
                "{at} dirty+writeback"
            );
            assert_eq!(
                (d.thresh_mode, d.bg_thresh_mode),
                (Some(t.modes.0), Some(t.modes.1)),
                "{at}"
            );
            assert_eq!(
                m.memory.derived_MemAvailable,
                Some(r.mem_available_kb),
                "{at} derived MemAvailable"
            );
            assert_eq!(
                m.memory.MemAvailable,
                Some(r.mem_available_kb),
                "{at} kernel MemAvailable"
            );
            let wm = m
                .reclaim
                .watermarks
                .clone()
                .expect("watermarks need zoneinfo");
            assert_eq!(wm.low_pages, t.sum_low, "{at} Σlow");
            assert_eq!(m.interval_s, (i > 0).then_some(1.0), "{at} interval");
        }
    }
}

/// An iostat column by its printed name.
fn column(c: &Columns, name: &str) -> Option<f64> {
    c.get(name)
        .unwrap_or_else(|| panic!("unknown iostat column {name:?}"))
}

/// The READMEs' `iostat -x equivalents (…): DEV 000→001: r/s 150.00, …; DEV …` line, every
/// figure compared at iostat's 2-decimal rounding (partitions included).
#[test]
fn synthetic_iostat_equivalents_match_readme() {
    let mut checked = 0;
    for t in &SYNTHETIC {
        let text = readme(t.tree);
        let Some(line) = text
            .lines()
            .find(|l| l.starts_with("iostat -x equivalents"))
        else {
            continue;
        };
        let models = walk_with(&tree_dir(t.tree), Options { partitions: true });
        let (_, list) = line.split_once("): ").unwrap();
        for dev in list.trim_end_matches('.').split("; ") {
            let (head, figures) = dev.split_once(": ").unwrap();
            let (name, span) = head.split_once(' ').unwrap();
            let root: usize = span.split('→').nth(1).unwrap().parse().unwrap();
            let c = disk(&models[root].1, name).cols;
            for fig in figures.split(", ") {
                let (col, want) = fig.rsplit_once(' ').unwrap();
                assert_eq!(f2(column(&c, col)), want, "{} {name} {span} {col}", t.tree);
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "only {checked} README figures found");
}

#[test]
fn kernel_4_14_diskstats14() {
    let tree = "kernel-4.14-diskstats14";
    let models = walk(tree);
    let text = readme(tree);
    for (i, m) in models.iter().enumerate() {
        assert!(!m.disks.is_empty(), "{tree}/{i:03}: no disks");
        for d in &m.disks {
            assert_eq!(
                (d.cols.d_s, d.cols.f_s),
                (None, None),
                "{tree}/{i:03} {}: 14 fields",
                d.name
            );
            assert_eq!(
                (d.cols.dkB_s, d.cols.d_await, d.cols.f_await),
                (None, None, None)
            );
            if i == 0 {
                assert_eq!(d.cols.r_s, None, "first tick has no rates");
            } else {
                assert!(
                    d.cols.r_s.is_some() && d.cols.aqu_sz.is_some(),
                    "{}",
                    d.name
                );
            }
        }
        // sda1 is in diskstats only (a partition): hidden by default. dm-0 is whole.
        let names: Vec<&str> = m.disks.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["sda", "sdb", "dm-0"], "{tree}/{i:03}");
        assert_eq!(disk(m, "dm-0").dm_name.as_deref(), Some("vg0-root"));
        // No /proc/pressure before 4.20.
        assert_eq!(
            (m.pressure.cpu, m.pressure.memory, m.pressure.io),
            (None, None, None)
        );
    }
    // sdb is flat: zeros, not None.
    assert_eq!(disk(&models[2], "sdb").cols.w_s, Some(0.0));
    // With partitions on, sda1 appears and carries sda's deltas.
    let with_parts = walk_with(&tree_dir(tree), Options { partitions: true });
    let p = with_parts[1]
        .1
        .disks
        .iter()
        .find(|d| d.name == "sda1")
        .expect("sda1 with partitions");
    assert!(p.partition);
    assert_eq!((p.cols.w_s, p.cols.r_s), (Some(1200.0), Some(150.0)));

    // Rates between roots (Δt = 1 s, so rate = Δ), from the README's table.
    let rates: [(u64, u64); 7] = [
        (41_230, 9_850),
        (1_024, 0),
        (38_905, 9_311),
        (998, 0),
        (3, 0),
        (412, 388),
        (150, 96),
    ];
    for (k, (a, b)) in rates.iter().enumerate() {
        for (m, want) in [(&models[1], a), (&models[2], b)] {
            documented(&text, tree, *want);
            let r = &m.reclaim;
            let got = [
                r.pgscan_kswapd_s,
                r.pgscan_direct_s,
                r.pgsteal_kswapd_s,
                r.pgsteal_direct_s,
                r.allocstall_s,
                r.refault_s,
                r.pgmajfault_s,
            ][k];
            assert_eq!(got, Some(*want as f64), "{tree} rate #{k}");
        }
    }
    assert_eq!(models[1].dirty.dirtied_per_s, Some(28_379.0));
    assert_eq!(models[1].dirty.written_per_s, Some(12_800.0));
    assert_eq!(models[2].dirty.dirtied_per_s, Some(21_079.0));
    assert_eq!(models[2].dirty.written_per_s, Some(12_060.0));
}

#[test]
fn kernel_5_4_diskstats18() {
    let tree = "kernel-5.4-diskstats18";
    let models = walk(tree);
    for (i, m) in models.iter().enumerate().skip(1) {
        for d in &m.disks {
            assert!(
                d.cols.d_s.is_some(),
                "{tree}/{i:03} {}: 18 fields have discards",
                d.name
            );
            assert!(d.cols.dkB_s.is_some() && d.cols.d_await.is_some());
            assert_eq!(
                (d.cols.f_s, d.cols.f_await),
                (None, None),
                "{tree}/{i:03} {}: no flushes",
                d.name
            );
        }
    }
    let names: Vec<&str> = models[0].disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["nvme0n1", "md0"]);
    // Discards 001→002 on nvme0n1: d/s 24, dkB/s 1048576, d_await 1.67, dareq-sz 43690.67.
    let c = disk(&models[2], "nvme0n1").cols;
    assert_eq!(
        [f2(c.d_s), f2(c.dkB_s), f2(c.d_await), f2(c.dareq_sz)],
        ["24.00", "1048576.00", "1.67", "43690.67"]
    );
    assert_eq!(disk(&models[1], "nvme0n1").cols.d_s, Some(0.0));
    // md0 on 5.4 accounts no time: awaits and %util are 0, not NaN.
    for m in &models[1..] {
        let c = disk(m, "md0").cols;
        assert!(c.r_s.unwrap() > 0.0);
        for v in [c.r_await, c.w_await, c.aqu_sz, c.util_pct] {
            assert_eq!(v, Some(0.0));
        }
    }
    // PSI: cpu has only `some` before 5.13. README: cpu some 11.25 % / 9.83 %, memory some
    // 0.12 % / 0.00 %, memory full 0.00 % / 0.00 %, io some 8.51 % / 9.14 %, io full 6.12 % / 7.01 %.
    let pct = |m: &Model| {
        let p = m.pressure;
        let (cpu, mem, io) = (p.cpu.unwrap(), p.memory.unwrap(), p.io.unwrap());
        assert!(cpu.full.is_none(), "5.4 cpu PSI has no full line");
        [cpu.some, mem.some, mem.full, io.some, io.full].map(|l| f2(l.unwrap().total_pct))
    };
    assert_eq!(pct(&models[1]), ["11.25", "0.12", "0.00", "8.51", "6.12"]);
    assert_eq!(pct(&models[2]), ["9.83", "0.00", "0.00", "9.14", "7.01"]);
    let io = models[1]
        .pressure
        .io
        .unwrap()
        .some
        .unwrap()
        .total_pct
        .unwrap();
    assert!((io - 8.51).abs() < 1e-9, "io some {io}");
    assert_eq!(
        models[0].pressure.io.unwrap().some.unwrap().total_pct,
        None,
        "first tick"
    );
    // Reclaim flat at 0.
    assert_eq!(models[2].reclaim.pgscan_kswapd_s, Some(0.0));
    assert_eq!(
        models[2].reclaim.kswapd_efficiency_pct, None,
        "nothing scanned"
    );
}

#[test]
fn kernel_4_4_prezone_summed_reclaim() {
    let tree = "kernel-4.4-vmstat-prezone";
    let text = readme(tree);
    let models = walk(tree);
    // README "Rates between roots": summed per-zone families and single counters, per second.
    let want: [(&str, [u64; 2]); 9] = [
        ("pgscan_kswapd", [7_168, 5_120]),
        ("pgscan_direct", [2_048, 1_024]),
        ("pgsteal_kswapd", [6_635, 4_841]),
        ("pgsteal_direct", [1_898, 947]),
        ("allocstall", [9, 4]),
        ("pswpin", [88, 140]),
        ("pswpout", [1_210, 860]),
        ("pgmajfault", [1_332, 911]),
        ("workingset_refault", [1_310, 905]),
    ];
    for (name, vals) in want {
        for (k, v) in vals.iter().enumerate() {
            documented(&text, tree, *v);
            let r = &models[k + 1].reclaim;
            let got = match name {
                "pgscan_kswapd" => r.pgscan_kswapd_s,
                "pgscan_direct" => r.pgscan_direct_s,
                "pgsteal_kswapd" => r.pgsteal_kswapd_s,
                "pgsteal_direct" => r.pgsteal_direct_s,
                "allocstall" => r.allocstall_s,
                "pswpin" => r.pswpin_s,
                "pswpout" => r.pswpout_s,
                "pgmajfault" => r.pgmajfault_s,
                _ => r.refault_s,
            };
            assert_eq!(got, Some(*v as f64), "{tree} {name} {k:03}→{:03}", k + 1);
        }
    }
    let r = &models[1].reclaim;
    assert_eq!(r.kswapd_efficiency_pct, Some(6_635.0 / 7_168.0 * 100.0));
    assert_eq!(r.direct_efficiency_pct, Some(1_898.0 / 2_048.0 * 100.0));
    // Pre-5.9: one refault counter, no anon/file split.
    assert_eq!((r.refault_anon_s, r.refault_file_s), (None, None));
    assert_eq!(models[1].dirty.dirtied_per_s, Some(32.0));
    assert_eq!(models[2].dirty.written_per_s, Some(56.0));
    for m in &models {
        assert_eq!(m.sysctl.watermark_scale_factor, None, "sysctl is 4.6+");
        assert_eq!(
            (m.pressure.cpu, m.pressure.memory, m.pressure.io),
            (None, None, None)
        );
        for d in &m.disks {
            assert_eq!(
                (d.cols.d_s, d.cols.f_s),
                (None, None),
                "{}: 14 fields",
                d.name
            );
        }
    }
    // vda 000→001: 1420 reads, 11 360 ms → r_await 8.00; sr0 never used → not shown.
    let names: Vec<&str> = models[1].disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["vda"]);
    let c = disk(&models[1], "vda").cols;
    assert_eq!(
        [f2(c.r_s), f2(c.r_await), f2(c.w_s)],
        ["1420.00", "8.00", "310.00"]
    );
}

// ---------------------------------------------------------------------------------------------
// live captures

const LIVE: [&str; 3] = ["live-idle", "live-fio-randwrite", "live-memeaten"];

/// `calc / kernel (Δ)` from a README cross-check cell.
fn calc_kernel(cell: &str) -> (u64, u64) {
    let mut it = cell.split('/').map(|t| {
        t.split_whitespace()
            .next()
            .expect("number")
            .parse()
            .expect("number")
    });
    (
        it.next().expect("calc / kernel"),
        it.next().expect("calc / kernel"),
    )
}

#[test]
fn live_trees_match_readme_cross_check() {
    for tree in LIVE {
        let text = readme(tree);
        // | root | uptime | MemFree/4 | nr_free_pages | totalreserve | Σlow | dirtyable |
        // thresh calc / kernel (Δ) | bg calc / kernel (Δ) | MemAvailable kB calc / kernel (Δ) |
        let rows: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| l.starts_with("| 0"))
            .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
            .collect();
        let models = walk(tree);
        assert_eq!(rows.len(), models.len(), "{tree}: README rows vs roots");
        for (i, (m, r)) in models.iter().zip(&rows).enumerate() {
            let at = format!("{tree}/{i:03}");
            assert_eq!(r[0], format!("{i:03}"));
            let num = |k: usize| r[k].parse::<u64>().unwrap();
            if i > 0 {
                let dt = m.interval_s.expect("interval");
                assert!((0.9..1.1).contains(&dt), "{at}: interval {dt}");
                assert!(m.cpu.is_some(), "{at}: cpu split");
            }
            let d = &m.dirty;
            assert_eq!(d.totalreserve_pages, Some(num(4)), "{at} totalreserve");
            assert_eq!(
                m.reclaim.watermarks.as_ref().map(|w| w.low_pages),
                Some(num(5)),
                "{at} Σlow"
            );
            assert_eq!(d.dirtyable_pages, Some(num(6)), "{at} dirtyable");
            // Ours equal the independent calculation exactly; the kernel's may drift from it
            // by a few pages under write load (README: allow ≤ 0.01 % of thresh).
            let (calc, kernel) = calc_kernel(r[7]);
            assert_eq!(
                (d.derived_thresh_pages, d.thresh_pages),
                (Some(calc), Some(kernel)),
                "{at} thresh"
            );
            assert!(
                calc.abs_diff(kernel) * 10_000 <= kernel,
                "{at}: thresh {calc} vs {kernel}"
            );
            let (calc, kernel) = calc_kernel(r[8]);
            assert_eq!(
                (d.derived_bg_thresh_pages, d.bg_thresh_pages),
                (Some(calc), Some(kernel)),
                "{at} bg"
            );
            assert!(
                calc.abs_diff(kernel) * 10_000 <= kernel,
                "{at}: bg {calc} vs {kernel}"
            );
            let (calc, kernel) = calc_kernel(r[9]);
            assert_eq!(
                m.memory.derived_MemAvailable,
                Some(calc),
                "{at} derived MemAvailable"
            );
            assert_eq!(m.memory.MemAvailable, Some(kernel), "{at} MemAvailable");
            assert_eq!(
                calc, kernel,
                "{at}: README says MemAvailable matches exactly"
            );
            assert!(m.pressure.io.is_some(), "{at}: this kernel has PSI");
        }
    }
}

#[test]
fn live_fio_randwrite_shows_writes_and_dirty_pages() {
    let models = walk("live-fio-randwrite");
    for (i, m) in models.iter().enumerate() {
        assert!(m.dirty.nr_dirty.unwrap() > 0, "root {i:03}: nr_dirty");
        if i > 0 {
            let w = disk(m, "vda").cols.w_s.unwrap();
            assert!(w > 0.0, "root {i:03}: vda w/s {w}");
        }
    }
}

#[test]
fn live_memeaten_has_gigabytes_less_available() {
    let max_kb = |tree: &str| {
        walk(tree)
            .iter()
            .map(|m| m.memory.MemAvailable.unwrap())
            .max()
            .unwrap()
    };
    let min_kb = |tree: &str| {
        walk(tree)
            .iter()
            .map(|m| m.memory.MemAvailable.unwrap())
            .min()
            .unwrap()
    };
    let (idle, eaten) = (min_kb("live-idle"), max_kb("live-memeaten"));
    println!("MemAvailable: live-idle ≥ {idle} kB, live-memeaten ≤ {eaten} kB");
    assert!(
        eaten + 4 * 1024 * 1024 <= idle,
        "memeaten {eaten} kB is not ≥ 4 GiB below idle {idle} kB"
    );
}

/// Trees captured on real Debian kernels in the kernel lab (`assets/lab/capture.sh`).
const LAB: [(&str, &str); 4] = [
    ("kernel-5.10-lab-writer", "5.10"),
    ("kernel-6.1-lab-writer", "6.1"),
    ("kernel-6.12-lab-writer", "6.12"),
    ("kernel-6.12-lab-memcg", "6.12"),
];

/// The writer in a cgroup capped at 300M (`assets/lab/capture-memcg.sh`): every root has
/// /box's memcg domain with the kernel's own WbDirtyThresh beside it (debugfs wb_stats of the
/// same root), and the container is paced by its own domain while the global one is below
/// background.
#[test]
fn lab_memcg_tree_has_the_container_domain() {
    let tree = "kernel-6.12-lab-memcg";
    let models = walk(tree);
    assert_eq!(models.len(), 4, "{tree}");
    let mut paced = 0;
    for (i, m) in models.iter().enumerate() {
        let at = format!("{tree}/{i:03}");
        let c = m.cgroups.as_ref().expect("cgroups");
        assert_eq!(c.note, None, "{at}");
        assert!(c.full_walk, "{at}: a tree root is always a full walk");
        assert_eq!(m.domains[0].path, "/", "{at}: global first");
        let b = m
            .domains
            .iter()
            .find(|d| d.path == "/box")
            .unwrap_or_else(|| panic!("{at}: no /box domain: {:?}", m.domains));
        assert_eq!(
            b.cgroup_ino,
            Some(27),
            "{at}: the guest's inode, from cgroup.ino"
        );
        let (ours, kernel) = (b.thresh_pages.unwrap(), b.kernel_thresh_pages.unwrap());
        println!(
            "{at}: /box thresh {ours} kernel {kernel} state {:?}",
            b.state
        );
        // The capture's `cat`s follow one another in a TCG guest under a writer at 100 MB/s:
        // memory.stat and wb_stats are up to a second apart (README: root 000 is 4.9 % off).
        assert!(
            ours.abs_diff(kernel) * 20 <= kernel,
            "{at}: {ours} vs {kernel}"
        );
        let global = &m.domains[0];
        if matches!(b.state, Some(State::WritersThrottled | State::OverThresh))
            && global.state == Some(State::BelowBackground)
        {
            paced += 1;
        }
    }
    assert!(
        paced > 0,
        "{tree}: /box never paced while the global domain was idle"
    );
}

#[test]
fn lab_kernel_trees_derive_what_the_kernel_reports() {
    for (tree, version) in LAB {
        assert!(readme(tree).contains("**Real.**") && readme(tree).contains(version));
        let models = walk(tree);
        assert_eq!(models.len(), 4, "{tree}");
        for (i, m) in models.iter().enumerate() {
            let at = format!("{tree}/{i:03}");
            let (d, mem) = (&m.dirty, &m.memory);
            // The capture reads meminfo and vmstat with one `cat`, under a writer at about
            // 100 MB/s in a TCG guest: free memory can move by a few dozen pages between the
            // two files, so the thresholds are checked to 0.2 % here. tests/lab.rs checks them
            // to the page, live, where pagewatch reads both within microseconds.
            let near = |k: Option<u64>, ours: Option<u64>, what: &str| {
                let (k, ours) = (k.unwrap(), ours.unwrap());
                println!("{at}: {what} kernel {k} ours {ours}");
                assert!(
                    k.abs_diff(ours) * 500 <= k,
                    "{at}: {what} kernel {k}, ours {ours}"
                );
            };
            near(d.thresh_pages, d.derived_thresh_pages, "thresh");
            near(d.bg_thresh_pages, d.derived_bg_thresh_pages, "bg");
            // MemAvailable is meminfo's own (one file) with zoneinfo's watermarks: exact.
            assert!(mem.MemAvailable.is_some(), "{at}: MemAvailable");
            assert_eq!(
                mem.MemAvailable, mem.derived_MemAvailable,
                "{at}: MemAvailable"
            );
            if i > 0 {
                let w = disk(m, "vda").cols.w_s.unwrap();
                assert!(w > 10.0, "{at}: vda w/s {w}: the writer was running");
            }
        }
        let dirty = models
            .iter()
            .filter_map(|m| m.dirty.nr_dirty)
            .max()
            .unwrap();
        assert!(dirty > 1000, "{tree}: at most {dirty} dirty pages");
    }
}

// ---------------------------------------------------------------------------------------------
// damaged copies of a tree root

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("dir entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy file");
        }
    }
}

/// A fresh copy of one root as a single-root tree.
fn copy_root(tree: &str, root: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(&tree_dir(tree).join(root), tmp.path());
    tmp
}

/// Reads and parses the single root in `dir`; panics are caught and reported as `Err("panic")`.
fn parse_dir(dir: &Path) -> Result<Result<Model, String>, String> {
    catch_unwind(AssertUnwindSafe(|| {
        let mut src = TreeSource::open(dir).map_err(|e| e.to_string())?;
        let raw = src
            .next_sample()
            .map_err(|e| e.to_string())?
            .ok_or("no sample")?;
        let snap = Snapshot::parse(&raw).map_err(|e| e.to_string())?;
        let model = Model::derive(None, &snap, Options::default());
        // A bad zoneinfo, or a bad diskstats line, leaves the sample standing and carries its
        // error (shown as a warning); here it counts as the error the damage must produce.
        match model
            .zoneinfo_error
            .as_ref()
            .or(model.diskstats_skipped.as_ref())
        {
            Some(e) => {
                assert!(model.memory.MemAvailable.is_some(), "the rest stands");
                Err(e.clone())
            }
            None => Ok(model),
        }
    }))
    .map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default()
    })
}

/// The files to damage, and how to find the line to damage in each.
type Pick = fn(&str) -> bool;

const TARGETS: [(&str, Pick); 5] = [
    ("meminfo", |l| l.starts_with("MemFree:")),
    ("vmstat", |l| l.starts_with("nr_dirty ")),
    ("zoneinfo", |l| l.split_whitespace().next() == Some("low")),
    ("diskstats", |l| l.split_whitespace().count() >= 14),
    ("stat", |l| l.starts_with("cpu ")),
];

fn corrupt(line: &str, file: &str) -> String {
    let mut t: Vec<&str> = line.split_whitespace().collect();
    let k = match file {
        "diskstats" => 5,
        "stat" => 3,
        _ => 1,
    };
    t[k] = "1x2";
    t.join(" ")
}

const DAMAGE_ROOTS: [(&str, &str); 3] = [
    ("live-idle", "000"),
    ("kernel-4.4-vmstat-prezone", "000"),
    ("kernel-5.4-diskstats18", "000"),
];

#[test]
fn garbage_line_is_named_with_file_and_line() {
    for (tree, root) in DAMAGE_ROOTS {
        for (file, pick) in TARGETS {
            let tmp = copy_root(tree, root);
            let path = tmp.path().join("proc").join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
            let k = lines
                .iter()
                .position(|l| pick(l))
                .unwrap_or_else(|| panic!("{tree}: no target line in {file}"));
            lines[k] = corrupt(&lines[k], file);
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            let want = format!("proc/{file}:{}:", k + 1);
            match parse_dir(tmp.path()) {
                Err(p) => panic!("{tree}/{root} {file}: panicked: {p}"),
                Ok(Ok(_)) => panic!("{tree}/{root} {file}: accepted {:?}", lines[k]),
                Ok(Err(e)) => {
                    println!("{tree} {file}: {e}");
                    assert!(
                        e.contains(&want),
                        "{tree}/{root} {file}: error {e:?} does not name {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn truncated_and_empty_files_do_not_panic() {
    let mut failures = Vec::new();
    for (tree, root) in DAMAGE_ROOTS {
        for (file, pick) in TARGETS {
            // Cut mid-line: keep the target line's first 6 bytes, no newline.
            let tmp = copy_root(tree, root);
            let path = tmp.path().join("proc").join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            let k = text.lines().position(pick).unwrap();
            let start: usize = text.lines().take(k).map(|l| l.len() + 1).sum();
            let cut = &text[..start + 6];
            std::fs::write(&path, cut).unwrap();
            let outcome = parse_dir(tmp.path());
            println!("{tree} {file} cut at line {}: {outcome:?}", k + 1);
            // A line cut short is reported with its own line number (zoneinfo: a cut watermark
            // line is blank, so the zone header's line is named instead).
            let want = if file == "zoneinfo" {
                format!("proc/{file}:")
            } else {
                format!("proc/{file}:{}:", k + 1)
            };
            match outcome {
                Err(p) => failures.push(format!("{tree}/{root} {file} cut: panicked: {p}")),
                Ok(Err(e)) if e.contains(&want) => {}
                Ok(r) => failures.push(format!(
                    "{tree}/{root} {file} cut to {:?} at line {}: want an error naming {want}, got {:?}",
                    &cut[start..],
                    k + 1,
                    r.map(|_| "Ok")
                )),
            }

            // Empty file: an error naming the file, or (where an empty file is plausible)
            // a model without those figures. Never a panic.
            std::fs::write(&path, "").unwrap();
            let outcome = parse_dir(tmp.path());
            println!(
                "{tree} {file} empty: {:?}",
                outcome.as_ref().map(|r| r.as_ref().map(|_| "Ok"))
            );
            match outcome {
                Err(p) => failures.push(format!("{tree}/{root} {file} empty: panicked: {p}")),
                Ok(Err(e)) if e.contains(&format!("proc/{file}")) => {}
                Ok(Err(e)) => failures.push(format!(
                    "{tree}/{root} {file} empty: error {e:?} does not name the file"
                )),
                Ok(Ok(_)) if file == "meminfo" => {
                    failures.push(format!(
                        "{tree}/{root}: empty meminfo accepted (no MemTotal)"
                    ));
                }
                Ok(Ok(_)) => {}
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

#[test]
fn psi_absent_gives_no_pressure_without_error() {
    let tmp = copy_root("live-idle", "000");
    std::fs::remove_dir_all(tmp.path().join("proc/pressure")).unwrap();
    let m = parse_dir(tmp.path()).unwrap().unwrap();
    assert_eq!(
        (m.pressure.cpu, m.pressure.memory, m.pressure.io),
        (None, None, None)
    );
    // And with it present, all three are there.
    let tmp = copy_root("live-idle", "000");
    let m = parse_dir(tmp.path()).unwrap().unwrap();
    assert!(m.pressure.cpu.is_some() && m.pressure.memory.is_some() && m.pressure.io.is_some());
}
