//! `swapsim.sweep` on the native side: a library sweep, returned as one row per variant.
//!
//! A row is a variant entry of the document `swapsim sweep --format json` prints: its
//! `index`, its varied `settings` (in axis order), its `status` ("ok" or what failed in
//! the simulated system) and its run document without `host` as `report`, or with several
//! seeds one `{seed, status, report}` per seed as `runs`. With several seeds or a
//! baseline, a `summary` follows: per metric of the command's table (the library's
//! `SUMMARY_METRICS`), the mean over the seeds, the half-width of its 95 % interval and
//! its ratio to the baseline variant's mean, computed by the library's `compare` as the
//! command computes them.

use anyhow::{anyhow, Result};
use pyo3::prelude::*;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use swapsim::sweep::{
    Axis, Baseline, Compared, Plan, SweepOptions, SweepRun, VariantSamples, SUMMARY_METRICS,
};
use swapsim::RunDocument;

use crate::guard;
use crate::scenario::PyScenario;

/// Runs `scenario` once per combination of `axes` (each a key and its `--vary` values
/// text: `0,1,3` or `0..5`), after the `fixed` edits, each variant at `seeds` seeds, on
/// `jobs` threads (all cores by default), compared with the `baseline` variant
/// (`KEY=VALUE`) when given. Returns the rows as a JSON array.
#[pyfunction]
#[pyo3(signature = (scenario, axes, fixed, seeds=1, baseline=None, jobs=None))]
pub(crate) fn sweep(
    py: Python<'_>,
    scenario: &PyScenario,
    axes: Vec<(String, String)>,
    fixed: Vec<String>,
    seeds: u32,
    baseline: Option<String>,
    jobs: Option<usize>,
) -> PyResult<String> {
    let scenario = scenario.inner.clone();
    guard::call(py, move || {
        let axes = axes
            .iter()
            .map(|(key, values)| Axis::parse(&format!("{key}={values}")).map_err(|message| anyhow!(message)))
            .collect::<Result<Vec<Axis>>>()?;
        let plan = Plan::new(axes, fixed)?.with_seeds(seeds)?;
        let axis_values: Vec<(&str, &[Value])> =
            plan.axes().iter().map(|axis| (axis.key.as_str(), axis.values.as_slice())).collect();
        let baseline = baseline.map(|arg| Baseline::parse(&arg, &axis_values)).transpose()?;
        let jobs = match jobs {
            Some(0) => anyhow::bail!("jobs=0: give at least one thread"),
            Some(jobs) => jobs,
            None => std::thread::available_parallelism().map(std::num::NonZeroUsize::get).unwrap_or(1),
        };
        let run = swapsim::sweep(&scenario, &plan, SweepOptions { shard: None, jobs, progress: &() })?;
        Ok(serde_json::to_string(&rows(&plan, &run, baseline.as_ref())?)?)
    })
}

/// The rows of a finished sweep.
fn rows<'a>(plan: &'a Plan, run: &'a SweepRun, baseline: Option<&Baseline>) -> Result<Vec<Row<'a>>> {
    let mut rows: Vec<Row<'a>> = run
        .variants
        .iter()
        .map(|variant| {
            let settings = plan.settings(variant.index).collect();
            let runs: Vec<SeedRow<'a>> = variant
                .runs
                .iter()
                .map(|seed_run| SeedRow {
                    seed: seed_run.prepared.seed(),
                    status: seed_run.status.label(),
                    report: RunDocument::new(&seed_run.prepared, &seed_run.report),
                })
                .collect();
            Row {
                index: variant.index,
                settings: Ordered(settings),
                status: variant.status_label(),
                runs,
                one_seed: plan.n_seeds() == 1,
                summary: None,
            }
        })
        .collect();
    if plan.n_seeds() == 1 && baseline.is_none() {
        return Ok(rows);
    }
    let mut samples = Vec::with_capacity(rows.len());
    for row in &rows {
        let reports = row
            .runs
            .iter()
            .map(|run| serde_json::to_value(&run.report))
            .collect::<Result<Vec<Value>, _>>()?;
        samples.push(VariantSamples::of(row.index, &reports, SUMMARY_METRICS));
    }
    let compared = swapsim::sweep::compare(&samples, baseline);
    for (row, cells) in rows.iter_mut().zip(compared) {
        row.summary = Some(Summary { cells, with_ci95: plan.n_seeds() > 1, with_ratio: baseline.is_some() });
    }
    Ok(rows)
}

/// One variant.
struct Row<'a> {
    index: usize,
    settings: Ordered<'a>,
    status: String,
    runs: Vec<SeedRow<'a>>,
    /// Whether the row holds `report` (one seed) rather than `runs`.
    one_seed: bool,
    summary: Option<Summary>,
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("index", &self.index)?;
        map.serialize_entry("settings", &self.settings)?;
        map.serialize_entry("status", &self.status)?;
        match (self.one_seed, self.runs.first()) {
            (true, Some(run)) => map.serialize_entry("report", &run.report)?,
            _ => map.serialize_entry("runs", &self.runs)?,
        }
        if let Some(summary) = &self.summary {
            map.serialize_entry("summary", summary)?;
        }
        map.end()
    }
}

/// One seed's run of a variant.
#[derive(serde::Serialize)]
struct SeedRow<'a> {
    seed: u64,
    status: String,
    report: RunDocument<'a>,
}

/// A variant's settings as a JSON object in axis order (a JSON map would sort the keys).
struct Ordered<'a>(Vec<(&'a str, &'a Value)>);

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A variant's summary: per metric, `{mean, ci95, ratio}`, `ci95` only with several seeds
/// and `ratio` only with a baseline; `null` where undefined.
struct Summary {
    cells: Vec<Compared>,
    with_ci95: bool,
    with_ratio: bool,
}

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.cells.len()))?;
        for (name, cell) in SUMMARY_METRICS.iter().zip(&self.cells) {
            let mut entry = serde_json::Map::new();
            entry.insert("mean".into(), serde_json::json!(cell.estimate.map(|e| e.mean)));
            if self.with_ci95 {
                entry.insert("ci95".into(), serde_json::json!(cell.estimate.and_then(|e| e.ci95)));
            }
            if self.with_ratio {
                entry.insert("ratio".into(), serde_json::json!(cell.ratio));
            }
            map.serialize_entry(name, &entry)?;
        }
        map.end()
    }
}
