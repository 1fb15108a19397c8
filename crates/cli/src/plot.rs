//! The sweep plot: one metric against the first varied key, as an SVG document.
//!
//! The x axis is the first axis of the sweep: numeric when all its values read as numbers,
//! otherwise one evenly spaced position per value, in the order given. Each combination of
//! the other axes' values is one line (one line in all for a single-axis sweep), named in
//! the legend. A variant whose metric is undefined (reads per dispatch with nothing read)
//! leaves a gap in its line's points rather than a made-up value. With `--seeds`, a point
//! is the mean over the variant's seeds.
//!
//! plotters' SVG backend writes text as `<text>` elements and, built without its font
//! features, estimates text extents itself, so drawing needs no font files on the host.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use crate::sweep_doc::{value_text, SweepView};

/// Size of the picture, in pixels.
const SIZE_PX: (u32, u32) = (960, 600);

/// One line of the plot.
struct Line {
    label: String,
    /// (x, metric) in drawing order.
    points: Vec<(f64, f64)>,
}

/// Draws `metric_name` (checked by the caller) for every variant of `view`.
pub(crate) fn svg(view: &SweepView, metric_name: &str) -> Result<String> {
    let (x_key, x_values) = &view.axes[0];
    let x_texts: Vec<String> = x_values.iter().map(value_text).collect();
    let numeric: Option<Vec<f64>> =
        x_texts.iter().map(|text| text.parse::<f64>().ok().filter(|x| x.is_finite())).collect();

    // A line per combination of the other axes' values, numbered the way variant indices
    // number them (the last axis fastest), so the legend follows the variant order.
    let n_lines: usize = view.axes[1..].iter().map(|(_, values)| values.len()).product();
    let mut lines: Vec<Line> = (0..n_lines)
        .map(|line_idx| {
            let mut rest = line_idx;
            let mut parts = Vec::new();
            for (key, values) in view.axes[1..].iter().rev() {
                parts.push(format!("{key}={}", value_text(&values[rest % values.len()])));
                rest /= values.len();
            }
            parts.reverse();
            let label = if parts.is_empty() { metric_name.to_string() } else { parts.join(", ") };
            Line { label, points: Vec::new() }
        })
        .collect();
    for row in &view.rows {
        let x_idx = row.value_indices[0];
        let line_idx = row.index % n_lines;
        let x = match &numeric {
            Some(xs) => xs[x_idx],
            None => x_idx as f64,
        };
        if let Some(y) = view.mean(row, metric_name).filter(|y| y.is_finite()) {
            lines[line_idx].points.push((x, y));
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }

    let x_range = match &numeric {
        Some(xs) => padded(xs.iter().copied(), false),
        None => -0.5..(x_texts.len() as f64 - 0.5),
    };
    let y_range = padded(lines.iter().flat_map(|line| line.points.iter().map(|p| p.1)), true);

    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, SIZE_PX).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let caption = format!("{metric_name} against {x_key} · {}", view.scenario);
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range, y_range)
            .map_err(draw_error)?;
        let categorical_label = |x: &f64| {
            let idx = x.round();
            if (x - idx).abs() < 1e-9 && idx >= 0.0 && (idx as usize) < x_texts.len() {
                x_texts[idx as usize].clone()
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_key.as_str()).y_desc(metric_name).y_label_formatter(&number_label);
        // At most one label per value, so that labels on a categorical or integer axis land
        // on whole numbers.
        mesh.x_labels(x_texts.len().clamp(2, 12));
        if numeric.is_none() {
            mesh.x_label_formatter(&categorical_label);
        } else {
            mesh.x_label_formatter(&number_label);
        }
        mesh.draw().map_err(draw_error)?;
        for (line_idx, line) in lines.iter().enumerate() {
            let color = Palette99::pick(line_idx).to_rgba();
            chart
                .draw_series(
                    LineSeries::new(line.points.iter().copied(), color.stroke_width(2)).point_size(3),
                )
                .map_err(draw_error)?
                .label(line.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(text)
}

/// An axis label: whole numbers without a fraction, others with as few digits as show
/// the step.
fn number_label(value: &f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').to_string()
    }
}

/// A range around `values` with a little room at both ends; from zero when `from_zero` and
/// nothing is negative, so that counts are not exaggerated.
fn padded(values: impl Iterator<Item = f64>, from_zero: bool) -> std::ops::Range<f64> {
    let (mut low, mut high) =
        values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if low > high {
        return 0.0..1.0;
    }
    if from_zero && low >= 0.0 {
        low = 0.0;
    }
    if high - low < f64::EPSILON * high.abs().max(1.0) {
        high += 1.0;
        if !from_zero || low > 0.0 {
            low -= 1.0;
        }
    }
    let room = (high - low) * 0.05;
    let low = if from_zero && low == 0.0 { 0.0 } else { low - room };
    low..(high + room)
}

fn draw_error<E: std::error::Error + Send + Sync>(err: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("cannot draw the plot: {err}")
}
