//! Queue cases (`kind: "jobs"`): a queue of processes run `make -jN` style in one memory
//! cgroup, replayed as a `[workload.queue]` of the jobs' traces, over the seeds every case
//! is replayed with (`validate/seeds.rs`), each seed with its own launch jitter.
//!
//! Beyond the figures every case has, a queue case compares each job's start and end time,
//! as a median over the seeds compared, with the case's `measured.jobs_timing`; its
//! `jobs_timing.end_s` error is the median over its jobs of each job's end-time error,
//! scored like a figure; and its makespan is the last job's end.

use anyhow::{anyhow, Result};
use serde::Serialize;
use swapsim_core::SimReport;

use super::seeds::median;
use super::{round4, Case};

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

/// The makespan of a queue replay: from the queue's start to the last job's end.
pub(super) fn makespan_s(report: &SimReport) -> f64 {
    report.jobs.as_ref().map_or(report.sim_time_s, |jobs| jobs.makespan_s)
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
