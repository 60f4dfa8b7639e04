//! Clocks: the only place pagewatch asks the system for the time.
//!
//! Owns: `Clock` and `SystemClock`. Must not touch: files or derived figures.

/// A source of monotonic and wall-clock time.
pub trait Clock: Send {
    /// Monotonic nanoseconds (arbitrary origin, never goes back).
    fn mono_ns(&self) -> u64;
    /// Milliseconds since the Unix epoch.
    fn wall_ms(&self) -> i64;
}

/// The real clocks: `CLOCK_MONOTONIC` and the system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn mono_ns(&self) -> u64 {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64
    }

    fn wall_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

/// `CLOCK_BOOTTIME` less `CLOCK_MONOTONIC` now, ns: the time spent suspended. The process
/// start times in `/proc/PID/stat` (field 22) are on the boot clock; a monotonic time plus
/// this is the boot time of the same instant.
#[must_use]
pub fn boot_minus_mono_ns() -> u64 {
    let ns = |t: rustix::time::Timespec| (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64;
    let mono = ns(rustix::time::clock_gettime(
        rustix::time::ClockId::Monotonic,
    ));
    let boot = ns(rustix::time::clock_gettime(rustix::time::ClockId::Boottime));
    boot.saturating_sub(mono)
}

/// Paces a loop at a fixed interval without drift: each wait sleeps until the next multiple
/// of the interval after the start, skipping ticks that were missed.
#[derive(Debug)]
pub struct Ticker {
    start: std::time::Instant,
    interval: std::time::Duration,
    ticks: u32,
}

impl Ticker {
    /// A ticker starting now.
    #[must_use]
    pub fn new(interval_s: f64) -> Self {
        Self {
            start: std::time::Instant::now(),
            interval: std::time::Duration::from_secs_f64(interval_s),
            ticks: 0,
        }
    }

    /// Sleeps until the next tick.
    pub fn wait(&mut self) {
        let next = self.advance();
        std::thread::sleep(next.saturating_sub(self.start.elapsed()));
    }

    /// Moves to the next tick still in the future (ticks missed while busy are skipped) and
    /// returns its offset from the ticker's start.
    fn advance(&mut self) -> std::time::Duration {
        let elapsed = self.start.elapsed();
        self.ticks += 1;
        let mut next = self.interval * self.ticks;
        while next <= elapsed {
            self.ticks += 1;
            next = self.interval * self.ticks;
        }
        next
    }
}

impl Ticker {
    /// Blocks until the next tick or a message on `stop`, whichever comes first, waking
    /// once (issue 27: it used to sleep in 50 ms slices, 20 wake-ups a second). True when
    /// the tick came; false when `stop` received a message or was disconnected, or when the
    /// next tick would fall later than `limit` after the ticker's start.
    pub fn wait_unless(
        &mut self,
        stop: &std::sync::mpsc::Receiver<()>,
        limit: Option<std::time::Duration>,
    ) -> bool {
        use std::sync::mpsc::RecvTimeoutError;
        let next = self.advance();
        if limit.is_some_and(|l| next > l) {
            return false;
        }
        let tick = self.start + next;
        loop {
            let now = std::time::Instant::now();
            if now >= tick {
                return stop.try_recv() == Err(std::sync::mpsc::TryRecvError::Empty);
            }
            match stop.recv_timeout(tick - now) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Voluntary context switches of the calling thread so far.
    fn switches() -> u64 {
        let s = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Issue 27: `record` woke 20 times a second to look at its stop flag. A tick of 0.6 s
    /// must now cost a handful of wake-ups, not one per 50 ms slice.
    #[test]
    fn waiting_for_a_tick_wakes_once_not_every_slice() {
        let (_tx, stop) = std::sync::mpsc::channel();
        let mut t = Ticker::new(0.6);
        let before = switches();
        assert!(t.wait_unless(&stop, None));
        let woke = switches() - before;
        assert!(woke <= 3, "{woke} wake-ups in one 0.6 s tick");
    }

    #[test]
    fn a_stop_ends_the_wait_at_once_and_a_limit_before_the_tick_refuses_it() {
        let (tx, stop) = std::sync::mpsc::channel();
        let mut t = Ticker::new(30.0);
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            tx.send(()).unwrap();
            tx
        });
        let t0 = std::time::Instant::now();
        assert!(!t.wait_unless(&stop, None));
        let took = t0.elapsed();
        assert!(took < std::time::Duration::from_secs(2), "{took:?}");
        let tx = sender.join().unwrap();
        let mut t = Ticker::new(0.05);
        assert!(t.wait_unless(&stop, Some(std::time::Duration::from_secs(1))));
        assert!(!t.wait_unless(&stop, Some(std::time::Duration::from_millis(60))));
        drop(tx);
        assert!(
            !Ticker::new(0.05).wait_unless(&stop, None),
            "a hung-up sender stops too"
        );
    }
}
