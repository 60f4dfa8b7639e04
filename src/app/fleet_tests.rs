use super::*;
use crate::app::Look;
use crate::source::HostInfo;

fn fleet(n: usize) -> Fleet {
    let hosts = (0..n)
        .map(|i| Host {
            name: format!("h{i}"),
            app: App::new(HostInfo::default(), Look::default(), 1.0),
        })
        .collect();
    Fleet::new(hosts)
}

fn feed(f: &mut Fleet, host: usize, tree: &str) {
    for s in crate::source::test_samples(tree) {
        assert!(!f.update(FleetMsg::Host {
            host,
            msg: Msg::Sample(s),
        }));
    }
}

fn key(f: &mut Fleet, k: Key) -> bool {
    f.update(FleetMsg::Screen(Msg::Key(k)))
}

fn lose(f: &mut Fleet, host: usize) {
    f.update(FleetMsg::Host {
        host,
        msg: Msg::SampleError(format!("connection to h{host} lost at 10:00:00 UTC (gone)")),
    });
}

#[test]
fn each_host_has_its_own_pipeline_and_a_lost_link_goes_first() {
    let mut f = fleet(3);
    feed(&mut f, 1, "live-idle");
    // A host with a dirty state ranks above those with none yet.
    let order: Vec<(usize, Link)> = f.lines().iter().map(|l| (l.host, l.link)).collect();
    assert_eq!(
        order,
        [(1, Link::Live), (0, Link::Waiting), (2, Link::Waiting)]
    );
    assert!(f.hosts[0].app.model.is_none() && f.hosts[1].app.model.is_some());
    lose(&mut f, 2);
    let lines = f.lines();
    assert_eq!((lines[0].host, lines[0].link), (2, Link::Lost));
    let note = lines[0].note.clone().unwrap_or_default();
    assert!(note.contains("lost at 10:00:00"), "{note}");
    // A sample later it is live again.
    feed(&mut f, 2, "live-idle");
    assert!(f.lines().iter().all(|l| l.link != Link::Lost));
}

#[test]
fn the_selection_follows_the_order_shown_and_enter_esc_open_and_close() {
    let mut f = fleet(3);
    lose(&mut f, 2);
    // Shown: h2 (lost), h0, h1. Down from h0 goes to h1; Up three times reaches h2 and stays.
    key(&mut f, Key::Down);
    assert_eq!(f.selected, 1);
    for _ in 0..3 {
        key(&mut f, Key::Up);
    }
    assert_eq!(f.selected, 2);
    key(&mut f, Key::Enter);
    assert_eq!(f.open, Some(2));
    // Keys go to the open host's app: `?` opens its help, which the first Esc closes.
    key(&mut f, Key::Char('?'));
    assert!(f.hosts[2].app.ui.help && !f.hosts[0].app.ui.help);
    key(&mut f, Key::Esc);
    assert_eq!(f.open, Some(2));
    key(&mut f, Key::Esc);
    assert_eq!(f.open, None);
    assert!(key(&mut f, Key::Char('q')));
}

#[test]
fn ticks_age_every_host_and_quit_quits() {
    let mut f = fleet(2);
    feed(&mut f, 0, "live-idle");
    let at = f.hosts[0].app.sample_ms;
    f.update(FleetMsg::Screen(Msg::Tick { now_ms: at + 7_500 }));
    assert_eq!(f.lines()[0].age_s, Some(7));
    assert!(f.take_dirty());
    assert!(!f.take_dirty());
    assert!(f.update(FleetMsg::Screen(Msg::Quit)));
}
