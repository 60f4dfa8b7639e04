//! `--record` from the screen, ended every orderly way (issue "Hardening", finding 6): `q`,
//! Ctrl-C, SIGTERM, SIGHUP and SIGQUIT. Each recording must read back closed (no "was not
//! closed" warning), and a memory eater still holding at quit must have its end event. The
//! terminal must be restored (the shell prints its marker). Skips only without tmux.

#![allow(clippy::unwrap_used)]

#[path = "common/tmux.rs"]
mod tmux;

use std::path::Path;
use std::process::Command;

use pagewatch::event::EventKind;
use tmux::Session;

fn session(name: &str, file: &Path) -> Option<Session> {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipping: tmux is not installed (bash .ci/run installs it)");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_pagewatch");
    let cmd = format!(
        "{bin} --record {} --eat 32M; echo \"exit=$?\"; stty -a | head -1 >/dev/null && echo shell-$((40+2))-ok",
        file.display()
    );
    let name = format!("pagewatch-rec-{}-{name}", std::process::id());
    Some(Session::start(name, 80, 24, &cmd))
}

#[test]
fn every_orderly_exit_closes_the_recording_with_end_events() {
    let tmp = tempfile::tempdir().unwrap();
    for how in ["q", "C-c", "TERM", "HUP", "QUIT"] {
        let file = tmp.path().join(format!("{how}.pwrec"));
        let Some(s) = session(how, &file) else { return };
        s.wait_for("holding", 20);
        // A couple of samples recorded.
        std::thread::sleep(std::time::Duration::from_millis(2500));
        if how.len() <= 3 && how != "HUP" && how != "TERM" {
            s.keys(&[how]);
        } else {
            let pid = s.pagewatch_pid().to_string();
            assert!(
                Command::new("kill")
                    .args([&format!("-{how}"), &pid])
                    .status()
                    .unwrap()
                    .success()
            );
        }
        s.wait_for("shell-42-ok", 15);
        let rec = pagewatch::record::read(&file).unwrap();
        assert!(rec.warnings.is_empty(), "{how}: {:?}", rec.warnings);
        assert!(
            rec.samples.len() >= 2,
            "{how}: {} samples",
            rec.samples.len()
        );
        let stops: Vec<&str> = rec
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::JobStop { how, .. } => Some(how.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            stops,
            ["stopped: pagewatch quit"],
            "{how}: {:?}",
            rec.events
        );
    }
}
