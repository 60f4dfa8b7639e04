//! The kernel lab's io.max run (issue 23, item 3 of "What was seen"): a dd in the 300M memcg
//! `/box` whose writeback to vda is capped by io.max at 4 MiB/s, recorded in the guest by
//! `pagewatch record` (`assets/lab/checks.sh`, `== iomax`). Here, on the host, that one
//! recording is replayed through `--batch --format json` and `--format text`: the same
//! samples, so the same records. In every record where the JSON's `/box` domain is
//! `writers_throttled` or worse, the text record has a line naming `cgroup /box` with that
//! state's label, and its `throttled:` line names the writers the JSON lists first with the
//! domain that paced them. At least one record must have `/box` throttling, else the check had
//! no teeth: with writeback at 4 MiB/s against a dd at disk speed, every kernel of the lab
//! (5.10, 6.1, 6.12: `CONFIG_BLK_DEV_THROTTLING` and `CONFIG_CGROUP_WRITEBACK` in Debian's
//! cloud builds) pushes /box past its freerun within a second.
//!
//! Owns: `box_in_text`, splitting batch text into records. Must not touch: the guest.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

/// The dirty states at which writers are paced, as the JSON spells them.
const THROTTLING: [&str; 3] = ["writers_throttled", "over_thresh", "at_hard_limit"];

/// Replays the guest's io.max recording in both formats and checks that the text names
/// `/box` and its state wherever the JSON has it throttling, and that at least one record
/// does.
pub fn box_in_text(suite: &str, s: &BTreeMap<String, String>, exe: &str) {
    let head = s
        .keys()
        .find(|k| k.starts_with("iomax "))
        .unwrap_or_else(|| panic!("{suite}: no io.max run: {:?}", s.get("iomax-log")));
    assert!(head.contains("wbps=4194304"), "{suite}: {head}");
    let tmp = tempfile::tempdir().unwrap();
    let b64 = tmp.path().join("iomax.b64");
    std::fs::write(&b64, &s[head.as_str()]).unwrap();
    let rec = tmp.path().join("iomax.pwrec");
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("base64 -d {} > {}", b64.display(), rec.display()))
        .status()
        .unwrap();
    assert!(ok.success(), "{suite}: the io.max recording did not decode");
    let replay = |format: &str| {
        let out = Command::new(exe)
            .args([
                "replay",
                rec.to_str().unwrap(),
                "--batch",
                "--format",
                format,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{suite} replay {format}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let json: Vec<Value> = replay("json")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let text_out = replay("text");
    let text = records(&text_out);
    assert_eq!(
        json.len(),
        text.len(),
        "{suite}: JSON and text records of one recording:\n{text_out}"
    );
    assert!(json.len() >= 5, "{suite}: {} records", json.len());
    tracer_follows_the_gate(suite, &json);
    let mut throttling = 0;
    let mut figures = vec![format!(
        "recording {} bytes",
        std::fs::metadata(&rec).unwrap().len()
    )];
    let mut example = None;
    for (i, (v, t)) in json.iter().zip(&text).enumerate() {
        let clock = clock_utc(v["time_ms"].as_i64().unwrap());
        assert!(
            t.first().is_some_and(|l| l.starts_with(&clock)),
            "{suite} record {i}: text {t:?} is not the JSON's {clock}"
        );
        let dom = v["domains"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["kind"] == "memcg" && d["path"] == "/box");
        let state = dom.and_then(|d| d["state"].as_str()).unwrap_or("-");
        let box_line = t.iter().find(|l| l.starts_with("  cgroup /box: "));
        figures.push(format!(
            "{clock} /box {state} (sampled {}) {} writer(s) paused {} ms/s; global {}; \
             text {box_line:?}",
            dom.map_or(&Value::Null, |d| &d["sampled_state"]),
            dom.map_or(&Value::Null, |d| &d["throttled_writers"]),
            dom.map_or(&Value::Null, |d| &d["throttled_by_tracepoint_ms_per_s"]),
            v["dirty"]["state"],
        ));
        if !THROTTLING.contains(&state) {
            continue;
        }
        throttling += 1;
        example = Some(t.join("\n"));
        let label = format!("  cgroup /box: {}", state.replace('_', " "));
        assert!(
            box_line.is_some_and(|l| l.starts_with(&label)),
            "{suite} record {i} ({clock}): the JSON has /box {state}, the text says {t:#?}"
        );
        writers_named(suite, i, v, t);
    }
    println!(
        "{suite} io.max: {} records, /box throttling in {throttling}:\n  {}\nthe last of them:\n{}",
        json.len(),
        figures.join("\n  "),
        example.unwrap_or_default()
    );
    assert!(
        throttling > 0,
        "{suite}: /box never throttling under io.max: the check had no teeth"
    );
}

/// The recording carries the tracepoint wherever the gate asked for it: a record with a
/// domain past background (or a throttled writer) makes the next sample arm it, from the
/// recording's first sample on (`sampler`; `record` once dropped the first step's
/// wants, and a recording started mid-incident then never armed it). And the tracepoint saw
/// the dd in /box paused, paced by /box.
fn tracer_follows_the_gate(suite: &str, json: &[Value]) {
    for (i, pair) in json.windows(2).enumerate() {
        let near = pair[0]["domains"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["state"].as_str().is_some_and(|s| s != "below_background"))
            || !pair[0]["throttled"].as_array().unwrap().is_empty();
        assert!(
            !near || !pair[1]["tracer"].is_null(),
            "{suite} record {}: the gate asked for the tracepoint at record {i}, the recording \
             has none",
            i + 1
        );
    }
    let paused = json
        .iter()
        .filter_map(|v| v["throttled"].as_array())
        .flatten()
        .any(|r| {
            r["source"] == "tracepoint"
                && r["comm"] == "dd"
                && r["domain"] == "/box"
                && r["pause_ms_per_s"].as_f64().is_some_and(|p| p > 0.0)
        });
    assert!(paused, "{suite}: the tracepoint never saw dd paced by /box");
}

/// The first three writers of the JSON's `throttled[]` (the ones the text lists) appear on the
/// text's `throttled:` line as `comm[pid] domain`.
fn writers_named(suite: &str, i: usize, v: &Value, t: &[&str]) {
    let rows: Vec<&Value> = v["throttled"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["is_self"] != true)
        .take(3)
        .collect();
    if rows.is_empty() {
        return;
    }
    let line = t
        .iter()
        .find(|l| l.starts_with("  throttled: "))
        .unwrap_or_else(|| {
            panic!("{suite} record {i}: writers {rows:?}, no throttled line {t:#?}")
        });
    for r in rows {
        let name = format!(
            "{}[{}] {}",
            r["comm"].as_str().unwrap(),
            r["pid"],
            r["domain"].as_str().unwrap_or("/")
        );
        assert!(
            line.contains(&name),
            "{suite} record {i}: {name} not in {line}"
        );
    }
}

/// Batch text split into records: each starts at its `HH:MM:SS` line; the legend lines that
/// come before some records belong to none.
fn records(text: &str) -> Vec<Vec<&str>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    for line in text.lines() {
        let b = line.as_bytes();
        let clock = b.len() >= 8 && b[2] == b':' && b[5] == b':' && b[0].is_ascii_digit();
        let legend = line.starts_with("time ") || line.starts_with("         cpu us/sy");
        if clock {
            out.push(vec![line]);
        } else if let Some(r) = out.last_mut().filter(|_| !legend) {
            r.push(line);
        }
    }
    out
}

/// `HH:MM:SS` in UTC, as the text's first column.
fn clock_utc(ms: i64) -> String {
    let day = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", day / 3600, day % 3600 / 60, day % 60)
}
