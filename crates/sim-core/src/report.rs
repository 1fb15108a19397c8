//! The result of a run. Everything here is a pure function of (configuration, workload,
//! seed): nothing depends on the host, so two runs serialise to identical bytes.

use crate::stats::{BlockStats, Gauges, LatencySummary, Vmstat};
use serde::Serialize;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// Every task replayed its whole stream.
    Completed,
    /// A task was OOM-killed: memory and swap were exhausted.
    OomKilled {
        /// The killed task.
        task: String,
        /// Simulated time of the kill, in seconds.
        at_s: f64,
    },
    /// The configured event limit was reached.
    EventLimit,
    /// The configured simulated-time limit was reached.
    TimeLimit,
}

/// Fault latencies: from the access that faulted to the moment the task resumes.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FaultLatency {
    /// Faults counted in `pgmajfault` (swap-cache misses).
    pub major: LatencySummary,
    /// Swap-cache hits, including those that waited for a readahead read in flight.
    pub minor_swap: LatencySummary,
    /// First touches of anonymous memory (including any reclaim they triggered).
    pub anon: LatencySummary,
}

/// Per-task summary.
#[derive(Clone, Debug, Serialize)]
pub struct TaskReport {
    /// Name from the task spec.
    pub name: String,
    /// Accesses replayed.
    pub accesses: u64,
    /// Simulated time at which the task started, in seconds; `None` for a task still
    /// waiting to start when the run ended.
    pub start_s: Option<f64>,
    /// Simulated time at which the task finished or was stopped, in seconds (0 for a task
    /// that never started).
    pub end_s: f64,
    /// Whether its end was a process exit that ran to completion (a job that finished its
    /// work, as opposed to one killed or still running when the run ended).
    pub exited: bool,
    /// Time spent blocked on I/O, in seconds.
    pub io_wait_s: f64,
}

/// A job queue's summary: the tasks whose end is their process's exit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobsReport {
    /// Jobs in the workload.
    pub jobs: u64,
    /// Jobs that started.
    pub started: u64,
    /// Jobs that ran to their end and exited.
    pub exited: u64,
    /// Jobs the OOM killer took (before or after they started).
    pub oom_killed: u64,
    /// From the first job's start to the last job's end (exit or kill), in simulated
    /// seconds: the build's wall time. 0 when no job has ended.
    pub wall_s: f64,
}

/// Everything a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    /// How the run ended.
    pub outcome: Outcome,
    /// Simulated time when the last event was processed, in seconds.
    pub sim_time_s: f64,
    /// Events taken off the queue.
    pub events: u64,
    /// Accesses replayed over all tasks.
    pub accesses: u64,
    /// The readahead policy that ran.
    pub readahead: String,
    /// Counters named as in /proc/vmstat.
    pub vmstat: Vmstat,
    /// Per mTHP size with any non-zero counter, the counters of
    /// `/sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats`, keyed "16kB", ...
    pub mthp: std::collections::BTreeMap<String, crate::thp::MthpStats>,
    /// Memory state at the end.
    pub at_end: Gauges,
    /// Per swap device, blkparse figures.
    pub block: Vec<BlockStats>,
    /// Fault latency percentiles.
    pub fault_latency: FaultLatency,
    /// Per task.
    pub tasks: Vec<TaskReport>,
    /// The job queue's summary, present when some task's end is its process's exit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobsReport>,
    /// zswap's gauges and counts when it is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswap: Option<crate::zswap::ZswapReport>,
    /// Timeline operations: what each did and how long it took.
    pub operations: Vec<crate::timeline::OpReport>,
}
