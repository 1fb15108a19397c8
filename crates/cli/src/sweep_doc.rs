//! The sweep document and the view every sweep output is drawn from.
//!
//! The JSON document is the record of a sweep: version, seed, the scenario path as given,
//! the axes, the fixed edits, one entry per variant (its index, its varied settings, its
//! `status`: "ok" or what failed in the simulated system, and the full report
//! `swapsim run --format json` would print, minus `host`), and last one `host` object.
//! Only `host` depends on the machine. With `--seeds N` a variant holds `runs`, one status
//! and report per seed, instead of `report`, and the document says `seeds`. With
//! `--seeds` or `--baseline` a `summary` follows the variants: the table's numbers (mean,
//! interval, ratio to the baseline) per variant and metric.
//!
//! `swapsim sweep` writes the document from the reports it just computed, and
//! `swapsim merge` writes it from shard documents whose members it copies verbatim
//! ([`RawValue`]): both fill the same [`SweepDocument`] struct at the same nesting depth,
//! which is what makes a merged document byte-identical to the unsharded one.
//! The table, the CSV file and the plot are all drawn from a [`SweepView`], which both
//! commands build from JSON values, so they cannot drift apart either.
//!
//! This module draws nothing itself: `sweep_output` writes the table, the CSV file and the
//! `--out` directory, and `plot` the SVG, both from here.

use anyhow::{bail, Context, Result};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;
use swapsim::sweep::{metric, Baseline, Compared, Plan, SweepRun, VariantSamples, DERIVED_METRICS};
use swapsim::RunDocument;
use swapsim_core::stats::Vmstat;

use crate::output;

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
    /// Runs per variant (`--seeds`); written only when above 1.
    #[serde(default = "one_seed", skip_serializing_if = "is_one_seed")]
    pub(crate) seeds: u32,
    /// `--baseline`; never in a shard's document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline: Option<BaselineEntry>,
    /// Present only in a shard's document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<ShardInfo>,
    pub(crate) variants: Vec<VariantEntry<S, R>>,
    /// With `--seeds` or `--baseline`, and never in a shard's document: drawn from the
    /// variants by [`SweepView::summary`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<Summary>,
    pub(crate) host: SweepHost,
}

fn one_seed() -> u32 {
    1
}

fn is_one_seed(seeds: &u32) -> bool {
    *seeds == 1
}

/// One variant of a sweep document: `report` with one seed, `runs` with several.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VariantEntry<S, R> {
    pub(crate) index: usize,
    pub(crate) settings: S,
    /// "ok", or what failed in the simulated system (`RunStatus::label_over_seeds`).
    pub(crate) status: String,
    // Without `default`: serde would then ask `R: Default`, and a missing `Option` field
    // reads as `None` anyway.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) report: Option<R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runs: Option<Vec<RunEntry<R>>>,
}

/// One seed's run of a variant.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunEntry<R> {
    pub(crate) status: String,
    pub(crate) report: R,
}

/// `--baseline KEY=VALUE` as the document records it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BaselineEntry {
    pub(crate) key: String,
    pub(crate) value: Value,
}

impl BaselineEntry {
    pub(crate) fn of(baseline: &Baseline) -> BaselineEntry {
        BaselineEntry { key: baseline.key.clone(), value: baseline.value.clone() }
    }
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

/// The document of a finished sweep (or of one shard of it), without its summary.
pub(crate) fn document<'a>(
    scenario: &str,
    plan: &'a Plan,
    run: &'a SweepRun,
    shard: Option<ShardInfo>,
    host: SweepHost,
) -> RunSweepDocument<'a> {
    let vary = plan
        .axes()
        .iter()
        .map(|axis| AxisEntry { key: axis.key.clone(), values: axis.values.clone() })
        .collect();
    let variants = run
        .variants
        .iter()
        .map(|variant| {
            let settings =
                plan.settings(variant.index).map(|(key, value)| (key.to_string(), value.clone())).collect();
            let mut runs = variant.runs.iter().map(|seed_run| RunEntry {
                status: seed_run.status.label(),
                report: RunDocument::new(&seed_run.prepared, &seed_run.report),
            });
            let (report, runs) = if plan.n_seeds() == 1 {
                (runs.next().map(|run| run.report), None)
            } else {
                (None, Some(runs.collect()))
            };
            VariantEntry {
                index: variant.index,
                settings: Settings(settings),
                status: variant.status_label(),
                report,
                runs,
            }
        })
        .collect();
    SweepDocument {
        swapsim_version: env!("CARGO_PKG_VERSION").to_string(),
        seed: run.seed,
        scenario: scenario.to_string(),
        vary,
        fixed: plan.fixed(),
        seeds: plan.n_seeds(),
        baseline: None,
        shard,
        variants,
        summary: None,
        host,
    }
}

/// The table's numbers as data: per variant and metric of [`COLUMNS`], the mean over its
/// seeds (the value itself with one seed), the half-width of the 95 % interval (with
/// several seeds) and the ratio of the mean to the baseline variant's (with a baseline).
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    pub(crate) metrics: Vec<&'static str>,
    pub(crate) rows: Vec<SummaryRow>,
}

/// A summary is always drawn again from the variants, so reading one back keeps nothing;
/// accepting it lets `merge` name a whole sweep given as a shard rather than fail to parse.
impl<'de> Deserialize<'de> for Summary {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Summary, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer)?;
        Ok(Summary { metrics: Vec::new(), rows: Vec::new() })
    }
}

/// One variant of a [`Summary`]: `index`, `status`, then one member per metric.
#[derive(Debug)]
pub(crate) struct SummaryRow {
    index: usize,
    status: String,
    cells: Vec<(&'static str, SummaryCell)>,
}

impl Serialize for SummaryRow {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        let mut map = serializer.serialize_map(Some(self.cells.len() + 2))?;
        map.serialize_entry("index", &self.index)?;
        map.serialize_entry("status", &self.status)?;
        for (name, cell) in &self.cells {
            map.serialize_entry(name, cell)?;
        }
        map.end()
    }
}

/// One metric of one variant in a [`Summary`]; `null` where undefined.
#[derive(Debug, Serialize)]
pub(crate) struct SummaryCell {
    mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ci95: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio: Option<Option<f64>>,
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
    /// Runs per variant.
    pub(crate) n_seeds: u32,
    pub(crate) baseline: Option<Baseline>,
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
    /// "ok", or what failed in the simulated system.
    pub(crate) status: String,
    /// The report of each seed, as JSON.
    pub(crate) reports: Vec<Value>,
    /// Per metric of [`COLUMNS`]: its estimate over the seeds and its ratio to the baseline.
    pub(crate) cells: Vec<Compared>,
}

/// `--baseline KEY=VALUE` checked against `axes`.
pub(crate) fn baseline(arg: &str, axes: &[(String, Vec<Value>)]) -> Result<Baseline> {
    let axes: Vec<(&str, &[Value])> =
        axes.iter().map(|(key, values)| (key.as_str(), values.as_slice())).collect();
    Baseline::parse(arg, &axes)
}

impl SweepView {
    /// The view of a sweep document, comparing each variant with its `baseline` variant
    /// when there is one.
    pub(crate) fn of<V, F, S, R: Serialize>(
        doc: &SweepDocument<V, F, S, R>,
        axes: Vec<(String, Vec<Value>)>,
        fixed: Vec<String>,
        baseline: Option<Baseline>,
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
            let reports = match (&variant.report, &variant.runs) {
                (Some(report), None) if doc.seeds == 1 => vec![report],
                (None, Some(runs)) if doc.seeds > 1 && runs.len() == doc.seeds as usize => {
                    runs.iter().map(|run| &run.report).collect()
                }
                _ => bail!("variant {} does not hold one report per seed ({})", variant.index, doc.seeds),
            };
            let reports = reports
                .into_iter()
                .map(|report| serde_json::to_value(report).context("a report serialises"))
                .collect::<Result<Vec<Value>>>()?;
            rows.push(Row {
                index: variant.index,
                value_indices,
                status: variant.status.clone(),
                reports,
                cells: Vec::new(),
            });
        }
        let samples: Vec<VariantSamples> = rows
            .iter()
            .map(|row| {
                VariantSamples::of(row.index, &row.reports, COLUMNS.iter().map(|column| column.metric))
            })
            .collect();
        let compared = swapsim::sweep::compare(&samples, baseline.as_ref());
        for (row, cells) in rows.iter_mut().zip(compared) {
            row.cells = cells;
        }
        Ok(SweepView {
            swapsim_version: doc.swapsim_version.clone(),
            seed: doc.seed,
            scenario: doc.scenario.clone(),
            axes,
            fixed,
            n_seeds: doc.seeds,
            baseline,
            rows,
            host: doc.host,
        })
    }

    /// The `summary` member of the document: with several seeds or a baseline only.
    pub(crate) fn summary(&self) -> Option<Summary> {
        if self.n_seeds == 1 && self.baseline.is_none() {
            return None;
        }
        let rows = self
            .rows
            .iter()
            .map(|row| SummaryRow {
                index: row.index,
                status: row.status.clone(),
                cells: COLUMNS
                    .iter()
                    .zip(&row.cells)
                    .map(|(column, cell)| {
                        let summary = SummaryCell {
                            mean: cell.estimate.map(|estimate| estimate.mean),
                            ci95: (self.n_seeds > 1)
                                .then(|| cell.estimate.and_then(|estimate| estimate.ci95)),
                            ratio: self.baseline.is_some().then_some(cell.ratio),
                        };
                        (column.csv_name, summary)
                    })
                    .collect(),
            })
            .collect();
        Some(Summary { metrics: COLUMNS.iter().map(|column| column.csv_name).collect(), rows })
    }

    /// The mean of metric `name` over a row's seeds, or `None` where it is undefined at
    /// every seed.
    pub(crate) fn mean(&self, row: &Row, name: &str) -> Option<f64> {
        let samples: Vec<f64> = row.reports.iter().filter_map(|report| metric(report, name)).collect();
        swapsim::sweep::Estimate::of(&samples).map(|estimate| estimate.mean)
    }

    /// How a row's runs ended: the report's `outcome.kind`, or the distinct kinds of its
    /// seeds joined by " / ".
    pub(crate) fn outcome(&self, row: &Row) -> String {
        let mut kinds: Vec<&str> = Vec::new();
        for report in &row.reports {
            let kind = report["outcome"]["kind"].as_str().unwrap_or("?");
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        kinds.join(" / ")
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

/// One metric column of the sweep's table and CSV file.
pub(crate) struct Column {
    pub(crate) table_name: &'static str,
    /// The CSV header and the member name in the summary.
    pub(crate) csv_name: &'static str,
    pub(crate) metric: &'static str,
    /// Decimal places in the table; `None` for a count.
    pub(crate) decimals: Option<usize>,
}

/// The metrics the table, the CSV file and the summary show, in order.
pub(crate) const COLUMNS: [Column; 10] = [
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_columns_are_the_librarys_summary_metrics() {
        let metrics: Vec<&str> = COLUMNS.iter().map(|column| column.metric).collect();
        assert_eq!(metrics, swapsim::sweep::SUMMARY_METRICS);
    }
}
