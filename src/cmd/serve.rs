//! `pagewatch serve`: the live metrics endpoint without the screen.
//!
//! Owns: handing the arguments to the serve loop. Must not touch: the loop and the page
//! (`serve`, `metrics`).

use anyhow::Result;

use crate::cli::ServeArgs;

/// `pagewatch serve`: serves the latest sample until SIGINT, SIGTERM or SIGHUP.
pub fn run(a: &ServeArgs) -> Result<()> {
    super::note_unresolved(std::path::Path::new("/sys"), &a.latency);
    let latency = crate::serve::Latency {
        devices: a.latency.clone(),
        queue: a.queue_time,
        off: crate::source::NoTrace::from_names(&a.no_trace),
    };
    crate::serve::run(a.listen, a.interval, a.partitions, &latency)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cli_offers_every_tracer_the_source_can_keep_off() {
        assert_eq!(crate::cli::NO_TRACE, crate::source::NoTrace::NAMES);
    }
}
