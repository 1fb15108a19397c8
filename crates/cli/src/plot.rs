//! The sweep plot: one metric against the first varied key, as an SVG document.
//!
//! The x axis is the first axis of the sweep: numeric when all its values read as numbers,
//! otherwise one evenly spaced position per value, in the order given. Each combination of
//! the other axes' values is one line (one line in all for a single-axis sweep), named in
//! the legend. A variant whose metric is undefined (reads per dispatch with nothing read)
//! leaves a gap in its line's points rather than a made-up value. With `--seeds`, a point
//! is the mean over the variant's seeds.
//!
//! The legend sits in a column of its own to the right of the chart, so it can hide no
//! point whatever corner the data fill; the picture widens to fit the longest label.
//!
//! plotters' SVG backend writes text as `<text>` elements and, built without its font
//! features, estimates text extents itself, so drawing needs no font files on the host.

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::sweep_doc::{value_text, SweepView};

/// Size of the chart, in pixels; the legend's column is added to its right.
const CHART_PX: (u32, u32) = (960, 600);

/// The legend's font size, and the height of one of its entries, in pixels.
const LEGEND_FONT_PX: u32 = 14;
const LEGEND_ROW_PX: u32 = 20;
/// Width allowed per character of a legend label: more than a sans-serif font's average
/// at this size, so that a label stays inside the box a browser draws it in.
const LEGEND_CHAR_PX: u32 = 8;
/// Gap between the chart and the legend's box, padding inside the box, and the length of
/// an entry's line sample, in pixels.
const LEGEND_GAP_PX: u32 = 8;
const LEGEND_PAD_PX: u32 = 10;
const LEGEND_SAMPLE_PX: u32 = 24;
/// The legend's top, level with the top of the chart's plotting area.
const LEGEND_TOP_PX: u32 = 56;

/// One line of the plot.
struct Line {
    label: String,
    /// (x, metric) in drawing order.
    points: Vec<(f64, f64)>,
}

/// What is drawn: the lines and how the axes are labelled.
struct Plot {
    caption: String,
    x_key: String,
    y_name: String,
    /// The first axis's values as text, in order.
    x_texts: Vec<String>,
    /// The values as numbers, when all of them are; otherwise the x axis is categorical.
    numeric: Option<Vec<f64>>,
    lines: Vec<Line>,
}

/// The miss-ratio curves of `mrc`: LRU and OPT miss ratio against memory in MiB.
pub(crate) fn mrc_svg(mrc: &swapsim::mrc::Mrc) -> Result<String> {
    let mib: Vec<f64> = mrc.points.iter().map(|p| p.pages as f64 * 4096.0 / (1u64 << 20) as f64).collect();
    let line = |label: &str, ratio: fn(&swapsim::mrc::MrcPoint) -> f64| Line {
        label: label.to_string(),
        points: mib.iter().zip(&mrc.points).map(|(&x, p)| (x, ratio(p))).collect(),
    };
    draw(&Plot {
        caption: format!("miss ratio of {}", mrc.trace),
        x_key: "memory (MiB)".to_string(),
        y_name: "miss ratio".to_string(),
        x_texts: mib.iter().map(number_label).collect(),
        numeric: Some(mib.clone()),
        lines: vec![line("LRU", |p| p.lru_miss_ratio), line("OPT (Belady)", |p| p.opt_miss_ratio)],
    })
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
    draw(&Plot {
        caption: format!("{metric_name} against {x_key} · {}", view.scenario),
        x_key: x_key.clone(),
        y_name: metric_name.to_string(),
        x_texts,
        numeric,
        lines,
    })
}

/// The SVG document of `plot`: the chart, and the legend in a column to its right.
fn draw(plot: &Plot) -> Result<String> {
    let Plot { x_texts, numeric, lines, .. } = plot;
    let x_range = match numeric {
        Some(xs) => padded(xs.iter().copied(), false),
        None => -0.5..(x_texts.len() as f64 - 0.5),
    };
    let y_range = padded(lines.iter().flat_map(|line| line.points.iter().map(|p| p.1)), true);

    let n_entries = lines.len() as u32;
    let label_chars = lines.iter().map(|line| line.label.chars().count()).max().unwrap_or(0) as u32;
    let box_w = 2 * LEGEND_PAD_PX + LEGEND_SAMPLE_PX + LEGEND_GAP_PX + label_chars * LEGEND_CHAR_PX;
    let box_h = 2 * LEGEND_PAD_PX + n_entries * LEGEND_ROW_PX;
    let legend_w = LEGEND_GAP_PX + box_w + LEGEND_GAP_PX;
    let size_px = (CHART_PX.0 + legend_w, CHART_PX.1.max(LEGEND_TOP_PX + box_h + LEGEND_GAP_PX));

    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size_px).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let (chart_area, legend_area) = root.split_horizontally(CHART_PX.0);
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(plot.caption.as_str(), ("sans-serif", 20))
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
        mesh.x_desc(plot.x_key.as_str()).y_desc(plot.y_name.as_str()).y_label_formatter(&number_label);
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
                .map_err(draw_error)?;
        }

        // The legend: a framed box of entries, each a line sample in its line's colour and
        // the line's label.
        let left = LEGEND_GAP_PX as i32;
        let top = LEGEND_TOP_PX as i32;
        let frame = [(left, top), (left + box_w as i32, top + box_h as i32)];
        legend_area.draw(&Rectangle::new(frame, WHITE.filled())).map_err(draw_error)?;
        legend_area.draw(&Rectangle::new(frame, BLACK.stroke_width(1))).map_err(draw_error)?;
        let font = ("sans-serif", LEGEND_FONT_PX).into_font();
        for (line_idx, line) in lines.iter().enumerate() {
            let color = Palette99::pick(line_idx).to_rgba();
            let row_mid = top + (LEGEND_PAD_PX + line_idx as u32 * LEGEND_ROW_PX + LEGEND_ROW_PX / 2) as i32;
            let sample_left = left + LEGEND_PAD_PX as i32;
            let sample = vec![(sample_left, row_mid), (sample_left + LEGEND_SAMPLE_PX as i32, row_mid)];
            legend_area.draw(&PathElement::new(sample, color.stroke_width(2))).map_err(draw_error)?;
            let text_left = sample_left + (LEGEND_SAMPLE_PX + LEGEND_GAP_PX) as i32;
            let style = font.clone().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
            legend_area
                .draw(&Text::new(line.label.as_str(), (text_left, row_mid), style))
                .map_err(draw_error)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(text)
}

/// An axis label: whole numbers without a fraction, others with as few digits as show
/// the step.
pub(crate) fn number_label(value: &f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').to_string()
    }
}

/// A range around `values` with a little room at both ends; from zero when `from_zero` and
/// nothing is negative, so that counts are not exaggerated.
pub(crate) fn padded(values: impl Iterator<Item = f64>, from_zero: bool) -> std::ops::Range<f64> {
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

pub(crate) fn draw_error<E: std::error::Error + Send + Sync>(err: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("cannot draw the plot: {err}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers of `attr="..."` attributes of every `<tag ...>` element of `svg`.
    fn elements(svg: &str, tag: &str, attrs: &[&str]) -> Vec<Vec<f64>> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .map(|element| {
                let element = &element[..element.find('>').expect("elements are closed")];
                attrs
                    .iter()
                    .map(|attr| {
                        let at = element.find(&format!(" {attr}=\"")).map(|i| i + attr.len() + 3);
                        let at = at
                            .or_else(|| element.starts_with(&format!("{attr}=\"")).then_some(attr.len() + 2));
                        let value = &element[at.expect("the attribute is present")..];
                        value[..value.find('"').expect("quoted")].parse().expect("a number")
                    })
                    .collect()
            })
            .collect()
    }

    /// Draws `lines` over x = 0..=5 and checks that the legend's frame hides no point and
    /// fits in the picture; returns the SVG.
    fn check(lines: Vec<Line>) -> String {
        let labels: Vec<String> = lines.iter().map(|line| line.label.clone()).collect();
        let svg = draw(&Plot {
            caption: "pgmajfault against swap.page_cluster · test".into(),
            x_key: "swap.page_cluster".into(),
            y_name: "pgmajfault".into(),
            x_texts: (0..=5).map(|x| x.to_string()).collect(),
            numeric: Some((0..=5).map(f64::from).collect()),
            lines,
        })
        .expect("the plot draws");
        let width = elements(&svg, "svg", &["width"])[0][0];
        let frames: Vec<Vec<f64>> = elements(&svg, "rect", &["x", "y", "width", "height"])
            .into_iter()
            .zip(svg.split("<rect ").skip(1))
            .filter(|(_, element)| {
                element[..element.find('>').expect("closed")].contains("stroke=\"#000000\"")
            })
            .map(|(rect, _)| rect)
            .collect();
        let [frame] = frames.as_slice() else { panic!("one legend frame: {frames:?}") };
        let (left, top, right, bottom) = (frame[0], frame[1], frame[0] + frame[2], frame[1] + frame[3]);
        assert!(right <= width, "the legend fits in the picture: {frame:?}, width {width}");
        let points = elements(&svg, "circle", &["cx", "cy", "r"]);
        assert!(points.len() >= 6, "the points are drawn as circles");
        for point in &points {
            let (cx, cy, r) = (point[0], point[1], point[2]);
            let apart = cx + r < left || cx - r > right || cy + r < top || cy - r > bottom;
            assert!(apart, "the point at ({cx}, {cy}) is under the legend {frame:?}");
        }
        for label in labels {
            assert!(svg.contains(&format!(">\n{label}\n<")), "the legend names {label}");
        }
        svg
    }

    #[test]
    fn the_legend_hides_no_point_in_the_upper_right_corner() {
        // Rising lines whose largest values sit in the top right corner, where a legend
        // drawn inside the chart would go, and one line across the top.
        let lines = (0..4)
            .map(|line_idx| Line {
                label: format!("swap.readahead=policy{line_idx}"),
                points: (0..=5).map(|x| (f64::from(x), f64::from(x * x * 100 + line_idx * 50))).collect(),
            })
            .chain(std::iter::once(Line {
                label: "swap.readahead=flat".into(),
                points: (0..=5).map(|x| (f64::from(x), 2600.0)).collect(),
            }))
            .collect();
        check(lines);
    }

    #[test]
    fn a_long_label_widens_the_picture_instead_of_covering_the_chart() {
        let label = format!("memcg.limit=64MiB, swap.readahead=cluster, {}", "x".repeat(80));
        let line = Line { label, points: (0..=5).map(|x| (f64::from(x), f64::from(5 - x))).collect() };
        let svg = check(vec![line]);
        assert!(elements(&svg, "svg", &["width"])[0][0] > 1500.0);
    }
}
