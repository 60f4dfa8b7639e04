//! Round trip through a recording file: the screens of a replay equal the screens of the live
//! run they were recorded from, at the same sample, at 80x24 and 160x48 (all but the footer,
//! which says REPLAY), and stepping, minute jumps and g/G land on the right samples.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

#[path = "common/screen.rs"]
mod screen;

use std::path::Path;

use pagewatch::app::{Action, App, Key, Look, Msg};
use pagewatch::event::{Event, EventKind};
use pagewatch::record::{Header, Recorder};
use pagewatch::sample::RawSample;
use pagewatch::source::{HostInfo, Source, TreeSource};

fn host() -> HostInfo {
    HostInfo {
        hostname: "testhost".into(),
        kernel: "6.18.44".into(),
        cpus: 2,
    }
}

fn samples(tree: &str) -> Vec<RawSample> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/trees")
        .join(tree);
    let mut src = TreeSource::open(&dir).unwrap();
    std::iter::from_fn(|| src.next_sample().unwrap()).collect()
}

fn screen(app: &App, w: u16, h: u16) -> Vec<String> {
    let text = screen::screen(app, w, h);
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.pop(); // the footer: keys live, REPLAY in replay
    lines
}

/// Records `raw` and `events` to a file and replays it into an app.
fn replayed(raw: &[RawSample], events: &[Event]) -> App {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.pwrec");
    let header = Header::from_sample(&raw[0], host(), 1.0, "test".into(), raw[0].wall_ms);
    let mut rec = Recorder::create(&path, &header).unwrap();
    for s in raw {
        rec.write_sample(s).unwrap();
    }
    for e in events {
        rec.write_event(e).unwrap();
    }
    rec.finish().unwrap();
    let back = pagewatch::record::read(&path).unwrap();
    assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    let mut app = App::new(back.header.host.clone(), Look::default(), 1.0);
    app.events = back.events;
    let snaps = back
        .samples
        .iter()
        .map(|r| {
            (
                pagewatch::parse::Snapshot::parse(r).unwrap(),
                pagewatch::app::uptime_of(r),
            )
        })
        .collect();
    app.start_replay(snaps, 1);
    app
}

#[test]
fn replay_screens_equal_the_live_screens() {
    for tree in ["live-idle", "live-fio-randwrite", "live-memeaten"] {
        let raw = samples(tree);
        let mut live = App::new(host(), Look::default(), 1.0);
        for s in &raw {
            live.update(Msg::Sample(s.clone()));
        }
        let marker = Event {
            wall_ms: raw[1].wall_ms,
            kind: EventKind::Marker {
                text: "here".into(),
            },
        };
        live.events.push(marker.clone());
        let mut replay = replayed(&raw, &[marker]);
        replay.update(Msg::Action(Action::End));
        assert_eq!(replay.model, live.model, "{tree}: derived figures differ");
        for (w, h) in [(80, 24), (160, 48)] {
            assert_eq!(
                screen(&replay, w, h),
                screen(&live, w, h),
                "{tree} at {w}x{h}"
            );
        }
    }
}

#[test]
fn replay_keys_move_the_cursor() {
    let raw = samples("live-fio-randwrite");
    let n = raw.len();
    let mut app = replayed(&raw, &[]);
    let cursor = |a: &App| a.replay.as_ref().unwrap().cursor;
    assert_eq!(cursor(&app), 0);
    app.update(Msg::Key(Key::Right));
    assert_eq!(cursor(&app), 1);
    app.update(Msg::Key(Key::Char('G')));
    assert_eq!(cursor(&app), n - 1);
    assert_eq!(
        app.now_ms,
        raw[n - 1].wall_ms,
        "the clock shows recorded time"
    );
    app.update(Msg::Key(Key::Left));
    assert_eq!(cursor(&app), n - 2);
    app.update(Msg::Key(Key::Char('g')));
    assert_eq!(cursor(&app), 0);
    app.update(Msg::Key(Key::Char(']')));
    assert_eq!(cursor(&app), n - 1, "a minute forward clamps to the end");
    app.update(Msg::Key(Key::Char('[')));
    assert_eq!(cursor(&app), 0, "a minute back clamps to the start");
    // The experiment keys do nothing in a replay.
    assert!(app.update(Msg::Key(Key::Char('m'))).is_empty());
    assert!(app.prompt.is_none());
}
