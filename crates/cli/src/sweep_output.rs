//! Sweep output: the table, the CSV file and the `--out` directory.
//!
//! Everything here is drawn from a [`SweepView`] (module `sweep_doc`), whether the sweep
//! just ran or was merged from shards, so the table, the CSV file and the plot cannot
//! disagree.

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use crate::output;
use crate::sweep_doc::{metric, SweepView};

/// One column of the table and the CSV file after the settings.
struct Column {
    table_name: &'static str,
    csv_name: &'static str,
    metric: &'static str,
    /// Decimal places in the table; `None` for a count.
    decimals: Option<usize>,
}

const COLUMNS: [Column; 10] = [
    Column { table_name: "pgmajfault", csv_name: "pgmajfault", metric: "pgmajfault", decimals: None },
    Column { table_name: "pswpin", csv_name: "pswpin", metric: "pswpin", decimals: None },
    Column { table_name: "pswpout", csv_name: "pswpout", metric: "pswpout", decimals: None },
    Column { table_name: "swap_ra", csv_name: "swap_ra", metric: "swap_ra", decimals: None },
    Column { table_name: "swap_ra_hit", csv_name: "swap_ra_hit", metric: "swap_ra_hit", decimals: None },
    Column {
        table_name: "read dispatches",
        csv_name: "read_dispatches",
        metric: "read_dispatches",
        decimals: None,
    },
    Column {
        table_name: "reads/dispatch",
        csv_name: "reads_per_dispatch",
        metric: "reads_per_dispatch",
        decimals: Some(2),
    },
    Column {
        table_name: "major p50 µs",
        csv_name: "major_p50_us",
        metric: "major_p50_us",
        decimals: Some(1),
    },
    Column {
        table_name: "major p99 µs",
        csv_name: "major_p99_us",
        metric: "major_p99_us",
        decimals: Some(1),
    },
    Column { table_name: "sim time s", csv_name: "sim_time_s", metric: "sim_time_s", decimals: Some(3) },
];

/// How a run ended, as the report's `outcome.kind`.
fn outcome(report: &Value) -> String {
    report["outcome"]["kind"].as_str().unwrap_or("?").to_string()
}

/// Prints one row per variant: the varied values, the counters, the latencies, and how the
/// run ended.
pub(crate) fn write_table(out: &mut impl Write, view: &SweepView) -> Result<()> {
    let mut header: Vec<String> = view.axes.iter().map(|(key, _)| key.clone()).collect();
    header.extend(COLUMNS.iter().map(|column| column.table_name.to_string()));
    header.push("outcome".to_string());
    let mut cells: Vec<Vec<String>> = Vec::with_capacity(view.rows.len());
    for row in &view.rows {
        let mut line: Vec<String> =
            (0..view.axes.len()).map(|axis_idx| view.setting_text(row, axis_idx)).collect();
        for column in &COLUMNS {
            let cell = match (metric(&row.report, column.metric), column.decimals) {
                (None, _) => "-".to_string(),
                (Some(value), None) => format!("{value:.0}"),
                (Some(value), Some(decimals)) => format!("{value:.decimals$}"),
            };
            line.push(cell);
        }
        line.push(outcome(&row.report));
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
    let render = |t: &mut String, line: &[String]| -> std::fmt::Result {
        let mut text = String::new();
        for (col, cell) in line.iter().enumerate() {
            let pad = " ".repeat(widths[col] - cell.chars().count());
            // Settings and the outcome read left to right; numbers line up on the right.
            if col < n_axes || col == line.len() - 1 {
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
    writeln!(t)?;
    render(t, &header)?;
    for line in &cells {
        render(t, line)?;
    }
    writeln!(t)?;
    let shards = view.host.shards.map(|n| format!(" over {n} shards")).unwrap_or_default();
    writeln!(t, "host: {:.3} s wall, {} jobs{shards}", view.host.wall_s, view.host.jobs)?;
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// Prints the CSV file: a header row, then one row per variant with plain numbers (an empty
/// cell where a value is undefined).
pub(crate) fn write_csv(out: &mut impl Write, view: &SweepView) -> Result<()> {
    let mut text = String::new();
    let mut header: Vec<String> = view.axes.iter().map(|(key, _)| csv_field(key)).collect();
    header.extend(COLUMNS.iter().map(|column| column.csv_name.to_string()));
    header.push("outcome".to_string());
    writeln!(text, "{}", header.join(","))?;
    for row in &view.rows {
        let mut line: Vec<String> =
            (0..view.axes.len()).map(|axis_idx| csv_field(&view.setting_text(row, axis_idx))).collect();
        for column in &COLUMNS {
            // `Display` of an f64 is the shortest text that reads back to the same number.
            line.push(metric(&row.report, column.metric).map(|value| value.to_string()).unwrap_or_default());
        }
        line.push(csv_field(&outcome(&row.report)));
        writeln!(text, "{}", line.join(","))?;
    }
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// Quotes a CSV field when it holds a separator, a quote or a line break (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Writes `sweep.json`, `sweep.csv` and `sweep.svg` into `dir`, creating it.
pub(crate) fn write_dir(dir: &Path, doc: &impl Serialize, view: &SweepView, metric_name: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
    let write = |name: &str, bytes: Vec<u8>| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
    };
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
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("cluster"), "cluster");
        assert_eq!(csv_field("{\"a\":1,\"b\":2}"), "\"{\"\"a\"\":1,\"\"b\"\":2}\"");
    }
}
