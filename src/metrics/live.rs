//! What a scrape serves: the last complete sample, derived exactly as batch mode derives it,
//! with the live counters and each device's saturation against its own baseline.
//!
//! `Live` takes each raw sample (the same `RawSample` the screen, batch mode or a recording
//! gets), parses and derives it with its own `Parser` and `History` (the baseline the screen
//! and reports judge a device by, over the screen's 600-sample window), updates the
//! `Counters`, and returns a finished `Page`. The edge publishes each page whole, so a
//! scrape never sees a half-updated sample.
//! Owns: `Live`, `Page`. Must not touch: I/O, the clock (the edge hands in how long the read
//! took), the text formats.

use std::sync::Arc;

use crate::history::History;
use crate::metrics::counters::Counters;
use crate::model::refresh::RefreshPolicy;
use crate::model::saturation::saturation;
use crate::model::{Model, Options};
use crate::parse::{Parser, Snapshot};
use crate::sample::RawSample;

/// The screen's history window (`App::new`), so the baseline is the one the screen shows.
const BASELINE_TICKS: usize = 600;

/// One device's saturation at the page's sample.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskState {
    /// Kernel name.
    pub name: String,
    /// 0 fine, 1 warn, 2 crit (`model::saturation`).
    pub level: u8,
    /// The device's baseline await (median of its recent busy samples), ms.
    pub baseline_await_ms: Option<f64>,
}

/// Everything one scrape says, fixed at one sample.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The `host` label.
    pub host: String,
    /// The last derived record; `None` until two samples were read. Shared, not copied,
    /// between the pages of samples that failed after it.
    pub model: Option<Arc<Model>>,
    /// Each device of `model`, in its order.
    pub disks: Vec<DiskState>,
    /// The counters up to and including `model`.
    pub counters: Counters,
    /// Samples read and parsed since the start.
    pub samples: u64,
    /// Samples that failed to read or parse.
    pub errors: u64,
    /// How long reading the last sample's kernel files took, s.
    pub read_s: Option<f64>,
}

/// Turns raw samples into pages.
pub struct Live {
    parser: Parser,
    prev: Option<Snapshot>,
    history: History,
    opts: Options,
    refresh: RefreshPolicy,
    refresh_due: bool,
    last: Page,
}

impl Live {
    /// A feed for host `host`, deriving with `opts`.
    #[must_use]
    pub fn new(host: &str, opts: Options) -> Self {
        Self {
            parser: Parser::new(),
            prev: None,
            history: History::new(BASELINE_TICKS),
            opts,
            refresh: RefreshPolicy::default(),
            refresh_due: false,
            last: Page {
                host: if host.is_empty() { "unknown" } else { host }.to_owned(),
                ..Page::default()
            },
        }
    }

    /// The page after sample `raw`, read in `read_s` seconds. A sample that does not parse
    /// counts as an error and leaves the figures as they were; the rate after it is taken
    /// from the last good sample, as batch mode does.
    pub fn sample(&mut self, raw: &RawSample, read_s: f64) -> Page {
        self.last.read_s = Some(read_s);
        let Ok(snap) = self.parser.parse(raw) else {
            return self.error();
        };
        self.last.samples += 1;
        if let Some(p) = &self.prev {
            let m = Model::derive(Some(p), &snap, self.opts);
            // As batch mode does: a sysctl write or a new disk is seen on the next record.
            self.refresh_due |= self.refresh.due(Some(p), &snap, &m);
            self.history.push(&m);
            let disks: Vec<DiskState> = m
                .disks
                .iter()
                .map(|d| {
                    let base = self
                        .history
                        .disks
                        .get(&d.name)
                        .and_then(|h| h.baseline_await_ms);
                    DiskState {
                        name: d.name.clone(),
                        level: saturation(d, base),
                        baseline_await_ms: base,
                    }
                })
                .collect();
            let levels: Vec<(&str, u8)> =
                disks.iter().map(|d| (d.name.as_str(), d.level)).collect();
            self.last.counters.observe(&m, &levels);
            self.last.disks = disks;
            self.last.model = Some(Arc::new(m));
        }
        self.prev = Some(snap);
        self.last.clone()
    }

    /// The page as it stands (before any sample: only the host).
    #[must_use]
    pub fn current(&self) -> Page {
        self.last.clone()
    }

    /// Samples read and parsed so far.
    #[must_use]
    pub fn samples(&self) -> u64 {
        self.last.samples
    }

    /// Whether the source should re-read its slow files with the next sample
    /// (`Source::refresh_soon`); asking clears it.
    pub fn take_refresh(&mut self) -> bool {
        std::mem::take(&mut self.refresh_due)
    }

    /// The page after a sample that could not be read or parsed.
    pub fn error(&mut self) -> Page {
        self.last.errors += 1;
        self.last.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_the_samples_and_errors_keep_the_figures() {
        let s = crate::source::test_samples("live-fio-randwrite");
        let mut live = Live::new("", Options::default());
        let p = live.sample(&s[0], 0.001);
        assert!(p.model.is_none(), "one sample gives no record");
        assert_eq!((p.samples, p.errors, p.host.as_str()), (1, 0, "unknown"));
        let p = live.sample(&s[1], 0.002);
        let m = p.model.as_deref().unwrap();
        let want = Model::derive(
            Some(&Snapshot::parse(&s[0]).unwrap()),
            &Snapshot::parse(&s[1]).unwrap(),
            Options::default(),
        );
        assert_eq!(*m, want, "the same record batch mode prints");
        assert_eq!(p.disks.len(), m.disks.len());
        assert_eq!(p.read_s, Some(0.002));
        let mut bad = s[2].clone();
        bad.files
            .insert("proc/meminfo".into(), "MemTotal: x kB\n".into());
        let e = live.sample(&bad, 0.003);
        assert_eq!((e.samples, e.errors), (2, 1));
        assert_eq!(e.model, p.model, "figures kept");
        // The next good sample's rates run from the last good one (s[1]).
        let p = live.sample(&s[2], 0.001);
        let want = Model::derive(
            Some(&Snapshot::parse(&s[1]).unwrap()),
            &Snapshot::parse(&s[2]).unwrap(),
            Options::default(),
        );
        assert_eq!(p.model.as_deref(), Some(&want));
    }
}
