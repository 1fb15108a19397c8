//! Replaying the cases: each case read into its scenario, one scenario per seed
//! (`validate/seeds.rs`), every (case, seed) run in parallel, and the runs of a case
//! compared with the kernel's figures.
//!
//! Runs whose scenarios differ only in their swap-in knobs (the swapoff cases at several
//! page-cluster values, seed by seed) share the beginning before their first timeline
//! operation when it swaps nothing in: it is simulated once and each run continues from a
//! copy of it ([`SharedStart`]), with the report a run of its own gives.

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use swapsim_core::config::LruModel;
use swapsim_core::SimReport;

use super::seeds::{self, Fold, SeedOutcomes};
use super::{compare, jobs, sessions, setup, sim_shape, Case, CaseResult};
use crate::progress::Progress;
use crate::scenario::queue::JobEntry;
use crate::scenario::{Prepared, Scenario, ScenarioFile};
use crate::shared_start::{self, SharedStart};
use crate::trace::TraceCache;

/// Replays every case under each of `lrus`, in parallel; per LRU, the cases in order.
pub(super) fn replay_all(
    cases: &[Case],
    dir: &Path,
    lrus: &[LruModel],
    seeds: u64,
    progress: &dyn Progress,
) -> Result<Vec<Vec<CaseResult>>> {
    let jobs: Vec<(LruModel, &Case)> =
        lrus.iter().flat_map(|&lru| cases.iter().map(move |case| (lru, case))).collect();
    let mut planned: Vec<Planned> =
        jobs.iter().map(|&(lru, case)| plan(case, dir, lru, seeds)).collect::<Result<_>>()?;
    // Every run of every case, as (case, seed index).
    let units: Vec<(usize, usize)> =
        planned.iter().enumerate().flat_map(|(j, p)| (0..p.runs.len()).map(move |k| (j, k))).collect();
    let n_total = units.len() as u64;
    progress.advanced(0, Some(n_total));
    let n_done = std::sync::atomic::AtomicU64::new(0);
    let done = || {
        let n = n_done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress.advanced(n, Some(n_total));
    };
    // Runs in groups that may share a beginning, each group in unit order.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_key: HashMap<&str, usize> = HashMap::new();
    for (u, &(j, k)) in units.iter().enumerate() {
        match planned[j].runs[k].key.as_deref() {
            Some(key) => match by_key.get(key) {
                Some(&g) => groups[g].push(u),
                None => {
                    by_key.insert(key, groups.len());
                    groups.push(vec![u]);
                }
            },
            None => groups.push(vec![u]),
        }
    }
    // Runs replaying the same trace read it once. The first run of a shared group sets its
    // trace up twice: for the shared beginning, then for its own end.
    let traces = Arc::new(TraceCache::default());
    let uses: Vec<(usize, usize, usize)> = groups
        .iter()
        .flat_map(|group| {
            let shared = group.len() > 1;
            group.iter().enumerate().map(move |(i, &u)| (u, i, shared))
        })
        .map(|(u, i, shared)| (units[u].0, units[u].1, if i == 0 && shared { 2 } else { 1 }))
        .collect();
    for (j, k, setups) in uses {
        planned[j].runs[k].prepared.share_trace_reads(&traces, setups);
    }
    let reports: Vec<Vec<(usize, Result<SimReport>)>> = groups
        .par_iter()
        .map(|group| {
            let prepared = |u: usize| &planned[units[u].0].runs[units[u].1].prepared;
            let start = match group.as_slice() {
                [first, _, ..] => SharedStart::run(prepared(*first), 0)
                    .with_context(|| format!("case {}", jobs[units[*first].0].1.id)),
                _ => Ok(None),
            };
            let start = match start {
                Ok(start) => start,
                Err(err) => return group.iter().map(|&u| (u, Err(anyhow!("{err:#}")))).collect(),
            };
            group
                .par_iter()
                .map(|&u| {
                    let report = match &start {
                        Some(start) => start.finish(prepared(u)),
                        None => prepared(u).run(),
                    };
                    done();
                    (u, report)
                })
                .collect()
        })
        .collect();
    let mut by_unit: Vec<Option<Result<SimReport>>> = (0..units.len()).map(|_| None).collect();
    for (u, report) in reports.into_iter().flatten() {
        by_unit[u] = Some(report);
    }
    let mut per_case: Vec<Vec<SimReport>> =
        planned.iter().map(|p| Vec::with_capacity(p.runs.len())).collect();
    for (&(j, _), report) in units.iter().zip(by_unit) {
        per_case[j].push(report.context("every run was run")??);
    }
    let mut results = planned
        .into_iter()
        .zip(per_case)
        .zip(&jobs)
        .map(
            |((plan, reports), &(_, case))| {
                if plan.runs.is_empty() {
                    Ok(plan.result)
                } else {
                    compared(case, plan.result, &reports)
                }
            },
        )
        .collect::<Vec<Result<CaseResult>>>()
        .into_iter();
    lrus.iter().map(|_| results.by_ref().take(cases.len()).collect::<Result<Vec<_>>>()).collect()
}

/// A case ready to replay: its result so far, and one run per seed unless it is skipped.
struct Planned {
    result: CaseResult,
    runs: Vec<PlannedRun>,
}

struct PlannedRun {
    prepared: Prepared,
    /// Under which key it may share its beginning with other runs (`shared_start::key`);
    /// `None` without a timeline, where there is no point to fork at.
    key: Option<String>,
}

/// Reads a case into its scenarios, one per seed (none when it is skipped).
fn plan(case: &Case, dir: &Path, lru: LruModel, seeds: u64) -> Result<Planned> {
    let kind = case.doc["kind"].as_str().unwrap_or("?").to_string();
    let group = setup::case_group(case)?;
    let kernel_oom_kills = setup::kernel_oom_kills(case)?;
    let result = CaseResult {
        id: case.id.clone(),
        kind,
        group,
        skipped: setup::unsupported(case),
        outcome: None,
        kernel_oom_kills,
        session: case.doc["kernel"].as_str().and_then(sessions::session).copied(),
        seeds: None,
        oom_mismatch: false,
        jobs_timing: None,
        sim: json!({}),
        sim_min: json!({}),
        sim_max: json!({}),
        real: json!({}),
        real_min: json!({}),
        real_max: json!({}),
        ratio: json!({}),
        sim_all: json!({}),
    };
    if result.skipped.is_some() {
        return Ok(Planned { result, runs: Vec::new() });
    }
    let mut base = setup::scenario_file(case, dir)?;
    base.lru = lru;
    let runs = (1..=seeds)
        .map(|seed| {
            let file = seeded(&base, seed);
            let key = if file.timeline.is_empty() { None } else { Some(shared_start::key(&file)?) };
            let prepared =
                Scenario::from_file(file, format!("case {} seed {seed}", case.id), dir).prepare()?;
            Ok(PlannedRun { prepared, key })
        })
        .collect::<Result<_>>()?;
    Ok(Planned { result, runs })
}

/// The scenario of one seed's replay: the case's, with the seed and the launch jitter it
/// draws.
fn seeded(base: &ScenarioFile, seed: u64) -> ScenarioFile {
    let mut file = base.clone();
    file.seed = seed;
    setup::jitter_launches(&mut file, seed);
    file
}

/// The scenario a case is replayed with at `seed`, its traces named by absolute paths so
/// that it runs from any directory. An error for a case validate skips.
pub(super) fn case_scenario(case: &Case, dir: &Path, lru: LruModel, seed: u64) -> Result<ScenarioFile> {
    if let Some(why) = setup::unsupported(case) {
        bail!("case {} is not replayed: {why}", case.id);
    }
    let mut base = setup::scenario_file(case, dir)?;
    base.lru = lru;
    let mut file = seeded(&base, seed);
    let absolute = |path: &mut PathBuf| -> Result<()> {
        if path.is_relative() {
            let joined = dir.join(&*path);
            *path = std::path::absolute(&joined)
                .with_context(|| format!("cannot make {} absolute", joined.display()))?;
        }
        Ok(())
    };
    if let Some(trace) = &mut file.workload.trace {
        absolute(trace)?;
    }
    if let Some(queue) = &mut file.workload.queue {
        for job in &mut queue.jobs {
            match job {
                JobEntry::Path(trace) | JobEntry::Job { trace, .. } => absolute(trace)?,
            }
        }
    }
    Ok(file)
}

/// Compares a case's replays, one per seed, with the kernel's figures.
fn compared(case: &Case, mut result: CaseResult, reports: &[SimReport]) -> Result<CaseResult> {
    let in_case = || format!("case {}", case.id);
    let first = reports.first().context("a case is replayed at least once")?;
    let runs = seeds::compared_runs(reports);
    let shapes = runs.iter().map(|r| sim_shape(case, r)).collect::<Result<Vec<_>>>().with_context(in_case)?;
    let outcomes = SeedOutcomes {
        runs: reports.len() as u64,
        runs_oom_killed: reports.iter().filter(|r| seeds::killed(r)).count() as u64,
    };
    result.oom_mismatch = seeds::oom_mismatch(result.kernel_oom_kills.as_ref(), &outcomes);
    result.seeds = Some(outcomes);
    if result.kind == "jobs" {
        result.jobs_timing = Some(jobs::jobs_timing(case, &runs).with_context(in_case)?);
    }
    let sim = seeds::fold_tree(&shapes, Fold::Median);
    let (real, real_min, real_max, sim_compared, ratio) = compare(&case.doc["measured"], &sim);
    // The model's range over the seeds compared, for the figures compared.
    let range = |fold| compare(&case.doc["measured"], &seeds::fold_tree(&shapes, fold)).3;
    result.sim_min = range(Fold::Min);
    result.sim_max = range(Fold::Max);
    result.outcome = Some(first.outcome.clone());
    result.sim = sim_compared;
    result.sim_all = sim;
    result.real = real;
    result.real_min = real_min;
    result.real_max = real_max;
    result.ratio = ratio;
    Ok(result)
}
