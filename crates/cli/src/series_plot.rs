//! `swapsim run --series-svg`: a sampled run over simulated time, as an SVG document.
//!
//! Two charts share the time axis, in simulated seconds: above, the rates of swap-ins,
//! swap-outs, zswap loads and stores and major faults per second (each interval's count
//! over its length, drawn at the interval's end); below, the sizes in MiB of the memory
//! cgroup's usage, the resident and swapped-out pages and zswap's pool. Each timeline
//! operation is a grey vertical line at its start, named at the top of the upper chart.
//! The legends sit in a column to the right, as in the sweep plot (`plot.rs`), whose axis
//! labels and ranges this shares.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use swapsim::{Sample, Series};

use crate::plot::{draw_error, number_label, padded};

/// One chart's size, in pixels, and the legend column's width.
const CHART_PX: (u32, u32) = (960, 360);
const LEGEND_PX: u32 = 220;
const LEGEND_ROW_PX: i32 = 20;

/// One line: its legend label and its value in a sample.
type Metric = (&'static str, fn(&Sample) -> f64);

/// Per second of the sample's interval.
fn rate(count: u64, s: &Sample) -> f64 {
    count as f64 / (s.interval_ns.max(1) as f64 / 1e9)
}

fn mib(pages: u64) -> f64 {
    pages as f64 * 4096.0 / f64::from(1 << 20)
}

const RATES: [Metric; 5] = [
    ("pswpin/s", |s| rate(s.vmstat.pswpin, s)),
    ("pswpout/s", |s| rate(s.vmstat.pswpout, s)),
    ("zswpin/s", |s| rate(s.vmstat.zswpin, s)),
    ("zswpout/s", |s| rate(s.vmstat.zswpout, s)),
    ("pgmajfault/s", |s| rate(s.vmstat.pgmajfault, s)),
];

const SIZES: [Metric; 4] = [
    ("memcg usage MiB", |s| mib(s.memcg_usage_pages)),
    ("resident MiB", |s| mib(s.rss_pages)),
    ("swapped MiB", |s| mib(s.swap_pages)),
    ("zswap pool MiB", |s| s.zswap_pool_bytes as f64 / f64::from(1 << 20)),
];

/// The chart of `series`, with each of `marks` (a timeline operation's start in seconds
/// and its name) drawn as a vertical line.
pub(crate) fn svg(series: &Series, marks: &[(f64, &str)]) -> Result<String> {
    let times: Vec<f64> = series.samples.iter().map(|s| s.t_ns as f64 / 1e9).collect();
    let x_range = padded(times.iter().copied().chain(marks.iter().map(|m| m.0)).chain([0.0]), true);
    let size_px = (CHART_PX.0 + LEGEND_PX, 2 * CHART_PX.1);
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size_px).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let (upper, lower) = root.split_vertically(CHART_PX.1);
        let caption = format!(
            "swap activity every {} s of simulated time",
            number_label(&(series.interval_ns as f64 / 1e9))
        );
        chart(&upper, &caption, "per second", series, &times, &RATES, &x_range, marks, true)?;
        chart(&lower, "memory", "MiB", series, &times, &SIZES, &x_range, marks, false)?;
        root.present().map_err(draw_error)?;
    }
    Ok(text)
}

/// One of the two charts, on `area`, its legend to the right.
#[allow(clippy::too_many_arguments)]
fn chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_name: &str,
    series: &Series,
    times: &[f64],
    metrics: &[Metric],
    x_range: &std::ops::Range<f64>,
    marks: &[(f64, &str)],
    name_marks: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (chart_area, legend_area) = area.split_horizontally(CHART_PX.0);
    let values: Vec<Vec<f64>> =
        metrics.iter().map(|(_, value)| series.samples.iter().map(value).collect()).collect();
    let y_range = padded(values.iter().flatten().copied(), true);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range.clone(), y_range.clone())
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc("simulated time (s)")
        .y_desc(y_name)
        .x_label_formatter(&number_label)
        .y_label_formatter(&number_label)
        .draw()
        .map_err(draw_error)?;
    let grey = RGBColor(150, 150, 150);
    for (idx, &(at, name)) in marks.iter().enumerate() {
        let line = vec![(at, y_range.start), (at, y_range.end)];
        chart.draw_series(LineSeries::new(line, grey.stroke_width(1))).map_err(draw_error)?;
        if name_marks {
            // Names a row apart, so that operations at one instant stay readable.
            let (x, y) = chart.backend_coord(&(at, y_range.end));
            let style = ("sans-serif", 12).into_font().color(&grey).pos(Pos::new(HPos::Left, VPos::Top));
            let row = (idx % 8) as i32 * 14;
            chart_area.draw(&Text::new(name.to_string(), (x + 3, y + 2 + row), style)).map_err(draw_error)?;
        }
    }
    for (idx, line) in values.iter().enumerate() {
        let color = Palette99::pick(idx).to_rgba();
        let points = times.iter().copied().zip(line.iter().copied());
        chart.draw_series(LineSeries::new(points, color.stroke_width(2))).map_err(draw_error)?;
    }
    let font = ("sans-serif", 14).into_font();
    for (idx, (label, _)) in metrics.iter().enumerate() {
        let color = Palette99::pick(idx).to_rgba();
        let mid = 56 + idx as i32 * LEGEND_ROW_PX;
        legend_area
            .draw(&PathElement::new(vec![(12, mid), (36, mid)], color.stroke_width(2)))
            .map_err(draw_error)?;
        let style = font.clone().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        legend_area.draw(&Text::new(*label, (44, mid), style)).map_err(draw_error)?;
    }
    Ok(())
}
