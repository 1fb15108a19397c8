//! Queue cases (`kind: "jobs"`): a queue of processes run `make -jN` style in one memory
//! cgroup, replayed as a `[workload.queue]` of the jobs' traces.
//!
//! A queue's runs spread widely on the kernel (which jobs overlap changes from run to
//! run), and the kernel's OOM killer took a job in some runs and not in others. So a queue
//! case is replayed with [`QUEUE_SEEDS`] seeds, each with its own launch jitter and device
//! noise, and compared the way the kernel's runs were summarised:
//!
//! - the figures (counters, block figures, mTHP counters, the makespan `timing.total_s`)
//!   are the median, figure by figure, over the seeds in which no job was killed (over
//!   every seed when each had a kill), as the case's figures are medians over the runs in
//!   which no job was killed;
//! - each job's start and end time is likewise a median over those seeds, compared with
//!   the case's `measured.jobs_timing`; a case's `jobs_timing.end_s` error is the median
//!   over its jobs of each job's end-time error, scored like a figure;
//! - OOM kills: where the kernel killed a job in at least a third of its runs, the model
//!   must kill one in at least a third of its seeds; where the kernel never did, in none.

use anyhow::{anyhow, Result};
use serde::Serialize;
use serde_json::{Map, Value};
use swapsim_core::{Outcome, SimReport};

use super::{round4, Case, KernelOomKills};

/// Seeds a queue case is replayed with.
pub const QUEUE_SEEDS: u64 = 6;

/// How the replays of a queue case ended, over its seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SeedOutcomes {
    /// Seeds replayed.
    pub runs: u64,
    /// Seeds in which the OOM killer took a job.
    pub runs_oom_killed: u64,
}

/// One job's start and end, the kernel's against the model's.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct JobTiming {
    /// The job's index in the queue.
    pub job: usize,
    /// The kernel's median start, seconds from the queue's start.
    pub kernel_start_s: f64,
    /// The kernel's median end.
    pub kernel_end_s: f64,
    /// The model's median start over the seeds compared (`None`: it never started).
    pub sim_start_s: Option<f64>,
    /// The model's median end over the seeds compared (`None`: it never ended).
    pub sim_end_s: Option<f64>,
    /// |sim end / kernel end - 1|; 1 when the job never ended in the model.
    pub end_error: f64,
}

/// Every job's times, and the error the verdict scores.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct JobsTiming {
    /// Per job, in queue order.
    pub jobs: Vec<JobTiming>,
    /// The median over jobs of their end-time errors.
    pub end_error_median: f64,
}

/// Whether the model's kills over its seeds contradict the kernel's: the kernel killed a
/// job in at least a third of its runs and the model in fewer than a third of its seeds,
/// or the kernel never killed and the model did.
pub(super) fn oom_mismatch(kernel: Option<&KernelOomKills>, sim: &SeedOutcomes) -> bool {
    let Some(kernel) = kernel else { return false };
    if kernel.runs_oom_killed == 0 {
        return sim.runs_oom_killed > 0;
    }
    let kernel_often = 3 * kernel.runs_oom_killed >= kernel.runs_started;
    kernel_often && 3 * sim.runs_oom_killed < sim.runs
}

/// The seeds' reports a queue case's figures come from: those in which no job was killed,
/// or all of them when every one had a kill.
pub(super) fn compared_runs(reports: &[SimReport]) -> Vec<&SimReport> {
    let alive: Vec<&SimReport> = reports.iter().filter(|r| !killed(r)).collect();
    if alive.is_empty() {
        reports.iter().collect()
    } else {
        alive
    }
}

/// Whether a replay lost a job to the OOM killer.
pub(super) fn killed(report: &SimReport) -> bool {
    matches!(report.outcome, Outcome::OomKilled { .. })
        || report.jobs.as_ref().is_some_and(|jobs| jobs.oom_killed > 0)
}

/// The makespan of a queue replay: from the queue's start to the last job's end.
pub(super) fn makespan_s(report: &SimReport) -> f64 {
    report.jobs.as_ref().map_or(report.sim_time_s, |jobs| jobs.makespan_s)
}

/// The median, number by number, of trees of the same shape; a number missing from some
/// trees is the median of those that have it.
pub(super) fn median_tree(trees: &[Value]) -> Value {
    let Some(first) = trees.first() else { return Value::Null };
    match first {
        Value::Object(m) => {
            let mut out = Map::new();
            for key in m.keys() {
                let children: Vec<Value> = trees.iter().filter_map(|t| t.get(key).cloned()).collect();
                out.insert(key.clone(), median_tree(&children));
            }
            Value::Object(out)
        }
        Value::Number(_) => {
            let mut xs: Vec<f64> = trees.iter().filter_map(Value::as_f64).collect();
            median(&mut xs).map_or(Value::Null, |x| serde_json::json!(x))
        }
        other => other.clone(),
    }
}

/// The median of `xs` (the mean of the middle two for an even count).
fn median(xs: &mut [f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 })
}

/// The kernel's `measured.jobs_timing`: per job its median start and end, in queue order.
fn kernel_times(case: &Case) -> Result<Vec<(f64, f64)>> {
    let path = "measured.jobs_timing";
    let list = super::setup::field(case, path)?
        .as_array()
        .ok_or_else(|| anyhow!("{}: {path} is not a list", case.file.display()))?;
    let mut times = vec![None; list.len()];
    for (i, item) in list.iter().enumerate() {
        let number = |key: &str| {
            item[key].as_f64().ok_or_else(|| {
                anyhow!("{}: {path}[{i}].{key} is missing or not a number", case.file.display())
            })
        };
        let job = item["job"].as_u64().and_then(|j| usize::try_from(j).ok()).filter(|&j| j < list.len());
        let job = job.ok_or_else(|| {
            anyhow!("{}: {path}[{i}].job is missing or not a job of the queue", case.file.display())
        })?;
        if times[job].is_some() {
            return Err(anyhow!("{}: {path}[{i}].job {job} is listed twice", case.file.display()));
        }
        times[job] = Some((number("start_s")?, number("end_s")?));
    }
    Ok(times.into_iter().flatten().collect())
}

/// Each job's times, the kernel's against the median of `runs`.
pub(super) fn jobs_timing(case: &Case, runs: &[&SimReport]) -> Result<JobsTiming> {
    let kernel = kernel_times(case)?;
    let n_jobs = super::setup::field(case, "workload.queue.jobs")?.as_array().map_or(0, Vec::len);
    if kernel.len() != n_jobs {
        return Err(anyhow!(
            "{}: measured.jobs_timing has {} jobs, the queue {n_jobs}",
            case.file.display(),
            kernel.len()
        ));
    }
    let per_run = |j: usize, pick: fn(&swapsim_core::JobReport) -> Option<f64>| -> Option<f64> {
        let mut xs: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.jobs.as_ref().and_then(|jobs| jobs.per_job.get(j)).and_then(pick))
            .collect();
        median(&mut xs)
    };
    let jobs: Vec<JobTiming> = kernel
        .iter()
        .enumerate()
        .map(|(j, &(kernel_start_s, kernel_end_s))| {
            let sim_start_s = per_run(j, |job| job.start_s);
            let sim_end_s = per_run(j, |job| job.end_s);
            let end_error = match sim_end_s {
                Some(end) if kernel_end_s > 0.0 => round4((end / kernel_end_s - 1.0).abs()),
                _ => 1.0,
            };
            JobTiming { job: j, kernel_start_s, kernel_end_s, sim_start_s, sim_end_s, end_error }
        })
        .collect();
    let mut errors: Vec<f64> = jobs.iter().map(|j| j.end_error).collect();
    let end_error_median = median(&mut errors).map_or(1.0, round4);
    Ok(JobsTiming { jobs, end_error_median })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn median_tree_takes_each_number_median() {
        let trees =
            [json!({"a": 1, "b": {"c": 10}}), json!({"a": 3, "b": {"c": 30}}), json!({"a": 2, "b": {}})];
        assert_eq!(median_tree(&trees), json!({"a": 2.0, "b": {"c": 20.0}}));
    }

    #[test]
    fn oom_rule_follows_the_kernel_rate() {
        let kernel = |killed| KernelOomKills { runs_started: 5, runs_oom_killed: killed, note: None };
        let sim = |killed| SeedOutcomes { runs: 6, runs_oom_killed: killed };
        assert!(!oom_mismatch(Some(&kernel(0)), &sim(0)));
        assert!(oom_mismatch(Some(&kernel(0)), &sim(1)));
        // 2 of 5 is at least a third: the model must kill in 2 of 6.
        assert!(oom_mismatch(Some(&kernel(2)), &sim(1)));
        assert!(!oom_mismatch(Some(&kernel(2)), &sim(2)));
        // 1 of 5 is under a third: either outcome agrees.
        assert!(!oom_mismatch(Some(&kernel(1)), &sim(0)));
        assert!(!oom_mismatch(Some(&kernel(1)), &sim(6)));
        assert!(!oom_mismatch(None, &sim(6)));
    }
}
