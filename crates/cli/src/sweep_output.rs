//! Sweep output: the JSON document, the table, the CSV file and the `--out` directory.
//!
//! The JSON document is the record of a sweep: version, seed, the scenario path as given,
//! the axes, the fixed edits, one entry per variant (its index, its varied settings and
//! the full report `swapsim run --format json` would print, minus `host`), and last one
//! `host` object. Only `host` depends on the machine.
//!
//! `swapsim sweep` writes the document from the reports it just computed, and
//! `swapsim merge` writes it from shard documents whose members it copies verbatim
//! ([`RawValue`]): both fill the same [`SweepDocument`] struct at the same nesting depth,
//! which is what makes a merged document byte-identical to the unsharded one.
//! The table, the CSV file and the plot are all drawn from a [`SweepView`], which both
//! commands build from JSON values, so they cannot drift apart either.

use anyhow::{bail, Context, Result};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use swapsim_core::stats::Vmstat;

use crate::output::{self, RunDocument};
use crate::sweep::{Plan, SweepRun};

/// The sweep document. The type parameters are the members `merge` copies verbatim:
/// typed values when a sweep writes it, [`RawValue`]s when shards are merged.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SweepDocument<V, F, S, R> {
    pub(crate) swapsim_version: String,
    pub(crate) seed: u64,
    /// The scenario path as given on the command line.
    pub(crate) scenario: String,
    pub(crate) vary: V,
    pub(crate) fixed: F,
    /// Present only in a shard's document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<ShardInfo>,
    pub(crate) variants: Vec<VariantEntry<S, R>>,
    pub(crate) host: SweepHost,
}

/// One variant of a sweep document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VariantEntry<S, R> {
    pub(crate) index: usize,
    pub(crate) settings: S,
    pub(crate) report: R,
}

/// Which slice of the sweep a shard document holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardInfo {
    pub(crate) k: usize,
    pub(crate) n: usize,
    /// Variants in the whole sweep.
    pub(crate) total: usize,
}

/// Host figures of a sweep.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SweepHost {
    /// Wall-clock seconds; for a merged document, the sum over its shards.
    pub(crate) wall_s: f64,
    /// Threads that ran variants; for a merged document, the most any shard used.
    pub(crate) jobs: usize,
    /// For a merged document, how many shard documents it joins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shards: Option<usize>,
}

/// One `--vary` axis as the document lists it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AxisEntry {
    pub(crate) key: String,
    pub(crate) values: Vec<Value>,
}

/// A variant's varied settings as a JSON object in axis order (a `serde_json::Map` would
/// sort the keys).
#[derive(Debug)]
pub(crate) struct Settings(Vec<(String, Value)>);

impl Serialize for Settings {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// The document `swapsim sweep` writes.
pub(crate) type RunSweepDocument<'a> = SweepDocument<Vec<AxisEntry>, &'a [String], Settings, RunDocument<'a>>;

/// A document read back, with every member `merge` copies kept as written.
pub(crate) type RawSweepDocument = SweepDocument<Box<RawValue>, Box<RawValue>, Box<RawValue>, Box<RawValue>>;

/// The document of a finished sweep (or of one shard of it).
pub(crate) fn document<'a>(
    scenario: &str,
    plan: &'a Plan,
    run: &'a SweepRun,
    shard: Option<ShardInfo>,
    host: SweepHost,
) -> RunSweepDocument<'a> {
    let vary = plan
        .axes
        .iter()
        .map(|axis| AxisEntry { key: axis.key.clone(), values: axis.values.clone() })
        .collect();
    let variants = run
        .variants
        .iter()
        .map(|variant| {
            let settings = plan
                .axes
                .iter()
                .zip(plan.value_indices(variant.index))
                .map(|(axis, value_idx)| (axis.key.clone(), axis.values[value_idx].clone()))
                .collect();
            VariantEntry {
                index: variant.index,
                settings: Settings(settings),
                report: RunDocument::new(&variant.prepared, &variant.report, None),
            }
        })
        .collect();
    SweepDocument {
        swapsim_version: env!("CARGO_PKG_VERSION").to_string(),
        seed: run.seed,
        scenario: scenario.to_string(),
        vary,
        fixed: &plan.fixed,
        shard,
        variants,
        host,
    }
}

/// What the table, the CSV file and the plot show.
#[derive(Debug)]
pub(crate) struct SweepView {
    pub(crate) swapsim_version: String,
    pub(crate) seed: u64,
    pub(crate) scenario: String,
    /// Each axis: its key and values.
    pub(crate) axes: Vec<(String, Vec<Value>)>,
    pub(crate) fixed: Vec<String>,
    /// In index order.
    pub(crate) rows: Vec<Row>,
    pub(crate) host: SweepHost,
}

/// One variant in a [`SweepView`].
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) index: usize,
    /// The index of its value on each axis.
    pub(crate) value_indices: Vec<usize>,
    /// The report as JSON.
    pub(crate) report: Value,
}

impl SweepView {
    /// The view of a sweep document.
    pub(crate) fn of<V, F, S, R: Serialize>(
        doc: &SweepDocument<V, F, S, R>,
        axes: Vec<(String, Vec<Value>)>,
        fixed: Vec<String>,
    ) -> Result<SweepView> {
        let mut rows = Vec::with_capacity(doc.variants.len());
        for variant in &doc.variants {
            let mut rest = variant.index;
            let mut value_indices = vec![0; axes.len()];
            for (slot, (_, values)) in value_indices.iter_mut().zip(&axes).rev() {
                if values.is_empty() {
                    bail!("axis without values");
                }
                *slot = rest % values.len();
                rest /= values.len();
            }
            if rest != 0 {
                bail!("variant index {} is outside the sweep", variant.index);
            }
            let report = serde_json::to_value(&variant.report).context("a report serialises")?;
            rows.push(Row { index: variant.index, value_indices, report });
        }
        Ok(SweepView {
            swapsim_version: doc.swapsim_version.clone(),
            seed: doc.seed,
            scenario: doc.scenario.clone(),
            axes,
            fixed,
            rows,
            host: doc.host,
        })
    }

    /// The text of a row's value on axis `axis_idx`.
    pub(crate) fn setting_text(&self, row: &Row, axis_idx: usize) -> String {
        value_text(&self.axes[axis_idx].1[row.value_indices[axis_idx]])
    }
}

/// A setting as a person would type it: strings without quotes, anything else as JSON.
pub(crate) fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Metrics derived from several report fields; any vmstat counter is a metric too.
const DERIVED_METRICS: [&str; 5] =
    ["read_dispatches", "reads_per_dispatch", "major_p50_us", "major_p99_us", "sim_time_s"];

/// Checks that `name` is a metric a plot can show.
pub(crate) fn check_metric(name: &str) -> Result<()> {
    let counters = output::vmstat_pairs(&Vmstat::default());
    if DERIVED_METRICS.contains(&name) || counters.iter().any(|(counter, _)| counter == name) {
        return Ok(());
    }
    let some_counters: Vec<&str> = counters.iter().take(6).map(|(counter, _)| counter.as_str()).collect();
    bail!(
        "--metric {name}: unknown metric; use a vmstat counter ({}, ...) or one of {}",
        some_counters.join(", "),
        DERIVED_METRICS.join(", ")
    )
}

/// The value of metric `name` in `report`, or `None` where it is undefined (reads per
/// dispatch with nothing dispatched). `name` must have passed [`check_metric`].
pub(crate) fn metric(report: &Value, name: &str) -> Option<f64> {
    let sum_reads = |field: &str| -> f64 {
        let block = report["block"].as_array().map(Vec::as_slice).unwrap_or_default();
        block.iter().filter_map(|device| device["reads"][field].as_f64()).sum()
    };
    match name {
        "read_dispatches" => Some(sum_reads("dispatches")),
        "reads_per_dispatch" => {
            let dispatches = sum_reads("dispatches");
            (dispatches > 0.0).then(|| sum_reads("queued") / dispatches)
        }
        "major_p50_us" => report["fault_latency"]["major"]["p50_us"].as_f64(),
        "major_p99_us" => report["fault_latency"]["major"]["p99_us"].as_f64(),
        "sim_time_s" => report["sim_time_s"].as_f64(),
        counter => report["vmstat"][counter].as_f64(),
    }
}

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

    #[test]
    fn metrics_are_checked_by_name() {
        for name in ["pgmajfault", "workingset_refault_anon", "read_dispatches", "sim_time_s", "major_p99_us"]
        {
            assert!(check_metric(name).is_ok(), "{name}");
        }
        let err = check_metric("pgmajfaults").expect_err("misspelled").to_string();
        assert!(
            err.contains("pgmajfaults") && err.contains("pgmajfault,") && err.contains("sim_time_s"),
            "{err}"
        );
    }

    #[test]
    fn reads_per_dispatch_is_undefined_without_dispatches() {
        let report = serde_json::json!({"block": [{"reads": {"queued": 6, "dispatches": 2}},
                                                   {"reads": {"queued": 2, "dispatches": 2}}]});
        assert_eq!(metric(&report, "reads_per_dispatch"), Some(2.0));
        assert_eq!(metric(&report, "read_dispatches"), Some(4.0));
        assert_eq!(metric(&serde_json::json!({"block": []}), "reads_per_dispatch"), None);
    }
}
