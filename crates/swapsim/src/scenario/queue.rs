//! `[workload.queue]`: a queue of traces, each replayed as a process of its own, run at
//! most `concurrency` at a time, as `make -jN` runs jobs: the first jobs start with the
//! run, and each later one when a running job exits.
//!
//! ```toml
//! [workload.queue]
//! concurrency = 3
//! jobs = ["cc1.perf.zst", { trace = "ld.perf.zst", delay = "5ms" }]   # or
//! traces = "build/*.trace.zst"                                         # sorted by name
//! delay = "0ms"              # every job's start delay unless its entry gives one
//! ```
//!
//! Each job is one process: a trace holding several processes is refused (its threads are
//! fine, and share the job's address space). A job starts by `exec` (`cpu.exec_ns`), and
//! its end is its process's exit (`exit_mmap`, `cpu.exit_page_ns`). `[workload]`'s trace
//! options (`trace_format`, `lenient`, `pace`, `madvise`) apply to every job.

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use swapsim_core::{SimDuration, TaskSpec, TaskStart};

use crate::next_use::NextUses;
use crate::trace::{PathOrigin, TraceInput, TraceSource};

/// Most jobs a queue may hold.
pub(crate) const JOBS_MAX: usize = 100_000;

/// `[workload.queue]` as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueueSection {
    /// At most this many jobs run at once, 1..=1024.
    pub(crate) concurrency: u32,
    /// The jobs in start order: a trace path, or `{ trace = "...", delay = "10ms" }`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) jobs: Vec<JobEntry>,
    /// A glob of trace files, started in the order of their sorted names (instead of
    /// `jobs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) traces: Option<String>,
    /// Every job's start delay unless its entry gives one: the time a launcher takes to
    /// start a job once its slot is free (or, for the first jobs, once the run begins).
    /// Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) delay: Option<String>,
    /// Traces built into the program, by name, instead of `jobs` or `traces` (the
    /// experiments' bundled queue); not part of the file format.
    #[serde(skip)]
    pub(crate) embedded: Vec<(&'static str, &'static [u8])>,
}

/// One job as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub(crate) enum JobEntry {
    Path(PathBuf),
    Job {
        trace: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delay: Option<String>,
    },
}

/// A checked queue: each job's trace, resolved, and its start delay.
#[derive(Clone, Debug)]
pub(crate) struct QueueInput {
    pub(crate) concurrency: u32,
    pub(crate) jobs: Vec<QueueJob>,
}

/// One checked job.
#[derive(Clone, Debug)]
pub(crate) struct QueueJob {
    /// The job's name in reports: its trace's file name.
    pub(crate) name: String,
    pub(crate) input: TraceInput,
    pub(crate) delay: SimDuration,
}

/// The queue as a report echoes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedQueue {
    /// At most this many jobs run at once.
    pub concurrency: u32,
    /// The jobs in start order.
    pub jobs: Vec<ResolvedJob>,
}

/// One job as a report echoes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedJob {
    /// Its trace, as given (a glob's match as found).
    pub trace: String,
    /// Its start delay in seconds, when not zero.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_s: Option<f64>,
}

impl QueueSection {
    /// Checks the queue and resolves its traces: relative paths and globs against
    /// `base_dir` (the scenario file's directory), each job's trace read as `template`
    /// says.
    pub(crate) fn resolve(
        &self,
        base_dir: &Path,
        template: &TraceInput,
    ) -> Result<(QueueInput, ResolvedQueue)> {
        if !(1..=1024).contains(&self.concurrency) {
            bail!("workload.queue.concurrency: {} is outside 1..=1024", self.concurrency);
        }
        let default_delay = parse_delay("workload.queue.delay", self.delay.as_deref())?;
        if !self.embedded.is_empty() {
            if self.traces.is_some() || !self.jobs.is_empty() {
                bail!("workload.queue: give jobs or traces, not both");
            }
            return Ok(self.resolve_embedded(template, default_delay));
        }
        let entries: Vec<(PathBuf, String, SimDuration)> = match (&self.traces, self.jobs.is_empty()) {
            (Some(_), false) => bail!("workload.queue: give jobs or traces, not both"),
            (None, true) => {
                bail!("workload.queue: no jobs; give jobs = [\"TRACE\", ...] or traces = \"GLOB\"")
            }
            (Some(pattern), true) => {
                let full = base_dir.join(pattern);
                let full = full
                    .to_str()
                    .ok_or_else(|| anyhow!("workload.queue.traces: \"{pattern}\" is not UTF-8"))?;
                let mut found: Vec<PathBuf> = glob::glob(full)
                    .map_err(|e| anyhow!("workload.queue.traces: \"{pattern}\" is not a glob: {e}"))?
                    .collect::<Result<_, _>>()
                    .map_err(|e| anyhow!("workload.queue.traces: {e}"))?;
                found.sort();
                if found.is_empty() {
                    bail!(
                        "workload.queue.traces: \"{pattern}\" matches no file (relative to {})",
                        base_dir.display()
                    );
                }
                found
                    .into_iter()
                    .map(|path| {
                        let written = path.strip_prefix(base_dir).unwrap_or(&path).display().to_string();
                        (path, written, default_delay)
                    })
                    .collect()
            }
            (None, false) => self
                .jobs
                .iter()
                .enumerate()
                .map(|(i, entry)| {
                    let (trace, delay) = match entry {
                        JobEntry::Path(trace) => (trace, default_delay),
                        JobEntry::Job { trace, delay } => (
                            trace,
                            match delay {
                                Some(text) => {
                                    parse_delay(&format!("workload.queue.jobs[{i}].delay"), Some(text))?
                                }
                                None => default_delay,
                            },
                        ),
                    };
                    Ok((base_dir.join(trace), trace.display().to_string(), delay))
                })
                .collect::<Result<_>>()?,
        };
        if entries.len() > JOBS_MAX {
            bail!("workload.queue: {} jobs, more than the {JOBS_MAX} a queue may hold", entries.len());
        }
        let mut jobs = Vec::with_capacity(entries.len());
        let mut resolved = Vec::with_capacity(entries.len());
        for (i, (path, written, delay)) in entries.into_iter().enumerate() {
            let input = TraceInput {
                source: TraceSource::File(path.clone()),
                origin: PathOrigin::ScenarioFile {
                    key: "workload.queue.jobs",
                    relative: Path::new(&written).is_relative(),
                },
                ..template.clone()
            };
            input.check().with_context(|| format!("workload.queue job {i}"))?;
            let name = path.file_name().map_or_else(|| written.clone(), |n| n.to_string_lossy().into_owned());
            jobs.push(QueueJob { name, input, delay });
            resolved.push(ResolvedJob {
                trace: written,
                delay_s: (delay > SimDuration::ZERO).then(|| delay.as_secs_f64()),
            });
        }
        Ok((
            QueueInput { concurrency: self.concurrency, jobs },
            ResolvedQueue { concurrency: self.concurrency, jobs: resolved },
        ))
    }
}

impl QueueSection {
    /// The queue of built-in traces, each started `delay` after its slot frees.
    fn resolve_embedded(&self, template: &TraceInput, delay: SimDuration) -> (QueueInput, ResolvedQueue) {
        let jobs: Vec<QueueJob> = self
            .embedded
            .iter()
            .map(|&(name, bytes)| QueueJob {
                name: name.to_string(),
                input: TraceInput {
                    source: TraceSource::Embedded { name, bytes },
                    origin: PathOrigin::TraceFlag,
                    ..template.clone()
                },
                delay,
            })
            .collect();
        let resolved = jobs
            .iter()
            .map(|job| ResolvedJob {
                trace: format!("embedded {}", job.name),
                delay_s: (delay > SimDuration::ZERO).then(|| delay.as_secs_f64()),
            })
            .collect();
        (
            QueueInput { concurrency: self.concurrency, jobs },
            ResolvedQueue { concurrency: self.concurrency, jobs: resolved },
        )
    }
}

fn parse_delay(key: &str, text: Option<&str>) -> Result<SimDuration> {
    match text {
        None => Ok(SimDuration::ZERO),
        Some(text) => crate::timeline::duration(text).map_err(|e| anyhow!("{key}: {e}")),
    }
}

impl QueueInput {
    /// Every job's tasks, in queue order: job `j`'s threads share one address space; the
    /// first `concurrency` jobs start with the run, job `j` after `j - concurrency + 1`
    /// processes have exited; each waits out its start delay, starts by `exec`, and exits
    /// at its end. `build` reads each job's trace into its tasks and says what it found
    /// ([`TraceInput::tasks`], or [`TraceInput::tasks_for_run`] for a run of its own);
    /// what it said of each job comes second.
    pub(crate) fn tasks<T>(
        &self,
        build: impl Fn(&TraceInput, NextUses) -> Result<(Vec<TaskSpec>, T)>,
    ) -> Result<(Vec<TaskSpec>, Vec<T>)> {
        let mut out = Vec::new();
        let mut tallies = Vec::with_capacity(self.jobs.len());
        for (j, job) in self.jobs.iter().enumerate() {
            let (specs, tally) = build(&job.input, NextUses::Omitted)
                .with_context(|| format!("workload.queue job {j} ({})", job.name))?;
            let processes: std::collections::BTreeSet<Option<u64>> =
                specs.iter().map(|s| s.address_space).collect();
            if processes.len() > 1 {
                bail!(
                    "workload.queue job {j} ({}): the trace holds {} processes; a queue job is one process \
                     (its threads are fine): split the capture per process",
                    job.name,
                    processes.len()
                );
            }
            tallies.push(tally);
            let threads = specs.len();
            for (k, mut spec) in specs.into_iter().enumerate() {
                spec.name = if threads == 1 { job.name.clone() } else { format!("{}#{k}", job.name) };
                spec.address_space = Some(j as u64);
                let queued = (j as u64).checked_sub(u64::from(self.concurrency) - 1).filter(|&n| n > 0);
                spec.start = match queued {
                    Some(n) => TaskStart::AfterExits(u32::try_from(n).context("too many jobs")?),
                    None => TaskStart::AtStart,
                };
                spec.start_delay = job.delay;
                spec.exec = true;
                spec.exit_on_end = true;
                out.push(spec);
            }
        }
        Ok((out, tallies))
    }
}
