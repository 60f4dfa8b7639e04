//! Messages into the app and effects out of it.
//!
//! Owns: `Msg` and `Effect`. Must not touch: anything that performs them.

use super::keymap::Action;
use crate::sample::RawSample;

/// Everything that changes the app arrives as one of these.
#[derive(Debug, Clone)]
pub enum Msg {
    /// A fresh raw sample from the sampler.
    Sample(RawSample),
    /// The sampler failed to read (the message names the file).
    SampleError(String),
    /// A user action from the keymap.
    Action(Action),
    /// The wall clock, once a second, so the screen clock runs even if sampling stalls.
    Tick {
        /// Milliseconds since the epoch.
        now_ms: i64,
    },
    /// How long the sampler's last read of /proc and /sys took, µs.
    SampleTook(u64),
    /// pagewatch's CPU use over the last second, ms per second.
    CpuUse(f64),
    /// The terminal was resized.
    Resize,
    /// Stop: a signal (SIGTERM, SIGHUP, SIGINT) arrived.
    Quit,
}

/// What pagewatch itself costs, shown in the header.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SelfCost {
    /// Time the last read of /proc and /sys took, µs.
    pub sample_us: u64,
    /// CPU time used per second of wall time, ms/s (user + system).
    pub cpu_ms_per_s: f64,
}

/// Side effects the runtime performs for the app.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Effect {
    /// Leave.
    Quit,
    /// Sample every this many seconds from now on.
    SetInterval(f64),
}
