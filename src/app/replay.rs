//! Replay position: the parsed samples of a recording, where playback is, and how fast.
//!
//! Owns: `Replay` (cursor, speed, play/pause) and the rule for how far a clock tick advances.
//! Must not touch: files (the recording arrives parsed) or drawing.

use crate::parse::Snapshot;

/// Playback speeds offered by `+` and `-`.
pub const SPEEDS: [u32; 6] = [1, 2, 5, 10, 30, 60];

/// A recording being replayed.
#[derive(Debug, Clone)]
pub struct Replay {
    /// Parsed samples with their uptime (s), in order.
    pub samples: Vec<(Snapshot, Option<f64>)>,
    /// Index of the sample shown.
    pub cursor: usize,
    /// Playing (true) or paused.
    pub playing: bool,
    /// Times real time.
    pub speed: u32,
    /// Wall time of the last clock tick seen, ms.
    last_tick_ms: Option<i64>,
    /// Recorded time owed to playback, ms.
    owed_ms: f64,
}

impl Replay {
    /// A replay positioned before the first sample, playing at `speed`.
    #[must_use]
    pub fn new(samples: Vec<(Snapshot, Option<f64>)>, speed: u32) -> Self {
        Self {
            samples,
            cursor: 0,
            playing: true,
            speed: speed.clamp(1, 60),
            last_tick_ms: None,
            owed_ms: 0.0,
        }
    }

    /// Recorded wall time of sample `i`, ms.
    #[must_use]
    pub fn time_ms(&self, i: usize) -> Option<i64> {
        self.samples.get(i).map(|(s, _)| s.wall_ms)
    }

    /// The sample index `delta_ms` of recorded time away from the cursor (clamped).
    #[must_use]
    pub fn index_after(&self, delta_ms: i64) -> usize {
        let Some(t) = self.time_ms(self.cursor) else {
            return 0;
        };
        let target = t + delta_ms;
        let i = self.samples.partition_point(|(s, _)| s.wall_ms < target);
        if delta_ms < 0 {
            i.min(self.cursor)
        } else {
            i.min(self.samples.len().saturating_sub(1))
        }
    }

    /// Steps the speed up or down through `SPEEDS`.
    pub fn change_speed(&mut self, faster: bool) {
        let i = SPEEDS.iter().position(|&s| s >= self.speed).unwrap_or(0);
        self.speed = if faster {
            SPEEDS[(i + 1).min(SPEEDS.len() - 1)]
        } else {
            SPEEDS[i.saturating_sub(1)]
        };
    }

    /// How many samples a clock tick at `now_ms` moves playback forward.
    pub fn advance(&mut self, now_ms: i64) -> usize {
        let last = self.last_tick_ms.replace(now_ms);
        if !self.playing {
            self.owed_ms = 0.0;
            return 0;
        }
        let Some(last) = last else { return 0 };
        self.owed_ms += (now_ms - last).max(0) as f64 * f64::from(self.speed);
        let mut n = 0;
        let mut i = self.cursor;
        while let (Some(a), Some(b)) = (self.time_ms(i), self.time_ms(i + 1)) {
            let gap = (b - a).max(1) as f64;
            if self.owed_ms < gap {
                break;
            }
            self.owed_ms -= gap;
            i += 1;
            n += 1;
        }
        if self.time_ms(i + 1).is_none() {
            // At the end: stop owing time, so play resumes cleanly after a seek.
            self.owed_ms = 0.0;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(times: &[i64]) -> Replay {
        let samples = times
            .iter()
            .map(|&t| {
                let s = Snapshot {
                    wall_ms: t,
                    ..Snapshot::default()
                };
                (s, None)
            })
            .collect();
        Replay::new(samples, 1)
    }

    #[test]
    fn ticks_advance_by_recorded_time_times_speed() {
        let mut r = replay(&[0, 1000, 2000, 3000, 4000, 5000]);
        assert_eq!(r.advance(10_000), 0, "first tick only sets the clock");
        assert_eq!(r.advance(10_500), 0);
        assert_eq!(r.advance(11_000), 1);
        r.speed = 2;
        assert_eq!(r.advance(12_000), 2);
        r.playing = false;
        assert_eq!(r.advance(20_000), 0);
    }

    #[test]
    fn minute_jumps_clamp_to_the_recording() {
        let times: Vec<i64> = (0..200).map(|i| i * 1000).collect();
        let mut r = replay(&times);
        assert_eq!(r.index_after(60_000), 60);
        r.cursor = 100;
        assert_eq!(r.index_after(-60_000), 40);
        assert_eq!(r.index_after(600_000), 199);
        r.cursor = 10;
        assert_eq!(r.index_after(-60_000), 0);
    }

    #[test]
    fn speed_steps() {
        let mut r = replay(&[0]);
        r.change_speed(false);
        assert_eq!(r.speed, 1);
        for _ in 0..10 {
            r.change_speed(true);
        }
        assert_eq!(r.speed, 60);
        r.change_speed(false);
        assert_eq!(r.speed, 30);
    }
}
