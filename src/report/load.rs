//! The worst disk latency under load over a report's records: each disk's loaded periods
//! (records with a queue, `LOADED_AQU_SZ`, or a busy device, `LOADED_UTIL_PCT`; periods
//! separated by a single record are one, as `periods` joins them, the record itself left
//! out), and in each, each direction's await weighted by its IOs. The worst such figure is the report's headline latency.
//!
//! One record's await at a handful of IOs is not load: per record, the worst went to
//! `r_await 45.43 ms at 7 IOs/s` (a cleanup a minute after a flood), `40.00 ms at 8 IOs/s`
//! inside an idle minute, and a lone 554 ms second, in 3 of 5 reports (issue 50). Weighted
//! by IOs over the period, a slow second counts as the IOs it carried.
//!
//! Owns: `worst_under_load` and what "loaded" means for a report. Must not touch: I/O,
//! Markdown.

use std::collections::BTreeMap;

use super::types::{At, WorstAwait};
use crate::model::Model;

/// A record is loaded with a queue at least this deep (aqu-sz)...
const LOADED_AQU_SZ: f64 = 1.0;
/// ...or the device busy at least this %util.
const LOADED_UTIL_PCT: f64 = 50.0;
/// A direction counts in a period from this many IOs...
const MIN_PERIOD_IOS: f64 = 100.0;
/// ...and this share of the period's IOs on its device.
const MIN_IO_SHARE: f64 = 0.1;

/// The await columns and their IOs per second, by direction.
const DIRS: [&str; 3] = ["r_await", "w_await", "d_await"];

/// One disk's loaded period as it is summed.
#[derive(Debug, Clone, Default)]
struct Acc {
    /// Start of the first record's interval, ms since the epoch.
    start_ms: i64,
    /// Read time of the last loaded record.
    end_ms: i64,
    /// Seconds of the loaded records.
    seconds: f64,
    /// IOs per direction, over the loaded records.
    ios: [f64; 3],
    /// IOs × await per direction, ms.
    weighted: [f64; 3],
    /// A record that was not loaded came after the last loaded one: the next record says
    /// whether the period goes on.
    gap: bool,
}

impl Acc {
    /// The period's worst direction that carried load, as a `WorstAwait`.
    fn worst(&self, disk: &str) -> Option<WorstAwait> {
        let total: f64 = self.ios.iter().sum();
        let mut best: Option<WorstAwait> = None;
        for (i, column) in DIRS.iter().enumerate() {
            let n = self.ios[i];
            if n < MIN_PERIOD_IOS || n < MIN_IO_SHARE * total {
                continue;
            }
            let ms = self.weighted[i] / n;
            if best.as_ref().is_none_or(|b| ms > b.at.value) {
                best = Some(WorstAwait {
                    disk: disk.to_owned(),
                    column,
                    ops_per_s: n / self.seconds.max(f64::MIN_POSITIVE),
                    at: At {
                        value: ms,
                        time_ms: self.start_ms,
                    },
                    end_ms: self.end_ms,
                    seconds: self.seconds,
                });
            }
        }
        best
    }
}

/// The worst IO-weighted await of any disk's loaded period, and its direction.
#[must_use]
pub fn worst_under_load(models: &[Model]) -> Option<WorstAwait> {
    let mut open: BTreeMap<&str, Acc> = BTreeMap::new();
    let mut worst: Option<WorstAwait> = None;
    let mut close = |disk: &str, acc: Acc| {
        if let Some(w) = acc.worst(disk)
            && worst.as_ref().is_none_or(|b| w.at.value > b.at.value)
        {
            worst = Some(w);
        }
    };
    for m in models {
        let Some(dt) = m.interval_s.filter(|dt| *dt > 0.0) else {
            continue;
        };
        for d in &m.disks {
            let c = &d.cols;
            let loaded = c.aqu_sz.is_some_and(|q| q >= LOADED_AQU_SZ)
                || c.util_pct.is_some_and(|u| u >= LOADED_UTIL_PCT);
            let name = d.name.as_str();
            if !loaded {
                match open.get_mut(name) {
                    Some(acc) if !acc.gap => acc.gap = true,
                    Some(_) => close(name, open.remove(name).unwrap_or_default()),
                    None => {}
                }
                continue;
            }
            let acc = open.entry(name).or_insert_with(|| Acc {
                start_ms: m.time_ms - (dt * 1000.0).round() as i64,
                ..Acc::default()
            });
            acc.gap = false;
            acc.seconds += dt;
            acc.end_ms = m.time_ms;
            let flows = [(c.r_s, c.r_await), (c.w_s, c.w_await), (c.d_s, c.d_await)];
            for (i, (n, a)) in flows.into_iter().enumerate() {
                if let (Some(n), Some(a)) = (n, a) {
                    acc.ios[i] += n * dt;
                    acc.weighted[i] += n * dt * a;
                }
            }
        }
    }
    for (name, acc) in std::mem::take(&mut open) {
        close(name, acc);
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` records of the idle tree's first disk with `cols` set, one a second from `t0_ms`.
    fn records(t0_ms: i64, n: usize, set: impl Fn(&mut crate::model::disk::Columns)) -> Vec<Model> {
        let samples = crate::source::test_samples("live-idle");
        let base = crate::pipeline::derive_all(&samples, crate::model::Options::default())
            .models
            .remove(0);
        (0..n)
            .map(|i| {
                let mut m = base.clone();
                m.disks.truncate(1);
                m.interval_s = Some(1.0);
                m.time_ms = t0_ms + 1000 * i64::try_from(i).unwrap_or(0);
                m.disks[0].cols = crate::model::disk::Columns::default();
                set(&mut m.disks[0].cols);
                m
            })
            .collect()
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "exact quotients of small integers")]
    fn a_slow_trickle_after_the_load_is_not_the_worst_latency() {
        // 10 s of writes with a queue: 500/s at 8 ms, then 600/s at 11 ms.
        let mut ms = records(1000, 5, |c| {
            (c.w_s, c.w_await, c.aqu_sz, c.util_pct) =
                (Some(500.0), Some(8.0), Some(4.0), Some(90.0));
        });
        ms.extend(records(6000, 5, |c| {
            (c.w_s, c.w_await, c.aqu_sz, c.util_pct) =
                (Some(600.0), Some(11.0), Some(6.6), Some(95.0));
        }));
        // The cleanup a minute later: 7 reads a second at 45 ms, no queue (aqu-sz 0.3).
        ms.extend(records(70_000, 10, |c| {
            (c.r_s, c.r_await, c.aqu_sz, c.util_pct) =
                (Some(7.0), Some(45.43), Some(0.3), Some(5.0));
        }));
        let w = worst_under_load(&ms).unwrap();
        // (5·500·8 + 5·600·11) / (5·500 + 5·600) = 53 000 / 5 500.
        assert_eq!((w.column, w.at.value), ("w_await", 53_000.0 / 5_500.0));
        assert_eq!((w.at.time_ms, w.end_ms, w.seconds), (0, 10_000, 10.0));
        assert_eq!(w.ops_per_s, 550.0);
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "exact quotients of small integers")]
    fn one_quiet_record_inside_a_load_does_not_split_it_and_a_lone_slow_second_weighs_its_ios() {
        let loaded = |c: &mut crate::model::disk::Columns| {
            (c.w_s, c.w_await, c.aqu_sz) = (Some(1000.0), Some(2.0), Some(2.0));
        };
        let mut ms = records(1000, 3, loaded);
        // A second with 5 writes at 554 ms and no queue to speak of: inside the period's span,
        // but neither its second nor its IOs count.
        ms.extend(records(4000, 1, |c| {
            (c.w_s, c.w_await, c.aqu_sz) = (Some(5.0), Some(554.0), Some(0.5));
        }));
        ms.extend(records(5000, 3, loaded));
        let w = worst_under_load(&ms).unwrap();
        assert_eq!((w.at.value, w.seconds, w.end_ms), (2.0, 6.0, 7000));
        // Alone, 5 IOs are under MIN_PERIOD_IOS: no headline at all.
        let lone = records(1000, 1, |c| {
            (c.w_s, c.w_await, c.aqu_sz) = (Some(5.0), Some(554.0), Some(2.8));
        });
        assert_eq!(worst_under_load(&lone), None);
    }
}
