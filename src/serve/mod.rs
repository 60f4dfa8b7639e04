//! The live metrics endpoint: `pagewatch serve` (headless), and `--listen` beside the screen
//! (`shell::tui`) or `pagewatch record`.
//!
//! Whoever samples hands each step of its pipeline (the screen, `record`), or each raw sample
//! (`serve`, stepped by the feeder's own pipeline), to a `Feeder`, which makes the page
//! (`metrics::live`) and swaps it into `Latest`; the HTTP threads (`conns`, `http`) only
//! ever clone the latest page. Sampling goes on at its own pace whatever the scrapers do.
//! Owns: the serve loop, its signals and messages (the non-loopback warning on stderr and in
//! the screen's notice). Must not touch: what a page says (`metrics`), the HTTP details
//! (`http`), the connection limits (`conns`).

pub mod addr;
pub mod conns;
pub mod http;

use std::net::SocketAddr;
use std::sync::{Arc, mpsc};

use anyhow::{Context, Result};

pub use http::Latest;

use crate::metrics::live::Live;

use crate::model::{Model, Options};
use crate::sample::{RawSample, Wants};
use crate::source::{FsSource, HostInfo, Source, SystemClock};

/// Derives each sample into the page the endpoint serves.
pub struct Feeder {
    live: Live,
    latest: Latest,
    /// Where the endpoint listens (the port the system chose, for port 0).
    pub addr: SocketAddr,
}

impl Feeder {
    /// Starts the endpoint on `addr` for host `host` and says where on stderr (with a
    /// warning when other hosts can reach it).
    pub fn start(addr: SocketAddr, host: &str, opts: Options) -> Result<Self> {
        let live = Live::new(host, opts);
        let latest = Latest::default();
        latest.publish(live.current());
        let bound = conns::start(addr, latest.clone())?;
        eprintln!("pagewatch: serving http://{bound}/metrics");
        if let Some(w) = addr::warning(&bound) {
            eprintln!("pagewatch: {w}");
        }
        Ok(Self {
            live,
            latest,
            addr: bound,
        })
    }

    /// The screen's notice once the endpoint is up, after the notice `earlier` (a config
    /// file's problems): see `screen_notice`.
    #[must_use]
    pub fn notice(&self, earlier: Option<String>) -> String {
        screen_notice(&self.addr, earlier)
    }

    /// Publishes the page after `raw`, read in `read_s` s; returns its record when the
    /// sample gave a new one.
    pub fn sample(&mut self, raw: &RawSample, read_s: f64) -> Option<Arc<Model>> {
        let before = self.live.samples();
        let page = self.live.sample(raw, read_s);
        let fresh = (page.samples > before)
            .then(|| page.model.clone())
            .flatten();
        self.latest.publish(page);
        fresh
    }

    /// Publishes the page after a step of the caller's own pipeline (the screen's,
    /// `record`'s): its `model`, none for the `first` step, read in `read_s` s.
    pub fn step(&mut self, model: Model, first: bool, read_s: f64) {
        let page = self.live.step(model, first, read_s);
        self.latest.publish(page);
    }

    /// Whether the source should re-read its slow files (`Source::refresh_soon`).
    pub fn take_refresh(&mut self) -> bool {
        self.live.take_refresh()
    }

    /// The disks' calm baselines learned, to keep (`Live::take_learned`).
    pub fn take_learned(&mut self) -> Option<crate::pipeline::Stored> {
        self.live.take_learned()
    }

    /// The "who" data to collect, when it changed (`Live::take_wants`).
    pub fn take_wants(&mut self) -> Option<crate::sample::Wants> {
        self.live.take_wants()
    }

    /// Times the block requests of these devices (`--latency`), besides those the verdict
    /// flags saturated, with queue time when `queue` (`--queue-time`).
    pub fn set_latency(&mut self, devices: &[String], queue: bool) {
        self.live.set_latency(devices, queue);
    }

    /// Publishes the page after a sample that failed.
    pub fn error(&mut self) {
        self.latest.publish(self.live.error());
    }
}

/// The screen's notice for an endpoint bound at `bound`, with the notice `earlier` that it
/// joins: problems first, since the jobs pane cuts a notice at its width. The warning for an
/// address other hosts reach, then `earlier`, then where it serves.
#[must_use]
pub fn screen_notice(bound: &SocketAddr, earlier: Option<String>) -> String {
    [
        addr::warning(bound),
        earlier,
        Some(format!("serving http://{bound}/metrics")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("; ")
}

/// What `serve` times with the block tracer (`--latency`, `--queue-time`).
#[derive(Debug, Clone, Default)]
pub struct Latency {
    /// The devices.
    pub devices: Vec<String>,
    /// Queue time as well.
    pub queue: bool,
    /// The tracers never armed (`--no-trace`).
    pub off: crate::source::NoTrace,
}

/// `pagewatch serve`: samples live /proc and /sys every interval and serves the latest
/// sample until SIGINT, SIGTERM or SIGHUP.
pub fn run(listen: SocketAddr, interval: f64, partitions: bool, latency: &Latency) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let host = HostInfo::live();
    let opts = Options { partitions };
    let mut source = FsSource::new("/proc", "/sys", Box::new(SystemClock)).with_baselines(
        crate::source::baselines::Store::open_or_warn(&mut std::io::stderr()),
    );
    if let Ok(exe) = std::env::current_exe() {
        source = source.with_tracing(exe).without_tracers(latency.off);
    }
    let mut feeder = Feeder::start(listen, &host.hostname, opts)?;
    feeder.set_latency(&latency.devices, latency.queue);
    // Signals arrive on a channel the loop waits on between samples: no polling.
    let (stop_tx, stop) = mpsc::channel::<()>();
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing signal handlers")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                let _ = stop_tx.send(());
            }
        })
        .context("starting the signal thread")?;
    // The one sampler loop `record`, batch mode, the screen and the headless playbook runner
    // drive too: one wake-up a tick, or the stop signal.
    let mut ticker = crate::source::Ticker::on_the_clock(interval);
    crate::sampler::run(
        &mut source,
        None,
        &mut ticker,
        &mut Serving { feeder, stop },
    );
    Ok(())
}

/// `serve`'s sink: every sample published.
struct Serving {
    feeder: Feeder,
    stop: mpsc::Receiver<()>,
}

impl crate::sampler::Sink for Serving {
    fn wait(&mut self, ticker: &mut crate::source::Ticker, _: &mut dyn Source) -> bool {
        // A slow read skips the ticks it missed.
        ticker.wait_unless(&self.stop, None)
    }

    fn take(&mut self, read: crate::Result<&RawSample>, read_s: f64) -> crate::sampler::Flow {
        match read {
            Ok(raw) => {
                self.feeder.sample(raw, read_s);
            }
            Err(e) => {
                eprintln!("pagewatch: skipped a sample: {e}");
                self.feeder.error();
            }
        }
        crate::sampler::Flow {
            // The tracepoint and the cgroup walk as batch mode decides them; never the
            // process walk, which only per-process series would need.
            wants: (self.feeder.take_wants()).map(|w| Wants { procs: None, ..w }),
            refresh: self.feeder.take_refresh(),
            learned: self.feeder.take_learned(),
            stop: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 22: the warning for an address other hosts reach was on stderr only, before the
    /// screen took the terminal; the screen's notice now leads with it.
    #[test]
    fn the_screen_notice_leads_with_the_non_loopback_warning() {
        let n = screen_notice(&"0.0.0.0:7463".parse().unwrap(), None);
        assert!(
            n.starts_with("warning: 0.0.0.0:7463 is not loopback") && n.contains("no TLS"),
            "{n}"
        );
        assert!(n.ends_with("serving http://0.0.0.0:7463/metrics"), "{n}");
        for quiet in ["127.0.0.1:7463", "[::1]:7463", "[::ffff:127.0.0.1]:7463"] {
            let a: SocketAddr = quiet.parse().unwrap();
            assert_eq!(
                screen_notice(&a, None),
                format!("serving http://{a}/metrics")
            );
        }
        let n = screen_notice(&"[::]:80".parse().unwrap(), Some("config x".into()));
        assert!(
            n.starts_with("warning: [::]:80 is not loopback")
                && n.ends_with("; config x; serving http://[::]:80/metrics"),
            "{n}"
        );
    }
}
