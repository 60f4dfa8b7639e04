//! One lifecycle for every tracer (the throttle tracepoint, the sync syscalls, the block
//! requests, the `-below` events and direct reclaim): armed once it is wanted, retried
//! `RETRY_TICKS` samples after a refusal, read once a sample while armed, and disarmed (its
//! tracefs instance removed, by dropping what arming made) as soon as it is no longer wanted.
//!
//! Owns: that state (`Life`: what arming made, the wait before the next attempt, whether the
//! tracer has said anything yet), what every arming shares (`events_here`: root and tracefs
//! first, then the events this kernel has; `with_clock`: the `mono` clock, else `global`),
//! and the status pseudo-file's text (`status_text`, read back by `parse::trace::parse_status`).
//! Must not touch: tracefs itself (`source::trace_instance`), what a tracer reads or puts in
//! the sample (each tracer).

use std::fmt::Write as _;
use std::path::Path;

use super::trace_instance::{Refusal, has_event, reachable};

/// Samples between attempts to arm after it failed.
pub const RETRY_TICKS: u32 = 60;

/// What a tracer does in one sample.
pub enum Turn<'a, A> {
    /// Nothing new to say: never wanted yet, or waiting to try again.
    Silent,
    /// Not wanted, after it was asked for: disarmed (if it was armed). Say "off".
    Off,
    /// Armed in this sample.
    Armed(&'a mut A),
    /// Could not arm: the state and why; the next attempt is `RETRY_TICKS` samples away.
    Refused(Refusal),
    /// Armed before this sample: read it.
    Read(&'a mut A),
}

/// A tracer's state between samples; `A` is what arming made (its instance, decoder and
/// caches), dropped to disarm.
pub struct Life<A> {
    armed: Option<A>,
    /// Samples left before the next attempt to arm.
    wait: u32,
    /// Arming was tried at least once: from then on an unwanted tracer says "off".
    spoke: bool,
}

impl<A> Default for Life<A> {
    fn default() -> Self {
        Self {
            armed: None,
            wait: 0,
            spoke: false,
        }
    }
}

impl<A> Life<A> {
    /// This sample's turn: disarms when not `want`ed, arms (`arm`) when wanted and not armed
    /// and not waiting, else reads.
    pub fn turn(&mut self, want: bool, arm: impl FnOnce() -> Result<A, Refusal>) -> Turn<'_, A> {
        if !want {
            self.wait = 0;
            if !self.spoke {
                return Turn::Silent;
            }
            self.armed = None;
            return Turn::Off;
        }
        if self.armed.is_some() {
            return self.armed.as_mut().map_or(Turn::Silent, Turn::Read);
        }
        if self.wait > 0 {
            self.wait -= 1;
            return Turn::Silent;
        }
        self.spoke = true;
        match arm() {
            Ok(a) => Turn::Armed(self.armed.insert(a)),
            Err(r) => {
                self.wait = RETRY_TICKS;
                Turn::Refused(r)
            }
        }
    }

    /// Arms between samples, when wanted and neither armed nor waiting after a refusal: the
    /// step that asked for it is a sample old, and arming only at the next sample would leave
    /// that sample without events, so an instance's first exact interval came two samples
    /// after the step that wanted it (issue 50: two instances started apart read a flood's
    /// first seconds differently). The next turn reads. A refusal here is left to the next
    /// turn, which tries again and says why.
    pub fn arm_ahead(&mut self, want: bool, arm: impl FnOnce() -> Result<A, Refusal>) {
        if want && self.armed.is_none() && self.wait == 0 {
            if let Ok(a) = arm() {
                self.armed = Some(a);
                self.spoke = true;
            }
        }
    }

    /// Disarms now and forgets any wait: what is wanted changed (the block tracer's devices).
    pub fn restart(&mut self) {
        self.armed = None;
        self.wait = 0;
    }

    /// What arming made, while armed, to change.
    pub fn armed_mut(&mut self) -> Option<&mut A> {
        self.armed.as_mut()
    }

    /// Samples left before the next attempt to arm.
    #[cfg(test)]
    pub fn waiting(&self) -> u32 {
        self.wait
    }

    /// Disarms (removes the instance) and stays so until the next turn wants it.
    pub fn disarm(&mut self) {
        self.armed = None;
    }
}

/// The events of `wanted` this kernel has (their directories under `events/`), refused first
/// for not being root or for no tracefs, so that a tracer blames the cause and not the events
/// it cannot see.
pub fn events_here(
    proc_root: &Path,
    wanted: &[&'static str],
) -> Result<Vec<&'static str>, Refusal> {
    reachable(proc_root)?;
    Ok(wanted
        .iter()
        .copied()
        .filter(|e| has_event(proc_root, e))
        .collect())
}

/// Arms with the `mono` trace clock, else with `global`: the first that works, with the clock
/// it used. Only a failure to set up (`error`, such as a refused clock) is worth the other
/// clock; any other refusal is returned at once.
pub fn with_clock<A>(
    mut arm: impl FnMut(&'static str) -> Result<A, Refusal>,
) -> Result<(A, &'static str), Refusal> {
    let mut last = None;
    for clock in ["mono", "global"] {
        match arm(clock) {
            Ok(a) => return Ok((a, clock)),
            Err(e) if e.0 == "error" => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(("error", "no clock".into())))
}

/// The status pseudo-file of a tracer (the keys `parse::trace::parse_status` reads): its
/// state, why (one line), pagewatch's pid, its own thread ids where it lists them (`tasks`,
/// the throttle tracer's, to flag its own rows), and the read's bytes and whether it was cut.
pub fn status_text(
    state: &str,
    why: Option<&str>,
    bytes: usize,
    capped: bool,
    tasks: &str,
) -> String {
    let mut s = format!("state {state}\n");
    if let Some(w) = why {
        let _ = writeln!(s, "why {}", w.replace('\n', " "));
    }
    let _ = writeln!(s, "pid {}", std::process::id());
    if !tasks.is_empty() {
        let _ = writeln!(s, "tasks {tasks}");
    }
    let _ = write!(s, "bytes {bytes}\ncapped {}\n", u8::from(capped));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The turns of `wants`, with arming refused on the attempts listed in `refuse` (counted
    /// from 0), as short words.
    fn turns(wants: &[bool], refuse: &[usize]) -> Vec<String> {
        let mut life: Life<u32> = Life::default();
        let mut attempts = 0u32;
        wants
            .iter()
            .map(|&want| {
                let t = life.turn(want, || {
                    attempts += 1;
                    if refuse.contains(&(attempts as usize - 1)) {
                        Err(("no-event", format!("attempt {}", attempts - 1)))
                    } else {
                        Ok(attempts - 1)
                    }
                });
                match t {
                    Turn::Silent => "silent".to_owned(),
                    Turn::Off => "off".to_owned(),
                    Turn::Armed(a) => format!("armed {a}"),
                    Turn::Refused((s, w)) => format!("{s}: {w}"),
                    Turn::Read(a) => format!("read {a}"),
                }
            })
            .collect()
    }

    #[test]
    fn unwanted_and_never_tried_is_silent_then_arms_reads_and_says_off() {
        let t = turns(&[false, false, true, true, true, false, false, true], &[]);
        assert_eq!(
            t,
            [
                "silent", "silent", "armed 0", "read 0", "read 0", "off", "off", "armed 1"
            ]
        );
    }

    #[test]
    fn a_refusal_waits_retry_ticks_before_the_next_attempt() {
        let mut wants = vec![true; usize::try_from(RETRY_TICKS).unwrap_or(60) + 3];
        wants.push(false);
        let t = turns(&wants, &[0]);
        assert_eq!(t[0], "no-event: attempt 0");
        let n = usize::try_from(RETRY_TICKS).unwrap_or(60);
        assert!(t[1..=n].iter().all(|x| x == "silent"), "{t:?}");
        assert_eq!(t[n + 1], "armed 1");
        assert_eq!(t[n + 2], "read 1");
        assert_eq!(t[n + 3], "off");
    }

    #[test]
    fn not_wanted_forgets_the_wait() {
        // Refused, unwanted for a sample, wanted again: tried at once.
        let t = turns(&[true, false, true], &[0]);
        assert_eq!(t, ["no-event: attempt 0", "off", "armed 1"]);
    }

    #[test]
    fn restart_disarms_and_tries_at_once() {
        let mut life: Life<u32> = Life::default();
        assert!(matches!(
            life.turn(true, || Err(("error", "x".into()))),
            Turn::Refused(_)
        ));
        assert!(matches!(life.turn(true, || Ok(1)), Turn::Silent));
        life.restart();
        assert!(matches!(life.turn(true, || Ok(2)), Turn::Armed(2)));
        life.restart();
        assert!(life.armed_mut().is_none());
    }

    #[test]
    fn armed_ahead_the_next_turn_reads_and_a_refusal_is_left_to_it() {
        let mut life: Life<u32> = Life::default();
        life.arm_ahead(false, || Ok(1));
        assert!(matches!(life.turn(false, || Ok(1)), Turn::Silent));
        life.arm_ahead(true, || Ok(2));
        assert!(matches!(life.turn(true, || Ok(3)), Turn::Read(2)));
        // Armed already: nothing new is made.
        life.arm_ahead(true, || Ok(4));
        assert!(matches!(life.turn(true, || Ok(5)), Turn::Read(2)));
        // Refused ahead: the turn tries again and says why.
        let mut life: Life<u32> = Life::default();
        life.arm_ahead(true, || Err(("error", "ahead".into())));
        assert!(matches!(
            life.turn(true, || Err(("error", "turn".into()))),
            Turn::Refused((_, w)) if w == "turn"
        ));
        // Waiting after that refusal: not tried ahead either.
        life.arm_ahead(true, || Ok(6));
        assert!(matches!(life.turn(true, || Ok(7)), Turn::Silent));
    }

    #[test]
    fn the_global_clock_only_after_the_mono_clock_failed_to_set_up() {
        let mut tried = Vec::new();
        let r = with_clock(|c| {
            tried.push(c);
            if c == "mono" {
                Err(("error", "clock refused".into()))
            } else {
                Ok(7)
            }
        });
        assert_eq!(
            (r, tried.as_slice()),
            (Ok((7, "global")), ["mono", "global"].as_slice())
        );
        let mut tried = Vec::new();
        let r: Result<(u8, _), _> = with_clock(|c| {
            tried.push(c);
            Err(("not-root", "euid 1000".into()))
        });
        assert_eq!(r, Err(("not-root", "euid 1000".into())));
        assert_eq!(tried, ["mono"]);
    }

    #[test]
    fn status_reads_back() {
        let s = status_text("no-event", Some("a\nb"), 4096, true, "");
        let st = crate::parse::trace::parse_status(&s).unwrap();
        assert_eq!(st.state, crate::parse::trace::TraceState::NoEvent);
        assert_eq!(st.why.as_deref(), Some("a b"));
        assert_eq!((st.bytes, st.capped, st.tasks.len()), (4096, true, 0));
        assert_eq!(st.pid, Some(std::process::id()));
        let s = status_text("armed", None, 12, false, "1 2");
        let st = crate::parse::trace::parse_status(&s).unwrap();
        assert_eq!(st.tasks.len(), 2);
    }
}
