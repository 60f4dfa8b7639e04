//! The throttles below the page cache as text: a device's wbt setting and state and its ext4
//! journals (the detail view), and reclaim's sleeps on writeback and the pages it wrote (the
//! reclaim pane).
//!
//! Owns: those lines and their severity (0 calm, 1 warning, 2 critical). Must not touch: app
//! state, layout (the detail view and the reclaim pane place them).

use crate::model::Model;
use crate::model::below::{Journal, WbtRow};
use crate::parse::trace::TraceState;

/// A line and its severity.
pub type Note = (String, u8);

/// The detail view's lines for device `dev`: wbt's target, its state while the tracer is
/// armed (or why it is not), and the device's journals.
#[must_use]
pub fn device_lines(m: &Model, dev: &str) -> Vec<Note> {
    let mut out = Vec::new();
    let target = m
        .disks
        .iter()
        .find(|d| d.name == dev)
        .and_then(|d| d.queue.as_ref())
        .and_then(|q| q.wbt_lat_usec);
    match target {
        Some(0) => out.push(("wbt off (wbt_lat_usec 0)".to_owned(), 0)),
        Some(us) => out.push((
            format!("wbt target {:.1} ms read latency", us as f64 / 1000.0),
            0,
        )),
        None => {}
    }
    match &m.below {
        Some(b) if b.state == TraceState::Armed => {
            if let Some(w) = b.wbt.iter().find(|w| w.device == dev) {
                out.extend(wbt_lines(w));
            } else if target.is_some_and(|t| t > 0) {
                out.push(("wbt: no depth change since armed".to_owned(), 0));
            }
        }
        Some(b) if b.state != TraceState::Off => {
            let why = b
                .why
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            out.push((format!("wbt tracer {}{why}", state_word(b.state)), 0));
        }
        _ => {}
    }
    for j in m.journals.iter().filter(|j| j.device == dev) {
        out.extend(journal_lines(j));
    }
    out
}

fn state_word(s: TraceState) -> &'static str {
    match s {
        TraceState::Armed => "armed",
        TraceState::Off => "off",
        TraceState::NotRoot => "needs root",
        TraceState::NoTracefs => "has no tracefs",
        TraceState::NoEvent => "has no wbt events",
        TraceState::Error => "failed",
    }
}

fn wbt_lines(w: &WbtRow) -> Vec<Note> {
    let step = w.step.map_or_else(|| "?".to_owned(), |s| s.to_string());
    let lvl = u8::from(w.limiting);
    let what = if w.limiting {
        "limiting writeback to protect reads"
    } else {
        "not below its default depth"
    };
    let mut out = vec![
        (format!("wbt step {step}: {what}"), lvl),
        (
            format!(
                "  depth bg {} normal {} max {}; {} down {} up",
                w.depth_bg, w.depth_normal, w.depth_max, w.scale_downs, w.scale_ups
            ),
            0,
        ),
    ];
    if let Some(ms) = w.read_min_max_ms {
        out.push((
            format!(
                "  reads over target: {} windows, fastest up to {ms:.1} ms",
                w.lat_exceeded
            ),
            1,
        ));
    }
    if let Some(ms) = w.read_mean_ms {
        out.push((format!("  read mean {ms:.2} ms (last window)"), 0));
    }
    out
}

fn journal_lines(j: &Journal) -> Vec<Note> {
    let rate = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"));
    let commit = j
        .commit_ms
        .map_or_else(|| "-".to_owned(), |c| format!("{c:.1} ms"));
    let mut out = vec![(
        format!(
            "journal {}: {}/s commits ({} forced), commit {commit}",
            j.journal,
            rate(j.commits_per_s),
            rate(j.requested_per_s)
        ),
        u8::from(j.fsync_bound) * 2,
    )];
    if let (Some(f), Some(l), Some(k)) = (j.flushing_ms, j.logging_ms, j.locked_ms) {
        out.push((
            format!("  since mount: flush {f} log {l} locked {k} ms a commit"),
            0,
        ));
    }
    if let Some(w) = &j.why {
        out.push((w.clone(), 2));
    }
    out
}

/// The reclaim pane's lines from the tracer: sleeps by reason, pages reclaim wrote.
#[must_use]
pub fn reclaim_lines(m: &Model) -> Vec<Note> {
    let Some(b) = m.below.as_ref().filter(|b| b.state == TraceState::Armed) else {
        return Vec::new();
    };
    let mut out: Vec<Note> = b
        .reclaim_throttled
        .iter()
        .map(|t| {
            let lvl = if t.reason == "writeback" { 2 } else { 1 };
            (
                format!(
                    "slept on {} {:.0}/s {:.0} ms/s (max {:.0} ms)",
                    t.reason, t.per_s, t.sleep_ms_per_s, t.max_ms
                ),
                lvl,
            )
        })
        .collect();
    let (file, anon) = (
        b.reclaim_wrote_file_per_s.unwrap_or(0.0),
        b.reclaim_wrote_anon_per_s.unwrap_or(0.0),
    );
    if file > 0.0 || anon > 0.0 {
        out.push((
            format!("reclaim wrote dirty pages: file {file:.0}/s anon {anon:.0}/s"),
            u8::from(file > 0.0) * 2,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::below::{Below, ThrottleRow};

    fn model() -> Model {
        let samples = crate::source::test_samples("live-idle");
        let p = crate::parse::Snapshot::parse(&samples[0]).unwrap();
        let c = crate::parse::Snapshot::parse(&samples[1]).unwrap();
        Model::derive(Some(&p), &c, crate::model::Options::default())
    }

    fn armed() -> Below {
        Below {
            state: TraceState::Armed,
            why: None,
            lost: 0,
            wbt: Vec::new(),
            reclaim_throttled: Vec::new(),
            reclaim_wrote_file_per_s: Some(0.0),
            reclaim_wrote_anon_per_s: Some(0.0),
        }
    }

    #[test]
    fn a_limiting_device_and_a_slow_journal_are_flagged() {
        let mut m = model();
        let dev = m.disks[0].name.clone();
        let mut b = armed();
        b.wbt.push(WbtRow {
            device: dev.clone(),
            wbt_lat_usec: Some(75_000),
            step: Some(2),
            depth_bg: 4,
            depth_normal: 8,
            depth_max: 16,
            scale_downs: 2,
            scale_ups: 0,
            lat_exceeded: 3,
            read_min_max_ms: Some(91.0),
            read_mean_ms: Some(95.0),
            limiting: true,
        });
        m.below = Some(b);
        m.journals.push(Journal {
            journal: format!("{dev}-8"),
            device: dev.clone(),
            commits_per_s: Some(4.0),
            requested_per_s: Some(3.0),
            commit_ms: Some(85.0),
            wait_ms: Some(0),
            request_delay_ms: Some(0),
            running_ms: Some(20),
            locked_ms: Some(0),
            flushing_ms: Some(36),
            logging_ms: Some(4),
            blocks: Some(6),
            transactions: 104,
            fsync_bound: true,
            why: Some("fsync slow because of the journal: …".into()),
        });
        let lines = device_lines(&m, &dev);
        let text: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
        assert!(
            text.iter().any(|t| t.contains("wbt step 2: limiting")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t.contains("depth bg 4 normal 8 max 16; 2 down 0 up"))
        );
        assert!(text.iter().any(|t| t.contains("fastest up to 91.0 ms")));
        assert!(
            text.iter()
                .any(|t| t.contains("4.0/s commits (3.0 forced), commit 85.0 ms"))
        );
        assert!(
            lines
                .iter()
                .any(|(t, l)| t.starts_with("fsync slow") && *l == 2)
        );
        assert!(device_lines(&m, "nonexistent").is_empty());
    }

    #[test]
    fn reclaim_lines_only_while_armed_and_only_for_what_happened() {
        let mut m = model();
        assert!(reclaim_lines(&m).is_empty());
        m.below = Some(armed());
        assert!(reclaim_lines(&m).is_empty(), "nothing happened");
        let mut b = armed();
        b.reclaim_throttled.push(ThrottleRow {
            reason: "writeback".into(),
            per_s: 2.0,
            sleep_ms_per_s: 200.0,
            max_ms: 100.0,
        });
        b.reclaim_wrote_file_per_s = Some(25.0);
        m.below = Some(b);
        let l = reclaim_lines(&m);
        assert_eq!(
            l[0],
            ("slept on writeback 2/s 200 ms/s (max 100 ms)".into(), 2)
        );
        assert_eq!(
            l[1],
            ("reclaim wrote dirty pages: file 25/s anon 0/s".into(), 2)
        );
    }
}
