//! Clocks: the only place pagewatch asks the system for the time.
//!
//! Owns: `Clock`, `SystemClock` and `thread_cpu_ns`. Must not touch: files or derived figures.

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
/// of the interval after the start, skipping ticks that were missed. Every paced loop uses
/// it (the screen's sampler, `record`, batch mode, `serve`, the headless playbook runner):
/// one wake-up a tick, and one for each control message (issue 27). Their tickers run on the
/// clock (`on_the_clock`): ticks at the wall clock's multiples of the interval, so every
/// instance on the machine samples the same seconds, and judges the same intervals (issue
/// 50: two instances half a second apart read a flood's dips in different samples).
#[derive(Debug)]
pub struct Ticker {
    start: std::time::Instant,
    interval: std::time::Duration,
    ticks: u32,
    /// The tick a wait was interrupted before (by a message), still to come.
    pending: Option<std::time::Duration>,
    /// Ticks fall on the wall clock's multiples of the interval.
    on_the_clock: bool,
    /// How far before its creation the start was put (`align`): a limit counts from the
    /// creation.
    lead: std::time::Duration,
}

/// How far the wall clock is past its last multiple of `interval`.
fn phase(interval: std::time::Duration) -> std::time::Duration {
    let step = interval.as_nanos().max(1);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::time::Duration::from_nanos(u64::try_from(now % step).unwrap_or(0))
}

/// What ended a `Ticker::wait_for`.
#[derive(Debug, PartialEq, Eq)]
pub enum Wake<T> {
    /// The tick came.
    Tick,
    /// A message came first; the tick is still to come.
    Message(T),
    /// Every sender hung up.
    Closed,
}

impl Ticker {
    /// A ticker starting now.
    #[must_use]
    pub fn new(interval_s: f64) -> Self {
        Self {
            start: std::time::Instant::now(),
            interval: std::time::Duration::from_secs_f64(interval_s),
            ticks: 0,
            pending: None,
            on_the_clock: false,
            lead: std::time::Duration::ZERO,
        }
    }

    /// A ticker whose ticks fall on the wall clock's multiples of the interval (the first
    /// comes at the next one, less than an interval away).
    #[must_use]
    pub fn on_the_clock(interval_s: f64) -> Self {
        let mut t = Self::new(interval_s);
        t.on_the_clock = true;
        t.align();
        t
    }

    /// Puts the start on the wall clock's last multiple of the interval. A first tick less
    /// than half an interval away is skipped: a sample's rates over a sliver of a second are
    /// noise.
    fn align(&mut self) {
        let now = std::time::Instant::now();
        let past = phase(self.interval);
        self.start = now.checked_sub(past).unwrap_or(now);
        self.lead = now - self.start;
        self.ticks = u32::from(past * 2 > self.interval);
        self.pending = None;
    }

    /// Sleeps until the next tick.
    pub fn wait(&mut self) {
        let next = self.next_tick();
        self.pending = None;
        std::thread::sleep(next.saturating_sub(self.start.elapsed()));
    }

    /// Blocks until the next tick or a message on `rx`, whichever comes first. After a
    /// message, the next call waits for the same tick.
    pub fn wait_for<T>(&mut self, rx: &std::sync::mpsc::Receiver<T>) -> Wake<T> {
        use std::sync::mpsc::RecvTimeoutError;
        let tick = self.start + self.next_tick();
        loop {
            let now = std::time::Instant::now();
            if now >= tick {
                self.pending = None;
                return Wake::Tick;
            }
            match rx.recv_timeout(tick - now) {
                Ok(m) => return Wake::Message(m),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Wake::Closed,
            }
        }
    }

    /// The interval in force.
    #[must_use]
    pub fn interval(&self) -> std::time::Duration {
        self.interval
    }

    /// A new interval, counted from the last tick (or the start): the next tick comes one
    /// new interval after it, or at once when that is already past.
    pub fn set_interval(&mut self, interval_s: f64) {
        if self.on_the_clock {
            self.interval = std::time::Duration::from_secs_f64(interval_s);
            self.align();
            return;
        }
        let done = self.ticks - u32::from(self.pending.is_some());
        self.start += self.interval * done;
        self.interval = std::time::Duration::from_secs_f64(interval_s);
        self.ticks = 0;
        self.pending = None;
    }

    /// The tick being waited for, as an offset from the start: the pending one, or the next
    /// one still in the future (ticks missed while busy are skipped).
    fn next_tick(&mut self) -> std::time::Duration {
        if let Some(p) = self.pending {
            return p;
        }
        let elapsed = self.start.elapsed();
        self.ticks += 1;
        let mut next = self.interval * self.ticks;
        while next <= elapsed {
            self.ticks += 1;
            next = self.interval * self.ticks;
        }
        self.pending = Some(next);
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
        if limit.is_some_and(|l| self.next_tick() > l + self.lead) {
            return false;
        }
        self.wait_for(stop) == Wake::Tick
    }
}

/// The calling thread's CPU time, ns (`CLOCK_THREAD_CPUTIME_ID`): what a read or a system call
/// just cost pagewatch, kernel time included.
#[must_use]
pub fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
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

    #[test]
    fn on_the_clock_ticks_fall_on_the_wall_clocks_multiples() {
        // The wall time of the ticker's start, ms past a multiple of `every` ms: every tick
        // is the start plus whole intervals.
        let off = |t: &Ticker, every: i64| {
            let elapsed = i64::try_from(t.start.elapsed().as_millis()).unwrap();
            (SystemClock.wall_ms() - elapsed).rem_euclid(every)
        };
        let mut t = Ticker::on_the_clock(0.2);
        let o = off(&t, 200);
        assert!(o <= 2 || o >= 198, "{o} ms off");
        // A new interval keeps them on the clock.
        t.set_interval(0.25);
        let o = off(&t, 250);
        assert!(o <= 2 || o >= 248, "{o} ms off");
        // The first tick is half an interval away or more, and less than one and a half.
        let t0 = std::time::Instant::now();
        t.set_interval(0.25);
        t.wait();
        let gap = t0.elapsed();
        assert!(gap >= std::time::Duration::from_millis(124), "{gap:?}");
        assert!(gap < std::time::Duration::from_millis(375 + 100), "{gap:?}");
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
    fn a_message_interrupts_the_wait_and_the_same_tick_still_comes() {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut t = Ticker::new(0.3);
        let t0 = std::time::Instant::now();
        tx.send(7).unwrap();
        assert_eq!(t.wait_for(&rx), Wake::Message(7));
        assert_eq!(t.wait_for(&rx), Wake::Tick);
        let first = t0.elapsed();
        assert!(first >= std::time::Duration::from_millis(290), "{first:?}");
        assert!(first < std::time::Duration::from_millis(550), "{first:?}");
        // The tick after comes one interval later, not two.
        assert_eq!(t.wait_for(&rx), Wake::Tick);
        let second = t0.elapsed();
        assert!(
            second >= std::time::Duration::from_millis(590),
            "{second:?}"
        );
        assert!(second < std::time::Duration::from_millis(850), "{second:?}");
        drop(tx);
        assert_eq!(t.wait_for(&rx), Wake::<i32>::Closed);
    }

    #[test]
    fn a_new_interval_counts_from_the_last_tick() {
        let (_tx, rx) = std::sync::mpsc::channel::<()>();
        let mut t = Ticker::new(10.0);
        // Changed before the first tick: the first tick comes 0.2 s after the start.
        t.set_interval(0.2);
        let t0 = std::time::Instant::now();
        assert_eq!(t.wait_for(&rx), Wake::Tick);
        let took = t0.elapsed();
        assert!(took < std::time::Duration::from_millis(450), "{took:?}");
        // Changed while a tick is pending: the pending one is dropped, the next is one new
        // interval after the last tick.
        let mut t = Ticker::new(0.1);
        assert_eq!(t.wait_for(&rx), Wake::Tick);
        let at_tick = std::time::Instant::now();
        let (tx2, rx2) = std::sync::mpsc::channel();
        tx2.send(()).unwrap();
        assert_eq!(t.wait_for(&rx2), Wake::Message(()));
        t.set_interval(0.4);
        assert_eq!(t.wait_for(&rx2), Wake::Tick);
        let gap = at_tick.elapsed();
        assert!(gap >= std::time::Duration::from_millis(380), "{gap:?}");
        assert!(gap < std::time::Duration::from_millis(650), "{gap:?}");
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
