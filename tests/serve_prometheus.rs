//! A real Prometheus (Debian's `prometheus`) scrapes `pagewatch serve` every second for 30 s
//! (the acceptance) while `pagewatch --batch --format json` runs beside it and a writer of this test's own
//! file keeps the disk busy; then Prometheus's HTTP API must give the same figures batch mode
//! printed at the same time, within one sample: the dirty threshold, the seconds in each
//! dirty state, and the per-device series (bytes written over the window).
//!
//! Both pagewatch processes sample every 2 s, so that each sample is scraped at least once
//! by a 1 s scrape, and the test matches Prometheus's samples to batch records by the
//! sample's own time (`pagewatch_sample_timestamp_seconds`). Skips, saying so, when
//! `prometheus` is not installed (`.ci/run` installs it).

#![allow(clippy::unwrap_used)]
#![allow(
    clippy::float_cmp,
    reason = "scrape times and sample times are matched as Prometheus returned them"
)]

mod serve_util;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use serve_util::{Killed, encode, free_port, get, have, serve};

const INTERVAL: f64 = 2.0;

/// `GET /api/v1/query?query=Q` on Prometheus: the result vector or matrix.
fn query(prom: SocketAddr, q: &str) -> Vec<Value> {
    let r = get(prom, &format!("/api/v1/query?query={}", encode(q)), "").unwrap();
    let v: Value = serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body));
    assert_eq!(v["status"], "success", "{q}: {}", r.body);
    v["data"]["result"].as_array().unwrap().clone()
}

fn num(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

/// A range query's raw samples per series: label value of `key` → [(scrape time, value)].
fn raw(prom: SocketAddr, q: &str, key: &str) -> BTreeMap<String, Vec<(f64, f64)>> {
    query(prom, q)
        .iter()
        .map(|s| {
            let k = s["metric"][key].as_str().unwrap_or("").to_owned();
            let pts = s["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_f64().unwrap(), num(&p[1])))
                .collect();
            (k, pts)
        })
        .collect()
}

/// Starts serve, Prometheus scraping it and batch mode beside them, writes for ~30 s, and
/// returns the processes (killed when dropped), Prometheus's address and batch's records.
fn run_side_by_side(dir: &std::path::Path) -> (Vec<Killed>, SocketAddr, Vec<Value>) {
    let (serve_child, addr) = serve(&["--interval", &INTERVAL.to_string()]);
    let port = free_port();
    let prom: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let cfg = dir.join("prometheus.yml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: pagewatch\n    static_configs:\n      - targets: ['{addr}']\n"
        ),
    )
    .unwrap();
    let prom_child = Killed(
        Command::new("prometheus")
            .arg(format!("--config.file={}", cfg.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("db").display()))
            .arg(format!("--web.listen-address={prom}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Batch mode beside it, every record kept with its wall time.
    let mut batch = Command::new(env!("CARGO_BIN_EXE_pagewatch"))
        .args([
            "--batch",
            "--format",
            "json",
            "--interval",
            &INTERVAL.to_string(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = batch.stdout.take().unwrap();
    let batch = Killed(batch);
    let records: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = Arc::clone(&records);
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines() {
            let Ok(l) = l else { return };
            sink.lock().unwrap().push(serde_json::from_str(&l).unwrap());
        }
    });
    // A writer of our own file: 1 MiB and an fsync every 250 ms, so the disk has figures.
    let file = tempfile::NamedTempFile::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let writer = std::thread::spawn(move || {
        let mut f = file.reopen().unwrap();
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(32) {
            f.write_all(&vec![7u8; 1 << 20]).unwrap();
            f.sync_data().unwrap();
            std::thread::sleep(Duration::from_millis(250));
        }
    });
    let t = Instant::now();
    while get(prom, "/-/ready", "").map_or(true, |r| r.status != 200) {
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "prometheus not ready"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(30));
    writer.join().unwrap();
    let records = records.lock().unwrap().clone();
    assert!(records.len() >= 8, "{} batch records", records.len());
    (vec![serve_child, prom_child, batch], prom, records)
}

#[test]
fn prometheus_scrapes_what_batch_prints() {
    if !have("prometheus") {
        println!("skipped: prometheus not installed (apt-get install prometheus)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (_procs, prom, records) = run_side_by_side(tmp.path());
    let page = records[0]["page_size"].as_f64().unwrap();
    let time = |r: &Value| r["time_ms"].as_f64().unwrap() / 1000.0;

    // The threshold: equal to a batch record's within one sample of the scraped sample.
    let q = query(prom, "pagewatch_dirty_threshold_bytes");
    assert_eq!(q.len(), 1, "{q:?}");
    let v = num(&q[0]["value"][1]);
    let ts = num(&query(prom, "pagewatch_sample_timestamp_seconds")[0]["value"][1]);
    let near: Vec<f64> = records
        .iter()
        .filter(|r| (time(r) - ts).abs() <= INTERVAL + 0.5)
        .filter_map(|r| r["dirty"]["thresh_pages"].as_f64())
        .map(|p| p * page)
        .collect();
    assert!(!near.is_empty(), "no batch record near {ts}");
    let (lo, hi) = near
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
    assert!(lo <= v && v <= hi, "prometheus {v}, batch {near:?}");

    // Each serve sample once, by its own time: [(sample time, scrape time)].
    let stamps = raw(prom, "pagewatch_sample_timestamp_seconds[60s]", "host");
    let mut samples: Vec<(f64, f64)> = stamps
        .values()
        .next()
        .unwrap()
        .iter()
        .map(|(at, s)| (*s, *at))
        .collect();
    samples.dedup_by(|a, b| a.0 == b.0);
    assert!(samples.len() >= 8, "{samples:?}");
    let (s0, s1) = (samples[1].0, samples[samples.len() - 1].0);
    let at = |sample: f64| samples.iter().find(|s| s.0 == sample).unwrap().1;
    // Batch records in (s0, s1]: the same window, shifted by the two samplers' phase.
    let window: Vec<&Value> = records
        .iter()
        .filter(|r| time(r) > s0 && time(r) <= s1)
        .collect();
    assert!(window.len() >= 6, "{} records in the window", window.len());

    // Seconds in each dirty state over the window, against batch's states × intervals.
    let states = |when: f64| -> BTreeMap<String, f64> {
        let q = format!("pagewatch_dirty_state_seconds_total{{kind=\"global\"}} @ {when}");
        query(prom, &q)
            .iter()
            .map(|s| {
                (
                    s["metric"]["state"].as_str().unwrap().to_owned(),
                    num(&s["value"][1]),
                )
            })
            .collect()
    };
    let (c0, c1) = (states(at(s0)), states(at(s1)));
    assert_eq!(c1.len(), 5, "{c1:?}");
    for (state, v1) in &c1 {
        let prom_s = v1 - c0[state];
        let batch_s: f64 = window
            .iter()
            .filter(|r| r["dirty"]["state"] == state.as_str())
            .map(|r| r["interval_s"].as_f64().unwrap())
            .sum();
        println!("{state}: prometheus {prom_s:.3} s, batch {batch_s:.3} s");
        assert!(
            (prom_s - batch_s).abs() <= INTERVAL + 0.1,
            "{state}: {prom_s} vs {batch_s}"
        );
    }

    devices_agree(prom, &samples, (s0, s1), &window);
}

/// Per device: bytes written over the window, Σ rate × interval, both sides. `samples` are
/// (sample time, scrape time); the window is (s0, s1] in sample time.
fn devices_agree(
    prom: SocketAddr,
    samples: &[(f64, f64)],
    (s0, s1): (f64, f64),
    window: &[&Value],
) {
    let rates = raw(prom, "pagewatch_disk_write_bytes_per_second[60s]", "device");
    let mut devices: Vec<&str> = window.last().unwrap()["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    // Batch lists devices in diskstats order (loop100 after vda), the series come by name.
    devices.sort_unstable();
    assert_eq!(
        rates.keys().map(String::as_str).collect::<Vec<_>>(),
        devices
    );
    let mut busiest = 0.0;
    for (dev, pts) in &rates {
        let prom_b: f64 = samples
            .iter()
            .filter(|s| s.0 > s0 && s.0 <= s1)
            .filter_map(|s| pts.iter().find(|p| p.0 == s.1))
            .map(|p| p.1 * INTERVAL)
            .sum();
        let per: Vec<f64> = window
            .iter()
            .filter_map(|r| {
                let d = r["disks"]
                    .as_array()?
                    .iter()
                    .find(|d| d["name"] == dev.as_str())?;
                Some(d["wkB_s"].as_f64()? * 1024.0 * r["interval_s"].as_f64()?)
            })
            .collect();
        let batch_b: f64 = per.iter().sum();
        let one = per.iter().copied().fold(0.0, f64::max);
        println!(
            "{dev}: prometheus {prom_b:.0} B, batch {batch_b:.0} B written, largest sample {one:.0}"
        );
        // Within one sample at each edge of the window (the two samplers' phase), and the
        // interval jitter (Prometheus side counted at the nominal interval).
        assert!(
            (prom_b - batch_b).abs() <= 2.0 * one + 0.02 * batch_b + 65536.0,
            "{dev}: {prom_b} vs {batch_b}"
        );
        busiest = f64::max(busiest, batch_b);
    }
    assert!(
        busiest > 4.0 * 1024.0 * 1024.0,
        "the writer's bytes reached no disk"
    );
}
