//! Tests for the pure parts of `shell/tui.rs`: the tick timer with `App`'s stall rule, and the
//! CPU meter's windows. Time is simulated: instants are offsets from one base.

use std::time::{Duration, Instant};

use super::{CpuMeter, STALL_TICKS, TickTimer};
use crate::app::{Action, App, Look, Msg};
use crate::source::HostInfo;

const SEC: Duration = Duration::from_secs(1);
const WALL0: i64 = 1_700_000_000_000;

fn samples() -> Vec<crate::sample::RawSample> {
    crate::source::test_samples("live-idle")
}

/// Runs the main loop's timing for 10 s in 10 ms steps: samples at 0.5 s, 1.5 s, … (one per
/// captured root), `pause_after` samples then the pause key if given. Returns each tick that
/// fired as (ms, whether the screen had to be redrawn).
fn simulate(pause_after: Option<usize>) -> Vec<(u64, bool)> {
    let base = Instant::now();
    let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
    let mut timer = TickTimer::new(base, SEC);
    let mut pending = samples().into_iter();
    let mut sent = 0;
    let mut fired = Vec::new();
    // The sampler's stall alarm (`arm_stall_alarm`): armed at the start and after each read.
    let ring_after = Duration::from_secs(1 + u64::from(STALL_TICKS));
    let mut alarm = Some(base + ring_after);
    for ms in (0..10_000u64).step_by(10) {
        let now = base + Duration::from_millis(ms);
        let wall = WALL0 + i64::try_from(ms).unwrap();
        if alarm.is_some_and(|a| a <= now) {
            alarm = None;
            timer.restart(now);
            app.update(Msg::Tick { now_ms: wall });
            fired.push((ms, app.take_dirty()));
        }
        if timer.wait(now).is_zero() {
            timer.fired(now);
            app.update(Msg::Tick { now_ms: wall });
            fired.push((ms, app.take_dirty()));
        }
        if ms % 1000 == 500
            && let Some(mut s) = pending.next()
        {
            s.wall_ms = wall;
            alarm = Some(now + ring_after);
            app.update(Msg::Sample(s));
            app.take_dirty();
            sent += 1;
            if pause_after == Some(sent) {
                app.update(Msg::Action(Action::Pause));
            }
            if app.needs_ticks() {
                timer.needed(now);
            } else {
                timer.sample_arrived(now, Duration::from_secs_f64(app.interval_s));
            }
        }
    }
    fired
}

#[test]
fn on_time_samples_keep_the_tick_away_and_a_stall_brings_it_back() {
    let n = samples().len() as u64;
    assert_eq!(n, 4, "live-idle has 4 roots");
    // Samples at 0.5 … 3.5 s: no tick fires until the stall alarm rings 3 s after the last
    // one (interval + two ticks), the first tick that finds sampling stalled (App waits
    // interval + 1.5 s); it redraws the clock, and so does every tick after.
    assert_eq!(
        simulate(None),
        [(6500, true), (7500, true), (8500, true), (9500, true)]
    );
}

#[test]
fn paused_screen_keeps_its_ticks() {
    // Paused after the second sample (1.5 s): samples keep coming but are not shown and no
    // longer push the tick away, so the clock runs on ticks from a tick after the pause, one
    // a second (the stall alarm at 6.5 s, after the last sample, is one of them).
    let fired = simulate(Some(2));
    let ms: Vec<u64> = fired.iter().map(|f| f.0).collect();
    assert_eq!(ms, [2500, 3500, 4500, 5500, 6500, 7500, 8500, 9500]);
    assert!(fired.iter().all(|f| f.1), "{fired:?}");
}

#[test]
fn timer_that_fell_behind_restarts_from_now() {
    let base = Instant::now();
    let mut t = TickTimer::new(base, SEC);
    assert_eq!(t.wait(base), SEC);
    let late = base + Duration::from_secs(30);
    t.fired(late);
    assert_eq!(t.wait(late), SEC);
    t.fired(late + SEC);
    assert_eq!(t.wait(late + SEC), SEC);
}

#[test]
fn cpu_meter_needs_a_window_of_cpu_window() {
    let base = Instant::now();
    let ms = Duration::from_millis;
    let w = super::CPU_WINDOW;
    let mut m = CpuMeter::new();
    assert_eq!(
        m.reading(base, ms(100)),
        None,
        "first reading only starts the window"
    );
    assert_eq!(
        m.reading(base + w.saturating_sub(ms(10)), ms(105)),
        None,
        "10 ms short of the window"
    );
    // 2 ms of CPU over 5 s (the skipped reading did not move the window's start).
    let r = m.reading(base + ms(5000), ms(110)).unwrap();
    assert!((r - 2.0).abs() < 1e-9, "{r}");
    let r = m
        .reading(base + ms(10_000), ms(110) + Duration::from_micros(2500))
        .unwrap();
    assert!((r - 0.5).abs() < 1e-9, "{r}");
}
