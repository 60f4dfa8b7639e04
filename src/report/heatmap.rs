//! The report's latency charts (issue 25): for each device whose requests were timed in the
//! recording (`--latency`, the detail view, or saturated), a heat map of device time (time
//! across, log2 buckets up, each cell shaded by the share of that interval's requests) with
//! the read p50 and p99 drawn over it.
//!
//! Owns: those charts and their file names (`latency-<device>.svg`). Must not touch: I/O, the
//! figures (`model::latency`).

use anyhow::anyhow;
use plotters::prelude::*;

use crate::model::Model;
use crate::model::latency::{bucket_label, heat};
use crate::parse::blk_lat::{BUCKETS, Hist};

const WIDTH: u32 = 900;
const HEIGHT: u32 = 360;
const CELL: RGBColor = RGBColor(31, 119, 180);
const P50: RGBColor = RGBColor(44, 160, 44);
const P99: RGBColor = RGBColor(214, 39, 40);

/// One device's latency heat map: (file name, title, SVG).
pub type HeatChart = (String, String, String);

/// The devices timed in `models` with a request completed while they were, in the order
/// first seen.
#[must_use]
pub fn timed_devices(models: &[Model]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for d in models.iter().flat_map(|m| &m.disks) {
        let requests = d.lat_hist.as_ref().is_some_and(|l| l.device().total() > 0);
        if requests && !out.contains(&d.name) {
            out.push(d.name.clone());
        }
    }
    out
}

/// The chart's file name for `device` (`types::chart_file`).
#[must_use]
pub fn file_name(device: &str) -> String {
    super::types::chart_file("latency", device)
}

/// A latency in µs on the chart's y scale: bucket k spans [k, k + 1), so `log2(us) + 1`.
fn y_of(us: f64) -> f64 {
    if us < 1.0 { us } else { us.log2() + 1.0 }
}

/// The heat maps of every timed device; `started_ms` is the x origin.
pub fn render(models: &[Model], started_ms: i64) -> anyhow::Result<Vec<HeatChart>> {
    let mut out = Vec::new();
    for dev in timed_devices(models) {
        // Timed, but no request completed while it was: nothing to draw.
        let Some(svg) = draw(models, &dev, started_ms).map_err(|e| anyhow!("drawing: {e}"))? else {
            continue;
        };
        out.push((
            file_name(&dev),
            format!("{dev}: device time (heat map), read p50 and p99"),
            svg,
        ));
    }
    Ok(out)
}

/// The device's heat map; `None` when no request of it completed while it was timed.
fn draw(
    models: &[Model],
    dev: &str,
    started_ms: i64,
) -> Result<Option<String>, DrawingAreaErrorKind<std::io::Error>> {
    let disk = |m: &Model| m.disks.iter().find(|d| d.name == dev).cloned();
    let cols: Vec<Option<Hist>> = models
        .iter()
        .map(|m| disk(m).and_then(|d| d.lat_hist.map(|l| l.device())))
        .collect();
    let Some(h) = heat(&cols, BUCKETS) else {
        return Ok(None);
    };
    let xs: Vec<(f64, f64)> = models
        .iter()
        .map(|m| {
            let x1 = (m.time_ms - started_ms) as f64 / 1000.0;
            (x1 - m.interval_s.unwrap_or(1.0), x1)
        })
        .collect();
    let x0 = xs.first().map_or(0.0, |x| x.0);
    let x1 = xs.last().map_or(1.0, |x| x.1).max(x0 + 1.0);
    let (y0, y1) = (h.lo as f64, (h.hi + 1) as f64);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{dev}: device time"), ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(32)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let ylab = |y: &f64| bucket_label(y.floor().max(0.0) as usize);
        chart
            .configure_mesh()
            .x_desc("time since the recording started (s)")
            .y_desc("latency (log2 buckets)")
            .y_labels(h.hi - h.lo + 2)
            .y_label_formatter(&ylab)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        let cells = h.cells.iter().zip(&xs).flat_map(|(c, &(a, b))| {
            c.iter().flat_map(move |col| {
                col.iter()
                    .enumerate()
                    .filter(|(_, s)| **s > 0.0)
                    .map(move |(r, s)| {
                        let y = (h.lo + r) as f64;
                        // At least a light tint for a bucket with any request.
                        let fill = CELL.mix(0.1 + 0.9 * s).filled();
                        Rectangle::new([(a, y), (b, y + 1.0)], fill)
                    })
            })
        });
        chart.draw_series(cells)?;
        for (q, colour, name) in [(0.5, P50, "read p50"), (0.99, P99, "read p99")] {
            let pts: Vec<(f64, f64)> = models
                .iter()
                .zip(&xs)
                .filter_map(|(m, &(_, x))| {
                    let l = disk(m)?.lat_hist?;
                    Some((x, y_of(l.lat.read_dev.quantile(q)?)))
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            chart
                .draw_series(LineSeries::new(pts, colour.stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .draw()?;
        root.present()?;
    }
    Ok(Some(svg))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device timed while idle has no request to draw: no chart and no link (it panicked
    /// in `draw` before, in CI's report of a recording with such a device).
    #[test]
    fn a_timed_device_without_requests_draws_nothing() {
        use crate::model::latency::DiskLatency;
        use crate::parse::blk_lat::DevLat;
        let samples = crate::source::test_samples("live-idle");
        let p = crate::parse::Snapshot::parse(&samples[0]).unwrap();
        let c = crate::parse::Snapshot::parse(&samples[1]).unwrap();
        let mut m = Model::derive(Some(&p), &c, crate::model::Options::default());
        let lat = |events: u64| {
            let mut l = DevLat::default();
            l.read_dev.counts[7] = events;
            std::sync::Arc::new(DiskLatency {
                lat: l,
                ring_lost: 0,
            })
        };
        m.disks[0].lat_hist = Some(lat(0));
        let idle = vec![m.clone(), m.clone()];
        assert!(timed_devices(&idle).is_empty());
        assert!(render(&idle, 0).unwrap().is_empty());
        let mut busy = idle;
        busy[1].disks[0].lat_hist = Some(lat(5));
        assert_eq!(timed_devices(&busy), [busy[0].disks[0].name.clone()]);
        assert_eq!(render(&busy, 0).unwrap().len(), 1);
    }

    #[test]
    fn y_scale_puts_a_latency_in_its_bucket() {
        for us in [1.0, 3.0, 100.0, 1500.0] {
            let k = crate::parse::blk_lat::bucket(us as u64) as f64;
            let y = y_of(us);
            assert!(k <= y && y < k + 1.0, "{us}: {y}");
        }
        assert_eq!(file_name("cciss/c0d0"), "latency-cciss_c0d0.svg");
        // Issue 51: 5,000 characters, cut to fit a file name, the two kept apart.
        let (a, b) = (file_name(&"x".repeat(5_000)), file_name(&"x".repeat(4_999)));
        assert_eq!(a.len(), "latency-".len() + 64 + ".svg".len(), "{a}");
        assert!(a.starts_with("latency-xxxx"), "{a}");
        assert_ne!(a, b);
    }
}
