//! The sweep document and the view every sweep output is drawn from.
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
//!
//! This module draws nothing itself: `sweep_output` writes the table, the CSV file and the
//! `--out` directory, and `plot` the SVG, both from here.

use anyhow::{bail, Context, Result};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;
use swapsim::sweep::{Plan, SweepRun};
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
        .axes()
        .iter()
        .map(|axis| AxisEntry { key: axis.key.clone(), values: axis.values.clone() })
        .collect();
    let variants = run
        .variants
        .iter()
        .map(|variant| {
            let settings = plan
                .axes()
                .iter()
                .zip(plan.value_indices(variant.index))
                .map(|(axis, value_idx)| (axis.key.clone(), axis.values[value_idx].clone()))
                .collect();
            VariantEntry {
                index: variant.index,
                settings: Settings(settings),
                report: RunDocument::new(&variant.prepared, &variant.report),
            }
        })
        .collect();
    SweepDocument {
        swapsim_version: env!("CARGO_PKG_VERSION").to_string(),
        seed: run.seed,
        scenario: scenario.to_string(),
        vary,
        fixed: plan.fixed(),
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
    fn reads_per_dispatch_is_undefined_without_dispatches() {
        let report = serde_json::json!({"block": [{"reads": {"queued": 6, "dispatches": 2}},
                                                   {"reads": {"queued": 2, "dispatches": 2}}]});
        assert_eq!(metric(&report, "reads_per_dispatch"), Some(2.0));
        assert_eq!(metric(&report, "read_dispatches"), Some(4.0));
        assert_eq!(metric(&serde_json::json!({"block": []}), "reads_per_dispatch"), None);
    }
}
