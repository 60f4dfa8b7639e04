//! SVG charts of a report: MemAvailable, dirty against its thresholds, reclaim rates, pressure
//! stall (PSI) and each busy disk's await / aqu-sz / %util, with a dashed vertical line for
//! every event, labelled with its timeline number (E1, E2, …). The verdict's periods are
//! shaded behind the lines: writers throttled on the dirty chart, a disk's saturated periods
//! on each panel of its chart.
//!
//! Drawn with plotters' SVG backend into strings. Without plotters' font features the SVG
//! backend writes `<text>` elements itself and leaves glyphs to the viewer, so labels need
//! no font files. Owns: chart layout. Must not touch: I/O (the caller writes the files).

use anyhow::anyhow;
use plotters::prelude::*;

use super::analysis::{Analysis, DiskReport};
use super::periods::Period;
use super::series::{DISK, SYSTEM, bg_thresh, has_psi, psi_pct, thresh};
use crate::model::Model;

const WIDTH: u32 = 900;
const PANEL_HEIGHT: u32 = 300;
const MIB: f64 = 1024.0 * 1024.0;
const COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
];
const MARKER: RGBColor = RGBColor(120, 120, 120);
/// Shade of the periods with writers throttled, and of a disk's saturated periods.
const THROTTLED: RGBColor = RGBColor(148, 103, 189);
const SATURATED: RGBColor = RGBColor(188, 140, 0);
/// Opacity of a shade, light enough for the lines to read through it.
const SHADE_ALPHA: f64 = 0.2;
/// The PSI chart's file name.
pub(crate) const PSI: &str = "psi.svg";

/// One line of a panel: a name and one optional value per record.
struct Line {
    name: String,
    values: Vec<Option<f64>>,
}

/// Periods shaded behind a panel's lines: a legend name, a colour and the spans, seconds
/// since the recording started.
#[derive(Debug, Clone, PartialEq)]
struct Shade {
    name: &'static str,
    colour: RGBColor,
    spans: Vec<(f64, f64)>,
}

/// One panel: a title, the y unit, its lines and the periods shaded behind them.
struct Panel {
    title: String,
    unit: &'static str,
    lines: Vec<Line>,
    shade: Option<Shade>,
}

/// A rendered chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart {
    /// File name, relative to the report directory.
    pub file: String,
    /// What it shows (the Markdown alt text).
    pub title: String,
    /// The SVG document.
    pub svg: String,
}

fn line(name: &str, models: &[Model], get: impl Fn(&Model) -> Option<f64>) -> Line {
    Line {
        name: name.to_owned(),
        values: models.iter().map(get).collect(),
    }
}

/// The x axis: seconds since the recording started.
struct Axis {
    xs: Vec<f64>,
    x0: f64,
    x1: f64,
    markers: Vec<(f64, String)>,
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "plotters passes labels by reference"
)]
fn secs_label(x: &f64) -> String {
    let s = x.round() as i64;
    if s.abs() >= 3600 {
        format!(
            "{}:{:02}:{:02}",
            s / 3600,
            s.abs() % 3600 / 60,
            s.abs() % 60
        )
    } else {
        format!("{}:{:02}", s / 60, s.abs() % 60)
    }
}

fn draw(axis: &Axis, panels: &[Panel]) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let height = PANEL_HEIGHT * panels.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("drawing: {e}"))?;
        let areas = root.split_evenly((panels.len(), 1));
        for (panel, area) in panels.iter().zip(&areas) {
            draw_panel(axis, panel, area).map_err(|e| anyhow!("drawing: {e}"))?;
        }
        root.present().map_err(|e| anyhow!("drawing: {e}"))?;
    }
    Ok(svg)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_panel(
    axis: &Axis,
    panel: &Panel,
    area: &Area<'_>,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let top = panel
        .lines
        .iter()
        .flat_map(|l| l.values.iter().flatten())
        .fold(0.0_f64, |a, &b| a.max(b));
    // Headroom above the data for the legend and the event labels.
    let y1 = if top > 0.0 { top * 1.35 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(64)
        .build_cartesian_2d(axis.x0..axis.x1, 0.0..y1)?;
    chart
        .configure_mesh()
        .x_desc("time since the recording started (m:ss)")
        .y_desc(panel.unit)
        .x_label_formatter(&secs_label)
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    // Shaded periods first, so the lines stay on top.
    if let Some(sh) = panel.shade.as_ref().filter(|s| !s.spans.is_empty()) {
        let fill = sh.colour.mix(SHADE_ALPHA).filled();
        chart
            .draw_series(sh.spans.iter().map(|&(a, b)| {
                Rectangle::new([(a.max(axis.x0), 0.0), (b.min(axis.x1), y1)], fill)
            }))?
            .label(sh.name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], fill));
    }
    for (i, l) in panel.lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        // A record without the figure breaks the line rather than bridging the gap.
        let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (x, v) in axis.xs.iter().zip(&l.values) {
            match v {
                Some(v) => segments.last_mut().map_or((), |s| s.push((*x, *v))),
                None => segments.push(Vec::new()),
            }
        }
        let mut first = true;
        for seg in segments.into_iter().filter(|s| !s.is_empty()) {
            let s = chart.draw_series(LineSeries::new(seg, colour.stroke_width(2)))?;
            if first {
                s.label(l.name.clone()).legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2))
                });
                first = false;
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .draw()?;
    // Event lines and labels last, so the legend never hides them.
    for (n, (x, label)) in axis.markers.iter().enumerate() {
        let style = ShapeStyle::from(&MARKER).stroke_width(1);
        chart.draw_series(DashedLineSeries::new([(*x, 0.0), (*x, y1)], 4, 4, style))?;
        // Alternate label heights so neighbouring events stay readable.
        let y = y1 * if n % 2 == 0 { 0.97 } else { 0.90 };
        chart.draw_series(std::iter::once(Text::new(
            label.clone(),
            (*x, y),
            ("sans-serif", 12).into_font().color(&BLACK),
        )))?;
    }
    Ok(())
}

type Spec = (String, String, Vec<Panel>);

/// The spans of `periods` in seconds since `started_ms`.
fn spans(periods: &[Period], started_ms: i64) -> Vec<(f64, f64)> {
    let rel = |ms: i64| (ms - started_ms) as f64 / 1000.0;
    periods
        .iter()
        .map(|p| (rel(p.start_ms), rel(p.end_ms)))
        .collect()
}

fn system_charts(m: &[Model], throttled: Vec<(f64, f64)>) -> Vec<Spec> {
    let pages = |m: &Model, p: Option<u64>| p.map(|p| p as f64 * m.page_size as f64 / MIB);
    let none: fn(&Model) -> Option<f64> = |_| None;
    let sys = |name: &str| SYSTEM.iter().find(|s| s.0 == name).map_or(none, |s| s.3);
    let panel = |title: &str, unit, lines| Panel {
        title: title.to_owned(),
        unit,
        lines,
        shade: None,
    };
    vec![
        (
            "memory.svg".into(),
            "MemAvailable and MemFree".into(),
            vec![panel(
                "Memory",
                "MiB",
                vec![
                    line("MemAvailable", m, sys("MemAvailable")),
                    line("MemFree", m, sys("MemFree")),
                ],
            )],
        ),
        (
            "dirty.svg".into(),
            "Dirty+Writeback against the dirty thresholds".into(),
            vec![Panel {
                shade: Some(Shade {
                    name: "writers throttled",
                    colour: THROTTLED,
                    spans: throttled,
                }),
                ..panel(
                    "Dirty + writeback against the thresholds",
                    "MiB",
                    vec![
                        line("Dirty+Writeback", m, |m| {
                            pages(m, m.dirty.dirty_writeback_pages)
                        }),
                        line("thresh (hard limit)", m, |m| pages(m, thresh(m))),
                        line("background", m, |m| pages(m, bg_thresh(m))),
                        line("freerun (throttle start)", m, |m| {
                            pages(m, m.dirty.freerun_pages)
                        }),
                    ],
                )
            }],
        ),
        (
            "reclaim.svg".into(),
            "Reclaim rates".into(),
            vec![
                panel(
                    "Page reclaim",
                    "pages/s",
                    vec![
                        line("kswapd scan", m, sys("kswapd scan")),
                        line("direct scan", m, sys("direct scan")),
                        line("kswapd steal", m, sys("kswapd steal")),
                        line("direct steal", m, sys("direct steal")),
                    ],
                ),
                panel(
                    "Direct-reclaim stalls and major faults",
                    "per second",
                    vec![
                        line("allocstall/s", m, sys("allocstall")),
                        line("major faults/s", m, sys("major faults")),
                    ],
                ),
            ],
        ),
    ]
}

/// Pressure stall: the share of each interval in which some, and all non-idle, tasks stalled.
fn psi_chart(m: &[Model]) -> Spec {
    let panel = |title: &str, lines| Panel {
        title: title.to_owned(),
        unit: "% of the interval",
        lines,
        shade: None,
    };
    (
        PSI.into(),
        "Pressure stall (PSI): share of each interval stalled on cpu, memory, io".into(),
        vec![
            panel(
                "Pressure stall: some task stalled",
                vec![
                    line("cpu some", m, |m| psi_pct(m.pressure.cpu, false)),
                    line("memory some", m, |m| psi_pct(m.pressure.memory, false)),
                    line("io some", m, |m| psi_pct(m.pressure.io, false)),
                ],
            ),
            panel(
                "Pressure stall: all non-idle tasks stalled",
                // cpu full too (0 at the system level since 5.13, absent before), so each
                // resource keeps its colour in both panels.
                vec![
                    line("cpu full", m, |m| psi_pct(m.pressure.cpu, true)),
                    line("memory full", m, |m| psi_pct(m.pressure.memory, true)),
                    line("io full", m, |m| psi_pct(m.pressure.io, true)),
                ],
            ),
        ],
    )
}

fn disk_chart(d: &DiskReport, m: &[Model], saturated: &[(f64, f64)]) -> Spec {
    let get = |col: &str| {
        let f = DISK.iter().find(|c| c.0 == col).map(|c| c.3);
        let name = d.name.clone();
        move |m: &Model| m.disks.iter().find(|x| x.name == name).and_then(f?)
    };
    let panel = |what: &str, unit, lines| Panel {
        title: format!("{}: {what}", d.name),
        unit,
        lines,
        shade: Some(Shade {
            name: "saturated",
            colour: SATURATED,
            spans: saturated.to_vec(),
        }),
    };
    (
        d.chart.clone(),
        format!("{}: await, aqu-sz and %util", d.name),
        vec![
            panel(
                "await",
                "ms",
                vec![
                    line("r_await", m, get("r_await")),
                    line("w_await", m, get("w_await")),
                ],
            ),
            panel(
                "queue size",
                "aqu-sz",
                vec![line("aqu-sz", m, get("aqu-sz"))],
            ),
            panel("utilisation", "%util", vec![line("%util", m, get("%util"))]),
        ],
    )
}

/// Renders every chart of a report. `started_ms` is the recording's start (the x origin).
pub fn render(a: &Analysis, started_ms: i64) -> anyhow::Result<Vec<Chart>> {
    let m = &a.models;
    let rel = |ms: i64| (ms - started_ms) as f64 / 1000.0;
    let xs: Vec<f64> = m.iter().map(|m| rel(m.time_ms)).collect();
    let first = m
        .first()
        .map_or(0.0, |m| rel(m.time_ms) - m.interval_s.unwrap_or(0.0));
    let last = xs.last().copied().unwrap_or(first);
    let x1 = if last > first { last } else { first + 1.0 };
    let axis = Axis {
        x0: first,
        x1,
        markers: a
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let label = match &e.kind {
                    crate::event::EventKind::Phase { name, .. } => {
                        format!("E{} {}", i + 1, crate::fmt::escape_controls(name))
                    }
                    _ => format!("E{}", i + 1),
                };
                (rel(e.wall_ms), label)
            })
            .filter(|(x, _)| *x >= first && *x <= x1)
            .collect(),
        xs,
    };
    let mut specs = system_charts(m, spans(&a.throttled, started_ms));
    if has_psi(m) {
        specs.push(psi_chart(m));
    }
    specs.extend(
        a.disks
            .iter()
            .map(|d| disk_chart(d, m, &spans(&d.saturated, started_ms))),
    );
    let mut charts = specs
        .into_iter()
        .map(|(file, title, panels)| {
            Ok(Chart {
                svg: draw(&axis, &panels)?,
                file,
                title,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    // The timed devices' latency heat maps (issue 25).
    for (file, title, svg) in super::heatmap::render(m, started_ms)? {
        charts.push(Chart { file, title, svg });
    }
    Ok(charts)
}
