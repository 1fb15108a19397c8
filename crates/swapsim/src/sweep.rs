//! Sweeps: one scenario run once per combination of settings (`swapsim sweep --vary`).
//!
//! A sweep is a plan (the axes and the fixed `--set` edits) expanded into numbered
//! variants. Variant `i` is the scenario with the fixed edits followed by one edit per
//! axis, validated and run through exactly the path a single run takes, so any row of a
//! sweep can be reproduced with `swapsim run` and the same `--set` arguments.
//!
//! Determinism: the variants run in parallel, but results are collected by variant index
//! and seed, never by completion order. Every variant runs with the same seed, or with the
//! same N seeds under `--seeds N` ([`Plan::with_seeds`]). The job count therefore changes
//! only the wall-clock time, which is reported under `host`.
//!
//! Comparing variants (means over seeds with their intervals, ratios to a baseline
//! variant) is `compare`'s, and reading the metrics compared out of reports `metrics`';
//! both are re-exported here. A run in which the simulated system failed
//! (an OOM kill, a failed timeline operation) is a result like any other: the sweep keeps
//! it, and its [`RunStatus`] says what failed.
//!
//! What it deliberately does not do: vary the seed as a setting (`--vary seed=...` is
//! refused rather than silently overridden by `--seed`; `--seeds` repeats every variant
//! instead), or show progress. The caller passes a [`Progress`] and draws what it likes.

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use swapsim_core::SimReport;

use crate::overrides::Override;
use crate::scenario::{Prepared, Scenario};
use crate::status::RunStatus;

mod compare;
mod metrics;

pub use compare::{compare, ratio, t_975, Baseline, Compared, Estimate, VariantSamples};
pub use metrics::{metric, DERIVED_METRICS, SUMMARY_METRICS};

/// The most variants one sweep may hold. A cross product grows fast, and a typo such as
/// `1..100000` should fail at once rather than run for a day.
pub const MAX_VARIANTS: usize = 10_000;

/// The most runs one sweep may make: variants times seeds.
pub const MAX_RUNS: usize = 10_000;

/// The most seeds `--seeds` may ask for.
pub const MAX_SEEDS: u32 = 1_000;

/// One `--vary` argument: a key and the values it takes, in the order given.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Axis {
    /// The dotted key, as for `--set`.
    pub key: String,
    /// Each value as typed: the text after `=` of the edit it makes.
    pub texts: Vec<String>,
    /// Each value as the edit writes it (`0` is an integer, `cluster` a string); reports
    /// show these.
    pub values: Vec<serde_json::Value>,
}

impl Axis {
    /// Parses `key=v1,v2,...` or `key=a..b` (integers, both ends included).
    pub fn parse(arg: &str) -> Result<Axis, String> {
        let fail = |message: String| Err(format!("--vary {arg}: {message}"));
        let Some((key, spec)) = arg.split_once('=') else {
            return fail("expected KEY=VALUES: a comma list such as 0,1,3 or a range such as 1..8".into());
        };
        let key = key.trim();
        if key.is_empty() || key.split('.').any(|part| part.trim().is_empty()) {
            return fail(format!("\"{key}\" is not a dotted key path"));
        }
        if key == "seed" {
            return fail("every variant runs with the sweep's seed; choose it with --seed".into());
        }
        let spec = spec.trim();
        let texts: Vec<String> = if let Some((low, high)) = spec.split_once("..") {
            let (Ok(low), Ok(high)) = (low.trim().parse::<i64>(), high.trim().parse::<i64>()) else {
                return fail(format!("\"{spec}\" is not a range of integers such as 1..8"));
            };
            if low > high {
                return fail(format!("the range {low}..{high} is empty ({low} is above {high})"));
            }
            let n_values = i128::from(high) - i128::from(low) + 1;
            if n_values > MAX_VARIANTS as i128 {
                return fail(format!("{n_values} values; a sweep runs at most {MAX_VARIANTS} variants"));
            }
            (low..=high).map(|value| value.to_string()).collect()
        } else {
            if spec.is_empty() {
                return fail("no values".into());
            }
            let texts: Vec<String> = spec.split(',').map(|text| text.trim().to_string()).collect();
            if texts.iter().any(String::is_empty) {
                return fail(format!("empty value in the list \"{spec}\""));
            }
            for (idx, text) in texts.iter().enumerate() {
                if texts[..idx].contains(text) {
                    return fail(format!("the value {text} is listed twice"));
                }
            }
            if texts.len() > MAX_VARIANTS {
                return fail(format!("{} values; a sweep runs at most {MAX_VARIANTS} variants", texts.len()));
            }
            texts
        };
        let mut values = Vec::with_capacity(texts.len());
        for text in &texts {
            let edit = Override::parse(&format!("{key}={text}"))
                .map_err(|message| format!("--vary {arg}: {message}"))?;
            let value = serde_json::to_value(edit.value()).map_err(|err| format!("--vary {arg}: {err}"))?;
            values.push(value);
        }
        Ok(Axis { key: key.to_string(), texts, values })
    }

    /// The edit that gives this axis its `value_idx`-th value.
    fn edit(&self, value_idx: usize) -> String {
        format!("{}={}", self.key, self.texts[value_idx])
    }
}

/// The variants of a sweep: the cross product of its axes, the first axis varying slowest.
#[derive(Clone, Debug)]
pub struct Plan {
    axes: Vec<Axis>,
    /// The `--set` edits every variant starts from, in order.
    fixed: Vec<String>,
    n_variants: usize,
    /// Runs per variant, each with its own seed.
    n_seeds: u32,
}

impl Plan {
    /// Checks the axes against each other and against the variant limit.
    pub fn new(axes: Vec<Axis>, fixed: Vec<String>) -> Result<Plan> {
        if axes.is_empty() {
            bail!("a sweep needs at least one --vary");
        }
        for (idx, axis) in axes.iter().enumerate() {
            if axes[..idx].iter().any(|earlier| earlier.key == axis.key) {
                bail!("--vary {}: the key is varied twice; list all its values in one --vary", axis.key);
            }
        }
        for text in &fixed {
            let edit = Override::parse(text).map_err(|message| anyhow!(message))?;
            if axes.iter().any(|axis| axis.key == edit.key()) {
                bail!("--set {text}: {} is also varied; drop one of the two", edit.key());
            }
        }
        // Saturating, so that a silly number of axes is reported rather than overflowing.
        let n_variants = axes.iter().fold(1u128, |acc, axis| acc.saturating_mul(axis.texts.len() as u128));
        if n_variants > MAX_VARIANTS as u128 {
            let sizes: Vec<String> = axes.iter().map(|axis| axis.texts.len().to_string()).collect();
            bail!(
                "the sweep has {n_variants} variants ({}); a sweep runs at most {MAX_VARIANTS}",
                sizes.join(" × ")
            );
        }
        Ok(Plan { axes, fixed, n_variants: n_variants as usize, n_seeds: 1 })
    }

    /// The same plan with every variant run `n_seeds` times (`--seeds N`): run `i` of a
    /// variant (from 0) has the seed `seed + i`, wrapping at `u64::MAX`, where `seed` is
    /// the scenario's (or `--seed`'s). One seed is the plain sweep. At most [`MAX_SEEDS`],
    /// and at most [`MAX_RUNS`] runs in all.
    pub fn with_seeds(self, n_seeds: u32) -> Result<Plan> {
        if !(1..=MAX_SEEDS).contains(&n_seeds) {
            bail!("--seeds {n_seeds}: give 1 to {MAX_SEEDS} seeds");
        }
        let n_runs = self.n_variants as u128 * u128::from(n_seeds);
        if n_runs > MAX_RUNS as u128 {
            bail!(
                "--seeds {n_seeds}: the sweep would make {n_runs} runs ({} variants × {n_seeds} seeds); \
                 a sweep makes at most {MAX_RUNS}",
                self.n_variants
            );
        }
        Ok(Plan { n_seeds, ..self })
    }

    /// Runs per variant (`--seeds`), 1 unless [`Plan::with_seeds`] said otherwise.
    pub fn n_seeds(&self) -> u32 {
        self.n_seeds
    }

    /// The seed of run `seed_idx` (from 0) of every variant, from the sweep's `seed`.
    pub fn seed(&self, seed: u64, seed_idx: u32) -> u64 {
        assert!(seed_idx < self.n_seeds, "seed {seed_idx} of {}", self.n_seeds);
        seed.wrapping_add(u64::from(seed_idx))
    }

    /// The axes, the first varying slowest.
    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    /// The `--set` edits every variant starts from, in order.
    pub fn fixed(&self) -> &[String] {
        &self.fixed
    }

    /// How many variants the full sweep holds.
    pub fn n_variants(&self) -> usize {
        self.n_variants
    }

    /// For variant `index`, the index of its value on each axis.
    pub fn value_indices(&self, index: usize) -> Vec<usize> {
        assert!(index < self.n_variants, "variant {index} of {}", self.n_variants);
        let mut rest = index;
        let mut indices = vec![0; self.axes.len()];
        for (slot, axis) in indices.iter_mut().zip(&self.axes).rev() {
            *slot = rest % axis.texts.len();
            rest /= axis.texts.len();
        }
        indices
    }

    /// The varied settings of variant `index`: each axis's key with its value there, as
    /// reports show it.
    pub fn settings(&self, index: usize) -> impl Iterator<Item = (&str, &serde_json::Value)> + '_ {
        self.axes
            .iter()
            .zip(self.value_indices(index))
            .map(|(axis, value_idx)| (axis.key.as_str(), &axis.values[value_idx]))
    }

    /// Every `--set` edit of variant `index`: the fixed ones, then one per axis.
    pub fn edits(&self, index: usize) -> Vec<String> {
        let mut edits = self.fixed.clone();
        for (axis, value_idx) in self.axes.iter().zip(self.value_indices(index)) {
            edits.push(axis.edit(value_idx));
        }
        edits
    }

    /// The varied settings of variant `index`, as `key=value` text for messages.
    fn describe(&self, index: usize) -> String {
        let edits: Vec<String> =
            self.axes.iter().zip(self.value_indices(index)).map(|(axis, idx)| axis.edit(idx)).collect();
        edits.join(", ")
    }
}

/// `--shard K/N`: the variants whose index is `K-1` modulo `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub k: usize,
    /// Number of shards.
    pub n: usize,
}

impl Shard {
    /// Parses `K/N` with `1 <= K <= N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let parsed =
            text.split_once('/').and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((k, n)) if 1 <= k && k <= n => Ok(Shard { k, n }),
            _ => Err(format!("\"{text}\" is not K/N with 1 <= K <= N, e.g. 2/8")),
        }
    }

    /// The shard of an array job, from its engine's environment (`var` reads a variable):
    /// a Slurm job array (`SLURM_ARRAY_TASK_ID` from `SLURM_ARRAY_TASK_MIN`, default 0,
    /// and `SLURM_ARRAY_TASK_COUNT`), or a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`,
    /// 0-based, with the job's completions given as `count`, which the pod's environment
    /// does not hold). `count`, when given, also overrides Slurm's.
    pub fn from_env(var: impl Fn(&str) -> Option<String>, count: Option<usize>) -> Result<Shard, String> {
        let number = |name: &str| -> Result<Option<usize>, String> {
            match var(name) {
                None => Ok(None),
                Some(text) => text
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("auto: {name}={text:?} is not a whole number")),
            }
        };
        let (index, n) = if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let n = count
                .or(number("SLURM_ARRAY_TASK_COUNT")?)
                .ok_or("auto: SLURM_ARRAY_TASK_COUNT is not set (give --shard-count)".to_string())?;
            let index = id
                .checked_sub(min)
                .ok_or(format!("auto: SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"))?;
            (index, n)
        } else if let Some(index) = number("JOB_COMPLETION_INDEX")? {
            let n = count.ok_or(
                "auto: an Indexed Job's environment has no count; give --shard-count (its completions)"
                    .to_string(),
            )?;
            (index, n)
        } else {
            return Err("auto: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set".to_string());
        };
        if index >= n {
            return Err(format!("auto: task {index} (0-based) is not below the count {n}"));
        }
        Ok(Shard { k: index + 1, n })
    }

    /// Whether variant `index` belongs to this shard.
    pub fn holds(&self, index: usize) -> bool {
        index % self.n == self.k - 1
    }
}

/// What a sweep tells its caller while it runs. Both methods are called on the thread
/// that runs the variant, so a caller can keep per-thread state (a panic hook that names
/// the variant, for one). `&()` reports nothing.
pub trait Progress: Sync {
    /// Variant `index` is about to run at `seed` with `edits` (the `--set` arguments that
    /// reproduce it); with `--seeds`, once per seed.
    fn started(&self, _index: usize, _edits: &[String], _seed: u64) {}
    /// A run of variant `index` has finished or failed; `done` of the `total` runs
    /// (variants times seeds) have.
    fn finished(&self, _index: usize, _done: usize, _total: usize) {}
}

impl Progress for () {}

/// Everything a sweep needs besides the scenario and the plan.
#[derive(Clone, Copy)]
pub struct SweepOptions<'a> {
    /// Run only this shard's variants.
    pub shard: Option<Shard>,
    /// Threads in the pool that runs the variants; the results do not depend on it.
    pub jobs: usize,
    /// Told when each variant starts and ends.
    pub progress: &'a dyn Progress,
}

impl std::fmt::Debug for SweepOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SweepOptions").field("shard", &self.shard).field("jobs", &self.jobs).finish()
    }
}

/// One finished variant: one run per seed.
#[derive(Debug)]
#[non_exhaustive]
pub struct VariantRun {
    /// The variant's index in the full sweep.
    pub index: usize,
    /// Its runs, in seed order (one without `--seeds`).
    pub runs: Vec<SeedRun>,
}

impl VariantRun {
    /// What failed in its runs: "ok", or the markers of [`RunStatus::label_over_seeds`].
    pub fn status_label(&self) -> String {
        let statuses: Vec<RunStatus> = self.runs.iter().map(|run| run.status.clone()).collect();
        RunStatus::label_over_seeds(&statuses)
    }
}

/// One run of a variant, at one seed.
#[derive(Debug)]
#[non_exhaustive]
pub struct SeedRun {
    /// The scenario with the variant's edits and this run's seed, validated.
    pub prepared: Prepared,
    /// The run's report.
    pub report: SimReport,
    /// What failed in the simulated system, if anything.
    pub status: RunStatus,
}

/// The variants a sweep ran, in index order.
#[derive(Debug)]
#[non_exhaustive]
pub struct SweepRun {
    /// The sweep's seed: that of every variant, or of each variant's first run with
    /// `--seeds`.
    pub seed: u64,
    /// The variants, in index order.
    pub variants: Vec<VariantRun>,
}

/// Runs `plan` over `scenario`. Validates the scenario once per axis value to catch a
/// bad key or value before anything runs, then runs the variants (all of them, or one
/// shard's), each once per seed, on a pool of `options.jobs` threads.
pub fn run(scenario: &Scenario, plan: &Plan, options: SweepOptions<'_>) -> Result<SweepRun> {
    let base = scenario.clone().edits(&plan.fixed)?.prepare()?;
    for axis in &plan.axes {
        for value_idx in 0..axis.texts.len() {
            let mut sets = plan.fixed.clone();
            sets.push(axis.edit(value_idx));
            scenario
                .clone()
                .edits(&sets)
                .and_then(|s| s.prepare())
                .with_context(|| format!("--vary {}", axis.edit(value_idx)))?;
        }
    }

    let indices: Vec<usize> = (0..plan.n_variants())
        .filter(|&idx| options.shard.as_ref().is_none_or(|shard| shard.holds(idx)))
        .collect();
    // Every (variant, seed) pair, variant-major: the order results are collected in.
    let pairs: Vec<(usize, u32)> =
        indices.iter().flat_map(|&index| (0..plan.n_seeds).map(move |seed_idx| (index, seed_idx))).collect();
    let n_done = AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs)
        .build()
        .context("cannot start the sweep's thread pool")?;
    let results: Vec<Result<SeedRun>> = pool.install(|| {
        pairs
            .par_iter()
            .map(|&(index, seed_idx)| {
                let seed = plan.seed(base.seed(), seed_idx);
                let res = run_variant(scenario, plan, options.progress, index, seed);
                let done = n_done.fetch_add(1, Ordering::Relaxed) + 1;
                options.progress.finished(index, done, pairs.len());
                res
            })
            .collect()
    });
    // The first failure by index, so the message does not depend on thread timing.
    let runs = results.into_iter().collect::<Result<Vec<SeedRun>>>()?;
    let mut runs = runs.into_iter();
    let mut variants = Vec::with_capacity(indices.len());
    for index in indices {
        let runs: Vec<SeedRun> = runs.by_ref().take(plan.n_seeds as usize).collect();
        for (seed_idx, run) in (0..plan.n_seeds).zip(&runs) {
            assert_eq!(run.prepared.seed(), plan.seed(base.seed(), seed_idx), "the seed is never varied");
        }
        variants.push(VariantRun { index, runs });
    }
    Ok(SweepRun { seed: base.seed(), variants })
}

fn run_variant(
    scenario: &Scenario,
    plan: &Plan,
    progress: &dyn Progress,
    index: usize,
    seed: u64,
) -> Result<SeedRun> {
    let context = || {
        let seed = if plan.n_seeds > 1 { format!(", seed {seed}") } else { String::new() };
        format!("variant {index} ({}{seed})", plan.describe(index))
    };
    let sets = plan.edits(index);
    let prepared =
        scenario.clone().edits(&sets).and_then(|s| s.with_seed(seed).prepare()).with_context(context)?;
    progress.started(index, &sets, prepared.seed());
    let report = prepared.run().with_context(context)?;
    let status = RunStatus::of(&report);
    Ok(SeedRun { prepared, report, status })
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// Parses each `--vary` argument and renders the plan's edits per variant, or the error.
    fn check(args: &[&str], expect: Expect) {
        let actual = args
            .iter()
            .map(|arg| Axis::parse(arg).map_err(|message| anyhow!(message)))
            .collect::<Result<Vec<Axis>>>()
            .and_then(|axes| Plan::new(axes, Vec::new()))
            .map(|plan| {
                (0..plan.n_variants())
                    .map(|idx| format!("{idx}: {}\n", plan.describe(idx)))
                    .collect::<String>()
            })
            .unwrap_or_else(|err| format!("error: {err:#}"));
        expect.assert_eq(&actual);
    }

    #[test]
    fn the_first_axis_varies_slowest() {
        check(
            &["swap.page_cluster=0,3", "swap.readahead=cluster,none"],
            expect![[r#"
                0: swap.page_cluster=0, swap.readahead=cluster
                1: swap.page_cluster=0, swap.readahead=none
                2: swap.page_cluster=3, swap.readahead=cluster
                3: swap.page_cluster=3, swap.readahead=none
            "#]],
        );
        check(
            &["memcg.limit=1MiB", "swap.page_cluster=-1..1"],
            expect![[r#"
                0: memcg.limit=1MiB, swap.page_cluster=-1
                1: memcg.limit=1MiB, swap.page_cluster=0
                2: memcg.limit=1MiB, swap.page_cluster=1
            "#]],
        );
    }

    #[test]
    fn values_are_typed_as_edits_write_them() {
        let axis = Axis::parse("swap.x=0, fixed ,1.5,true").expect("a valid list");
        let values: Vec<String> = axis.values.iter().map(|v| v.to_string()).collect();
        assert_eq!(values, ["0", "\"fixed\"", "1.5", "true"]);
        assert_eq!(axis.texts, ["0", "fixed", "1.5", "true"]);
    }

    #[test]
    fn bad_axes_are_errors() {
        check(&["swap.page_cluster"], expect!["error: --vary swap.page_cluster: expected KEY=VALUES: a comma list such as 0,1,3 or a range such as 1..8"]);
        check(&["swap.page_cluster="], expect!["error: --vary swap.page_cluster=: no values"]);
        check(
            &["swap.page_cluster=1,,2"],
            expect![[r#"error: --vary swap.page_cluster=1,,2: empty value in the list "1,,2""#]],
        );
        check(
            &["swap.page_cluster=8..1"],
            expect!["error: --vary swap.page_cluster=8..1: the range 8..1 is empty (8 is above 1)"],
        );
        check(
            &["swap.page_cluster=1..x"],
            expect![[
                r#"error: --vary swap.page_cluster=1..x: "1..x" is not a range of integers such as 1..8"#
            ]],
        );
        check(
            &["swap.page_cluster=0.5..2"],
            expect![[
                r#"error: --vary swap.page_cluster=0.5..2: "0.5..2" is not a range of integers such as 1..8"#
            ]],
        );
        check(
            &["swap..page_cluster=1"],
            expect![[r#"error: --vary swap..page_cluster=1: "swap..page_cluster" is not a dotted key path"#]],
        );
        check(
            &["seed=1,2"],
            expect![
                "error: --vary seed=1,2: every variant runs with the sweep's seed; choose it with --seed"
            ],
        );
        check(&["a=1,2,1"], expect!["error: --vary a=1,2,1: the value 1 is listed twice"]);
        check(
            &["a=0..10000"],
            expect!["error: --vary a=0..10000: 10001 values; a sweep runs at most 10000 variants"],
        );
        check(
            &["a=1..100", "b=1..101"],
            expect!["error: the sweep has 10100 variants (100 × 101); a sweep runs at most 10000"],
        );
        check(
            &["a=1", "a=2"],
            expect!["error: --vary a: the key is varied twice; list all its values in one --vary"],
        );
        check(&[], expect!["error: a sweep needs at least one --vary"]);
    }

    #[test]
    fn seeds_count_up_from_the_sweep_seed_within_limits() {
        let axes = vec![Axis::parse("a=1..100").expect("a valid axis")];
        let plan = Plan::new(axes, Vec::new()).expect("a valid plan");
        assert_eq!(plan.n_seeds(), 1);
        let plan = plan.with_seeds(3).expect("300 runs");
        let seeds: Vec<u64> = (0..3).map(|idx| plan.seed(7, idx)).collect();
        assert_eq!(seeds, [7, 8, 9]);
        assert_eq!(plan.seed(u64::MAX, 1), 0, "wrapping");
        let message = |n_seeds| format!("{:#}", plan.clone().with_seeds(n_seeds).expect_err("refused"));
        assert_eq!(message(0), "--seeds 0: give 1 to 1000 seeds");
        assert_eq!(
            message(101),
            "--seeds 101: the sweep would make 10100 runs (100 variants × 101 seeds); a sweep makes at most 10000"
        );
    }

    #[test]
    fn shards_split_by_index_modulo_n() {
        let shard = Shard::parse("2/3").expect("valid");
        let held: Vec<usize> = (0..8).filter(|&idx| shard.holds(idx)).collect();
        assert_eq!(held, [1, 4, 7]);
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"] {
            let err = Shard::parse(bad).expect_err(bad);
            assert!(err.contains(bad), "{err}");
        }
    }

    #[test]
    fn an_array_task_finds_its_shard_in_its_engines_environment() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let slurm = env(&[("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_COUNT", "4")]);
        assert_eq!(Shard::from_env(slurm, None), Ok(Shard { k: 1, n: 4 }));
        // An array numbered 5..=8.
        let offset = env(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(Shard::from_env(offset, None), Ok(Shard { k: 3, n: 4 }));
        let indexed = env(&[("JOB_COMPLETION_INDEX", "2")]);
        assert_eq!(Shard::from_env(indexed, Some(3)), Ok(Shard { k: 3, n: 3 }));
        let err = Shard::from_env(indexed, None).expect_err("no count");
        assert!(err.contains("--shard-count"), "{err}");
        let err = Shard::from_env(indexed, Some(2)).expect_err("index past the count");
        assert!(err.contains("not below the count 2"), "{err}");
        let err = Shard::from_env(env(&[]), None).expect_err("no array");
        assert!(err.contains("neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX"), "{err}");
        let err = Shard::from_env(env(&[("SLURM_ARRAY_TASK_ID", "x")]), None).expect_err("not a number");
        assert!(err.contains("SLURM_ARRAY_TASK_ID=\"x\""), "{err}");
    }
}
