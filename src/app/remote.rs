//! The screen over another machine's stream (`pagewatch connect HOST`): what the header says
//! about the remote side, the marker a reconnection leaves in `--record`, and the refusal of
//! the experiment keys (read-only without `--allow-actions`; with it, eat, stop and drop
//! caches go to the remote pagewatch as requests, and the rest is refused).
//!
//! Owns: `Remote` and those three behaviours. Must not touch: ssh or the stream (the shell's
//! `remote` source reads it; a lost connection reaches the app as a sample error).

use super::{App, Effect};
use crate::event::EventKind;

/// The machine a connected screen watches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remote {
    /// The host as given to `connect` (a name, an address, an ssh alias).
    pub host: String,
    /// How the remote side sees throttled writers: `tracepoint` (root) or `wchan` (not root:
    /// the throttled table is approximate).
    pub privilege: String,
    /// `--allow-actions`: eat memory, stop and drop caches are carried out on the remote.
    pub actions: bool,
}

/// The start of every sample error the remote source gives for a broken connection.
pub const LOST: &str = "connection to ";

impl App {
    /// When a sample arrives after the connection was lost: a marker event (written to
    /// `--record`) saying so.
    pub(super) fn remote_back(&mut self, raw: &crate::sample::RawSample) -> Vec<Effect> {
        let Some(r) = &self.caps.remote else {
            return Vec::new();
        };
        let Some(e) = self.error.as_deref().filter(|e| e.starts_with(LOST)) else {
            return Vec::new();
        };
        let text = format!("reconnected to {} (before: {e})", r.host);
        self.now_ms = self.now_ms.max(raw.wall_ms);
        self.log(EventKind::Marker { text })
    }

    /// Why an experiment key is refused on a connected screen: every one but a marker without
    /// `--allow-actions`, and with it those not carried out on the remote (fio, playbooks,
    /// settings); `None` when it goes ahead (or the screen is not connected).
    pub(super) fn remote_refusal(&self, a: crate::app::Action) -> Option<String> {
        use crate::app::Action;
        let r = self.caps.remote.as_ref()?;
        let forwarded = matches!(
            a,
            Action::Marker | Action::EatMemory | Action::DropCaches | Action::StopJob
        );
        if !r.actions && a != Action::Marker {
            // Short: the compact layout shows it on one line of the jobs pane.
            return Some(format!(
                "read-only: experiments on {} need connect --allow-actions",
                r.host
            ));
        }
        (!forwarded).then(|| {
            format!(
                "connected to {}: only eat memory, stop (x) and drop caches are carried out \
                 there; run fio, playbooks and settings in pagewatch on {0}",
                r.host
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{Look, Msg};
    use crate::source::HostInfo;

    fn connected() -> App {
        let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
        app.caps.remote = Some(Remote {
            host: "db1".into(),
            privilege: "wchan".into(),
            actions: false,
        });
        app
    }

    #[test]
    fn a_sample_after_a_lost_connection_leaves_a_marker() {
        let samples = crate::source::test_samples("kernel-6.12-lab-memcg");
        let mut app = connected();
        let first = app.sample(&samples[0]);
        assert!(!first.iter().any(|e| matches!(e, Effect::Log(_))));
        app.update(Msg::SampleError(
            "connection to db1 lost at 10:00:00 UTC (the stream stopped)".into(),
        ));
        let back = app.sample(&samples[1]);
        let marker = back.iter().find_map(|e| match e {
            Effect::Log(ev) => Some(ev.kind.clone()),
            _ => None,
        });
        assert!(
            matches!(&marker, Some(EventKind::Marker { text }) if text.contains("reconnected to db1") && text.contains("lost at 10:00:00")),
            "{marker:?}"
        );
        assert!(app.error.is_none(), "the good sample clears the error");
        let again = app.sample(&samples[2]);
        assert!(!again.iter().any(|e| matches!(e, Effect::Log(_))), "once");
    }

    #[test]
    fn experiment_keys_are_refused_with_a_message() {
        let mut app = connected();
        let out = app.experiment(crate::app::Action::EatMemory);
        assert!(out.is_empty() && app.prompt.is_none());
        let n = app.notice.clone().unwrap_or_default();
        assert!(
            n.contains("read-only") && n.contains("db1") && n.contains("--allow-actions"),
            "{n}"
        );
    }

    #[test]
    fn with_allow_actions_eat_goes_ahead_and_fio_is_refused() {
        let mut app = connected();
        app.caps.experiments = true;
        if let Some(r) = &mut app.caps.remote {
            r.actions = true;
        }
        app.experiment(crate::app::Action::EatMemory);
        assert!(app.prompt.is_some() && app.notice.is_none());
        app.prompt = None;
        app.experiment(crate::app::Action::RunFio);
        let n = app.notice.clone().unwrap_or_default();
        assert!(app.prompt.is_none() && n.contains("only eat memory"), "{n}");
    }
}
