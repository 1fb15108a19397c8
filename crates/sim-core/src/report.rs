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
    /// Nothing was left to happen while tasks had not finished: they were paused and
    /// never resumed, or waited to start on a condition that never came true.
    Unfinished {
        /// Tasks that had not finished.
        tasks: u64,
        /// Why they could not go on.
        reason: String,
    },
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
    /// From the start of the run to the last job's end, in simulated seconds: the queue's
    /// makespan as a launcher measures it, its delay before the first job included. 0
    /// when no job has ended.
    pub makespan_s: f64,
    /// Each job (each task whose end is its process's exit), in the order of the setup.
    pub per_job: Vec<JobReport>,
}

/// One job of a queue: when it ran and what its faults did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobReport {
    /// The task's name.
    pub name: String,
    /// When it started, in simulated seconds; `None` if it never did.
    pub start_s: Option<f64>,
    /// When it ended (exited, its teardown included, or was killed), in simulated
    /// seconds; `None` if it had not when the run ended.
    pub end_s: Option<f64>,
    /// Page faults it took (`pgfault`), its start-up's included.
    pub faults: u64,
    /// Major faults (`pgmajfault`): faults that read from swap.
    pub major_faults: u64,
    /// Pages its faults read from swap (`pswpin`), readahead included.
    pub swapins: u64,
    /// Whether the OOM killer took it.
    pub oom_killed: bool,
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
    /// Per CPU the workload's tasks run on, the simulated seconds it spent running them
    /// (their accesses, faults, reclaim and exits, and context switches): the CPU's user
    /// and system time of `/proc/stat`. The rest of the run it was idle.
    pub cpu_busy_s: Vec<f64>,
    /// zswap's gauges and counts when it is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswap: Option<crate::zswap::ZswapReport>,
    /// MGLRU's generations and tiers at the end, when `lru = "mglru"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<LruGenReport>,
    /// Timeline operations: what each did and how long it took.
    pub operations: Vec<crate::timeline::OpReport>,
    /// The machine sampled over time, when `[report] sample_every` asks for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<crate::series::Series>,
}

/// MGLRU's state as `/sys/kernel/debug/lru_gen_full` prints it for the anonymous type,
/// plus what aging did over the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LruGenReport {
    /// The oldest live generation's sequence number.
    pub min_seq: u64,
    /// The youngest generation's sequence number.
    pub max_seq: u64,
    /// Live generations, oldest first.
    pub generations: Vec<LruGenGeneration>,
    /// Per tier, the refault feedback of the generation being evicted (`rep` lines) and
    /// the running averages over the earlier ones (`RTx`).
    pub tiers: Vec<LruGenTier>,
    /// `get_tier_idx`: tiers above this one are protected from eviction now.
    pub protected_tier_above: u32,
    /// Aging and look-around work over the run.
    pub aging: LruGenAging,
}

/// One generation's line of the histogram.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LruGenGeneration {
    pub seq: u64,
    /// Time since the generation was opened, in milliseconds.
    pub age_ms: u64,
    pub anon_pages: u64,
    /// Always 0: the model has no file pages.
    pub file_pages: u64,
}

/// One tier's refault feedback.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LruGenTier {
    pub tier: u32,
    /// Refaults of pages evicted from this tier while recent.
    pub refaulted: u64,
    /// Pages evicted from this tier.
    pub evicted: u64,
    /// Pages kept from eviction because the tier was protected (or the oldest
    /// generation was retired under them).
    pub protected: u64,
    pub avg_refaulted: u64,
    pub avg_total: u64,
}

/// Counts of MGLRU's aging and look-around.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LruGenAging {
    /// Generations opened (`inc_max_seq`).
    pub runs: u64,
    /// PTEs the aging walks looked at.
    pub ptes_walked: u64,
    /// Young PTEs the aging walks found and cleared.
    pub young_ptes: u64,
    /// Folios promoted to the youngest generation by a walk.
    pub promoted: u64,
    /// Look-arounds started by a young PTE found during eviction.
    pub look_arounds: u64,
    /// Folios look-around activated without a walk context (`folio_activate`).
    pub activated: u64,
}
