//! The fleet screen (`pagewatch connect h1 h2 h3`) at 80x24 and 160x48: three hosts, each app
//! fed its own captured tree through the real pipeline (`Fleet::update`), one of them lost;
//! the list is worst first, and `Enter` opens the selected host's own screen, `Esc` comes
//! back. No threads, no clock: time comes from the samples. Snapshots live in `snapshots/`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use pagewatch::app::fleet::{Fleet, FleetMsg, Host};
use pagewatch::app::{App, Key, Look, Msg, Remote};
use pagewatch::source::{HostInfo, Source, TreeSource};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Three hosts: an idle one, one whose writers a flood throttles (the lab's writer), one whose link was lost after an
/// idle minute.
fn fleet() -> Fleet {
    let hosts = [
        ("web1", "live-idle"),
        ("db1", "kernel-6.12-lab-writer"),
        ("cache1", "live-memeaten"),
    ]
    .iter()
    .map(|(name, _)| {
        let host = HostInfo {
            hostname: (*name).into(),
            kernel: "6.18.44".into(),
            cpus: 2,
        };
        let mut app = App::new(host, Look::default(), 1.0);
        app.caps.remote = Some(Remote {
            host: (*name).into(),
            privilege: "tracepoint".into(),
            actions: false,
        });
        Host {
            name: (*name).to_owned(),
            app,
        }
    })
    .collect();
    let mut f = Fleet::new(hosts);
    for (i, tree) in ["live-idle", "kernel-6.12-lab-writer", "live-memeaten"]
        .iter()
        .enumerate()
    {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/trees")
            .join(tree);
        let mut src = TreeSource::open(&dir).unwrap();
        while let Some(s) = src.next_sample().unwrap() {
            f.update(FleetMsg::Host {
                host: i,
                msg: Msg::Sample(s),
            });
        }
    }
    let lost = "connection to web1 lost at 10:00:00 UTC (the remote pagewatch ended its stream); \
                reconnecting in 1 s";
    f.update(FleetMsg::Host {
        host: 0,
        msg: Msg::SampleError(lost.into()),
    });
    f
}

fn screen(f: &Fleet, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|fr| pagewatch::ui::fleet::render(f, fr.area(), fr.buffer_mut()))
        .unwrap();
    t.backend().to_string()
}

fn snap(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn three_hosts_one_line_each_worst_first_at_both_sizes() {
    let f = fleet();
    for (w, h) in [(80, 24), (160, 48)] {
        let s = screen(&f, w, h);
        let at = |host: &str| s.find(host).unwrap_or_else(|| panic!("{host}:\n{s}"));
        // The lost link first, then the rest in the order given (ties).
        assert!(at("web1") < at("db1") && at("db1") < at("cache1"), "{s}");
        assert!(s.contains("LOST"), "{s}");
        snap(&format!("fleet@{w}x{h}"), &s);
    }
}

#[test]
fn enter_opens_the_selected_hosts_screen_and_esc_comes_back() {
    let mut f = fleet();
    let key = |f: &mut Fleet, k| f.update(FleetMsg::Screen(Msg::Key(k)));
    // The selection starts on the first line (web1, lost) and moves down to db1.
    assert!(!key(&mut f, Key::Down));
    assert!(!key(&mut f, Key::Enter));
    assert_eq!(f.open, Some(1));
    let s = screen(&f, 160, 48);
    assert!(s.contains("db1") && s.contains("Memory"), "{s}");
    snap("fleet_host_open@160x48", &s);
    // `?` opens help over the host's screen: `Esc` closes it, the next `Esc` leaves.
    key(&mut f, Key::Char('?'));
    key(&mut f, Key::Esc);
    assert_eq!(f.open, Some(1), "the first Esc closed the help");
    key(&mut f, Key::Esc);
    assert_eq!(f.open, None);
    assert!(screen(&f, 80, 24).contains("Fleet: 3 hosts"));
    assert!(key(&mut f, Key::Char('q')), "q on the list quits");
}
