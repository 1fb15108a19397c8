//! Sweep output: the table, the CSV file and the `--out` directory.
//!
//! Everything here is drawn from a [`SweepView`] (module `sweep_doc`), whether the sweep
//! just ran or was merged from shards, so the table, the CSV file and the plot cannot
//! disagree.

use anyhow::{Context, Result};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use swapsim::sweep::Compared;

use crate::output::{self, csv_field};
use crate::sweep_doc::{value_text, Column, SweepView, COLUMNS};

/// A table cell of one metric: the value, or with several seeds the mean and the
/// half-width of its 95 % interval; "-" where undefined.
fn value_cell(cell: &Compared, column: &Column, n_seeds: u32) -> String {
    let Some(estimate) = cell.estimate else { return "-".to_string() };
    match (n_seeds, column.decimals, estimate.ci95) {
        (1, None, _) => format!("{:.0}", estimate.mean),
        (1, Some(decimals), _) => format!("{:.decimals$}", estimate.mean),
        (_, decimals, ci95) => {
            // A mean of counts is rarely whole: one decimal place.
            let decimals = decimals.unwrap_or(1);
            match ci95 {
                Some(ci95) => format!("{:.decimals$} ± {ci95:.decimals$}", estimate.mean),
                None => format!("{:.decimals$}", estimate.mean),
            }
        }
    }
}

/// A table cell of a ratio to the baseline, or "-" where undefined.
fn ratio_cell(cell: &Compared) -> String {
    cell.ratio.map(|ratio| format!("{ratio:.3}")).unwrap_or_else(|| "-".to_string())
}

/// Prints one row per variant: the varied values, the counters, the latencies (with
/// `--seeds`, mean ± 95 % interval; with `--baseline`, each followed by its ratio to the
/// baseline variant), what failed, and how the run ended.
///
/// Rows wider than `max_width` characters are wrapped: the metrics are laid out in blocks,
/// one after the other, each repeating the varied settings on the left, so that every line
/// fits (a single column wider than the limit still gets a block of its own). `max_width` 0
/// keeps each variant on one line.
pub(crate) fn write_table(out: &mut impl Write, view: &SweepView, max_width: usize) -> Result<()> {
    let with_ratio = view.baseline.is_some();
    let mut header: Vec<String> = view.axes.iter().map(|(key, _)| key.clone()).collect();
    for column in &COLUMNS {
        header.push(column.table_name.to_string());
        if with_ratio {
            header.push("×base".to_string());
        }
    }
    header.push("status".to_string());
    header.push("outcome".to_string());
    let mut cells: Vec<Vec<String>> = Vec::with_capacity(view.rows.len());
    for row in &view.rows {
        let mut line: Vec<String> =
            (0..view.axes.len()).map(|axis_idx| view.setting_text(row, axis_idx)).collect();
        for (column, cell) in COLUMNS.iter().zip(&row.cells) {
            line.push(value_cell(cell, column, view.n_seeds));
            if with_ratio {
                line.push(ratio_cell(cell));
            }
        }
        line.push(row.status.clone());
        line.push(view.outcome(row));
        cells.push(line);
    }
    let width = |col: usize| {
        cells
            .iter()
            .map(|line| line[col].chars().count())
            .chain([header[col].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let n_axes = view.axes.len();
    let n_cols = header.len();
    let blocks = column_blocks(&widths, n_axes, if with_ratio { 2 } else { 1 }, max_width);
    let render = |t: &mut String, line: &[String], block: &[usize]| -> std::fmt::Result {
        let mut text = String::new();
        for &col in (0..n_axes).chain(block.iter().copied()).collect::<Vec<_>>().iter() {
            let cell = &line[col];
            let pad = " ".repeat(widths[col] - cell.chars().count());
            // Settings, the status and the outcome read left to right; numbers line up on
            // the right.
            if col < n_axes || col + 2 >= n_cols {
                write!(text, "{cell}{pad}  ")?;
            } else {
                write!(text, "{pad}{cell}  ")?;
            }
        }
        writeln!(t, "{}", text.trim_end())
    };

    let mut text = String::new();
    let t = &mut text;
    let n_rows = view.rows.len();
    let plural = if n_rows == 1 { "" } else { "s" };
    writeln!(
        t,
        "swapsim {} sweep · {} · seed {} · {n_rows} variant{plural}",
        view.swapsim_version, view.scenario, view.seed
    )?;
    if !view.fixed.is_empty() {
        let fixed: Vec<String> = view.fixed.iter().map(|set| format!("--set {set}")).collect();
        writeln!(t, "fixed: {}", fixed.join(" "))?;
    }
    if view.n_seeds > 1 {
        let last = view.seed.wrapping_add(u64::from(view.n_seeds) - 1);
        writeln!(
            t,
            "seeds: {} per variant ({}..={last}); mean ± half-width of the 95 % interval (Student t)",
            view.n_seeds, view.seed
        )?;
    }
    if let Some(baseline) = &view.baseline {
        let of_means = if view.n_seeds > 1 { " of the means" } else { "" };
        writeln!(
            t,
            "baseline: {}={}; ×base is each metric's ratio{of_means} to the variant with that value",
            baseline.key,
            value_text(&baseline.value)
        )?;
    }
    for block in &blocks {
        writeln!(t)?;
        render(t, &header, block)?;
        for line in &cells {
            render(t, line, block)?;
        }
    }
    writeln!(t)?;
    let shards = view.host.shards.map(|n| format!(" over {n} shards")).unwrap_or_default();
    writeln!(t, "host: {:.3} s wall, {} jobs{shards}", view.host.wall_s, view.host.jobs)?;
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// Splits the columns after the `n_axes` settings into blocks that each fit in `max_width`
/// characters alongside the settings (columns are separated by two spaces). A metric's
/// `group` columns (its value and its ratio) stay together, and so do the closing status and
/// outcome. Returns each block's column indices.
fn column_blocks(widths: &[usize], n_axes: usize, group: usize, max_width: usize) -> Vec<Vec<usize>> {
    let n_cols = widths.len();
    let span = |cols: std::ops::Range<usize>| -> usize { cols.map(|col| widths[col] + 2).sum() };
    let fixed = span(0..n_axes);
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    let mut col = n_axes;
    while col + 2 < n_cols {
        groups.push(col..col + group);
        col += group;
    }
    groups.push(col..n_cols);
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    let mut used = fixed;
    for cols in groups {
        let cost = span(cols.clone());
        let fits = max_width == 0 || used + cost <= max_width + 2;
        match blocks.last_mut() {
            Some(block) if fits => block.extend(cols),
            _ => {
                blocks.push(cols.clone().collect());
                used = fixed;
            }
        }
        used += cost;
    }
    blocks
}

/// Prints the CSV file: a header row, then one row per variant with plain numbers (an empty
/// cell where a value is undefined). With `--seeds`, a metric's column holds the mean and
/// `<metric>_ci95` the half-width of its interval; with `--baseline`, `<metric>_ratio` the
/// ratio to the baseline variant.
pub(crate) fn write_csv(out: &mut impl Write, view: &SweepView) -> Result<()> {
    let with_ci = view.n_seeds > 1;
    let with_ratio = view.baseline.is_some();
    let mut text = String::new();
    let mut header: Vec<String> = view.axes.iter().map(|(key, _)| csv_field(key)).collect();
    for column in &COLUMNS {
        header.push(column.csv_name.to_string());
        if with_ci {
            header.push(format!("{}_ci95", column.csv_name));
        }
        if with_ratio {
            header.push(format!("{}_ratio", column.csv_name));
        }
    }
    header.push("status".to_string());
    header.push("outcome".to_string());
    writeln!(text, "{}", header.join(","))?;
    // `Display` of an f64 is the shortest text that reads back to the same number.
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    for row in &view.rows {
        let mut line: Vec<String> =
            (0..view.axes.len()).map(|axis_idx| csv_field(&view.setting_text(row, axis_idx))).collect();
        for cell in &row.cells {
            line.push(number(cell.estimate.map(|estimate| estimate.mean)));
            if with_ci {
                line.push(number(cell.estimate.and_then(|estimate| estimate.ci95)));
            }
            if with_ratio {
                line.push(number(cell.ratio));
            }
        }
        line.push(csv_field(&row.status));
        line.push(csv_field(&view.outcome(row)));
        writeln!(text, "{}", line.join(","))?;
    }
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// Writes `sweep.json`, `sweep.csv` and `sweep.svg` into `dir`, creating it.
pub(crate) fn write_dir(dir: &Path, doc: &impl Serialize, view: &SweepView, metric_name: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
    let write = |name: &str, bytes: Vec<u8>| crate::outfile::write_atomically(&dir.join(name), &bytes);
    let mut json = Vec::new();
    output::write_json(&mut json, doc)?;
    write("sweep.json", json)?;
    let mut csv = Vec::new();
    write_csv(&mut csv, view)?;
    write("sweep.csv", csv)?;
    write("sweep.svg", crate::plot::svg(view, metric_name)?.into_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_rows_wrap_into_blocks_that_fit_and_keep_groups_together() {
        // Two settings of width 4 and 1, four metrics with ratios, then status and outcome.
        let widths = [4, 1, 10, 5, 10, 5, 10, 5, 10, 5, 6, 9];
        let blocks = column_blocks(&widths, 2, 2, 50);
        assert_eq!(blocks, [vec![2, 3, 4, 5], vec![6, 7, 8, 9], vec![10, 11]]);
        for block in &blocks {
            let line: usize = [0, 1].iter().chain(block).map(|&col| widths[col] + 2).sum::<usize>() - 2;
            assert!(line <= 50, "{block:?} is {line} wide");
        }
        assert_eq!(column_blocks(&widths, 2, 2, 0), [(2..12).collect::<Vec<_>>()], "0: one line");
        // A column wider than the limit still gets a block, alone.
        assert_eq!(column_blocks(&[3, 50, 2, 2], 1, 1, 20), [vec![1], vec![2, 3]]);
    }
}
