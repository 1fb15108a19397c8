//! What every experiment uses to build and run its scenarios: the run counter its
//! progress reads, running a scenario (or scenarios sharing their beginning) with a panic
//! of the simulator caught and named, scaled sizes, and the wording of how a run ended.
//!
//! It knows no experiment: each experiment's file builds its own scenarios and rows.

use anyhow::{Context, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use swapsim_core::gen::{GeneratorConfig, JobsConfig, Pattern};
use swapsim_core::report::{JobsReport, Outcome as RunOutcome};
use swapsim_core::{ByteSize, SimReport};
use swapsim_devices::DeviceConfig;

use crate::progress::Progress;
use crate::scenario::{DeviceSection, Prepared, Scenario, ScenarioFile};
use crate::shared_start::SharedStart;

/// The hot page cache (`memcg.page_cache`) of the experiments that stand for a kernel
/// build or for a host running guests: the text of the programs that run over and over
/// (compiler, assembler, make, the shell, the C library; qemu and the host's daemons).
/// Every such system has some in its cgroup, and with any at all the classic LRU's
/// `shrink_lruvec` keeps aging the active anonymous list while the inactive one is empty;
/// without it, an anonymous-only thrash ends in the memcg OOM killer (which the validation's
/// anonymous workloads reproduce). 1 MiB, the text of make, the shell and the C library,
/// is a lower bound of what such a system keeps hot, and small beside the experiments'
/// limits (4% of the smallest, the queue of traces' 24 MiB), so that their memory
/// pressure stays as it was set; a larger page cache would take its share of the limit.
/// How a row's runs over seeds ended, in one text: "completed" when every one did, else
/// `seed N: <how>` for each that did not.
pub(super) fn seeds_outcome<'a>(runs: impl IntoIterator<Item = (u64, &'a str)>) -> String {
    let other: Vec<String> = runs
        .into_iter()
        .filter(|(_, outcome)| *outcome != "completed")
        .map(|(seed, outcome)| format!("seed {seed}: {outcome}"))
        .collect();
    if other.is_empty() {
        "completed".to_string()
    } else {
        other.join("; ")
    }
}

/// The machine the build-like job queue runs on: 24 GiB and ten CPUs, one per job slot of
/// its `-j10`, so that the memory cgroup, not the machine, limits the build.
pub(super) fn build_machine() -> swapsim_core::config::MachineConfig {
    swapsim_core::config::MachineConfig { memory: mib_size(24 * 1024), cpus: 10, ..Default::default() }
}

/// The machine and workload of a build experiment's run: the queue of traces on its own
/// machine (`"queue"`), or the job queue `jobs` on [`build_machine`]; pages holding
/// `contents` (the generator's default when `None`).
pub(super) fn build_or_queue(
    workload: &str,
    jobs: &swapsim_core::gen::JobsConfig,
    contents: Option<swapsim_core::contents::Contents>,
) -> (swapsim_core::config::MachineConfig, crate::scenario::WorkloadSection) {
    match workload {
        "queue" => (super::trace_queue::machine(), super::trace_queue::workload(contents)),
        _ => (
            build_machine(),
            crate::scenario::WorkloadSection { jobs: Some(jobs.clone()), contents, ..Default::default() },
        ),
    }
}

pub(super) fn build_page_cache() -> ByteSize {
    mib_size(1)
}

/// Counts an experiment's finished runs for its [`Progress`].
pub(super) struct Runs<'a> {
    progress: &'a dyn Progress,
    n_done: AtomicU64,
    n_total: u64,
}

impl<'a> Runs<'a> {
    pub(super) fn new(progress: &'a dyn Progress, n_total: u64) -> Runs<'a> {
        progress.advanced(0, Some(n_total));
        Runs { progress, n_done: AtomicU64::new(0), n_total }
    }

    /// Counts one more run finished.
    fn one_done(&self) {
        let n_done = self.n_done.fetch_add(1, Ordering::Relaxed) + 1;
        self.progress.advanced(n_done, Some(self.n_total));
    }
}

/// Validates a scenario built as a typed value and runs it ([`guarded`]).
pub(super) fn run_file(label: &str, file: ScenarioFile, runs: &Runs<'_>) -> Result<SimReport> {
    let prepared = prepare(label, file)?;
    let res = guarded(label, || prepared.run());
    runs.one_done();
    res
}

/// The scenario `file`, named `label`, checked and ready to run.
fn prepare(label: &str, file: ScenarioFile) -> Result<Prepared> {
    Scenario::from_file(file, label, "").prepare()
}

/// [`prepare`] for each of `files`, named by `labels` in order.
fn prepare_all(labels: &[String], files: Vec<ScenarioFile>) -> Result<Vec<Prepared>> {
    files.into_iter().zip(labels).map(|(file, label)| prepare(label, file)).collect()
}

/// Runs scenarios that differ only in their swap-in knobs (page-cluster, swapoff's hit
/// accounting, the readahead and swap-in size policies) and swap nothing in before their
/// timeline operation `op`: the first is simulated until that operation is due, then
/// forked once per scenario and given its knobs
/// ([`swapsim_core::Simulation::retune_swapin`], which refuses if anything was swapped in
/// or the configurations differ otherwise). Each report is the one a run of its scenario
/// alone gives; a test holds the two equal.
pub(super) fn run_forked(
    labels: &[String],
    files: Vec<ScenarioFile>,
    op: usize,
    runs: &Runs<'_>,
) -> Result<Vec<SimReport>> {
    let prepared = prepare_all(labels, files)?;
    let first = prepared.first().context("no scenario to run")?;
    let start = guarded(&labels[0], || {
        SharedStart::run(first, op)?.with_context(|| {
            format!("the run ended or swapped a page in before its timeline operation {}", op + 1)
        })
    })?;
    prepared
        .par_iter()
        .zip(labels)
        .map(|(prepared, label)| {
            let res = guarded(label, || start.finish(prepared));
            runs.one_done();
            res
        })
        .collect()
}

/// Runs scenarios that differ only in zswap (its `[zswap]` section and protection
/// policy): the first is simulated until its memory cgroup comes within `margin` pages of
/// its limit, then forked once per scenario and given its zswap
/// ([`swapsim_core::Simulation::retune_zswap`], which refuses once a store was tried, the
/// shrinker called or a swap-in told to the policy, or when the configurations differ
/// otherwise). Each report is the one a run of its scenario alone gives, a test holds
/// the two equal; when the beginning cannot be shared (the run ended or reclaimed first,
/// or a stream does not fork) each scenario runs from the start. One result per scenario,
/// in order; a panic of the simulator is that scenario's [`SimulatorPanic`].
pub(super) fn run_sharing_zswap(
    labels: &[String],
    files: Vec<ScenarioFile>,
    margin: u64,
    runs: &Runs<'_>,
) -> Result<Vec<Result<SimReport>>> {
    let prepared = prepare_all(labels, files)?;
    let first = prepared.first().context("no scenario to run")?;
    // A beginning that panics is run again by each scenario, which then reports it.
    let start = guarded(&labels[0], || SharedStart::before_reclaim(first, margin)).ok().flatten();
    Ok(prepared
        .par_iter()
        .zip(labels)
        .map(|(prepared, label)| {
            let res = match &start {
                Some(start) => guarded(label, || start.finish(prepared)),
                None => guarded(label, || prepared.run()),
            };
            runs.one_done();
            res
        })
        .collect())
}

/// Runs `f` for the scenario `label`. A panic inside the simulator comes back as a
/// [`SimulatorPanic`] error naming the scenario, rather than ending the whole experiment;
/// the default panic hook has already printed it.
fn guarded<T>(label: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(res) => res.with_context(|| format!("experiment scenario {label}")),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(anyhow::Error::new(SimulatorPanic(message)).context(format!("experiment scenario {label}")))
        }
    }
}

/// The simulator panicked: an internal error of the model, not of the scenario.
#[derive(Debug)]
pub(super) struct SimulatorPanic(String);

impl std::fmt::Display for SimulatorPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "simulator panic: {}", self.0)
    }
}

impl std::error::Error for SimulatorPanic {}

/// A size of `mib` MiB.
pub(super) fn mib_size(mib: u64) -> ByteSize {
    ByteSize(mib << 20)
}

/// Sizes in MiB scaled down, at least `min`, rounded to whole MiB.
pub(super) fn mib(full: f64, scale: f64, min: f64) -> u64 {
    (full * scale).max(min).round() as u64
}

/// MiB each of `n_procs` processes writes so that together they hold 85 % of `ram_mib`,
/// as the guests of the Righi studies did.
pub(super) fn per_proc_mib(ram_mib: u64, n_procs: u64) -> u64 {
    (ram_mib as f64 * 0.85 / n_procs as f64).round() as u64
}

/// `n_procs` processes writing `per_proc_mib` MiB each, once, all at the same time, so
/// that their pages interleave on the LRU and in swap as a real guest's do.
pub(super) fn fill_generator(per_proc_mib: u64, n_procs: u64) -> GeneratorConfig {
    let mut generator = GeneratorConfig::new(Pattern::Seq, mib_size(per_proc_mib));
    generator.passes = 0;
    generator.tasks = u32::try_from(n_procs).expect("a handful of processes");
    generator
}

/// The one swap device of a scenario: `size_mib` MiB named `name`, of the device `model`.
pub(super) fn one_device(name: &str, size_mib: u64, model: DeviceConfig) -> Vec<DeviceSection> {
    vec![DeviceSection { backing: None, name: name.into(), size: mib_size(size_mib), priority: None, model }]
}

/// The summary of a run's job queue; every experiment on a job queue has one.
pub(super) fn jobs_of(report: &SimReport) -> Result<&JobsReport> {
    report.jobs.as_ref().context("the job queue has no summary")
}

/// A kernel-build-like job queue in words, as the setups of the experiments built on
/// one say it.
pub(super) fn job_queue_text(jobs: &JobsConfig) -> String {
    format!(
        "kernel-build-like job queue: {} jobs, -j{}, compile jobs of median {} MiB and link jobs ({:.0}%) \
         of median {} MiB",
        jobs.jobs,
        jobs.concurrency,
        jobs.size_median.0 >> 20,
        jobs.link_fraction * 100.0,
        jobs.link_size_median.0 >> 20,
    )
}

/// How a run ended, in words: `completed`, `oom-killed <task> at <t> s`, ...
pub(super) fn outcome_text(outcome: &RunOutcome) -> String {
    match outcome {
        RunOutcome::Completed => "completed".to_string(),
        RunOutcome::OomKilled { task, at_s } => format!("oom-killed {task} at {at_s:.3} s"),
        RunOutcome::EventLimit => "event limit".to_string(),
        RunOutcome::TimeLimit => "time limit".to_string(),
        RunOutcome::Unfinished { tasks, reason } => format!("{tasks} tasks unfinished: {reason}"),
    }
}

/// `x` rounded to three decimals, as every figure an experiment reports.
pub(super) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
